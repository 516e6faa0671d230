"""slurm_jobs.py T0 < `scontrol show job -o`: one line per SLURM job of a run (seconds since the Unix time T0:
submitted, started, ended; CPUs; name), then the totals that say where a cluster run's wall time goes:
the sum of the jobs' run times, the most jobs running at once, and the time with no job running.

Used by tests/cluster/slurm_smoke.sh after the smoke run through SLURM (the test cluster keeps finished jobs
for MinJobAge seconds, so `scontrol` still lists them).
"""

import sys
from datetime import datetime


def _seconds(stamp: str, t0: float) -> float | None:
    if stamp in ("", "None", "Unknown"):
        return None
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S").timestamp() - t0


def parse(lines, t0: float) -> list[dict]:
    jobs = []
    for line in lines:
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "JobId" not in fields:
            continue
        jobs.append({
            "id": int(fields["JobId"]),
            "name": fields.get("JobName", "?"),
            "comment": fields.get("Comment", ""),
            "cpus": fields.get("NumCPUs", "?"),
            "state": fields.get("JobState", "?"),
            "submit": _seconds(fields.get("SubmitTime", ""), t0),
            "start": _seconds(fields.get("StartTime", ""), t0),
            "end": _seconds(fields.get("EndTime", ""), t0),
        })
    return sorted(jobs, key=lambda j: j["id"])


def summary(jobs: list[dict]) -> list[str]:
    out = [f"{'job':>5} {'submit':>7} {'start':>7} {'end':>7} {'run':>6} cpus  state      what"]
    for j in jobs:
        t = {k: float("nan") if j[k] is None else j[k] for k in ("submit", "start", "end")}
        run = t["end"] - t["start"]
        what = (j["comment"] or j["name"])[:90]
        out.append(f"{j['id']:>5} {t['submit']:>7.0f} {t['start']:>7.0f} {t['end']:>7.0f} {run:>6.0f} "
                   f"{j['cpus']:>4}  {j['state']:<10} {what}")
    done = [j for j in jobs if j["state"] not in ("PENDING", "RUNNING") and j["start"] is not None
            and j["end"] is not None and j["end"] >= j["start"]]
    if done:
        events = sorted([(j["start"], 1) for j in done] + [(j["end"], -1) for j in done])
        running = most = 0
        idle = 0.0
        last = 0.0
        for t, step in events:
            if running == 0:
                idle += max(0.0, t - last)
            running += step
            most = max(most, running)
            last = t
        out.append(f"{len(jobs)} SLURM jobs: {sum(j['end'] - j['start'] for j in done):.0f} s of job run time, "
                   f"at most {most} running at once, {idle:.0f} s with none running before the last one ended "
                   f"(last ended at {max(j['end'] for j in done):.0f} s)")
    return out


if __name__ == "__main__":
    print("\n".join(summary(parse(sys.stdin, float(sys.argv[1])))))
