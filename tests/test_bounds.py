"""Bounds stay on their side (issue 12): the PLD reliability floor and the σ sufficiency check."""

import math


from dpsampling.engine import accountant as A
from dpsampling.engine import pld
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR


def test_pld_below_floor_is_replaced_by_certified_phi_upper_end():
    """σ=0.8, q=1e-3, T=1e3, ε=2: the pessimistic PLD at d=1e-5 (1.4774e-11) is *below* the truth
    (φ accountant 1.47907e-11 ± 2e-16; prv_accountant upper 1.4883e-11), so it must not be an upper
    bound.  Below the floor the φ accountant's certified upper end replaces it."""
    kw = dict(sigma=0.8, q=1e-3, total_steps=1000)
    wrong = pld.delta(2.0, 0.8, 1e-3, 1000, "add_remove", True, 1e-5)
    assert wrong < 1.4790e-11  # the problem this test guards against
    res = A.delta(2.0, discretization=1e-5, **kw)
    assert BELOW_FLOOR_FLAG in res.flags and res.method == A.CF_CERTIFIED_METHOD and res.kind == "upper"
    assert res.lower <= 1.47906e-11 <= res.value <= 1.4883e-11  # φ interval holds prv's truth, below prv's upper
    assert res.accuracy["pld_upper"] == wrong
    low = A.delta(2.0, bound="lower", discretization=1e-5, **kw)
    assert low.kind == "lower" and low.value == res.lower <= 1.47906e-11


def test_floor_is_at_least_where_the_pld_was_shown_wrong():
    assert RELIABLE_DELTA_FLOOR >= 1e-10 and BELOW_FLOOR_FLAG == f"delta_below_{RELIABLE_DELTA_FLOOR:g}"


def test_epsilon_at_delta_below_floor_is_certified_by_phi():
    res = A.epsilon(1e-11, sigma=0.8, q=1e-3, total_steps=1000, discretization=1e-4)
    assert BELOW_FLOOR_FLAG in res.flags and res.method == A.CF_CERTIFIED_METHOD
    # ε(1e-11) lies between ε=2 (δ=1.479e-11) and ε=2.25 (δ=3.18e-12), closer to 2
    assert 2.0 < res.lower <= res.value < 2.25


def test_calibration_final_check_catches_a_too_small_sigma(monkeypatch):
    """A root finder that lies (returns σ 2% below its root with the root's gap g ≈ 0) is caught."""
    real = A._secant

    def lying(f, x0, slope, tol, max_iter=40, **kw):
        x, s, gx = real(f, x0, slope, tol, max_iter, **kw)
        return x - 0.02, s, min(gx, 0.0)

    monkeypatch.setattr(A, "_secant", lying)
    A._poisson_curve.cache_clear()
    eps, dlt, q, steps = 2.0, 1e-5, 0.01, 100
    res = A.calibrate_sigma(eps, dlt, q=q, total_steps=steps, rel_tol=1e-2)
    d = res.accuracy["discretization"]
    assert pld.delta(eps, res.value, q, steps, "add_remove", True, d) <= dlt
    assert A.epsilon(dlt, sigma=res.value, q=q, total_steps=steps, discretization=d).value <= eps
    # and the final check only steps up a little past the lie (≤ 1% above the honest σ)
    monkeypatch.setattr(A, "_secant", real)
    honest = A.calibrate_sigma(eps, dlt, q=q, total_steps=steps, rel_tol=1e-2)
    assert honest.value * (1 - 1e-3) <= res.value <= honest.value * 1.02
    curve = A.calibrate_sigma_curve(eps, dlt, [q], total_steps=steps, rel_tol=1e-2)[0]
    assert pld.delta(eps, curve.value, q, steps, "add_remove", True, curve.accuracy["discretization"]) <= dlt


def test_rdp_calibration_returns_the_safe_end(monkeypatch):
    import scipy.optimize

    real = scipy.optimize.brentq
    monkeypatch.setattr(scipy.optimize, "brentq", lambda f, a, b, **kw: real(f, a, b, **kw) - 0.05)
    eps, dlt, q, steps = 2.0, 1e-5, 0.01, 100
    res = A.calibrate_sigma(eps, dlt, q=q, total_steps=steps, method="rdp")
    assert A.epsilon(dlt, sigma=res.value, q=q, total_steps=steps, method="rdp").value <= eps
    monkeypatch.setattr(scipy.optimize, "brentq", real)
    honest = A.calibrate_sigma(eps, dlt, q=q, total_steps=steps, method="rdp")
    assert A.epsilon(dlt, sigma=honest.value, q=q, total_steps=steps, method="rdp").value <= eps
    assert honest.value <= res.value <= honest.value * math.exp(0.05)  # doubling steps overshoot ≤ the lie


def test_calibrated_sigma_below_floor_is_an_estimate():
    """A σ 'sufficient' by a PLD δ below the floor proves nothing: estimate, flagged."""
    assert A._sigma_kind_flags(1e-11, True) == ("estimate", "pld", (BELOW_FLOOR_FLAG,))
    assert A._sigma_kind_flags(1e-6, False) == ("upper", "pld", ("not_converged",))
