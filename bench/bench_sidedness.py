"""The long tier of the random sidedness check (tests/sidedness.py): many seeded settings per sampler, each end
against its independent reference, plus the cost model against reality.

Each setting the cost model admits (predicted ≤ ``--max-predicted`` s) is asked in a child process of its own,
limited to ``--timeout`` s of wall time: the child reports our answer, the references' failures, its CPU seconds
and its peak memory (ru_maxrss), so a question the model mispredicts is measured, not waited for.  Prints one CSV
row per setting and, at the end, per sampler: settings checked, refused by the model, failures, timeouts, and the
worst ratios of actual to predicted CPU time and the peak memory.

Usage: python bench/bench_sidedness.py [--seed 0] [--n 50] [--sampler poisson ...] [--max-predicted 60]
       [--timeout 300] [--ladder]
"""

import argparse
import csv
import math
import multiprocessing as mp
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import sidedness as sd  # noqa: E402

from dpsampling.samplers import SAMPLERS  # noqa: E402


def _child(setting, ladder, out):
    try:
        t = time.process_time()
        r = sd.answer(setting)
        cpu = time.process_time() - t
        fails = sd.references(setting, r) + (sd.ladder(setting) if ladder else [])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # MiB (Linux: KiB)
        out.put(dict(kind=r.kind, lower=r.lower, upper=r.upper, cpu=cpu, peak_mib=peak, failures=fails, error=""))
    except Exception as e:  # noqa: BLE001 - reported, not hidden: an error on valid input is a finding
        out.put(dict(kind="", lower=None, upper=None, cpu=math.nan, peak_mib=math.nan, failures=[],
                     error=f"{type(e).__name__}: {str(e)[:200]}"))


def run_one(setting, timeout, ladder):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(setting, ladder, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return dict(kind="", lower=None, upper=None, cpu=math.nan, peak_mib=math.nan, failures=[],
                    error=f"timeout after {timeout:g} s")
    return q.get() if not q.empty() else dict(kind="", lower=None, upper=None, cpu=math.nan, peak_mib=math.nan,
                                              failures=[], error=f"child exited {p.exitcode}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=50, help="settings per sampler")
    ap.add_argument("--sampler", choices=SAMPLERS, action="append")
    ap.add_argument("--max-predicted", type=float, default=60.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--ladder", action="store_true", help="also the monotonicity ladders (3 more questions each)")
    args = ap.parse_args()
    w = csv.writer(sys.stdout)
    w.writerow(["seed", "setting", "predicted_s", "cpu_s", "cpu_over_predicted", "peak_mib", "kind", "lower",
                "upper", "failures", "error"])
    summary = []
    for name in args.sampler or SAMPLERS:
        settings, refused = sd.settings(args.seed, name, args.n, args.max_predicted)
        fails = errors = 0
        worst_ratio, worst_peak = 0.0, 0.0
        for s in settings:
            pred = sd.predicted_seconds(s)
            res = run_one(s, args.timeout, args.ladder)
            ratio = res["cpu"] / max(pred, 0.05) if math.isfinite(res["cpu"]) else math.inf
            worst_ratio = max(worst_ratio, ratio)
            if math.isfinite(res["peak_mib"]):
                worst_peak = max(worst_peak, res["peak_mib"])
            fails += len(res["failures"])
            errors += bool(res["error"])
            w.writerow([args.seed, str(s), f"{pred:.3g}", f"{res['cpu']:.3g}", f"{ratio:.3g}",
                        f"{res['peak_mib']:.0f}", res["kind"], res["lower"], res["upper"],
                        " | ".join(res["failures"]), res["error"]])
            sys.stdout.flush()
        summary.append((name, len(settings), refused, fails, errors, worst_ratio, worst_peak))
    print("\n# sampler, settings checked, refused by the cost model, failures, errors or timeouts, "
          "worst actual/predicted CPU, worst peak MiB", file=sys.stderr)
    for row in summary:
        print("# " + ", ".join(f"{x:.3g}" if isinstance(x, float) else str(x) for x in row), file=sys.stderr)
    return 1 if any(r[3] for r in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
