"""Benchmark: multi-epoch shuffle lower bound (dynamic shuffling, E epochs) — ε(δ) at MNIST-like settings.

Ours: dpsampling.samplers.shuffle.epsilon (per-epoch pmf of M = max_t x_t vectorised in log
space, then dp_accounting composition).  Peer: the method of google-research
``dpsgd_batch_sampler_accounting`` as described in ../shared/peer-notes (its code is not installed and
is not copied): a plain Python loop over slices [c, c + Δσ²) between the same caps, slice masses from
scipy.stats.norm per slice, loss rounded down to the grid, a dict loss → mass handed to
dp_accounting's ``create_pmf``, ``self_compose(E)``, both directions, max.  Same inputs (σ, T, E, δ),
same Δ = 1e-3 and slice width; the two answers are printed (they differ only by rounding).
"""

import math
import time

import _timing
from dp_accounting.pld import pld_pmf
from scipy.stats import norm

from dpsampling.samplers.shuffle import epsilon as shuffle_epsilon

CASES = [(1.1, 235, 10), (1.1, 235, 60), (2.0, 1000, 5)]  # (σ, T = steps per epoch, E)
DELTA, DISC, LOG_TAIL = 1e-5, 1e-3, -40.0


def _mass(a, b, mean, sigma, steps):
    """Pr[a ≤ max_t x_t < b] under MoG(mean), the peer's way (CDF products with scipy, per slice)."""
    def cdf(c):
        if c == -math.inf:
            return 0.0
        if c == math.inf:
            return 1.0
        return norm.cdf((c - mean) / sigma) * norm.cdf(c / sigma) ** (steps - 1)
    return cdf(b) - cdf(a)


def peer(delta, sigma, steps, epochs, mean_p=2.0, mean_q=1.0):
    tau = LOG_TAIL - math.log(epochs) - math.log(2)
    lo = sigma * norm.ppf(math.exp(tau / steps))
    # 1 − (1 − e^τ)^{1/T} via expm1/log1p: the literal form rounds to 0 (isf → inf) at τ ≈ −44
    hi = mean_p + sigma * norm.isf(-math.expm1(math.log1p(-math.exp(tau)) / steps))
    g = DISC * sigma**2
    edges = [-math.inf]
    c = lo
    while c < hi:
        edges.append(c)
        c += g
    edges += [hi, math.inf]
    eps = []
    for x, y in ((mean_p, mean_q), (mean_q, mean_p)):
        losses = {}
        for a, b in zip(edges[:-1], edges[1:]):
            px, py = _mass(a, b, x, sigma, steps), _mass(a, b, y, sigma, steps)
            if px <= 0 or py <= 0:
                continue
            k = math.floor(math.log(px / py) / DISC)
            losses[k] = losses.get(k, 0.0) + px
        pmf = pld_pmf.create_pmf(losses, DISC, 0.0, False).self_compose(epochs)
        eps.append(pmf.get_epsilon_for_delta(delta))
    return max(eps)


def timed(f, repeat):
    return _timing.best_time(f, repeat, clock=time.perf_counter)


if __name__ == "__main__":
    for sigma, steps, epochs in CASES:
        t_ours, ours = timed(lambda: shuffle_epsilon(DELTA, sigma=sigma, steps=steps, epochs=epochs,
                                                     discretization=DISC).lower, 3)
        t_peer, theirs = timed(lambda: peer(DELTA, sigma, steps, epochs), 1)
        print(f"sigma={sigma}, T={steps}, E={epochs}, delta={DELTA}, Δ={DISC}: "
              f"ours {t_ours:.3f} s (eps_lower={ours:.5f}), peer {t_peer:.3f} s (eps={theirs:.5f}), "
              f"ratio peer/ours {t_peer / t_ours:.1f}x")
