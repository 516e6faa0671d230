"""dpsampling.references: the independent references of the certified_intervals check agree with printed values and
with each other where two apply, and agrees() means what it says (contains / overlaps / equals the lower end)."""

import math

import pytest

from dpsampling import references as R


def test_gaussian_and_shuffle_ec_match_chua_printed_values():
    # Chua et al. ICML 2024 §1.1: σ = 0.5, δ = 1e-6, one epoch of T = 10^4 batches: deterministic ε ≈ 10.997,
    # shuffle ε > 10.994 (the E_C bound)
    assert round(R.gaussian_epsilon(1e-6, 0.5, 1).lower, 3) == 10.997
    ec = R.shuffle_ec_lower(1e-6, 0.5, 10_000)
    assert ec.kind == "lower end" and 10.994 < ec.lower < 10.995


def test_gaussian_is_the_composition_at_sigma_over_root_epochs():
    assert R.gaussian_epsilon(1e-5, 1.1, 60).lower == pytest.approx(R.gaussian_epsilon(1e-5, 1.1 / math.sqrt(60)).lower,
                                                                    rel=1e-14)


def test_two_independent_references_agree():
    # one step per epoch: balls-and-bins is the Gaussian at σ/√E; PLD_accounting's range contains the mpmath value
    exact = R.gaussian_epsilon(1e-5, 0.8, 3)
    bnb = R.allocation_range(1e-5, sigma=0.8, steps=1, epochs=3, accuracy=0.05)
    assert bnb.lower <= exact.lower <= bnb.upper and bnb.upper - bnb.lower <= 0.05
    # the Poisson-subsampled Gaussian: dp_accounting's PLD pair and the φ accountant's certified interval overlap
    pair = R.pld_pair(1e-5, sigma=1.0, q=0.01, total_steps=100, discretization=1e-3)
    phi = R.phi_interval("poisson", 1e-5, sigma=1.0, q=0.01, steps=100, epochs=1)
    assert pair.lower < pair.upper and phi.upper - phi.lower < 1e-6
    assert R.agrees(phi.lower, phi.upper, pair) and pair.lower <= phi.lower <= phi.upper <= pair.upper


def test_agrees_by_kind():
    point = R.Reference(2.0, 2.0, "point", "p")
    assert R.agrees(1.9, 2.1, point) and R.agrees(2.0, 2.0, point)
    assert not R.agrees(2.0 * 1.01, 2.1, point) and not R.agrees(1.9, 2.0 * 0.99, point)
    interval = R.Reference(2.0, 3.0, "interval", "i")
    assert R.agrees(2.9, 3.5, interval) and R.agrees(1.0, 2.0, interval)
    assert not R.agrees(3.01, 3.5, interval) and not R.agrees(1.0, 1.99, interval)
    lower = R.Reference(2.0, 2.0, "lower end", "l")
    assert R.agrees(2.0, 5.0, lower) and not R.agrees(1.98, 5.0, lower) and not R.agrees(2.02, 5.0, lower)
    assert not R.agrees(math.nan, 3.0, interval) and not R.agrees(3.0, 2.5, interval)  # not an interval
    assert {c: R.Reference(0, 0, c, "x").check for c in R.CHECKS} == R.CHECKS


def test_bad_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of point, interval, lower end"):
        R.Reference(1.0, 1.0, "upper", "x")
