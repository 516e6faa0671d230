"""Benchmark: dpsampling.engine.montecarlo vs a straightforward scipy.stats Monte Carlo.

Same inputs and accuracy for both: the paper's App. B.2 setting (α = 0.001,
β = 0.01 → N = 3,342,306 as printed, |E| = 40, k = 2), subsampled Laplace
(WOR, scale 1, γ = 0.3) and Gaussian (Poisson, σ = 1, γ = 0.3), both
directions.  The peer is what one writes from B.2 directly: per chunk,
scipy.stats ``.rvs`` for the output, ``.logpdf`` for the densities,
``np.logaddexp`` for the mixture, and one ``mean((1 - e^{ε-Y})_+)`` pass per
ε.  Both run single-threaded in this process; each timing is the best of
``REPEAT`` runs, in CPU seconds of this process (the machine is shared).  Also checks the two estimates agree
within their Hoeffding bands.

Run: python bench/bench_montecarlo.py
"""

from __future__ import annotations


import _timing
import numpy as np
from scipy import stats

from dpsampling.engine.montecarlo import hoeffding_half_width, mc_privacy_curve
from dpsampling.papers.lebeda.directions import SHIFT

N_PAPER = 3_342_306  # App. B.2 (printed)
EPS = np.linspace(0.0, 3.0, 40)
STEPS = 2
REPEAT = 3
CHUNK = 2**16


def scipy_peer(mechanism, scale, q, steps, eps, n, seed, sampler, direction, chunk=CHUNK):
    """Straightforward scipy.stats implementation of App. B.2 (the peer)."""
    dist = stats.norm if mechanism == "gaussian" else stats.laplace
    shift = SHIFT[sampler]
    rng = np.random.default_rng(seed)
    total = np.zeros(len(eps))
    done = 0
    while done < n:
        m = min(chunk, n - done)
        y = dist.rvs(loc=0.0, scale=scale, size=(m, steps), random_state=rng)
        if direction == "remove":  # sample from the mixture
            y = y + shift * (rng.random((m, steps)) < q)
        log_base = dist.logpdf(y, 0.0, scale)
        log_mix = np.logaddexp(np.log1p(-q) + log_base,
                               np.log(q) + dist.logpdf(y, shift, scale))
        loss = (log_base - log_mix) if direction == "add" else (log_mix - log_base)
        ysum = loss.sum(axis=1)
        for i, e in enumerate(eps):
            total[i] += np.maximum(0.0, 1.0 - np.exp(e - ysum)).sum()
        done += m
    return total / n


def best_time(fn, repeat=REPEAT):
    return _timing.best_time(fn, repeat)


def main():
    # the third case is the former timed test (tests: mc_privacy_curve at the paper's N; it asserted < 5 CPU-s)
    cases = [("laplace", 1.0, 0.3, "wor"), ("gaussian", 1.0, 0.3, "poisson"), ("laplace", 1.5, 0.7, "wor")]
    alpha = hoeffding_half_width(N_PAPER, 0.01, EPS.size)
    print(f"N = {N_PAPER:,} samples, |E| = {EPS.size}, k = {STEPS}, Hoeffding α(β=0.01) = {alpha:.5f}")
    print(f"{'case':34s} {'ours [s]':>9s} {'scipy [s]':>10s} {'ratio':>7s} "
          f"{'ours Y/s':>10s} {'peer Y/s':>10s} {'max|diff|':>10s}")
    ratios = []
    for mech, scale, q, sampler in cases:
        for direction in ("add", "remove"):
            args = (mech, scale, q, STEPS, EPS, N_PAPER)
            t_ours, ours = best_time(lambda a=args, s=sampler, d=direction: mc_privacy_curve(*a, 1, SHIFT[s], d))
            t_peer, peer = best_time(lambda a=args, s=sampler, d=direction: scipy_peer(*a, 2, s, d))
            diff = float(np.max(np.abs(ours.estimate - peer)))
            assert diff <= 2 * alpha, f"estimates disagree beyond 2α: {diff}"
            ratios.append(t_peer / t_ours)
            name = f"{mech}/{sampler}/{direction} s={scale} γ={q}"
            print(f"{name:34s} {t_ours:9.3f} {t_peer:10.3f} {t_peer / t_ours:7.1f} "
                  f"{N_PAPER / t_ours:10.3g} {N_PAPER / t_peer:10.3g} {diff:10.2e}")
    print(f"speed-up (privacy-loss samples per second, one core): "
          f"min {min(ratios):.1f}x, median {float(np.median(ratios)):.1f}x")
    # floor for the Gaussian: drawing the k·N standard normals alone (numpy's ziggurat,
    # the same generator the peer uses through scipy.stats.norm.rvs)
    rng = np.random.default_rng(0)
    buf = np.empty((2**15, STEPS))
    t_norm, _ = best_time(lambda: [rng.standard_normal(out=buf) for _ in range(-(-N_PAPER // 2**15))])
    print(f"Gaussian floor: {STEPS}·N standard normals alone take {t_norm:.3f} s "
          f"({t_norm / (STEPS * N_PAPER) * 1e9:.1f} ns each)")


if __name__ == "__main__":
    main()
