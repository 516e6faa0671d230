"""Benchmark: the cost model (``SamplerSpec.predict_seconds``) against measured CPU and wall seconds.

For each point of a grid, predicts the time of one question with the sampler's cost model, then asks it
(``account(..., force=True)``) and prints predicted, CPU and wall seconds and their ratio.  The machine
may be shared: CPU seconds are the figure to compare (wall seconds grow with the load).

``--fresh``: each question in a forked child of a process that has imported the package and dp_accounting (as a
CLI process has by the time it asks), reporting that child's CPU seconds and peak resident memory against the
memory model's prediction (``Cost.bytes``).  ``--edge``: the Poisson grid of 1–9 steps at σ ≤ 0.17 (issue 38:
the loss support of rare batches, not the composition, sets the cost there).

Usage: python bench/bench_cost_model.py [--sampler balls_and_bins] [--quick] [--edge] [--fresh]
       [--max-predicted 600]
"""

import argparse
import itertools
import multiprocessing as mp
import resource
import time

from dpsampling.samplers import SAMPLERS, account, get_spec
from dpsampling.samplers.spec import Question

GRIDS = {
    "balls_and_bins": dict(sigma=(0.5, 1.0, 2.0, 3.0), steps=(100, 235, 1000, 5005), epochs=(1, 10, 60, 90),
                           delta=(1e-5, 1e-6)),
    "poisson": dict(sigma=(0.5, 1.0, 2.0), steps=(1000, 10_000, 100_000), epochs=(1, 10), q=(1e-3, 1e-2)),
    "wor": dict(sigma=(1.0,), steps=(10_000,), epochs=(1, 10), q=(1e-3, 1e-2)),
    "shuffle": dict(sigma=(0.5, 1.0, 2.0), steps=(100, 1000, 10_000), epochs=(1, 10)),
    "deterministic": dict(sigma=(1.0,), steps=(1000,), epochs=(1, 100)),
}
EDGE = {"poisson": dict(sigma=(0.0587, 0.1, 0.1538), steps=(1, 2, 9), epochs=(1, 2), q=(6.03e-5, 0.01, 0.275),
                        delta=(4.68e-7, 3.22e-6))}
QUICK = {"balls_and_bins": dict(sigma=(1.0, 2.0), steps=(100, 1000), epochs=(1, 5))}


def _ask(name, delta, kw, out):
    c0, w0 = time.process_time(), time.perf_counter()
    r = account(name, "epsilon", delta, force=True, **kw)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    out.put((cpu, wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, r.value))


def _fresh(name, delta, kw):
    """(CPU s, wall s, peak MiB, value) of one question in a forked child."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_ask, args=(name, delta, kw, q))
    p.start()
    res = q.get()
    p.join()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", choices=SAMPLERS, action="append")
    ap.add_argument("--quick", action="store_true", help="a small grid")
    ap.add_argument("--max-predicted", type=float, default=600.0, help="skip points predicted slower than this")
    ap.add_argument("--delta", type=float, help="δ (default: the grid's δ values, else 1e-5)")
    ap.add_argument("--method", help="the sampler's method (default: its default method)")
    ap.add_argument("--edge", action="store_true", help="the small-steps, small-σ Poisson grid")
    ap.add_argument("--fresh", action="store_true", help="each question in a fresh child: CPU and peak memory")
    args = ap.parse_args()
    if args.fresh:
        import dp_accounting  # noqa: F401 - imported before the fork, as a CLI process has it when it asks
    print("sampler,method,delta,sigma,steps,epochs,q,predicted_s,cpu_s,wall_s,cpu_over_predicted,value,"
          "predicted_mib,peak_mib,peak_over_predicted")
    for name in args.sampler or SAMPLERS:
        grids = EDGE if args.edge else (QUICK if args.quick else GRIDS)
        grid = grids.get(name, None if args.edge else GRIDS.get(name))
        if grid is None:
            continue
        spec = get_spec(name)
        qs = grid.get("q", (None,))
        deltas = (args.delta,) if args.delta else grid.get("delta", (1e-5,))
        method = args.method or spec.default_method
        for delta, sigma, steps, epochs, q in itertools.product(deltas, grid["sigma"], grid["steps"], grid["epochs"],
                                                                qs):
            question = Question("epsilon", sigma=sigma, steps=steps, epochs=epochs, q=q, target=delta, method=method)
            pred = spec.predict_seconds(question)
            pred_mib = spec.cost(question).bytes / 2**20
            head = f"{name},{method},{delta:g},{sigma},{steps},{epochs},{q},{pred:.3g}"
            if pred > args.max_predicted:
                print(f"{head},skipped,,,,{pred_mib:.0f},,", flush=True)
                continue
            kw = dict(sigma=sigma, steps=steps, epochs=epochs, q=q, method=method)
            if args.fresh:
                cpu, wall, peak, value = _fresh(name, delta, kw)
            else:
                c0, w0 = time.process_time(), time.perf_counter()
                value = account(name, "epsilon", delta, force=True, **kw).value
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            print(f"{head},{cpu:.3g},{wall:.3g},{cpu / pred:.2f},{value:.6g},{pred_mib:.0f},{peak:.0f},"
                  f"{peak / max(pred_mib, 1):.2f}", flush=True)


if __name__ == "__main__":
    main()
