# Chua et al. AISTATS 2025 (balls-and-bins): ε vs σ and δ vs ε, deterministic / Poisson / balls-and-bins
# (PLD_accounting upper and lower bounds, Monte Carlo estimate with its KL band), one and several epochs.
FIGURES["balls_and_bins"] = ["figures/balls_and_bins.pdf", "figures/balls_and_bins.png"]


rule balls_and_bins_chunk:
    output:
        "results/balls_and_bins/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("balls_and_bins"),
        points=lambda wc: chunk_points("balls_and_bins", wc.chunk),
        settings=settings("balls_and_bins"),
    log:
        "logs/balls_and_bins/chunk_{chunk}.log",
    message:
        "balls_and_bins: bounds and Monte Carlo on chunk {wildcards.chunk}"
    script:
        "../../scripts/balls_and_bins.py"


rule balls_and_bins_plot:
    input:
        "results/balls_and_bins/balls_and_bins.csv",
    output:
        report("figures/balls_and_bins.pdf", caption="../report/balls_and_bins.rst", category="Chua et al."),
        "figures/balls_and_bins.png",
    params:
        code_hash=code_hash("balls_and_bins"),
    log:
        "logs/balls_and_bins/plot.log",
    message:
        "balls_and_bins: plotting {output[0]}"
    script:
        "../../scripts/balls_and_bins.py"
