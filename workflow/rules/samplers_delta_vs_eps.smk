# Chua et al. Fig. 3 and App. Figs 6-7: δ vs ε at fixed (σ, T) for deterministic, Poisson and shuffle batching.
FIGURES["samplers_delta_vs_eps"] = ["figures/samplers_delta_vs_eps.pdf", "figures/samplers_delta_vs_eps.png", "results/samplers_delta_vs_eps/provably_wrong.csv"]

if "samplers_delta_vs_eps" in config:  # a bad C grid (empty, not increasing) stops the run before anything is computed
    try:
        from dpsampling.samplers import shuffle as _shuffle

        _shuffle.c_grid_from_spec(settings("samplers_delta_vs_eps").get("c_grid"))
    except ValueError as _exc:
        raise ValueError(f"config samplers_delta_vs_eps: settings: {_exc}") from None


rule samplers_delta_vs_eps_chunk:
    output:
        "results/samplers_delta_vs_eps/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("samplers_delta_vs_eps"),
        points=lambda wc: chunk_points("samplers_delta_vs_eps", wc.chunk),
        settings=settings("samplers_delta_vs_eps"),
    log:
        "logs/samplers_delta_vs_eps/chunk_{chunk}.log",
    message:
        "samplers_delta_vs_eps: δ per sampler on chunk {wildcards.chunk}"
    script:
        "../../scripts/samplers_delta_vs_eps.py"


rule samplers_delta_vs_eps_plot:
    input:
        "results/samplers_delta_vs_eps/samplers_delta_vs_eps.csv",
    output:
        pdf=report("figures/samplers_delta_vs_eps.pdf", caption="../report/samplers_delta_vs_eps.rst", category="Chua et al."),
        png="figures/samplers_delta_vs_eps.png",
        checks="results/samplers_delta_vs_eps/provably_wrong.csv",
    params:
        code_hash=code_hash("samplers_delta_vs_eps"),
    log:
        "logs/samplers_delta_vs_eps/plot.log",
    message:
        "samplers_delta_vs_eps: plotting {output.pdf} and writing {output.checks}"
    script:
        "../../scripts/samplers_delta_vs_eps.py"
