# Lebeda et al. Fig. 4 (§8): WOR + substitution Gaussian: Theorem 14 dominating pair, composed upper vs lower bound and RDP.
FIGURES["wor_substitution_bound"] = ["figures/wor_substitution_bound.pdf", "figures/wor_substitution_bound.png"]


rule wor_substitution_bound_chunk:
    output:
        "results/wor_substitution_bound/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("wor_substitution_bound"),
        points=lambda wc: chunk_points("wor_substitution_bound", wc.chunk),
        settings=settings("wor_substitution_bound"),
    log:
        "logs/wor_substitution_bound/chunk_{chunk}.log",
    message:
        "wor_substitution_bound: one-step and composed curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/wor_substitution_bound.py"


rule wor_substitution_bound_plot:
    input:
        "results/wor_substitution_bound/wor_substitution_bound.csv",
    output:
        report("figures/wor_substitution_bound.pdf", caption="../report/wor_substitution_bound.rst", category="Lebeda et al."),
        "figures/wor_substitution_bound.png",
    params:
        code_hash=code_hash("wor_substitution_bound"),
    log:
        "logs/wor_substitution_bound/plot.log",
    message:
        "wor_substitution_bound: writing {output[0]}"
    script:
        "../../scripts/wor_substitution_bound.py"
