# Lebeda et al. Fig. 1 (§5, App. B.2): add vs remove curves of the subsampled Laplace mechanism, Monte Carlo and PLD.
FIGURES["add_remove_crossing"] = ["figures/add_remove_crossing.pdf", "figures/add_remove_crossing.png"]


rule add_remove_crossing_chunk:
    output:
        "results/add_remove_crossing/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("add_remove_crossing"),
        points=lambda wc: chunk_points("add_remove_crossing", wc.chunk),
        settings=settings("add_remove_crossing"),
    log:
        "logs/add_remove_crossing/chunk_{chunk}.log",
    message:
        "add_remove_crossing: Monte Carlo and PLD curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/add_remove_crossing.py"


rule add_remove_crossing_plot:
    input:
        "results/add_remove_crossing/add_remove_crossing.csv",
    output:
        report("figures/add_remove_crossing.pdf", caption="../report/add_remove_crossing.rst", category="Lebeda et al."),
        "figures/add_remove_crossing.png",
    params:
        code_hash=code_hash("add_remove_crossing"),
    log:
        "logs/add_remove_crossing/plot.log",
    message:
        "add_remove_crossing: plotting {output[0]}"
    script:
        "../../scripts/add_remove_crossing.py"
