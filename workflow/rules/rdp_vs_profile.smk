# Zhu et al. Fig. 1 (§3): RR p=e/(1+e) vs Gaussian σ=1: RDP, f-DP (incl. RDP-implied), privacy profiles.
FIGURES["rdp_vs_profile"] = ["figures/rdp_vs_profile.pdf", "figures/rdp_vs_profile.png"]


rule rdp_vs_profile_chunk:
    output:
        "results/rdp_vs_profile/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("rdp_vs_profile"),
        points=lambda wc: chunk_points("rdp_vs_profile", wc.chunk),
        settings=settings("rdp_vs_profile"),
    log:
        "logs/rdp_vs_profile/chunk_{chunk}.log",
    message:
        "rdp_vs_profile: RDP, trade-off and profile curves on chunk {wildcards.chunk}"
    script:
        "../../scripts/rdp_vs_profile.py"


rule rdp_vs_profile_plot:
    input:
        "results/rdp_vs_profile/rdp_vs_profile.csv",
    output:
        report("figures/rdp_vs_profile.pdf", caption="../report/rdp_vs_profile.rst", category="Zhu et al."),
        "figures/rdp_vs_profile.png",
    params:
        code_hash=code_hash("rdp_vs_profile"),
    log:
        "logs/rdp_vs_profile/plot.log",
    message:
        "rdp_vs_profile: writing {output[0]}"
    script:
        "../../scripts/rdp_vs_profile.py"
