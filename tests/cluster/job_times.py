"""job_times.py LOG [LOG...]: wall time per rule from Snakemake run logs (.snakemake/log/*.snakemake.log).

Prints, per rule, the number of jobs and the median and max wall seconds between a job's start and its
"Finished jobid" line.  The per-rule `runtime` values of profiles/slurm/config.yaml were read off this output
(see the comments there).  Wall time under --cores 2 with other jobs running: an upper estimate of the CPU time."""

import re
import statistics
import sys
from collections import defaultdict
from datetime import datetime

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


def job_times(lines):
    """{rule: [wall seconds per job]}: from "Job N: ..." (start) to "Finished jobid: N (Rule: X)"."""
    started, times, now = {}, defaultdict(list), None
    for line in lines:
        line = line.strip()
        if m := STAMP.match(line):
            now = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif (m := re.match(r"^(?:Job|jobid:) (\d+)\b", line)) and m.group(1) not in started:
            started[m.group(1)] = now
        elif m := re.match(r"^Finished jobid: (\d+) \(Rule: (\w+)\)", line):
            if m.group(1) in started:
                times[m.group(2)].append((now - started.pop(m.group(1))).total_seconds())
    return times


def main(paths):
    times = defaultdict(list)
    for p in paths:
        with open(p) as f:
            for k, v in job_times(f).items():
                times[k] += v
    print(f"{'rule':32s} {'jobs':>5s} {'median_s':>9s} {'max_s':>7s}")
    for k in sorted(times, key=lambda k: -max(times[k])):
        print(f"{k:32s} {len(times[k]):5d} {statistics.median(times[k]):9.0f} {max(times[k]):7.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
