# Räisä et al. Fig. 1: effective noise σ(q, T)/q against q, one panel per ε, one line per T,
# plus the Corollary 5.4 ratio table (figures/effective_noise.md).
FIGURES["effective_noise"] = ["figures/effective_noise.pdf", "figures/effective_noise.png",
                              "figures/effective_noise.md"]


rule effective_noise_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/effective_noise/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("effective_noise"),
        points=lambda wc: chunk_points("effective_noise", wc.chunk),
        settings=settings("effective_noise"),
    log:
        "logs/effective_noise/chunk_{chunk}.log",
    message:
        "effective_noise: calibrating σ(q, T) along the curves of chunk {wildcards.chunk}"
    script:
        "../../scripts/effective_noise.py"


rule effective_noise_plot:
    input:
        "results/effective_noise/effective_noise.csv",
    output:
        pdf=report("figures/effective_noise.pdf", caption="../report/effective_noise.rst", category="Räisä et al."),
        png="figures/effective_noise.png",
        md="figures/effective_noise.md",
    params:
        code_hash=code_hash("effective_noise"),
    log:
        "logs/effective_noise/plot.log",
    message:
        "effective_noise: plotting {output.pdf} and the ratio table {output.md}"
    script:
        "../../scripts/effective_noise.py"
