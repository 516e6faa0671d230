"""Benchmark: one δ(ε) query in Zhu et al.'s Exp. 3 setting (App. E.2), formerly the claims-table row
`zhu_exp3_query_time` (CPU seconds are machine-dependent, so they live here, not in the claims).

Inputs: Poisson-subsampled Gaussian σ = 2, γ = 0.01, k = 1500 compositions, ε = 1, remove direction.
Ours: the φ accountant (dpsampling.engine.cf.cf_delta, certified error).  Peer: dp_accounting's PLD at
discretisation 1e-4 (build + self_compose + query, remove direction).  The paper reports "around
0.2 sec" per query for its double quadrature (their machine).

Run:  python bench/bench_cf_exp3_query.py
"""

from __future__ import annotations

import logging
import time

SIGMA, Q, STEPS, EPS = 2.0, 0.01, 1500, 1.0
PAPER_SECONDS = 0.2


def timed(fn, repeat=3):
    best_wall, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall, best_cpu = min(best_wall, time.perf_counter() - w), min(best_cpu, time.process_time() - c)
    return out, best_wall, best_cpu


def main():
    logging.getLogger().setLevel(logging.ERROR)
    from dpsampling.engine.cf import Gaussian, PoissonSubsampled, cf_delta

    m = [(PoissonSubsampled(Gaussian(SIGMA), Q), STEPS)]
    cf_delta(EPS, m, "remove")  # warm-up (imports, caches)
    (d, err), w, c = timed(lambda: cf_delta(EPS, m, "remove"))
    print(f"ours  φ accountant   δ(1) = {d:.10g} ± {err:.1e}   wall {w:.4f} s  cpu {c:.4f} s")
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        print("peer  dp_accounting not installed: skipped")
        return
    def peer():
        p = pld.from_gaussian_mechanism(SIGMA, sampling_prob=Q, value_discretization_interval=1e-4)
        return p.self_compose(STEPS)._pmf_remove.get_delta_for_epsilon(EPS)
    dp, wp, cp = timed(peer, repeat=1)
    print(f"peer  dp_accounting PLD (d=1e-4)  δ(1) = {dp:.10g}   wall {wp:.4f} s  cpu {cp:.4f} s")
    print(f"ratio peer/ours (cpu): {cp / c:.1f}×;  paper (their machine): about {PAPER_SECONDS} s, "
          f"ours/paper = {c / PAPER_SECONDS:.2f}")


if __name__ == "__main__":
    main()
