# Job groups for cluster runs (included last by the Snakefile, after every rule module).
# Locally nothing changes; on a cluster (profiles/slurm) each group job is ONE submission running its
# member jobs inside, so tiny jobs do not each pay a queue wait and a Python start-up.
#   grids:   every `grid` job (a few ms each; no inputs)                  -> bundled by --group-components grids=N
#   collect: `aggregate` and every `*_plot` / `*_table` rule; one connected component per computation
#            (aggregate -> plot), bundled by --group-components collect=N
#   chunks:  every `*_chunk` rule; each chunk is its own component, bundled by --group-components chunks=N
#            (profiles/slurm: 3, run side by side on 3 CPUs; the smoke run through SLURM uses 10).
# The assignment goes by rule name, so a new computation following the pattern (<c>_chunk, <c>_plot) is grouped
# without touching this file.  `--groups RULE=GROUP` on the command line still overrides it.


def job_group(rule_name):
    if rule_name == "grid":
        return "grids"
    if rule_name == "aggregate" or rule_name.endswith(("_plot", "_table")):
        return "collect"
    if rule_name.endswith("_chunk"):
        return "chunks"
    return None


for _rule in workflow.rules:
    if _rule.group is None and job_group(_rule.name) is not None:
        _rule.group = job_group(_rule.name)
