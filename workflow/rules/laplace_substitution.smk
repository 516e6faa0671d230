# Lebeda et al. Fig. 3 (§7): WOR Laplace under substitution, three candidate pairs (exact, MC, PLD).
FIGURES["laplace_substitution"] = ["figures/laplace_substitution.pdf", "figures/laplace_substitution.png"]


rule laplace_substitution_chunk:
    output:
        "results/laplace_substitution/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("laplace_substitution"),
        points=lambda wc: chunk_points("laplace_substitution", wc.chunk),
        settings=settings("laplace_substitution"),
    log:
        "logs/laplace_substitution/chunk_{chunk}.log",
    message:
        "laplace_substitution: exact and Monte Carlo curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/laplace_substitution.py"


rule laplace_substitution_plot:
    input:
        "results/laplace_substitution/laplace_substitution.csv",
    output:
        report("figures/laplace_substitution.pdf", caption="../report/laplace_substitution.rst", category="Lebeda et al."),
        "figures/laplace_substitution.png",
    params:
        code_hash=code_hash("laplace_substitution"),
    log:
        "logs/laplace_substitution/plot.log",
    message:
        "laplace_substitution: plotting {output[0]}"
    script:
        "../../scripts/laplace_substitution.py"
