# Issue 23: every sampler's certified ε interval vs epochs for named runs (the audit's answer), its relative width and
# CPU seconds, each row checked against an independent reference (mpmath, dp_accounting, PLD_accounting, φ accountant).
FIGURES["certified_intervals"] = ["figures/certified_intervals.pdf", "figures/certified_intervals.png",
                                  "figures/certified_intervals.md"]


rule certified_intervals_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/certified_intervals/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("certified_intervals"),
        points=lambda wc: chunk_points("certified_intervals", wc.chunk),
        settings=settings("certified_intervals"),
    log:
        "logs/certified_intervals/chunk_{chunk}.log",
    message:
        "certified_intervals: intervals and references on chunk {wildcards.chunk}"
    script:
        "../../scripts/certified_intervals.py"


rule certified_intervals_plot:
    input:
        "results/certified_intervals/certified_intervals.csv",
    output:
        pdf=report("figures/certified_intervals.pdf", caption="../report/certified_intervals.rst",
                   category="Practitioner audit"),
        png="figures/certified_intervals.png",
        md="figures/certified_intervals.md",
    params:
        code_hash=code_hash("certified_intervals"),
    log:
        "logs/certified_intervals/plot.log",
    message:
        "certified_intervals: plotting {output.pdf} and writing {output.md}"
    script:
        "../../scripts/certified_intervals.py"
