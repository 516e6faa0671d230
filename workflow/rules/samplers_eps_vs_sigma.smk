# Chua et al. Fig. 1 and App. Figs 4-5: ε vs σ at fixed (δ, T) for deterministic, Poisson and shuffle batching.
FIGURES["samplers_eps_vs_sigma"] = ["figures/samplers_eps_vs_sigma.pdf", "figures/samplers_eps_vs_sigma.png", "results/samplers_eps_vs_sigma/provably_wrong.csv"]

if "samplers_eps_vs_sigma" in config:  # a bad C grid (empty, not increasing) stops the run before anything is computed
    try:
        from dpsampling.samplers import shuffle as _shuffle

        _shuffle.c_grid_from_spec(settings("samplers_eps_vs_sigma").get("c_grid"))
    except ValueError as _exc:
        raise ValueError(f"config samplers_eps_vs_sigma: settings: {_exc}") from None


rule samplers_eps_vs_sigma_chunk:
    output:
        "results/samplers_eps_vs_sigma/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("samplers_eps_vs_sigma"),
        points=lambda wc: chunk_points("samplers_eps_vs_sigma", wc.chunk),
        settings=settings("samplers_eps_vs_sigma"),
    log:
        "logs/samplers_eps_vs_sigma/chunk_{chunk}.log",
    message:
        "samplers_eps_vs_sigma: ε per sampler on chunk {wildcards.chunk}"
    script:
        "../../scripts/samplers_eps_vs_sigma.py"


rule samplers_eps_vs_sigma_plot:
    input:
        "results/samplers_eps_vs_sigma/samplers_eps_vs_sigma.csv",
    output:
        pdf=report("figures/samplers_eps_vs_sigma.pdf", caption="../report/samplers_eps_vs_sigma.rst", category="Chua et al."),
        png="figures/samplers_eps_vs_sigma.png",
        checks="results/samplers_eps_vs_sigma/provably_wrong.csv",
    params:
        code_hash=code_hash("samplers_eps_vs_sigma"),
    log:
        "logs/samplers_eps_vs_sigma/plot.log",
    message:
        "samplers_eps_vs_sigma: plotting {output.pdf} and writing {output.checks}"
    script:
        "../../scripts/samplers_eps_vs_sigma.py"
