# Zhu et al. Fig. 3 (§5 Exp. 1-3): φ accountant vs analytic Gaussian / PLD / RDP over compositions.
FIGURES["cf_accountant_checks"] = ["figures/cf_accountant_checks.pdf", "figures/cf_accountant_checks.png"]


rule cf_accountant_checks_chunk:
    output:
        "results/cf_accountant_checks/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("cf_accountant_checks"),
        points=lambda wc: chunk_points("cf_accountant_checks", wc.chunk),
        settings=settings("cf_accountant_checks"),
    log:
        "logs/cf_accountant_checks/chunk_{chunk}.log",
    message:
        "cf_accountant_checks: φ, PLD, RDP and analytic accountants on chunk {wildcards.chunk}"
    script:
        "../../scripts/cf_accountant_checks.py"


rule cf_accountant_checks_plot:
    input:
        "results/cf_accountant_checks/cf_accountant_checks.csv",
    output:
        report("figures/cf_accountant_checks.pdf", caption="../report/cf_accountant_checks.rst", category="Zhu et al."),
        "figures/cf_accountant_checks.png",
    params:
        code_hash=code_hash("cf_accountant_checks"),
    log:
        "logs/cf_accountant_checks/plot.log",
    message:
        "cf_accountant_checks: writing {output[0]}"
    script:
        "../../scripts/cf_accountant_checks.py"
