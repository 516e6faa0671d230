# Lebeda et al. Table 1: ε for Poisson and WOR at σ=0.8, γ=1e-3, T=1e4 over δ.
FIGURES["poisson_vs_wor_table"] = ["figures/poisson_vs_wor_table.md"]


rule poisson_vs_wor_table_chunk:
    output:
        "results/poisson_vs_wor_table/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("poisson_vs_wor_table"),
        points=lambda wc: chunk_points("poisson_vs_wor_table", wc.chunk),
        settings=settings("poisson_vs_wor_table"),
    log:
        "logs/poisson_vs_wor_table/chunk_{chunk}.log",
    message:
        "poisson_vs_wor_table: ε on chunk {wildcards.chunk}"
    script:
        "../../scripts/poisson_vs_wor_table.py"


rule poisson_vs_wor_table_plot:
    input:
        "results/poisson_vs_wor_table/poisson_vs_wor_table.csv",
    output:
        report("figures/poisson_vs_wor_table.md", caption="../report/poisson_vs_wor_table.rst", category="Lebeda et al."),
    params:
        code_hash=code_hash("poisson_vs_wor_table"),
    log:
        "logs/poisson_vs_wor_table/plot.log",
    message:
        "poisson_vs_wor_table: writing {output[0]}"
    script:
        "../../scripts/poisson_vs_wor_table.py"
