# Issue 39: runs of several phases (a σ schedule, a batch-size change, pre-training + fine-tuning, a hyper-parameter
# search): the certified ε interval after each phase vs dp_accounting's pessimistic PLD and RDP on the same events.
FIGURES["phased_runs"] = ["figures/phased_runs.pdf", "figures/phased_runs.png", "figures/phased_runs.md"]


rule phased_runs_chunk:
    output:
        "results/phased_runs/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("phased_runs"),
        points=lambda wc: chunk_points("phased_runs", wc.chunk),
        settings=settings("phased_runs"),
    log:
        "logs/phased_runs/chunk_{chunk}.log",
    message:
        "phased_runs: certified intervals and dp_accounting's answers on chunk {wildcards.chunk}"
    script:
        "../../scripts/phased_runs.py"


rule phased_runs_plot:
    input:
        "results/phased_runs/phased_runs.csv",
    output:
        pdf=report("figures/phased_runs.pdf", caption="../report/phased_runs.rst", category="Practitioner audit"),
        png="figures/phased_runs.png",
        md="figures/phased_runs.md",
    params:
        code_hash=code_hash("phased_runs"),
    log:
        "logs/phased_runs/plot.log",
    message:
        "phased_runs: plotting {output.pdf} and writing {output.md}"
    script:
        "../../scripts/phased_runs.py"
