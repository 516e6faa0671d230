"""The certified Poisson interval (default ``account("poisson", ...)``) against today's PLD answer and against
dp_accounting's pessimistic + optimistic PLD pair at the discretisation that reaches the same width.

Per point (σ, q, total steps, δ):

* ours: ``account("poisson", "epsilon", δ, ...)``: [lower, upper], relative width, CPU s, the method of each end;
* today: ``method="pld"`` (pessimistic PLD refined to rel_tol 1e-3; ``lower`` = dp_accounting's optimistic
  privacy-bucket PLD at that discretisation);
* dp_accounting's pair: pessimistic (connect-the-dots) + optimistic (privacy buckets) PLDs at d = 1e-3,
  1e-4, ... until their relative width is ≤ ours, or the next level is predicted to exceed the time cap; CPU s
  of that last level and the ratio to ours (built by the engine's bit-for-bit copies of dp_accounting's
  builders, faster than dp_accounting's own).

Caches are cleared before every measurement.  Prints a markdown table; run:
``PYTHONPATH=. python bench/bench_poisson_interval.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

from dpsampling.engine import dominated_pld, pld
from dpsampling.samplers import account

#: (σ, q, total steps, δ): the README's runs (MNIST, CIFAR-10-like, ImageNet-like) and a σ × q × steps grid
POINTS = [(1.1, 256 / 60000, 235 * 60, 1e-5), (1.0, 256 / 50000, 196 * 100, 1e-5),
          (1.0, 256 / 1281167, 5005 * 10, 1e-6), (1.0, 0.01, 1, 1e-5), (0.6, 0.5, 10, 1e-5), (3.0, 0.1, 1000, 1e-5),
          (0.5, 0.01, 1000, 1e-5), (0.8, 1e-3, 10**4, 1e-5), (2.0, 0.01, 10**5, 1e-5), (0.7, 1e-3, 10**6, 1e-5),
          (1.0, 0.004, 10**6, 1e-5)]
QUICK = POINTS[:3]
#: CPU seconds beyond which the dp_accounting pair is not refined further (next level ≈ 10× the last)
PAIR_CAP = 60.0


def _clear():
    pld.composed.cache_clear()
    dominated_pld.composed.cache_clear()


def _timed(fn):
    _clear()
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def _pair(sigma, q, steps, delta, width):
    """dp_accounting's pessimistic/optimistic pair refined until its relative width ≤ ``width``."""
    d, last = 1e-3, None
    while d >= 1e-6 * (1 - 1e-9):
        try:
            (up, lo), cpu = _timed(lambda: (pld.epsilon(delta, sigma, q, steps, "add_remove", True, d),
                                            pld.epsilon(delta, sigma, q, steps, "add_remove", False, d)))
        except MemoryError:  # the optimistic pair's composition window outgrows memory at large T
            print(f"<!-- dp_accounting pair out of memory at d = {d:g} -->")
            break
        w = (up - lo) / up if up > 0 else 0.0
        last = (d, lo, up, w, cpu)
        if w <= width or cpu * 10 > PAIR_CAP or (steps >= 10**5 and d <= 1e-5):
            break  # at 1e6 steps the pair at d = 1e-6 needs > 28 GB (the optimistic pair's window)
        d = float(f"{d / 10:.0e}")
    return last if last is not None else (d, float("nan"), float("nan"), float("inf"), float("nan"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the three README runs only")
    ap.add_argument("--start", type=int, default=0, help="skip the first START points")
    args = ap.parse_args(argv)
    print("| σ | q | steps | δ | ours [lower, upper] | rel. width | CPU s | lower by | upper by | today (pld) "
          "[lower, upper] | today rel. width | today CPU s | dp_accounting pair: d, rel. width, CPU s | ratio |")
    print("|" + "---|" * 14)
    for sigma, q, steps, delta in (QUICK if args.quick else POINTS)[args.start:]:
        r, cpu = _timed(lambda: account("poisson", "epsilon", delta, sigma=sigma, steps=steps, q=q))
        width = (r.upper - r.lower) / r.upper if r.upper else 0.0
        t, tcpu = _timed(lambda: account("poisson", "epsilon", delta, sigma=sigma, steps=steps, q=q, method="pld"))
        twidth = (t.upper - t.lower) / t.upper if t.upper else 0.0
        d, _, _, pw, pcpu = _pair(sigma, q, steps, delta, max(width, 1e-12))
        reached = "" if pw <= max(width, 1e-12) else " (not reached)"
        print(f"| {sigma:g} | {q:.4g} | {steps} | {delta:g} | [{r.lower:.7g}, {r.upper:.7g}] | {width:.1e} | "
              f"{cpu:.2f} | {r.accuracy.get('lower_method', r.method)} | {r.accuracy.get('upper_method', r.method)} | "
              f"[{t.lower:.5g}, {t.upper:.7g}] | {twidth:.1e} | {tcpu:.2f} | {d:g}, {pw:.1e}{reached}, {pcpu:.2f} | "
              f"{pcpu / cpu if cpu > 0 else float('nan'):.2g}× |", flush=True)


if __name__ == "__main__":
    main()
