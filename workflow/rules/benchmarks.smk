# Costs on record: every rule gets a `benchmark:` file (wall s, max RSS, CPU-s of the job), included last by the
# Snakefile so that a rule module added later is covered without touching this file.  The benchmark file mirrors
# the rule's log path, logs/<computation>/<job>.log -> benchmarks/<computation>/<job>.tsv, so the files of one
# computation sit in one folder; `python scripts/benchmarks.py` sums them per computation (docs/benchmarks.md).
# A benchmark file is written by the job itself (on a cluster too: it is one more output of the job); like
# results/ it is not tracked by git.


def benchmark_path(rule):
    """benchmarks/<same path as the rule's first log file>.tsv, or benchmarks/<rule>/<wildcards>.tsv."""
    logs = [str(f) for f in rule.log] if rule.log else []
    if logs and logs[0].startswith("logs/"):
        return "benchmarks/" + os.path.splitext(logs[0][len("logs/"):])[0] + ".tsv"
    names = sorted(rule.wildcard_names)
    return f"benchmarks/{rule.name}/" + ("_".join("{%s}" % w for w in names) or "job") + ".tsv"


for _rule in workflow.rules:
    if _rule.benchmark is None:
        _rule.benchmark_modifier = workflow.modifier.path_modifier
        _rule.benchmark = benchmark_path(_rule)
