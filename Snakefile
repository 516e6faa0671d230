# dpsampling: how private is DP-SGD once batch sampling is accounted for.
# Thin on purpose: config, validation and shared helpers live in workflow/rules/common.smk,
# one rule module per computation.  `snakemake --cores all` regenerates everything.

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/poisson_vs_wor_sigma.smk"
include: "workflow/rules/poisson_vs_wor_table.smk"
include: "workflow/rules/add_remove_crossing.smk"
include: "workflow/rules/rr_counterexample.smk"
include: "workflow/rules/conjecture12.smk"
include: "workflow/rules/laplace_substitution.smk"
include: "workflow/rules/effective_noise.smk"
include: "workflow/rules/a_minus_b.smk"
include: "workflow/rules/samplers_eps_vs_sigma.smk"
include: "workflow/rules/samplers_delta_vs_eps.smk"
include: "workflow/rules/deterministic_vs_poisson.smk"
include: "workflow/rules/rdp_vs_profile.smk"
include: "workflow/rules/cf_accountant_checks.smk"
include: "workflow/rules/one_step_profiles.smk"
include: "workflow/rules/wor_substitution_bound.smk"
include: "workflow/rules/cf_crossval.smk"
include: "workflow/rules/balls_and_bins.smk"
include: "workflow/rules/sampler_audit.smk"
include: "workflow/rules/certified_intervals.smk"
include: "workflow/rules/truncation_cost.smk"
include: "workflow/rules/phased_runs.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/gallery.smk"
include: "workflow/rules/groups.smk"  # groups rules by name (cluster runs)
include: "workflow/rules/benchmarks.smk"  # last: a benchmark file for every rule


rule all:
    default_target: True
    input:
        all_targets(),
