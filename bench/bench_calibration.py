"""Benchmark: σ calibration on Lebeda Fig. 2 points, ours vs plain dp_accounting loops.

Ours: dpsampling.engine.accountant.calibrate_sigma_curve over the sampled γ of one
Fig. 2 line (what the pipeline runs), and calibrate_sigma point by point.
Peers, on the same (ε, δ, γ, T):
  A. dp_accounting.pld.accountant.get_smallest_subsampled_gaussian_noise (its own
     discretisation rule min(1e-3, 0.1·ε/T) and binary search to 1e-7; the method
     Räisä et al. use);
  B. plain bisection on log σ over dp_accounting PLDs at the discretisation our
     method ended with, until the bracket is 1e-3 relative (the same accuracy).
Accuracy: every σ is compared with a reference σ (ours at rel_tol=1e-4).

``--fig2``: instead, the whole Lebeda Fig. 2 (Poisson, ε = 1, 2, 5, 10, the pipeline's 41-point γ grid
logspace(-4, 0, 41)): CPU per curve and the mean number of PLD evaluations per warm-started σ at the final
discretisation (issue 15 target: ≤ 2; the cold first point of each curve excluded) and in all (with the
cheaper evaluations at 10·d and 100·d).  ``--fig1``: the same count on Räisä et al. Fig. 1's curves (δ = 1e-5,
q = logspace(-3, 0, 100), every ε of the figure, T = 10, 100, 1000; ``--fig1-steps`` for others).

Measured (issue 15, CPU seconds with OPENBLAS_NUM_THREADS=1, evaluations at the final d per warm σ):
  before (90007f9): Fig. 2 2.20 (16.9 s for the four curves), --fig1 2.01 (62.9 s);
  after: Fig. 2 1.79 (15.2 s), --fig1 1.23 (52.8 s); Räisä Fig. 1 at paper grade (all 2382 PLD σ of the
  pipeline, T up to 1e5): 2.01 -> 1.26.

Usage: python bench/bench_calibration.py [--eps 1] [--points 5] [--peer-a-points 2] | --fig2 | --fig1
"""

import argparse
import logging
import math
import time

logging.getLogger().setLevel(logging.ERROR)

from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld import common, privacy_loss_distribution

from dpsampling.engine import accountant

DELTA, STEPS = 1e-6, 10_000


def ours(eps, q, rel_tol=1e-3):
    accountant.pld.composed.cache_clear()
    return accountant.calibrate_sigma(eps, DELTA, q=q, total_steps=STEPS, rel_tol=rel_tol)


def peer_dp_accounting(eps, q):
    params = common.DifferentialPrivacyParameters(eps, DELTA)
    return pld_accountant.get_smallest_subsampled_gaussian_noise(params, STEPS, sampling_prob=q)


def peer_bisection(eps, q, d, rel=1e-3):
    hi = accountant._analytic_sigma(eps, DELTA) * math.sqrt(STEPS)  # no amplification: always sufficient
    lo = hi * 1e-3
    while hi / lo > 1 + rel:
        mid = math.sqrt(lo * hi)
        pld = privacy_loss_distribution.from_gaussian_mechanism(mid, sampling_prob=q, value_discretization_interval=d)
        if pld.self_compose(STEPS).get_epsilon_for_delta(DELTA) <= eps:
            hi = mid
        else:
            lo = mid
    return hi


def timed(f, *a):
    t = time.perf_counter()
    v = f(*a)
    return v, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--points", type=int, default=5, help="γ values sampled log-uniformly from Fig. 2's [1e-4, 1)")
    ap.add_argument("--peer-a-points", type=int, default=2, help="peer A is slow: run it on this many γ only")
    ap.add_argument("--fig2", action="store_true", help="the whole Lebeda Fig. 2 grid: evaluations per σ")
    ap.add_argument("--fig1", action="store_true", help="Räisä Fig. 1 curves: evaluations per σ")
    ap.add_argument("--fig1-steps", type=int, nargs="+", default=[10, 100, 1000])
    args = ap.parse_args()
    import numpy as np

    if args.fig2:
        return evaluations_per_sigma("Lebeda Fig. 2", DELTA, STEPS, np.logspace(-4, 0, 41), (1.0, 2.0, 5.0, 10.0))
    if args.fig1:
        return evaluations_per_sigma("Räisä Fig. 1", 1e-5, args.fig1_steps, np.logspace(-3, 0, 100),
                                     (0.125, 0.25, 0.5, 1.0, 2.0, 4.0))

    qs = [float(q) for q in np.geomspace(1e-4, 0.5, args.points)]
    eps = args.eps
    print(f"ε={eps:g}, δ={DELTA:g}, T={STEPS}; {len(qs)} γ values; times in seconds; err = |σ/σ_ref - 1|")
    accountant.pld.composed.cache_clear()
    accountant._poisson_curve.cache_clear()
    curve, t_curve = timed(lambda: accountant.calibrate_sigma_curve(eps, DELTA, qs, total_steps=STEPS))
    refs = [ours(eps, q, rel_tol=1e-4).value for q in qs]
    print(f"ours, curve (pipeline): {t_curve:.1f}s total, {t_curve / len(qs):.2f}s/point, "
          f"max err {max(abs(r.value / f - 1) for r, f in zip(curve, refs)):.1e}")
    print(f"{'γ':>8} | {'ours 1pt':>8} {'err':>8} {'d':>6} | {'peer A':>8} {'err':>8} | {'peer B':>8} {'err':>8}")
    tot = {"ours": 0.0, "A": 0.0, "B": 0.0, "A_ours": 0.0}
    for i, (q, ref) in enumerate(zip(qs, refs)):
        r, t_ours = timed(ours, eps, q)
        b, t_b = timed(peer_bisection, eps, q, r.accuracy["discretization"])
        tot["ours"] += t_ours
        tot["B"] += t_b
        a_txt = f"{'skipped':>8} {'':>8}"
        if i < args.peer_a_points:
            a, t_a = timed(peer_dp_accounting, eps, q)
            tot["A"] += t_a
            tot["A_ours"] += t_curve / len(qs)
            a_txt = f"{t_a:8.2f} {abs(a / ref - 1):8.1e}"
        print(f"{q:8.1e} | {t_ours:8.2f} {abs(r.value / ref - 1):8.1e} {r.accuracy['discretization']:6.0e} | "
              f"{a_txt} | {t_b:8.2f} {abs(b / ref - 1):8.1e}")
    print(f"peer B (bisection, same d, 1e-3): {tot['B']:.1f}s vs ours curve {t_curve:.1f}s: "
          f"ratio {tot['B'] / t_curve:.1f}x (vs ours point by point {tot['ours']:.1f}s: {tot['B'] / tot['ours']:.1f}x)")
    if tot["A"]:
        print(f"peer A (dp_accounting get_smallest_subsampled_gaussian_noise) on {args.peer_a_points} points: "
              f"{tot['A']:.1f}s vs ours curve (per-point share) {tot['A_ours']:.1f}s: ratio {tot['A'] / tot['A_ours']:.1f}x")


def evaluations_per_sigma(name, delta, steps_values, q_grid, eps_values):
    """CPU per curve and mean PLD evaluations per warm-started σ (the first, cold, point of each curve excluded)."""
    import numpy as np

    qs = [float(q) for q in q_grid]
    steps_values = np.atleast_1d(steps_values)
    print(f"{name}: δ={delta:g}, T={', '.join(str(t) for t in steps_values)}, {len(qs)} γ in "
          f"[{qs[0]:g}, {qs[-1]:g}], Poisson; CPU seconds")
    warm_fine, warm_all, total = [], [], 0.0
    for steps in steps_values:
        for eps in eps_values:
            accountant.pld.composed.cache_clear()
            accountant._poisson_curve.cache_clear()
            t = time.process_time()
            curve = accountant.calibrate_sigma_curve(eps, delta, qs, total_steps=int(steps))
            t = time.process_time() - t
            total += t
            pld = [r for r in curve if r.method == "pld"][1:]  # the first point is a cold start
            fine = [r.accuracy["pld_evaluations_at_discretization"] for r in pld]
            every = [r.accuracy["pld_evaluations"] for r in pld]
            warm_fine += fine
            warm_all += every
            print(f"T={steps:>6} ε={eps:5g}: {t:6.1f} s, per warm σ: {np.mean(fine):.2f} PLD evaluations at the "
                  f"final d (max {max(fine)}), {np.mean(every):.2f} in all")
    print(f"all curves: {total:.1f} s CPU; mean PLD evaluations per warm σ at the final d "
          f"{np.mean(warm_fine):.2f} (target ≤ 2), in all {np.mean(warm_all):.2f}")


if __name__ == "__main__":
    main()
