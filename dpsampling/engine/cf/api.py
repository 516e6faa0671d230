"""Public API of the φ accountant: δ(ε), ε(δ), the loss CDF and φ itself, and the common
accountant interface (:func:`accounting_delta`, :func:`accounting_epsilon`) that
:mod:`dpsampling.engine.accountant` calls for method "cf"."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from ..errors import ParameterError
from ..validation import (DIRECTIONS, ONE_WAY_DIRECTIONS, check_choice, check_delta, check_finite_list, check_int,
                          check_positive, one_number)
from .inversion import _C_MAX, _invert, _total_cumulants
from .mechanisms import CFAccuracyError, Gaussian, PoissonSubsampled
from .pairs import _ShiftedPair, _is_symmetric, _terms


def cf_delta(epsilon, mechanisms, direction="add_remove", abs_tol=1e-10):
    """δ(ε) of the composition by inverting the φ-function (Lemma 5 / Lemma 19).

    Parameters
    ----------
    epsilon : float (may be negative: H_{e^ε} for α = e^ε < 1)
    mechanisms : descriptor, list of descriptors, or list of (descriptor, count)
    direction : "add", "remove" or "add_remove" (pointwise max of the two, §4.1)
    abs_tol : absolute error budget on δ

    Returns (delta, error_bound); raises CFAccuracyError if abs_tol is not reachable.
    """
    check_finite_list("epsilon", one_number("epsilon", epsilon))
    check_choice("direction", direction, DIRECTIONS)
    check_positive("abs_tol", abs_tol)
    if direction == "add_remove":
        if _is_symmetric(mechanisms):
            return cf_delta(epsilon, mechanisms, "remove", abs_tol)
        a = cf_delta(epsilon, mechanisms, "add", abs_tol)
        r = cf_delta(epsilon, mechanisms, "remove", abs_tol)
        return (a[0], a[1]) if a[0] >= r[0] else (r[0], r[1])
    val, e = _invert(float(epsilon), _terms(mechanisms, direction), "hockey", abs_tol)
    return max(val, 0.0), e


def cf_cdf(x, mechanisms, direction="remove", under="P", abs_tol=1e-10):
    """CDF of the composed privacy loss, Pr[L ≤ x], by Lévy inversion (Lemma 18).

    under="P": L ~ P (Zhu's F up to the sign convention L = log p/q);
    under="Q": L evaluated at o ~ Q (uses M_Q(s) = M(s-1)).
    Returns (value, error_bound).
    """
    check_choice("direction", direction, ONE_WAY_DIRECTIONS)
    check_choice("under", under, ("P", "Q"))
    check_positive("abs_tol", abs_tol)
    terms = _terms(mechanisms, direction)
    if under == "Q":
        terms = [(_ShiftedPair(p), n) for p, n in terms]
    val, e = _invert(float(x), terms, "tail", abs_tol, want_cdf=True)
    return min(max(val, 0.0), 1.0), e


def _chernoff_epsilon(delta, terms):
    """ε such that the Chernoff/RDP-type bound δ(ε) ≤ e^{K(c)-cε} c^c/(1+c)^{1+c} equals δ,
    minimised over c > 0 (a guaranteed upper bracket for ε(δ))."""
    def eps_of(logc):
        c = math.exp(logc)
        K = _total_cumulants(terms, c)[0]
        return (K + c * math.log(c) - (1 + c) * math.log1p(c) - math.log(delta)) / c
    res = optimize.minimize_scalar(eps_of, bounds=(math.log(1e-3), math.log(_C_MAX)),
                                   method="bounded", options={"xatol": 1e-3})
    return max(float(res.fun), 0.0)


def cf_epsilon(delta, mechanisms, direction="add_remove", abs_tol=None):
    """ε(δ) by root finding on δ(ε) (Algorithm 1 uses bisection; here Brent + Newton).

    abs_tol is the absolute budget for each δ(ε) evaluation near the root (default δ·1e-6).
    Returns (epsilon, error_bound): the true ε(δ) of the dominating pair lies in
    [epsilon - error_bound, epsilon + error_bound] (δ-inversion error propagated).
    """
    check_delta(one_number("delta", delta))
    check_choice("direction", direction, DIRECTIONS)
    if abs_tol is None:
        abs_tol = delta * 1e-6
    check_positive("abs_tol", abs_tol)
    if abs_tol >= delta:
        raise ParameterError("abs_tol", f"< delta = {delta}", abs_tol,
                             message=f"abs_tol must be < delta (got abs_tol={abs_tol}, delta={delta})")
    if direction == "add_remove" and not _is_symmetric(mechanisms):
        # ε_add_remove = max(ε_add, ε_remove).  Remove usually dominates for ε ≥ 0 (Zhu Prop. 30;
        # after composition this is Lebeda's Conjecture 12, so it is checked, not assumed): if
        # δ_add(ε_remove) + its error ≤ δ then ε_add ≤ ε_remove and one δ evaluation settles it.
        r = cf_epsilon(delta, mechanisms, "remove", abs_tol)
        v, e = cf_delta(r[0], mechanisms, "add", abs_tol)
        if v + e <= delta:
            return r
        a = cf_epsilon(delta, mechanisms, "add", abs_tol)
        return a if a[0] >= r[0] else r
    d = "remove" if direction == "add_remove" else direction
    terms = _terms(mechanisms, d)
    memo = {}

    def ev(e):
        e = float(e)
        if e not in memo:
            info = {}
            v, er = _invert(e, terms, "hockey", abs_tol, info=info)
            memo[e] = (v, er, info.get("deriv"))
        return memo[e]

    bracket = _epsilon_bracket(ev, delta, terms)
    if bracket is None:
        return 0.0, 0.0
    root = _newton_log_delta(ev, delta, *bracket)
    return root, _epsilon_error(ev, delta, root)


def _epsilon_bracket(ev, delta, terms):
    """(lo, hi) with δ(lo) > ``delta`` ≥ δ(hi) (``ev``: ε ↦ (δ, its error, dδ/dε)): hi from the Chernoff bound,
    lo by halving; None where δ(0) + its error ≤ ``delta`` (ε = 0)."""
    hi = _chernoff_epsilon(delta, terms)
    lo = 0.5 * hi
    while True:
        if lo < 1e-3 * max(hi, 1e-3):
            d0, e0, _ = ev(0.0)
            if d0 + e0 <= delta:
                return None
            lo = 0.0
            break
        if ev(lo)[0] > delta:
            break
        hi, lo = lo, 0.5 * lo
    while ev(hi)[0] > delta:  # bound and inversion disagree: widen
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            raise CFAccuracyError("epsilon(delta) exceeds 1e4; no bracket found")
    return lo, hi


def _newton_log_delta(ev, delta, lo, hi):
    """The root of log δ(ε) = log ``delta`` in [lo, hi] by safeguarded Newton with the exact derivative of the
    inversion, started at the log-linear interpolation between the bracket ends; stops within a quarter of the
    inversion error or at a step below 1e-11 relative."""
    lv, hv = ev(lo)[0], ev(hi)[0]
    if lo > 0 and lv > 0 and hv > 0:
        x = lo + (math.log(lv / delta)) / (math.log(lv / hv)) * (hi - lo)
    else:
        x = hi
    for _ in range(60):
        v, er, dv = ev(x)
        if v > delta:
            lo = x
        else:
            hi = x
        g = math.log(max(v, 1e-300)) - math.log(delta)
        if dv is not None and dv < 0 and v > 0:
            xn = x - g * v / dv
        else:
            xn = 0.5 * (lo + hi)
        if not (lo < xn < hi):
            xn = 0.5 * (lo + hi)
        if abs(v - delta) <= 0.25 * er:  # converged to within the inversion error
            break
        if abs(xn - x) < 1e-11 * (1 + x) or hi - lo < 1e-11 * (1 + x):
            x = xn
            break
        x = xn
    return x


def _epsilon_error(ev, delta, root):
    """The error on ε at ``root``: a half-width de such that δ ± its error brackets ``delta`` on [root − de,
    root + de] (doubled until it does)."""
    dr, er, dv = ev(root)
    slope = -dv if (dv is not None and dv < 0) else max(
        (dr - ev(root + 1e-6 * (1 + root))[0]) / (1e-6 * (1 + root)), 1e-300)
    de = 1.5 * (er + abs(dr - delta)) / slope + 1e-12 * (1 + root)
    for _ in range(60):
        up, eu, _ = ev(root + de)
        if root - de <= 0:
            lower_ok = True
        else:
            dn, ed, _ = ev(root - de)
            lower_ok = dn - ed >= delta
        if up + eu <= delta and lower_ok:
            return de
        de *= 2.0
    raise CFAccuracyError("could not bracket epsilon within the δ error budget")


def phi(t, mechanisms, direction="remove", dual=False):
    """Zhu's φ-function of the composition (Definition 12, Proposition 13).

    dual=False: φ(t) = E_P[e^{it log(p/q)}] = M(it);
    dual=True:  φ'(t) = E_Q[e^{it log(q/p)}] = M(-1-it).
    """
    check_choice("direction", direction, ONE_WAY_DIRECTIONS)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    c, u = (-1.0, -t) if dual else (0.0, t)
    tot = np.zeros(t.shape, dtype=complex)
    for pair, n in _terms(mechanisms, direction):
        tot += n * pair.log_mgf(c, u)[0]
    return np.exp(tot)


# --------------------------------------------------------------------------
# the common accountant interface (dpsampling.engine.accountant, method="cf")
# --------------------------------------------------------------------------
def _subsampled(sigma, q, total_steps):
    return [(PoissonSubsampled(Gaussian(float(sigma)), float(q)), check_int("total_steps", total_steps))]


def _with_context(exc, what, sigma, q, total_steps, direction):
    return CFAccuracyError(f"φ accountant ({what}, Poisson σ={sigma:g}, q={q:g}, T={int(total_steps)}, "
                           f"{direction}) failed its error budget: {exc}")


def accounting_delta(epsilon, sigma, q, total_steps, direction="add_remove", rel_tol=1e-3):
    """δ(ε) of T-fold Poisson-subsampled Gaussian (σ, q) as AccountingResult keyword arguments.

    Used by :func:`dpsampling.engine.accountant.delta` (method "cf").  Error budget: absolute
    err = 1e-3·rel_tol·δ (first pass at 1e-10, tightened once the size of δ is known).  ``kind`` is
    "estimate": ``value`` is the φ inversion, ``lower``/``upper`` = value ∓ its certified error bound (accuracy["err"]).
    Raises CFAccuracyError (saying so) if even the first budget cannot be met.
    """
    m = _subsampled(sigma, q, total_steps)
    target = 1e-10
    try:
        v, e = cf_delta(float(epsilon), m, direction, abs_tol=target)
    except CFAccuracyError as exc:
        raise _with_context(exc, f"δ at ε={float(epsilon):g}", sigma, q, total_steps, direction) from exc
    want = 1e-3 * rel_tol * v
    if v > 0 and e > want:
        # tighten; if the budget is below what the inversion can certify (e.g. the rounding
        # floor of the output quadrature for δ ≈ 1e-24), relax it 100× at a time
        t = max(want, 1e-300)
        while t < target:
            try:
                v, e = cf_delta(float(epsilon), m, direction, abs_tol=t)
                target = t
                break
            except CFAccuracyError:
                t *= 100.0
    flags = ("rel_tol_not_met",) if e > rel_tol * v else ()
    acc = {"err": float(e), "err_budget": float(target), "rel_tol": rel_tol,
           "est_rel_error": float(e / v) if v > 0 else 0.0}
    return dict(value=float(v), kind="estimate", method="cf", accuracy=acc,
                lower=max(float(v - e), 0.0), upper=float(v + e), flags=flags)


def accounting_epsilon(delta, sigma, q, total_steps, direction="add_remove", rel_tol=1e-3):
    """ε(δ) counterpart of :func:`accounting_delta`: δ-inversions with absolute budget
    1e-3·rel_tol·δ near the root, relaxed once to rel_tol·δ if that cannot be certified;
    ``accuracy["err"]`` is the certified half-width on ε (flag "rel_tol_not_met" if > rel_tol·ε)."""
    m = _subsampled(sigma, q, total_steps)
    for budget in (1e-3 * rel_tol * float(delta), rel_tol * float(delta)):
        try:
            v, e = cf_epsilon(float(delta), m, direction, abs_tol=budget)
            break
        except CFAccuracyError as exc:
            last = exc
    else:
        raise _with_context(last, f"ε at δ={float(delta):g}", sigma, q, total_steps, direction) from last
    acc = {"err": float(e), "delta_err_budget": budget, "rel_tol": rel_tol,
           "est_rel_error": float(e / v) if v > 0 else 0.0}
    flags = ("rel_tol_not_met",) if e > rel_tol * v else ()
    return dict(value=float(v), kind="estimate", method="cf", accuracy=acc,
                lower=max(float(v - e), 0.0), upper=float(v + e), flags=flags)
