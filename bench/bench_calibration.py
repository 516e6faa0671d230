"""Benchmark: σ calibration on Lebeda Fig. 2 points, ours vs plain dp_accounting loops.

Peers, on the same (ε, δ, γ, T):
  A. dp_accounting.pld.accountant.get_smallest_subsampled_gaussian_noise (its own
     discretisation rule min(1e-3, 0.1·ε/T) and binary search to 1e-7; the method
     Räisä et al. use);
  B. plain bisection on log σ over dp_accounting PLDs at the discretisation our
     method ended with, until the bracket is 1e-3 relative (the same accuracy).
Accuracy: every σ is compared with a reference σ (ours at rel_tol=1e-4).

Usage: python bench/bench_calibration.py [--quick]
"""

import argparse
import logging
import math
import time

logging.getLogger().setLevel(logging.ERROR)

from dp_accounting.pld import accountant as pld_accountant  # noqa: E402
from dp_accounting.pld import common, privacy_loss_distribution  # noqa: E402

from dpsampling import accountant  # noqa: E402

DELTA, STEPS = 1e-6, 10_000


def ours(eps, q, rel_tol=1e-3):
    accountant.pld.composed.cache_clear()
    return accountant.calibrate_sigma(eps, DELTA, q=q, steps=STEPS, rel_tol=rel_tol)


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
    ap.add_argument("--quick", action="store_true", help="two points, no reference run")
    args = ap.parse_args()
    points = [(1.0, 1e-3), (1.0, 1e-2), (1.0, 1e-1), (10.0, 1e-3), (2.0, 1e-4)]
    if args.quick:
        points = points[1:3]
    print(f"δ={DELTA:g}, T={STEPS}; times in seconds; err = |σ/σ_ref - 1|")
    print(f"{'ε':>5} {'γ':>7} | {'ours':>7} {'err':>8} {'d':>6} | {'peer A':>7} {'err':>8} | {'peer B':>7} {'err':>8} | A/ours B/ours")
    tot = {"ours": 0.0, "A": 0.0, "B": 0.0}
    for eps, q in points:
        r, t_ours = timed(ours, eps, q)
        ref = r.value if args.quick else ours(eps, q, rel_tol=1e-4).value
        a, t_a = timed(peer_dp_accounting, eps, q)
        b, t_b = timed(peer_bisection, eps, q, r.accuracy["discretization"])
        tot["ours"] += t_ours
        tot["A"] += t_a
        tot["B"] += t_b
        print(f"{eps:5g} {q:7.0e} | {t_ours:7.2f} {abs(r.value / ref - 1):8.1e} {r.accuracy['discretization']:6.0e} | "
              f"{t_a:7.2f} {abs(a / ref - 1):8.1e} | {t_b:7.2f} {abs(b / ref - 1):8.1e} | {t_a / t_ours:6.1f} {t_b / t_ours:6.1f}")
    print(f"total: ours {tot['ours']:.1f}s, peer A {tot['A']:.1f}s (ratio {tot['A'] / tot['ours']:.1f}x), "
          f"peer B {tot['B']:.1f}s (ratio {tot['B'] / tot['ours']:.1f}x)")


if __name__ == "__main__":
    main()
