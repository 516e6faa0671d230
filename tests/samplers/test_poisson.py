"""samplers/poisson.py: one epoch of Poisson sampling (q = 1/T) through the PLD and RDP accountants."""

import pytest
from dpsampling.papers import chua


@pytest.mark.regression_pin  # values from our own output; twin: Chua's printed upper bounds < 1.96, < 3.43, ≤ 1.18e-5 (claims) and dp_accounting at d=1e-4 (claims table)
def test_poisson_reference_values():
    # Reference values of the lead's colleagues were at PLD discretisation 1e-3.
    assert chua.poisson_epoch_epsilon(1e-6, 0.5, 10_000, discretization=1e-3) == pytest.approx(1.95478, abs=5e-5)
    assert chua.poisson_epoch_epsilon(1e-6, 0.5, 10_000, method="rdp") == pytest.approx(3.4217, abs=5e-5)
    assert chua.poisson_epoch_delta(4.0, 0.4, 10_000, discretization=1e-3) == pytest.approx(1.1706e-5, rel=1e-4)


def test_poisson_epoch_result_finest_discretization():
    """Capped refinement: stops at the finest level with not_converged; the value is the pessimistic PLD there."""
    from dpsampling.engine import accountant

    capped = chua.poisson_epoch_result("epsilon", 1e-6, 1.3, 10_000, rel_tol=1e-3, finest_discretization=1e-4)
    assert capped.accuracy["discretization"] == pytest.approx(1e-4) and "not_converged" in capped.flags
    fixed = accountant.epsilon(1e-6, sigma=1.3, q=1e-4, total_steps=10_000, discretization=1e-4)
    assert capped.value == fixed.value and capped.lower == fixed.lower
    assert capped.value >= 0.030627  # a valid (looser) upper bound on the converged 0.030627 (Chua §1.1: < 0.031)
    assert 0.03 < capped.accuracy["est_rel_error"] < 1  # error estimate reported
    # loose target: converges before the cap, same as the accountant's automatic choice
    auto = chua.poisson_epoch_result("epsilon", 1e-5, 0.7, 1000, rel_tol=1e-2, finest_discretization=1e-5)
    ref = accountant.epsilon(1e-5, sigma=0.7, q=1e-3, total_steps=1000, rel_tol=1e-2)
    assert auto.value == ref.value and auto.accuracy["discretization"] == ref.accuracy["discretization"]
    assert auto.flags == ()
    tiny = chua.poisson_epoch_result("delta", 6.0, 0.8, 1000, finest_discretization=1e-3)
    assert "delta_below_1e-10" in tiny.flags
    with pytest.raises(ValueError, match="finest_discretization"):
        chua.poisson_epoch_result("epsilon", 1e-6, 1.0, 100, finest_discretization=1e-8)
    with pytest.raises(ValueError, match="rel_tol"):
        chua.poisson_epoch_result("epsilon", 1e-6, 1.0, 100, rel_tol=0.5)


def _exact_one_step_delta(eps, sigma, q):
    """δ(ε) of one Poisson-subsampled Gaussian step, remove direction ((1 − q)N(0, σ²) + qN(1, σ²) vs N(0, σ²)), in
    mpmath: the likelihood ratio increases in x, so the worst set is {x > x*}, (1 − q) + q·e^{(2x* − 1)/(2σ²)} = e^ε.
    The add direction has δ = 0 for ε ≥ −log(1 − q)."""
    import mpmath

    s, q, e = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(eps)
    x = s ** 2 * mpmath.log((mpmath.exp(e) - (1 - q)) / q) + mpmath.mpf(1) / 2
    sf = lambda z: mpmath.ncdf(-z)  # noqa: E731
    return (1 - q) * sf(x / s) + q * sf((x - 1) / s) - mpmath.exp(e) * sf(x / s)


def test_one_step_lower_end_is_at_most_the_exact_value_in_mpmath():
    """Issue 38: the dominated-PLD lower end read 280.54743999170523 here (the loss grid drifted up by repeated
    subtraction), above the exact 280.54743999124645; the certified reading (engine/reading.py) must not be above
    the exact ε(δ), computed in mpmath by bisection of the closed form (independent of the PLD)."""
    import math

    import mpmath
    from dpsampling.samplers import account

    sigma, q, delta = 0.05, 0.5, 1e-5
    assert -math.log(1 - q) < 1  # the add direction's δ is 0 at ε ≈ 280: the remove direction is the answer
    with mpmath.workdps(60):
        lo, hi = mpmath.mpf(0), mpmath.mpf(2000)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _exact_one_step_delta(mid, sigma, q) > delta else (lo, mid)
        exact = hi
    assert abs(float(exact) - 280.54743999124645) < 1e-12
    r = account("poisson", "epsilon", delta, sigma=sigma, steps=1, q=q)
    assert r.lower <= exact <= r.upper
    assert float(exact) - r.lower < 1e-7


def test_below_the_floor_the_pld_pairs_proven_ends_answer_where_the_phi_accountant_cannot():
    """Issue 38 (E): δ 1e-12 at one step (σ 0.7, q 0.1) was refused (the φ accountant cannot certify it); the PLD
    pair's ends carry their own proven rounding bounds (none at one step), so the interval is the answer, flagged
    below the floor, and it brackets the exact ε(δ) in mpmath (the remove direction: the add one's δ is 0 there)."""
    import math

    import mpmath
    from dpsampling.engine.result import BELOW_FLOOR_FLAG
    from dpsampling.samplers import account

    sigma, q, delta = 0.7, 0.1, 1e-12
    with mpmath.workdps(60):
        lo, hi = mpmath.mpf(-math.log(1 - q)), mpmath.mpf(200)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _exact_one_step_delta(mid, sigma, q) > delta else (lo, mid)
        exact = hi
    r = account("poisson", "epsilon", delta, sigma=sigma, steps=1, q=q)
    assert BELOW_FLOOR_FLAG in r.flags and r.lower <= exact <= r.upper and r.upper - r.lower < 1e-3


def test_below_the_floor_a_rounding_bound_above_delta_is_refused_naming_delta():
    """Where the composition's proven FFT rounding bound (≈ 1.5e-9 here) exceeds δ = 2.24e-11, no finite upper end
    is proven: refused, naming delta and the floor (the long sidedness tier's seed-2027 setting)."""
    import time

    from dpsampling.engine.errors import ParameterError
    from dpsampling.samplers import account

    t = time.process_time()
    with pytest.raises(ParameterError) as e:
        account("poisson", "epsilon", 2.24e-11, sigma=0.4293, steps=122, epochs=62, q=9.59e-05)
    assert e.value.param == "delta" and "rounding bound" in str(e.value) and "1e-10" in str(e.value)
    assert time.process_time() - t < 10


def test_the_cost_models_floor_is_the_engines():
    """samplers/poisson.py cannot import the engine's RELIABLE_DELTA_FLOOR (the registry loads it): its literal must
    be the same number, so that a below-floor question is predicted with the φ accountant's cost."""
    import math

    from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
    from dpsampling.samplers import poisson

    assert poisson._below_floor(math.nextafter(RELIABLE_DELTA_FLOOR, 0.0))
    assert not poisson._below_floor(RELIABLE_DELTA_FLOOR)
