# dpsampling: how private is DP-SGD once batch sampling is accounted for.
# Thin on purpose: config, validation and shared helpers live in workflow/rules/common.smk,
# one rule module per computation.  `snakemake --cores all` regenerates everything.

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/poisson_vs_wor_sigma.smk"
include: "workflow/rules/poisson_vs_wor_table.smk"
include: "workflow/rules/claims.smk"


rule all:
    default_target: True
    input:
        all_targets(),
