"""The long tier of the random sidedness check (tests/sidedness.py): many seeded settings per sampler, each end
against its independent reference, plus the cost model against reality.

Each setting the cost model admits (predicted ≤ ``--max-predicted`` s) is asked in a child process of its own,
limited to ``--timeout`` s of wall time: the child reports our answer, the references' failures, its CPU seconds
and its peak memory (ru_maxrss), so a question the model mispredicts is measured, not waited for.  Prints one CSV
row per setting and, at the end, per sampler: settings checked, refused by the model, failures, timeouts, and the
worst ratios of actual to predicted CPU time and the peak memory.

The samplers are asked in turn (one setting of each, round robin), so a run stopped by ``--until`` (a UTC time,
HH:MM) still has about as many settings of each; ``--max-predicted-for SAMPLER=SECONDS`` raises one sampler's
admission (truncated Poisson's model predicts at least 6 s for any question).  Our answer's CPU time and peak are
reported before the references run, so a reference that times out is listed as such, not as our timeout.

Usage: python bench/bench_sidedness.py [--seed 0] [--n 50] [--sampler poisson ...] [--max-predicted 60]
       [--max-predicted-for truncated_poisson=10] [--timeout 300] [--until 05:00] [--ladder]
"""

import argparse
import csv
import datetime
import math
import multiprocessing as mp
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import sidedness as sd  # noqa: E402

from dpsampling.engine.errors import ParameterError  # noqa: E402
from dpsampling.samplers import SAMPLERS  # noqa: E402


def _child(setting, ladder, out):
    try:
        t = time.process_time()
        r = sd.answer(setting)
        cpu = time.process_time() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # MiB (Linux: KiB)
    except ParameterError as e:  # a refusal (limits, the reliability floor): counted as refused, its reason listed
        out.put(dict(kind="refused", cpu=time.process_time() - t, flags=str(e)[:300],
                     peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))
        out.put(dict(failures=[], error=""))
        return
    except Exception as e:  # noqa: BLE001 - reported, not hidden: an error on valid input is a finding
        out.put(dict(kind="", lower=None, upper=None, cpu=math.nan, peak_mib=math.nan, failures=[],
                     error=f"{type(e).__name__}: {str(e)[:200]}"))
        return
    flags = ";".join(getattr(r, "flags", None) or [])
    out.put(dict(kind=r.kind, lower=r.lower, upper=r.upper, cpu=cpu, peak_mib=peak, flags=flags))
    try:
        fails = sd.references(setting, r) + (sd.ladder(setting) if ladder else [])
        out.put(dict(failures=fails, error=""))
    except Exception as e:  # noqa: BLE001 - a reference that fails is listed, not taken for our failure
        out.put(dict(failures=[], error=f"reference {type(e).__name__}: {str(e)[:200]}"))


def run_one(setting, timeout, ladder):
    """Our answer (first message of the child) and the references' verdict (second), each within ``timeout``."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(setting, ladder, q))
    p.start()
    res = dict(kind="", lower=None, upper=None, cpu=math.nan, peak_mib=math.nan, flags="", failures=[], error="")
    deadline = time.monotonic() + timeout
    for part in ("answer", "reference"):
        try:
            res.update(q.get(timeout=max(0.1, deadline - time.monotonic())))
        except Exception:  # noqa: BLE001 - queue.Empty: the child is past the limit
            res["error"] = (f"timeout after {timeout:g} s" if part == "answer" else
                            f"reference timeout after {timeout:g} s (our answer took {res['cpu']:.3g} CPU-s)")
            break
        if res["error"]:
            break
        deadline = time.monotonic() + timeout  # the references get their own budget
    if p.is_alive():
        p.kill()
    p.join()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=50, help="settings per sampler")
    ap.add_argument("--sampler", choices=SAMPLERS, action="append")
    ap.add_argument("--max-predicted", type=float, default=60.0)
    ap.add_argument("--max-predicted-for", action="append", default=[], metavar="SAMPLER=SECONDS")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--until", default=None, help="UTC HH:MM after which no new setting starts")
    ap.add_argument("--ladder", action="store_true", help="also the monotonicity ladders (3 more questions each)")
    args = ap.parse_args()
    limit = {name: args.max_predicted for name in SAMPLERS}
    for item in args.max_predicted_for:
        name, sec = item.split("=")
        limit[name] = float(sec)
    stop = None
    if args.until:
        now = datetime.datetime.now(datetime.timezone.utc)
        hh, mm = map(int, args.until.split(":"))
        stop = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if stop <= now:
            stop += datetime.timedelta(days=1)
    w = csv.writer(sys.stdout)
    w.writerow(["seed", "sampler", "setting", "predicted_s", "cpu_s", "cpu_over_predicted", "peak_mib", "kind",
                "lower", "upper", "flags", "failures", "error"])
    names = args.sampler or list(SAMPLERS)
    drawn = {name: sd.settings(args.seed, name, args.n, limit[name]) for name in names}
    stats = {name: dict(checked=0, refused_model=drawn[name][1], answered=0, refused=0, fails=0, errors=0,
                        ref_timeouts=0, worst_ratio=0.0, worst_peak=0.0) for name in names}
    for i in range(args.n):
        for name in names:
            settings = drawn[name][0]
            if i >= len(settings):
                continue
            if stop is not None and datetime.datetime.now(datetime.timezone.utc) >= stop:
                break
            s = settings[i]
            st = stats[name]
            pred = sd.predicted_seconds(s)
            res = run_one(s, args.timeout, args.ladder)
            ratio = res["cpu"] / max(pred, 0.05) if math.isfinite(res["cpu"]) else math.inf
            st["checked"] += 1
            if res["kind"] == "refused":
                st["refused"] += 1
            elif res["kind"]:
                st["answered"] += 1
            if res["kind"]:
                st["worst_ratio"] = max(st["worst_ratio"], ratio)
            if math.isfinite(res["peak_mib"]):
                st["worst_peak"] = max(st["worst_peak"], res["peak_mib"])
            st["fails"] += len(res["failures"])
            if res["error"].startswith("reference"):
                st["ref_timeouts"] += 1
            elif res["error"]:
                st["errors"] += 1
            w.writerow([args.seed, name, str(s), f"{pred:.3g}", f"{res['cpu']:.3g}", f"{ratio:.3g}",
                        f"{res['peak_mib']:.0f}", res["kind"], res["lower"], res["upper"], res.get("flags", ""),
                        " | ".join(res["failures"]), res["error"]])
            sys.stdout.flush()
        else:
            continue
        break
    print("\n# sampler, settings checked, draws refused by the cost model (not run), answered, refused, failures, "
          "errors or timeouts of ours, reference errors or timeouts, worst actual/predicted CPU, worst peak MiB",
          file=sys.stderr)
    for name, st in stats.items():
        print("# " + ", ".join([name] + [f"{v:.3g}" if isinstance(v, float) else str(v) for v in st.values()]),
              file=sys.stderr)
    return 1 if any(st["fails"] for st in stats.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
