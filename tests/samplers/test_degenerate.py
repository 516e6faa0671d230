"""Degenerate runs answered exactly by every sampler, against 50-digit mpmath: one step per epoch (shuffle and
balls_and_bins are then the Gaussian at σ/√epochs), q = 1 (Poisson/WOR: the Gaussian at σ/√(steps·epochs),
WOR at σ/2), one epoch of one step, and σ → ∞ (ε → 0)."""

import mpmath
import pytest

from dpsampling.samplers import account


def _gauss_delta(eps, s):
    mpmath.mp.dps = 50
    s, eps = mpmath.mpf(s), mpmath.mpf(eps)
    return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)


def _bisect(f, lo, hi, n=200):
    """Root of a decreasing f on [lo, hi] by bisection in mpmath."""
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(n):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return float((lo + hi) / 2)


def _gauss_epsilon(delta, s):
    if _gauss_delta(0, s) <= delta:
        return 0.0
    hi = 1
    while _gauss_delta(hi, s) > delta:
        hi *= 2
    return _bisect(lambda e: _gauss_delta(e, s) - delta, 0, hi)


def _gauss_sigma(eps, delta):
    return float(mpmath.exp(_bisect(lambda x: _gauss_delta(eps, mpmath.exp(x)) - delta, -5, 8)))


#: (sampler, steps, epochs, q, effective σ / σ)
CASES = [("balls_and_bins", 1, 3, None, 3 ** -0.5), ("shuffle", 1, 3, None, 3 ** -0.5),
         ("balls_and_bins", 1, 1, None, 1.0), ("shuffle", 1, 1, None, 1.0), ("deterministic", 1, 1, None, 1.0),
         ("poisson", 1, 1, 1.0, 1.0), ("wor", 1, 1, 1.0, 0.5), ("poisson", 7, 3, 1.0, 21 ** -0.5),
         ("wor", 5, 2, 1.0, 0.5 * 10 ** -0.5)]


@pytest.mark.parametrize("sampler,steps,epochs,q,scale", CASES)
@pytest.mark.parametrize("sigma", [0.8, 2.5])
def test_gaussian_cases_exact(sampler, steps, epochs, q, scale, sigma):
    kw = dict(steps=steps, epochs=epochs, q=q)
    r = account(sampler, "epsilon", 1e-6, sigma=sigma, **kw)
    assert r.kind == "exact" and r.lower == r.upper == r.value
    assert r.value == pytest.approx(_gauss_epsilon(1e-6, sigma * scale), rel=1e-9)
    r = account(sampler, "delta", 1.0, sigma=sigma, **kw)
    assert r.kind == "exact" and r.value == pytest.approx(float(_gauss_delta(1.0, sigma * scale)), rel=1e-9)
    if sampler != "wor":  # the WOR σ question is the Poisson one at 2σ (tests/test_account.py)
        bound = "lower" if sampler == "shuffle" else None
        r = account(sampler, "sigma", (1.0, 1e-6), bound=bound, **kw)
        assert r.kind == "exact" and r.value * scale == pytest.approx(_gauss_sigma(1.0, 1e-6), rel=1e-9)


def test_issue_example_balls_and_bins_one_step_per_epoch():
    """σ = 0.8, 3 epochs of one step: the Gaussian at 0.8/√3, ε(1e-6) = 12.10844 (was an upper bound 12.67)."""
    r = account("balls_and_bins", "epsilon", 1e-6, sigma=0.8, steps=1, epochs=3)
    assert r.kind == "exact" and r.value == pytest.approx(12.10844, abs=5e-6)


@pytest.mark.parametrize("sampler", ["poisson", "wor", "deterministic"])
def test_sigma_to_infinity_epsilon_is_zero(sampler):
    """σ → ∞: δ(0) falls below the target, so ε = 0 exactly (both ends)."""
    r = account(sampler, "epsilon", 1e-5, sigma=1e6, steps=10, epochs=2, q=0.1 if sampler != "deterministic" else None)
    assert r.value == 0.0 and r.lower == 0.0 and r.upper == 0.0
