# Zhu et al. Fig. 4 (App. C.4): one-step hockey-stick curves of the Poisson-subsampled Gaussian, both directions.
FIGURES["one_step_profiles"] = ["figures/one_step_profiles.pdf", "figures/one_step_profiles.png"]


rule one_step_profiles_chunk:
    output:
        "results/one_step_profiles/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("one_step_profiles"),
        points=lambda wc: chunk_points("one_step_profiles", wc.chunk),
        settings=settings("one_step_profiles"),
    log:
        "logs/one_step_profiles/chunk_{chunk}.log",
    message:
        "one_step_profiles: one-step hockey-stick curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/one_step_profiles.py"


rule one_step_profiles_plot:
    input:
        "results/one_step_profiles/one_step_profiles.csv",
    output:
        report("figures/one_step_profiles.pdf", caption="../report/one_step_profiles.rst", category="Zhu et al."),
        "figures/one_step_profiles.png",
    params:
        code_hash=code_hash("one_step_profiles"),
    log:
        "logs/one_step_profiles/plot.log",
    message:
        "one_step_profiles: writing {output[0]}"
    script:
        "../../scripts/one_step_profiles.py"
