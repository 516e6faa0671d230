"""Benchmark: the cost model (``SamplerSpec.predict_seconds``) against measured CPU and wall seconds.

For each point of a grid, predicts the time of one question with the sampler's cost model, then asks it
(``account(..., force=True)``) and prints predicted, CPU and wall seconds and their ratio.  The machine
may be shared: CPU seconds are the figure to compare (wall seconds grow with the load).

Usage: python bench/bench_cost_model.py [--sampler balls_and_bins] [--quick] [--max-predicted 600]
"""

import argparse
import itertools
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
QUICK = {"balls_and_bins": dict(sigma=(1.0, 2.0), steps=(100, 1000), epochs=(1, 5))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", choices=SAMPLERS, action="append")
    ap.add_argument("--quick", action="store_true", help="a small grid")
    ap.add_argument("--max-predicted", type=float, default=600.0, help="skip points predicted slower than this")
    ap.add_argument("--delta", type=float, help="δ (default: the grid's δ values, else 1e-5)")
    ap.add_argument("--method", help="the sampler's method (default: its default method)")
    args = ap.parse_args()
    print("sampler,method,delta,sigma,steps,epochs,q,predicted_s,cpu_s,wall_s,cpu_over_predicted,value")
    for name in args.sampler or SAMPLERS:
        grid = (QUICK if args.quick else GRIDS).get(name, GRIDS.get(name))
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
            head = f"{name},{method},{delta:g},{sigma},{steps},{epochs},{q},{pred:.3g}"
            if pred > args.max_predicted:
                print(f"{head},skipped,,,", flush=True)
                continue
            c0, w0 = time.process_time(), time.perf_counter()
            r = account(name, "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, q=q, method=method,
                        force=True)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            print(f"{head},{cpu:.3g},{wall:.3g},{cpu / pred:.2f},{r.value:.6g}", flush=True)


if __name__ == "__main__":
    main()
