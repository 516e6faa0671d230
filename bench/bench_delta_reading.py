"""Benchmark: δ(ε) read off a dense PLD pmf at a sorted array of ε.

Peer: dp_accounting 0.6, ``DensePLDPmf.get_delta_for_epsilon(array)`` (its ``_get_delta_for_epsilon_vectorized``:
a Python loop from the largest loss down, one loss per step).  Ours: ``dpsampling.engine.pld.delta_for_epsilons``
(the same running sums by ``np.cumsum``).  Same inputs; the outputs are checked to be identical bit for bit, so
"same accuracy" holds exactly.  Times are process CPU seconds, best of ``--repeat``.

Pmfs: the composed pessimistic Poisson pmf of a Räisä Fig. 1 point and of a Lebeda Fig. 2 point, and the
optimistic max-statistic pmfs of a balls-and-bins lower end over 5 epochs (the pipeline's balls_and_bins
computation reads such pmfs at one ε per call, ~180 calls).

Usage: python bench/bench_delta_reading.py [--repeat N]
"""

import argparse
import logging

import numpy as np
from _timing import best_time

logging.getLogger().setLevel(logging.ERROR)

from dpsampling.engine import pld  # noqa: E402
from dpsampling.samplers import _max_statistic as ms  # noqa: E402


def pmfs():
    out = []
    for sigma, q, steps, d in [(0.97, 1e-3, 10000, 1e-4), (0.80, 1e-3, 10000, 1e-4)]:
        comp = pld.composed(sigma, q, steps, True, d)
        out.append((f"Poisson σ={sigma} q={q} T={steps} d={d} (remove)", comp._pmf_remove))
    for name, pmf in ms.optimistic_pmfs(1.0, 0.0, 1.0, 100, epochs=5).items():
        out.append((f"balls-and-bins max statistic σ=1 T=100 E=5 ({name})", pmf))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'pmf':58s} {'entries':>8s} {'#ε':>4s} {'ours s':>9s} {'dp_accounting s':>16s} {'ratio':>7s} identical")
    for name, pmf in pmfs():
        losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
        for n in (1, 21, 200):
            eps = np.linspace(0.0, float(losses[-1]) * 0.8, n) if n > 1 else np.array([0.5])
            t_ours, ours = best_time(lambda: pld.delta_for_epsilons(pmf, eps), args.repeat)
            t_theirs, theirs = best_time(lambda: np.asarray(pmf.get_delta_for_epsilon(eps)), args.repeat)
            same = np.array_equal(ours, theirs, equal_nan=True)
            print(f"{name:58s} {len(pmf._probs):8d} {n:4d} {t_ours:9.5f} {t_theirs:16.5f} "
                  f"{t_ours / t_theirs:7.3f} {same}")


if __name__ == "__main__":
    main()
