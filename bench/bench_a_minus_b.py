"""Benchmark for the Fig. 2 (Conjecture 6.3) computation of Räisä et al. 2024.

(i)  a - b on the authors' grid (delta = 1e-5, 1000 eps x 100 q x 10^4 sigma):
     our binary search over the sorted sigma grid vs the straightforward brute
     force over the full sigma grid (same inputs, identical answer), on a sample
     of eps values; extrapolated to all 1000 eps.
(ii) the exact version (sigma* by root finding) for 1000 eps x 100 q: our
     vectorised safeguarded Newton vs a plain scipy brentq loop on the plain
     floating-point Eq. (45), on a sample of (eps, q), extrapolated.

Run: python bench/bench_a_minus_b.py
"""

import time

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from dpsampling.papers import raisa as en

DELTA = 1e-5
N_SIGMA = 10000


def plain_delta(q, sigma, eps):
    """Eq. (45) in plain floating point, as a straightforward implementation would."""
    c = sigma * np.log((np.exp(eps) - (1 - q)) / q)
    return q * norm.sf(c - 0.5 / sigma) - (np.exp(eps) - (1 - q)) * norm.sf(c + 0.5 / sigma)


def main():
    eps, qs = en.paper_grid(DELTA)
    sample = eps[np.linspace(0, eps.size - 1, 6).astype(int)]

    print("(i) a - b grid, 100 q x 10^4 sigma per eps; sample of", sample.size, "eps")
    t = time.perf_counter()
    ours = en.a_minus_b_grid(sample, DELTA, qs, N_SIGMA)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    peer = en.a_minus_b_grid_bruteforce(sample, DELTA, qs, N_SIGMA)
    t_peer = time.perf_counter() - t
    same = all(np.array_equal(ours[k], peer[k]) for k in ours)
    print(
        f"  ours (binary search): {t_ours:8.3f} s   peer (brute force): {t_peer:8.3f} s   "
        f"ratio {t_peer / t_ours:7.1f}x   identical output: {same}"
    )
    print(
        f"  extrapolated to 1000 eps (1 core): ours {t_ours / sample.size * 1000:7.2f} s, "
        f"peer {t_peer / sample.size * 1000:8.1f} s"
    )
    t = time.perf_counter()
    full = en.a_minus_b_grid(eps, DELTA, qs, N_SIGMA)
    t_full = time.perf_counter() - t
    print(
        f"  ours measured on all 1000 eps (10^9 grid points): {t_full:.3f} s; "
        f"max(a-b) = {full['max_a_minus_b'].max():.6f}, max delta gap = {full['max_delta_gap'].max():.3e}"
    )

    print("(ii) exact a - b at sigma*(q, eps), 1000 eps x 100 q calibrations")
    t = time.perf_counter()
    ex = en.a_minus_b_exact(eps, DELTA, qs)
    t_ex = time.perf_counter() - t
    S = en.sigma_one_step(qs[None, :], eps[:, None], DELTA)
    rng = np.random.default_rng(0)
    ie = rng.integers(0, eps.size, 200)
    iq = rng.integers(0, qs.size, 200)
    t = time.perf_counter()
    ref = []
    for i, j in zip(ie, iq):
        e, q = eps[i], qs[j]
        hi = en.sigma_one_step(1.0, e, DELTA) * 1.01
        ref.append(brentq(lambda s, q=q, e=e: plain_delta(q, s, e) - DELTA, 1e-6 * hi, hi, xtol=1e-14, rtol=1e-13))
    t_ref = time.perf_counter() - t
    ref = np.array(ref)
    rel = np.max(np.abs(S[ie, iq] / ref - 1))
    print(
        f"  ours (vectorised Newton, all 10^5): {t_ex:7.3f} s   peer (scipy brentq loop, 200): "
        f"{t_ref:7.3f} s -> extrapolated 10^5: {t_ref / 200 * 1e5:8.1f} s   ratio "
        f"{t_ref / 200 * 1e5 / t_ex:7.1f}x"
    )
    print(f"  max |sigma_ours / sigma_brentq - 1| on the sample: {rel:.2e}")
    d = ex["max_a_minus_b"] - full["max_a_minus_b"]
    print(
        f"  exact max(a-b) = {ex['max_a_minus_b'].max():.6f}; exact - grid in "
        f"[{d.min():.2e}, {d.max():.2e}] (grid step D log sigma = {en.sigma_grid_log_step(qs[0], N_SIGMA):.4e})"
    )


if __name__ == "__main__":
    main()
