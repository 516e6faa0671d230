# Cross-validation: φ accountant vs PLD bounds at subsampled-Gaussian settings from every computation (table).
FIGURES["cf_crossval"] = ["figures/cf_crossval.md"]


rule cf_crossval_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/cf_crossval/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("cf_crossval"),
        points=lambda wc: chunk_points("cf_crossval", wc.chunk),
        settings=settings("cf_crossval"),
    log:
        "logs/cf_crossval/chunk_{chunk}.log",
    message:
        "cf_crossval: φ vs PLD on chunk {wildcards.chunk}"
    script:
        "../../scripts/cf_crossval.py"


rule cf_crossval_plot:
    input:
        "results/cf_crossval/cf_crossval.csv",
    output:
        report("figures/cf_crossval.md", caption="../report/cf_crossval.rst", category="Zhu et al."),
    params:
        code_hash=code_hash("cf_crossval"),
    log:
        "logs/cf_crossval/plot.log",
    message:
        "cf_crossval: writing {output[0]}"
    script:
        "../../scripts/cf_crossval.py"
