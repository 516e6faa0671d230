"""What each pipeline computation costs, from Snakemake's benchmark files (benchmarks/<computation>/<job>.tsv).

    python bench/pipeline_costs.py [BENCHMARKS_DIR] [--markdown]

One line per computation: jobs, wall seconds summed over its jobs, CPU seconds (user + system of the job's
processes), the largest resident set size of one job, and its critical path (the longest chunk, then aggregate,
then the figure or table: the wall time the computation needs with one core per chunk).  The one job that writes
every computation's grid.csv is a line of its own (``grids``).  The last
line sums the jobs, wall and CPU over every computation; its critical path is the longest one (the computations
are independent of each other), and ``span`` is the time from the first job's start to the last job's end as the
files record them (a file's modification time is its job's end).

Snakemake samples a job's CPU time every 0.5 s for its first 15 s, then every 30 s, so a long job's CPU time
misses up to the last interval; for a total, time the whole run (``/usr/bin/time snakemake ...``).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from collections import defaultdict

#: job kinds that run one after another within a computation; everything else (the chunks) runs side by side
SERIAL = ("aggregate",)


def read(folder):
    """{computation: [(job, wall s, CPU s, max RSS MB, end time)]} from every .tsv under ``folder``."""
    out = defaultdict(list)
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".tsv"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            parts = rel[: -len(".tsv")].split(os.sep)
            computation, job = (parts[0], "/".join(parts[1:])) if len(parts) > 1 else (parts[0], parts[0])
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f, delimiter="\t"))
            for r in rows[-1:]:  # the last repeat (Snakemake writes one row per repeat)
                out[computation].append((job, _num(r.get("s")), _num(r.get("cpu_time")), _num(r.get("max_rss")),
                                         os.path.getmtime(path)))
    return dict(out)


def _num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def critical_path(jobs):
    """Serial jobs one after another, plus the longest of the parallel ones (the chunks)."""
    serial = sum(w for job, w, *_ in jobs if job in SERIAL or not job.startswith("chunk"))
    chunks = [w for job, w, *_ in jobs if job.startswith("chunk")]
    return serial + (max(chunks) if chunks else 0.0)


def summary(data):
    """Rows (computation, jobs, wall, cpu, max_rss, critical path), most CPU first, then the total row."""
    rows = []
    for comp, jobs in data.items():
        rows.append((comp, len(jobs), sum(j[1] for j in jobs), sum(j[2] for j in jobs), max(j[3] for j in jobs),
                     critical_path(jobs)))
    rows.sort(key=lambda r: -r[3])
    every = [j for jobs in data.values() for j in jobs]
    span = (max(j[4] for j in every) - min(j[4] - j[1] for j in every)) if every else 0.0
    total = ("all", sum(r[1] for r in rows), sum(r[2] for r in rows), sum(r[3] for r in rows),
             max((r[4] for r in rows), default=0.0), max((r[5] for r in rows), default=0.0))
    return rows, total, span


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default="benchmarks")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.folder):
        sys.exit(f"{args.folder}: no such folder (run the pipeline first: every rule writes a benchmark file)")
    rows, total, span = summary(read(args.folder))
    head = ("computation", "jobs", "wall s", "CPU-s", "max RSS MB", "critical path s")
    fmt = (lambda r: f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.0f} | {r[5]:.1f} |") if args.markdown \
        else (lambda r: f"{r[0]:<28}{r[1]:>5}{r[2]:>10.1f}{r[3]:>10.1f}{r[4]:>12.0f}{r[5]:>17.1f}")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|---|" + "---:|" * (len(head) - 1))
    else:
        print(f"{head[0]:<28}{head[1]:>5}{head[2]:>10}{head[3]:>10}{head[4]:>12}{head[5]:>17}")
    for r in rows + [total]:
        print(fmt(r))
    print(f"span (first job start to last job end): {span:.1f} s")


if __name__ == "__main__":
    main()
