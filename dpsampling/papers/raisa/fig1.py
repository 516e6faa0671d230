"""Räisä et al. 2024 Fig. 1 for T > 1 and Corollary 5.4: σ(q, T) along a curve in q by the engine's
PLD calibration (exact Eq. (45) roots at T = 1), and the claim predicates on those curves."""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.accountant import calibrate_sigma, calibrate_sigma_curve
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.subsampled_gaussian import (
    _delta, _eps, _q, sigma_one_step,
)
from dpsampling.engine.validation import check_grid, check_int, check_choice, check_rate, DIRECTIONS
from .one_step import FIG1_EPSILONS, corollary54_ratio


# ---------------------------------------------------------------------------
# Fig. 1 for T > 1: PLD calibration of sigma(q, T) along a curve in q (the engine's accountant)
# ---------------------------------------------------------------------------


def sigma_q1(epsilon, delta, steps):
    """sigma(1, T) = sqrt(T) sigma(1, 1): T Gaussians compose to one with sigma/sqrt(T), exactly (Cor. 5.4)."""
    return float(sigma_one_step(1.0, epsilon, delta)) * math.sqrt(int(steps))


def _check_steps_direction(steps, direction):
    check_choice("direction", direction, DIRECTIONS)
    return check_int("steps", steps)


def calibrate_sigma_pld(epsilon, delta, *, q, steps, direction="add_remove", rel_tol=1e-3):
    """Smallest sigma with (eps, delta)-DP after T steps of the q-subsampled Gaussian (Poisson).

    :func:`dpsampling.engine.accountant.calibrate_sigma`, except that T = 1 is exact
    (kind ``exact``: the root of Eq. (45); remove binds at T = 1, see the tests).
    """
    eps, dlt, q = float(_eps(epsilon)), float(_delta(delta)), float(_q(q))
    steps = _check_steps_direction(steps, direction)
    if steps == 1 and direction != "add" and q < 1.0:
        s = float(sigma_one_step(q, eps, dlt))
        return AccountingResult(s, "exact", "analytic", {}, s, s)
    return calibrate_sigma(eps, dlt, q=q, total_steps=steps, direction=direction, rel_tol=rel_tol)


def sigma_curve(epsilon, delta, q_values, steps, direction="add_remove", rel_tol=1e-3):
    """sigma(q, T) for increasing ``q_values`` (Fig. 1's curves), one AccountingResult per q.

    T = 1: exact (Eq. (45) roots).  T > 1: the accountant's warm-started curve
    solver :func:`dpsampling.engine.accountant.calibrate_sigma_curve`.
    """
    qs = check_grid("q_values", check_rate(q_values), low=0.0, high=1.0)
    steps = _check_steps_direction(steps, direction)
    if steps == 1 and direction != "add":
        return [calibrate_sigma_pld(epsilon, delta, q=float(q), steps=1, direction=direction) for q in qs]
    return calibrate_sigma_curve(float(_eps(epsilon)), float(_delta(delta)), [float(q) for q in qs],
                                 total_steps=steps, direction=direction, rel_tol=rel_tol)


def corollary54_ratio_pld(q, epsilon, delta, steps, rel_tol=1e-3):
    """sigma(q, T) / (q sigma(1, T)) with sigma(q, T) PLD-calibrated (upper bound), Corollary 5.4."""
    r = calibrate_sigma_pld(epsilon, delta, q=q, steps=steps, rel_tol=rel_tol)
    return float(corollary54_ratio(r.value, q, sigma_q1(epsilon, delta, steps)))


def corollary54_ratio_decreasing_in_steps(q=1e-3, epsilon=1.0, delta=1e-5, steps_values=(1, 10, 100, 1000),
                                          rel_tol=1e-3):
    """True iff sigma(q,T)/(q sigma(1,T)) strictly decreases along ``steps_values`` (-> 1, Cor. 5.4),
    by more than the calibration accuracy at each step, and stays >= 1 - rel_tol."""
    T = np.asarray(steps_values)
    if T.ndim != 1 or T.size < 2 or np.any(np.diff(T) <= 0):
        raise ParameterError("steps_values", ">= 2 strictly increasing integers", steps_values)
    r = np.array([corollary54_ratio_pld(q, epsilon, delta, int(t), rel_tol) for t in T])
    return bool(np.all(np.diff(r) < -2 * rel_tol * r[1:]) and np.all(r >= 1 - rel_tol))


def corollary54_ratio_increasing_in_eps(q=1e-3, eps_values=FIG1_EPSILONS, delta=1e-5, steps=1000, rel_tol=1e-3):
    """True iff sigma(q,T)/(q sigma(1,T)) strictly increases with eps (beyond the calibration accuracy).

    §5.1: "for smaller values of eps, the convergence happens faster" (the
    ratio -> 1 of Corollary 5.4 is closer to 1 for smaller eps at the same T).
    """
    e = np.asarray(eps_values, dtype=float)
    if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0):
        raise ParameterError("eps_values", ">= 2 strictly increasing values", eps_values)
    r = np.array([corollary54_ratio_pld(q, float(x), delta, steps, rel_tol) for x in e])
    return bool(np.all(np.diff(r) > 2 * rel_tol * r[1:]))


def sigma_eff_decreasing_pld(eps_values=(0.5, 2.0), steps_values=(10, 100), delta=1e-5, q_min=1e-3, n_q=7,
                             rel_tol=1e-3):
    """True iff sigma(q,T)/q decreases in q on logspace(q_min, 0, n_q) for every (eps, T) (Fig. 1, T > 1).

    PLD-calibrated sigma (upper bounds, relative accuracy rel_tol): an increase
    counts only if it exceeds the two points' estimated errors.
    """
    qs = np.logspace(np.log10(q_min), 0.0, int(n_q))
    for e in np.atleast_1d(eps_values):
        for t in np.atleast_1d(steps_values):
            rs = sigma_curve(float(e), delta, qs, int(t), rel_tol=rel_tol)
            y = np.array([r.value for r in rs]) / qs
            err = np.array([r.accuracy.get("est_rel_error", 0.0) for r in rs])
            if np.any(np.diff(y) > (err[:-1] + err[1:]) * y[1:]):
                return False
    return True


def sigma_eff_check(q, sigma_eff, est_rel_error=None):
    """Monotonicity check of one Fig. 1 curve: dict(n_increases, n_increases_beyond_error, max_rel_increase).

    ``q`` increasing; an increase is "beyond error" if it exceeds the sum of
    the two points' estimated relative errors.
    """
    q = check_grid("q", check_rate(q), low=0.0, high=1.0)
    y = np.asarray(sigma_eff, dtype=float)
    e = np.zeros_like(y) if est_rel_error is None else np.nan_to_num(np.asarray(est_rel_error, dtype=float))
    rel = np.diff(y) / y[:-1]
    return {
        "n_increases": int(np.sum(rel > 0)),
        "n_increases_beyond_error": int(np.sum(rel > e[:-1] + e[1:])),
        "max_rel_increase": float(rel.max()) if rel.size else 0.0,
    }


