# Lebeda et al. Fig. 2: smallest σ for (ε, δ) against the sampling rate, Poisson vs WOR.
FIGURES["poisson_vs_wor_sigma"] = ["figures/poisson_vs_wor_sigma.pdf", "figures/poisson_vs_wor_sigma.png"]


rule poisson_vs_wor_sigma_chunk:
    output:
        "results/poisson_vs_wor_sigma/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("poisson_vs_wor_sigma"),
        points=lambda wc: chunk_points("poisson_vs_wor_sigma", wc.chunk),
        settings=settings("poisson_vs_wor_sigma"),
    log:
        "logs/poisson_vs_wor_sigma/chunk_{chunk}.log",
    message:
        "poisson_vs_wor_sigma: calibrating σ on chunk {wildcards.chunk}"
    script:
        "../../scripts/poisson_vs_wor_sigma.py"


rule poisson_vs_wor_sigma_plot:
    input:
        "results/poisson_vs_wor_sigma/poisson_vs_wor_sigma.csv",
    output:
        report("figures/poisson_vs_wor_sigma.pdf", caption="../report/poisson_vs_wor_sigma.rst", category="Lebeda et al."),
        "figures/poisson_vs_wor_sigma.png",
    params:
        code_hash=code_hash("poisson_vs_wor_sigma"),
    log:
        "logs/poisson_vs_wor_sigma/plot.log",
    message:
        "poisson_vs_wor_sigma: plotting {output[0]}"
    script:
        "../../scripts/poisson_vs_wor_sigma.py"
