# Issue 30: what a batch cap costs. ε of truncated Poisson sampling against the cap B for named runs: our certified
# interval, dp_accounting's truncated event, Poisson's interval and the smallest cap within 1 % of Poisson's ε.
FIGURES["truncation_cost"] = ["figures/truncation_cost.pdf", "figures/truncation_cost.png",
                              "figures/truncation_cost.md"]


rule truncation_cost_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/truncation_cost/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("truncation_cost"),
        points=lambda wc: chunk_points("truncation_cost", wc.chunk),
        settings=settings("truncation_cost"),
    log:
        "logs/truncation_cost/chunk_{chunk}.log",
    message:
        "truncation_cost: ε against the cap on chunk {wildcards.chunk}"
    script:
        "../../scripts/truncation_cost.py"


rule truncation_cost_plot:
    input:
        "results/truncation_cost/truncation_cost.csv",
    output:
        pdf=report("figures/truncation_cost.pdf", caption="../report/truncation_cost.rst",
                   category="Practitioner audit"),
        png="figures/truncation_cost.png",
        md="figures/truncation_cost.md",
    params:
        code_hash=code_hash("truncation_cost"),
    log:
        "logs/truncation_cost/plot.log",
    message:
        "truncation_cost: plotting {output.pdf} and writing {output.md}"
    script:
        "../../scripts/truncation_cost.py"
