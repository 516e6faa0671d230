# Lebeda et al. App. B.1 (Prop. 11): subsampled randomized response, add vs remove, exact rationals.
FIGURES["rr_counterexample"] = ["figures/rr_counterexample.pdf", "figures/rr_counterexample.png"]


rule rr_counterexample_chunk:
    output:
        "results/rr_counterexample/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("rr_counterexample"),
        points=lambda wc: chunk_points("rr_counterexample", wc.chunk),
        settings=settings("rr_counterexample"),
    log:
        "logs/rr_counterexample/chunk_{chunk}.log",
    message:
        "rr_counterexample: exact curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/rr_counterexample.py"


rule rr_counterexample_plot:
    input:
        "results/rr_counterexample/rr_counterexample.csv",
    output:
        report("figures/rr_counterexample.pdf", caption="../report/rr_counterexample.rst", category="Lebeda et al."),
        "figures/rr_counterexample.png",
    params:
        code_hash=code_hash("rr_counterexample"),
    log:
        "logs/rr_counterexample/plot.log",
    message:
        "rr_counterexample: plotting {output[0]}"
    script:
        "../../scripts/rr_counterexample.py"
