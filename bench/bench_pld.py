"""Benchmark: one T-fold composed PLD of the Poisson subsampled Gaussian, both directions.

Peer: dp_accounting 0.6 as documented -- ``from_gaussian_mechanism(σ, pessimistic_estimate=True,
value_discretization_interval=d, sampling_prob=q, use_connect_dots=True).self_compose(T)``
(``--optimistic``: ``pessimistic_estimate=False, use_connect_dots=False``, the privacy buckets).
Ours: ``dpsampling.engine.pld.composed`` -- the same dp_accounting constructors and FFT composition with
hot loops vectorised (the inverse privacy loss per grid point, or per bucket for the optimistic PLD; the
connect-the-dots masses kept as an array instead of dp_accounting's dict round trip; the Chernoff window
bounds of a composition screened so that ~2 of dp_accounting's 40 logsumexp rows are evaluated; z**T of the
spectrum (T ≥ 100) only where it does not underflow to 0).  Same inputs; the output is checked to be identical
(the raw 64-bit patterns of every pmf), so "same accuracy" holds exactly.  Times are process CPU seconds, best
of ``--repeat``.

Settings: points the calibration of Räisä Fig. 1 and Lebeda Fig. 2 visits (σ near the calibrated one), and
two Conjecture 12 points at T = 10^4 (d from its 20000-bin rule: the largest FFTs of that grid).

Usage: python bench/bench_pld.py [--repeat N] [--optimistic]
"""

import argparse
import logging
import time

import numpy as np

logging.getLogger().setLevel(logging.ERROR)

from dp_accounting.pld import privacy_loss_distribution as pldlib  # noqa: E402

from dpsampling.engine import pld  # noqa: E402

# (σ, q, T, d)
SETTINGS = [(0.70, 1e-3, 10, 1e-3), (1.03, 0.03, 10, 1e-3), (7.70, 0.03, 100, 1e-4), (18.7, 0.5, 100, 1e-3),
            (0.64, 1e-3, 1000, 1e-4), (1.27, 0.03, 1000, 1e-4), (0.80, 1e-3, 10000, 1e-4), (2.38, 0.01, 1000, 1e-5),
            (0.97, 1e-3, 10000, 1e-5),  # Räisä Fig. 1, ε = 0.5, T = 1e4, q = 1e-3 (its largest PLDs)
            (0.5676, 0.4642, 10000, 1.029e-3), (5.286, 0.04642, 10000, 1.408e-5)]  # Conjecture 12 grid points


def best(f, repeat, *args):
    times = []
    for _ in range(repeat):
        pld.composed.cache_clear()
        pld.one_step.cache_clear()
        t = time.process_time()
        out = f(*args)
        times.append(time.process_time() - t)
    return out, min(times)


def peer(sigma, q, steps, d, pessimistic, one=None):
    """dp_accounting's composed PLD; with ``one`` (a one-step PLD), its ``self_compose`` of that PLD only."""
    if one is None:
        one = pldlib.from_gaussian_mechanism(sigma, sensitivity=1.0, pessimistic_estimate=pessimistic,
                                             value_discretization_interval=d, sampling_prob=q,
                                             use_connect_dots=pessimistic)
    return one.self_compose(steps)


def same(a, b):
    for attr in ("_pmf_remove", "_pmf_add"):
        x, y = getattr(a, attr), getattr(b, attr)
        if type(x) is not type(y) or x._infinity_mass != y._infinity_mass:
            return False
        if hasattr(x, "_loss_probs"):  # sparse
            if list(x._loss_probs.items()) != list(y._loss_probs.items()):
                return False
        elif not (x._lower_loss == y._lower_loss
                  and np.array_equal(x._probs.view(np.uint64), y._probs.view(np.uint64))):
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--optimistic", action="store_true", help="the optimistic (privacy-buckets) PLD")
    ap.add_argument("--compose-only", action="store_true",
                    help="time the T-fold composition of the same one-step PLD only (dp_accounting's self_compose "
                         "vs ours)")
    args = ap.parse_args()
    pessimistic = not args.optimistic
    print("optimistic (privacy buckets)" if args.optimistic else "pessimistic (connect the dots)",
          "- composition only" if args.compose_only else "")
    print(f"{'σ':>6} {'q':>6} {'T':>6} {'d':>6} | {'dp_accounting':>13} {'ours':>7} {'ratio':>6} | identical")
    tot_p = tot_o = 0.0
    for sigma, q, steps, d in SETTINGS:
        one = (pld.pessimistic_pld if pessimistic else pld.optimistic_pld)(sigma, q, d) if args.compose_only else None
        ref, t_p = best(peer, args.repeat, sigma, q, steps, d, pessimistic, one)
        if one is None:
            ours, t_o = best(pld.composed, args.repeat, sigma, q, steps, pessimistic, d)
        else:
            ours, t_o = best(pld.self_compose, args.repeat, one, steps)
        tot_p, tot_o = tot_p + t_p, tot_o + t_o
        print(f"{sigma:6g} {q:6g} {steps:6d} {d:6g} | {t_p:13.3f} {t_o:7.3f} {t_p / t_o:5.1f}x | {same(ref, ours)}",
              flush=True)
    print(f"total: dp_accounting {tot_p:.2f} s, ours {tot_o:.2f} s CPU: {tot_p / tot_o:.1f}x")


if __name__ == "__main__":
    main()
