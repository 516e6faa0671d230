"""dpsampling.engine.reading: ε(δ) read for a lower bound where the losses are large, against the Gaussian mechanism's
exact ε(δ) in mpmath (an independent closed form: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), μ = 1/σ)."""

import math

import mpmath
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib

from dpsampling.engine import pld, reading
from dpsampling.samplers import _max_statistic as ms

mpmath.mp.dps = 40


def exact_gaussian_epsilon(sigma, delta):
    """ε(δ) of the Gaussian mechanism N(0, σ²) vs N(1, σ²), in mpmath."""
    mu = 1 / mpmath.mpf(sigma)

    def d(eps):
        return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu) - delta

    lo, hi = mpmath.mpf(0), mu * mu + 20 * mu  # δ(ε) decreases; bisection
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
    return float(lo)


def optimistic_gaussian_pmf(sigma, d):
    return pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=False, value_discretization_interval=d)._pmf_remove


def test_large_losses_read_below_the_exact_value_where_the_plain_reading_is_above():
    sigma, delta = 0.2 / math.sqrt(60), 1e-5  # ε ≈ 914: every loss near ε has e^{−ℓ} = 0 in floating point
    exact = exact_gaussian_epsilon(sigma, delta)
    pmf = optimistic_gaussian_pmf(sigma, 1e-2)  # dominated by the Gaussian pair: its ε(δ) is ≤ exact
    assert pld.epsilon_for_delta(pmf, delta) > exact  # the underflow this module exists for
    low = reading.epsilon_for_delta_lower(pmf, delta)
    assert exact - 0.1 < low <= exact


def test_small_losses_are_read_at_most_a_proven_guard_below_the_plain_reading():
    pmf = optimistic_gaussian_pmf(1.0, 1e-4)
    for delta in (1e-3, 1e-5, 1e-9):
        low, plain = reading.epsilon_for_delta_lower(pmf, delta), pld.epsilon_for_delta(pmf, delta)
        assert plain * (1 - 1e-10) < low <= plain


def _exact_pmf_epsilon(pmf, delta):
    """The pmf's own ε(δ) in mpmath: losses (lower + i)·Δ exactly, δ(ε) = p_∞ + Σ p·(1 − e^{ε−ℓ})₊, bisection."""
    d, lo = mpmath.mpf(pmf._discretization), pmf._lower_loss
    atoms = [((lo + i) * d, mpmath.mpf(float(p))) for i, p in enumerate(pmf._probs) if p > 0]

    def dlt(eps):
        return mpmath.mpf(pmf._infinity_mass) + mpmath.fsum(p * -mpmath.expm1(eps - l) for l, p in atoms if l > eps)

    a, b = mpmath.mpf(0), atoms[-1][0]
    for _ in range(120):
        mid = (a + b) / 2
        a, b = (mid, b) if dlt(mid) > delta else (a, mid)
    return a, dlt


def _random_pmf(lower, d, seed):
    """A random optimistic dense pmf: 400 losses from ``lower``·``d`` (30 % of them empty), mass 0.999 and 1e-9 at +∞."""
    import numpy as np
    from dp_accounting.pld import pld_pmf

    rng = np.random.default_rng(seed)
    probs = rng.exponential(size=400) * (rng.random(400) < 0.7)
    return pld_pmf.DensePLDPmf(d, lower, probs / probs.sum() * 0.999, 1e-9, False)


@pytest.mark.parametrize("lower, d, seed", [(-200, 0.01, 1), (90_000, 0.01, 2), (700_000, 1e-3, 3), (3, 0.7, 4)])
def test_lower_readings_never_exceed_the_pmfs_own_exact_values(lower, d, seed):
    """Random pmfs (losses up to ~900, where e^{−ℓ} underflows, and small ones) against their exact ε(δ) and δ(ε) in
    mpmath: the lower ε is ≤ the exact one and within 1e-9 relative; the lower δ is ≤ the exact one."""
    import numpy as np

    pmf = _random_pmf(lower, d, seed)
    for delta in (1e-2, 1e-5):
        exact, dlt = _exact_pmf_epsilon(pmf, delta)
        low = reading.epsilon_for_delta_lower(pmf, delta)
        assert low <= exact and float(exact) - low <= 1e-9 * abs(float(exact)) + 1e-12
        eps = np.array([float(exact) - 3 * d, float(exact), float(exact) + 0.5 * d])
        for e, got in zip(eps, reading.delta_lower(pmf, eps)):
            ref = dlt(mpmath.mpf(e))
            assert got <= ref and float(ref) - got <= 1e-9 * float(ref)


def test_delta_lower_at_losses_whose_exponential_overflows():
    """ε = 710 and 800 (e^ε overflows): the lower δ is a number ≤ the Gaussian's exact δ, not nan."""
    sigma = 0.2 / math.sqrt(60)
    pmf = optimistic_gaussian_pmf(sigma, 1e-2)
    mu = 1 / mpmath.mpf(sigma)
    for eps in (700.0, 710.0, 800.0):
        exact = mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)
        got = reading.delta_lower(pmf, eps)
        assert 0 < got <= exact and got > 0.5 * exact


@pytest.mark.parametrize("sigma", [0.5 / math.sqrt(3), 0.02, 0.01])
def test_lower_reading_brackets_the_exact_value(sigma):
    """At several ε scales (about 10, 2 400 and 10 000) the reading of the dominated pmf is within 0.1 below the exact ε."""
    exact = exact_gaussian_epsilon(sigma, 1e-6)
    low = reading.epsilon_for_delta_lower(optimistic_gaussian_pmf(sigma, 1e-2), 1e-6)
    assert exact - 0.1 < low <= exact


def test_shuffle_max_statistic_lower_bound_stays_below_the_deterministic_value_after_60_epochs():
    """Chua et al. 2024, Thm 4.1: a shuffled run's ε is at most the fixed-batch run's, the Gaussian at σ/√E; the
    max-statistic lower bound read 915.17 > 914.23 before this reading."""
    sigma, epochs, delta = 0.2, 60, 1e-5
    low, _ = ms.pld_epsilon_lower(delta, 2.0, 1.0, sigma, 10, epochs=epochs)
    assert low <= exact_gaussian_epsilon(sigma / math.sqrt(epochs), delta)


# ----------------------------------------------------------------------------- upper readings (the mirror image)


@pytest.mark.parametrize("lower, d, seed", [(-200, 0.01, 1), (90_000, 0.01, 2), (700_000, 1e-3, 3), (3, 0.7, 4)])
def test_upper_readings_never_fall_below_the_pmfs_own_exact_values(lower, d, seed):
    """The mirror of the lower readings on the same random pmfs (losses up to ~900 and small ones): the upper ε is
    ≥ the exact ε(δ) in mpmath and within 1e-9 relative (or one grid step: it may stop at the next loss); the upper
    δ is ≥ the exact δ(ε) and within 1e-10 relative."""
    import numpy as np

    pmf = _random_pmf(lower, d, seed)
    for delta in (1e-2, 1e-5):
        exact, dlt = _exact_pmf_epsilon(pmf, delta)
        up = reading.epsilon_for_delta_upper(pmf, delta)
        assert up >= exact and up - float(exact) <= max(1e-9 * abs(float(exact)) + 1e-12, 1.01 * d)
        eps = np.array([float(exact) - 3 * d, float(exact), float(exact) + 0.5 * d])
        ups = reading.delta_upper(pmf, eps)
        for e, u in zip(eps, ups):
            true = dlt(mpmath.mpf(float(e)))
            assert u >= true and u <= true * (1 + 1e-10) + 1e-300  # its guards scale with |ℓ| ≈ 900 here


def test_upper_reading_brackets_the_exact_gaussian_value_with_the_lower_one():
    """The pessimistic Gaussian pmf's upper reading is ≥ the exact ε(δ) (mpmath closed form), the optimistic one's
    lower reading ≤ it, at a loss of ≈ 914 where e^{−ℓ} underflows and at ordinary ones."""
    for sigma, delta in [(0.2 / math.sqrt(60), 1e-5), (1.0, 1e-5), (0.5, 1e-9)]:
        exact = exact_gaussian_epsilon(sigma, delta)
        pess = pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=True,
                                              value_discretization_interval=1e-3)._pmf_remove
        up = reading.epsilon_for_delta_upper(pess, delta)
        low = reading.epsilon_for_delta_lower(optimistic_gaussian_pmf(sigma, 1e-3), delta)
        assert low <= exact <= up and up - low < 0.05


def test_a_wrong_upper_reading_is_caught_by_the_check():
    """The upper reader does not trust its hint: a hint far below the truth is raised to a value with a proven
    δ_pmf ≤ δ (mutation: a reader that returns 0)."""
    pmf = pldlib.from_gaussian_mechanism(1.0, pessimistic_estimate=True, value_discretization_interval=1e-3)._pmf_remove
    honest = reading.epsilon_for_delta_upper(pmf, 1e-5)
    fooled = reading.epsilon_for_delta_upper(pmf, 1e-5, read=lambda _p, _d: 0.0)
    assert fooled >= exact_gaussian_epsilon(1.0, 1e-5) and fooled >= honest - 1e-3
