# Lebeda et al. Conjecture 12 (§5): δ_add ≤ δ_remove for the Poisson-subsampled Gaussian? Grid search
# with PLD upper/lower bounds; the plot rule also writes the full-grid verdict (CSV + markdown).
FIGURES["conjecture12"] = ["figures/conjecture12.pdf", "figures/conjecture12.png",
                           "results/conjecture12/verdict.csv", "figures/conjecture12_verdict.md"]


rule conjecture12_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/conjecture12/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("conjecture12"),
        points=lambda wc: chunk_points("conjecture12", wc.chunk),
        settings=settings("conjecture12"),
    log:
        "logs/conjecture12/chunk_{chunk}.log",
    message:
        "conjecture12: δ_add - δ_remove on chunk {wildcards.chunk}"
    script:
        "../../scripts/conjecture12.py"


rule conjecture12_plot:
    input:
        "results/conjecture12/conjecture12.csv",
    output:
        pdf=report("figures/conjecture12.pdf", caption="../report/conjecture12.rst", category="Lebeda et al."),
        png="figures/conjecture12.png",
        verdict_csv="results/conjecture12/verdict.csv",
        verdict_md="figures/conjecture12_verdict.md",
    params:
        code_hash=code_hash("conjecture12"),
    log:
        "logs/conjecture12/plot.log",
    message:
        "conjecture12: heat map {output.pdf} and the full-grid verdict {output.verdict_md}"
    script:
        "../../scripts/conjecture12.py"
