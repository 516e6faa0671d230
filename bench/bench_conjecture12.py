"""Benchmark: one Conjecture 12 margin (Lebeda et al. §5: is δ_add ≤ δ_remove?) per grid point.

Ours: ``dpsampling.papers.lebeda.directions.conjecture12_margin`` at the four (σ, q, steps) points the tests
check, on 41 ε in [0, 4]: pessimistic and optimistic PLDs per direction, composed, read off on the ε grid.
Peer, same inputs and discretisation: dp_accounting's own pessimistic and optimistic PLDs of the
Poisson-subsampled Gaussian (both directions inside one PLD), self-composed ``steps`` times, δ on the same
ε grid -- the add/remove maximum a plain dp_accounting user gets (it does not give each direction apart).
Times are CPU seconds of this process (the machine may be shared) of a first call: the library caches composed
PLDs, so a repeat would time the cache.  A former test asserted < 3 CPU-s per point.

Run:  python bench/bench_conjecture12.py
"""

from __future__ import annotations

import time

import numpy as np

from dpsampling.papers.lebeda import directions as D

POINTS = [(0.5, 0.1, 2), (1.0, 0.5, 10), (2.0, 0.01, 3), (0.3, 1.0, 3)]
EPS = np.linspace(0.0, 4.0, 41)
def cpu(fn):
    c = time.process_time()
    out = fn()
    return time.process_time() - c, out


def peer(sigma, q, steps, d):
    from dp_accounting.pld import privacy_loss_distribution as pld

    out = []
    for pessimistic in (True, False):
        p = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=d,
                                        pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
        p = p.self_compose(steps) if steps > 1 else p
        out.append([p.get_delta_for_epsilon(float(e)) for e in EPS])
    return out


def main():
    print(f"{'(σ, q, steps)':18s} {'ours [s]':>9s} {'peer [s]':>9s} {'ratio':>7s}  classification")
    for sigma, q, steps in POINTS:
        t_ours, r = cpu(lambda: D.conjecture12_margin(sigma, q, steps, EPS))
        try:
            t_peer, _ = cpu(lambda: peer(sigma, q, steps, r.discretization))
            peer_s, ratio = f"{t_peer:9.3f}", f"{t_peer / max(t_ours, 1e-9):7.2f}"
        except ImportError:
            peer_s, ratio = f"{'n/a':>9s}", f"{'n/a':>7s}"
        print(f"{str((sigma, q, steps)):18s} {t_ours:9.3f} {peer_s} {ratio}  {sorted(set(r.classification))}")


if __name__ == "__main__":
    main()
