# Job groups for cluster runs (included last by the Snakefile, after every rule module).
# Locally nothing changes.  On a cluster each group job is ONE submission, and how the SLURM plugin runs it
# decides the grouping (measured, snakemake-executor-plugin-slurm 2.8): inside the submission Snakemake runs with
# `--jobs 1`, so the group's workflow-level components run one after another, each as one `srun` step that
# starts Snakemake afresh (~1.7 CPU-s) and runs that component's jobs in parallel on the job's CPUs.  So the unit
# worth bundling is a whole computation, not a kind of job:
#   pipeline: every `*_chunk`, `aggregate` and `*_plot` / `*_table` job; chunks -> aggregate -> plot connect them,
#             so each computation (and the claims chunks -> claims table) is one component = one srun step whose
#             chunks run side by side on the CPUs the group job asks for (its chunk count, at most --cores);
# and `grids` (every computation's grid.csv: a few ms of work, no inputs, nothing depends on it, so it would be a
# component of its own: one srun step and a Snakemake start-up) is a local rule: on a cluster Snakemake runs it on
# the submitting machine, next to the submitted jobs.
# The assignment goes by rule name, so a new computation following the pattern (<c>_chunk, <c>_plot) is grouped
# without touching this file.  `--groups RULE=GROUP` on the command line still overrides it (for the submission
# only: the plugin does not pass --groups/--group-components into the job, so inside it this file decides).


localrules:
    grids,


def job_group(rule_name):
    if rule_name == "aggregate" or rule_name.endswith(("_chunk", "_plot", "_table")):
        return "pipeline"
    return None


for _rule in workflow.rules:
    if _rule.group is None and job_group(_rule.name) is not None:
        _rule.group = job_group(_rule.name)
