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
