# Chua et al. Fig. 2: δ_D and bounds on δ_P at σ=0.3, T=10; crossings ε0, ε1 (Conjecture 4.3).
FIGURES["deterministic_vs_poisson"] = ["figures/deterministic_vs_poisson.pdf", "figures/deterministic_vs_poisson.png", "results/deterministic_vs_poisson/crossings.csv"]

rule deterministic_vs_poisson_chunk:
    output:
        "results/deterministic_vs_poisson/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("deterministic_vs_poisson"),
        points=lambda wc: chunk_points("deterministic_vs_poisson", wc.chunk),
        settings=settings("deterministic_vs_poisson"),
    log:
        "logs/deterministic_vs_poisson/chunk_{chunk}.log",
    message:
        "deterministic_vs_poisson: δ_D and δ_P on chunk {wildcards.chunk}"
    script:
        "../../scripts/deterministic_vs_poisson.py"


rule deterministic_vs_poisson_plot:
    input:
        "results/deterministic_vs_poisson/deterministic_vs_poisson.csv",
    output:
        pdf=report("figures/deterministic_vs_poisson.pdf", caption="../report/deterministic_vs_poisson.rst", category="Chua et al."),
        png="figures/deterministic_vs_poisson.png",
        crossings="results/deterministic_vs_poisson/crossings.csv",
    params:
        code_hash=code_hash("deterministic_vs_poisson"),
    log:
        "logs/deterministic_vs_poisson/plot.log",
    message:
        "deterministic_vs_poisson: plotting {output.pdf} and writing {output.crossings}"
    script:
        "../../scripts/deterministic_vs_poisson.py"
