"""One accountant interface: δ(ε), ε(δ) and σ calibration for T (``total_steps``) compositions of
the Poisson-subsampled Gaussian mechanism (rate q, noise σ, sensitivity 1), for a neighbouring direction.

The engine knows no batch sampler: a sampler whose curves are those of this mechanism at other
parameters (WOR: σ/2, Lebeda et al. Prop. 9) maps its parameters in :mod:`dpsampling.samplers`.

Methods
    pld       dp_accounting privacy loss distributions: ``bound="upper"`` is the
              pessimistic estimate, ``bound="lower"`` the optimistic one.  The
              discretisation is chosen from a target accuracy (see
              :func:`_converge`) and recorded in the result.
    rdp       dp_accounting's RDP accountant (an upper bound, both directions).
    analytic  exact closed form where one exists (q = 1: the Gaussian with σ/√T).

Directions: ``add``, ``remove`` or ``add_remove`` (the max of both).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .errors import InternalError, ParameterError
from . import cf

from . import gaussian

from . import pld
from .numerics import find_root
from .result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, AccountingResult
from .validation import (
    DIRECTIONS,
    METHODS,
    check_choice,
    check_delta,
    check_epsilon,
    check_rate,
    check_steps,
)

#: Default relative accuracy of PLD values: the returned bound is within this
#: fraction of the converged value (estimated from successive discretisations).
DEFAULT_REL_TOL = 1e-3
#: Share of ``rel_tol`` left to the root finder in σ calibration: the returned σ is off the
#: smallest one by the discretisation error (estimated, ≤ rel_tol) plus the secant residual
#: (≤ SECANT_SHARE·rel_tol in log σ).  Secant steps converge superlinearly, so a small share
#: costs at most about one extra PLD evaluation.
SECANT_SHARE = 0.01
COARSEST_DISCRETIZATION = 1e-2
FINEST_DISCRETIZATION = 1e-6

def _check_method(method, q):
    """The accountant's own rule (the question itself is checked once, by :func:`dpsampling.samplers.account`):
    method 'analytic' is the Gaussian's closed form, q = 1 only."""
    if method == "analytic" and q != 1:
        raise ParameterError("q", "1 for method 'analytic'", q,
                             message=f"method 'analytic' needs q = 1 (got q={q!r}); use 'pld' or 'rdp'")


def _rdp_accountant(sigma, q, total_steps):
    import dp_accounting

    acc = dp_accounting.rdp.RdpAccountant()  # dp_accounting's default orders
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), int(total_steps))
    return acc


def _finer(d):
    """The next discretisation level, d/10 as the decimal (1e-3 -> 1e-4, not 1.0000000000000002e-06 later)."""
    return float(f"{d / 10:.6e}")


class _Converged(NamedTuple):
    """A value refined over discretisations (:func:`_converge`): the value, the discretisation d it was computed
    at, its estimated relative error and whether ``rel_tol`` was met."""
    value: float
    discretization: float
    est_rel_error: float
    converged: bool


def _converge(solve_at, rel_tol, floor=0.0, finest=FINEST_DISCRETIZATION) -> _Converged:
    """Refine the PLD discretisation d until the answer is accurate to ``rel_tol``.

    ``solve_at(d)`` returns the quantity computed with pessimistic PLDs at
    discretisation d.  d runs over 1e-2, 1e-3, ... (each level costs about 10×
    the previous one, so the total is ≈ 1.1× the last level).  The error of the
    last value is estimated Richardson-style from the change between the last
    two levels, diff·r/(1-r), where r is the observed ratio of successive
    changes, clipped to [ρ², ρ] with ρ = 1/10 (between quadratic and linear
    convergence in d; connect-the-dots PLDs measured here converge roughly
    quadratically once d is small, linearly before).

    Why not the optimistic PLD as a certificate: dp_accounting 0.6 builds
    optimistic PLDs with privacy buckets only, whose error grows with T
    (measured at σ=0.8, q=1e-3, T=1e4, δ=1e-6: ε_opt = 0.448 at d=1e-4 against
    ε_pess = 0.9473, converged 0.9472), so the gap certifies nothing useful.

    Refinement stops at ``finest`` (converged=False if ``rel_tol`` is not met there).
    Returns a :class:`_Converged` (value, d, estimated relative error, converged).
    """
    values = []
    d = COARSEST_DISCRETIZATION
    rho = 0.1
    while True:
        values.append(solve_at(d))
        v = values[-1]
        if abs(v) <= floor:
            return _Converged(v, d, 0.0, True)
        if len(values) >= 2:
            diff = abs(values[-2] - v)
            r = rho
            if len(values) >= 3 and values[-3] != values[-2]:
                r = min(rho, max(rho**2, diff / abs(values[-3] - values[-2])))
            err = diff * r / (1 - r) / abs(v) if v != 0 else 0.0
            if err <= rel_tol:
                return _Converged(v, d, err, True)
        if d <= finest * (1 + 1e-9):
            return _Converged(v, d, err if len(values) >= 2 else math.inf, False)
        d = _finer(d)


class _PLDValue(NamedTuple):
    """A PLD answer (:func:`_pld_value`): the value of the requested bound, the optimistic (lower) and
    pessimistic (upper) values at the same discretisation, the accuracy entries and the flags."""
    value: float
    lower: float
    upper: float
    accuracy: dict
    flags: tuple


def _pld_value(evaluate, bound, rel_tol, discretization, floor, finest=FINEST_DISCRETIZATION) -> _PLDValue:
    """Pessimistic value at a converged (or given) discretisation, plus the optimistic one there."""
    if not FINEST_DISCRETIZATION * (1 - 1e-9) <= finest <= COARSEST_DISCRETIZATION * (1 + 1e-9):
        raise ParameterError("finest_discretization", f"in [{FINEST_DISCRETIZATION:g}, {COARSEST_DISCRETIZATION:g}]",
                             finest)
    if discretization is None:
        up, d, err, ok = _converge(lambda dd: evaluate(True, dd), rel_tol, floor, finest)
    else:
        d, err, ok = float(discretization), math.nan, True
        up = evaluate(True, d)
    lo = evaluate(False, d)
    value = up if bound == "upper" else lo
    acc = {"discretization": d, "rel_tol": rel_tol, "est_rel_error": err}
    if discretization is None and finest != FINEST_DISCRETIZATION:
        acc["finest_discretization"] = finest
    return _PLDValue(value, lo, up, acc, () if ok else ("not_converged",))


def _not_pld(quantity, target, s, q, total_steps, direction, method, rel_tol) -> AccountingResult:
    """δ(ε) or ε(δ) (``quantity``) by method analytic (the Gaussian at σ/√total_steps, exact), rdp (dp_accounting's
    RDP accountant, upper) or cf (Zhu et al. φ accountant: an estimate ± certified error; bound unused)."""
    is_delta = quantity == "delta"
    if method == "analytic":
        v = float((gaussian.delta if is_delta else gaussian.epsilon)(target, gaussian.composed_sigma(s, total_steps)))
        return AccountingResult(v, "exact", "analytic", {}, v, v)
    if method == "rdp":
        rdp = _rdp_accountant(s, q, total_steps)
        v = float(rdp.get_delta(target) if is_delta else rdp.get_epsilon(target))
        return AccountingResult(v, "upper", "rdp", {"orders": "dp_accounting default"}, None, v)
    fn = cf.accounting_delta if is_delta else cf.accounting_epsilon
    return AccountingResult(**fn(target, s, q, total_steps, direction, rel_tol))


def delta(epsilon, *, sigma, q, total_steps, direction="add_remove", method="pld",
          bound="upper", rel_tol=DEFAULT_REL_TOL, discretization=None,
          finest_discretization=FINEST_DISCRETIZATION) -> AccountingResult:
    """δ(ε) after ``steps`` compositions of the q-subsampled Gaussian with noise σ.

    ``discretization=None`` picks the PLD discretisation so that the result is
    within ``rel_tol`` (relative) of the converged value, refining no further
    than ``finest_discretization`` (flag ``not_converged``); a fixed value is used
    as is (the optimistic value at that discretisation is reported as ``lower``).
    """
    _check_method(method, q)
    s = sigma
    eps = float(epsilon)
    if method != "pld":
        return _not_pld("delta", eps, s, q, total_steps, direction, method, rel_tol)

    def evaluate(pessimistic, d):
        return float(pld.delta(eps, s, q, total_steps, direction, pessimistic, d))

    value, lo, up, acc, flags = _pld_value(evaluate, bound, rel_tol, discretization, RELIABLE_DELTA_FLOOR,
                                           finest_discretization)
    if up < RELIABLE_DELTA_FLOOR:
        return _below_floor("delta", eps, s, q, total_steps, direction, bound, rel_tol, value, lo, up, acc, flags)
    return AccountingResult(value, bound, "pld", acc, lo, up, flags, lower_method=PLD_LOWER_METHOD,
                            upper_method=PLD_UPPER_METHOD)


#: the per-end method labels of a PLD answer: the pessimistic PLD certifies the upper end; the optimistic one is an
#: estimate of the lower end, not a certificate (see :func:`_converge`)
PLD_UPPER_METHOD = "pessimistic PLD"
PLD_LOWER_METHOD = "optimistic PLD (not certified)"
#: Method label of a value that replaces a PLD value below the reliability floor.
CF_CERTIFIED_METHOD = "cf_certified (pld below floor)"


def _below_floor(quantity, target, s, q, total_steps, direction, bound, rel_tol, value, lo, up, acc, flags):
    """A PLD result whose δ is below :data:`RELIABLE_DELTA_FLOOR`: flagged, never a PLD bound.

    Where the φ accountant (:mod:`.cf`) certifies the value, its certified end on the requested
    side replaces the PLD value (a bound because the φ inversion's error is certified: value ± err
    contains the truth; method :data:`CF_CERTIFIED_METHOD`); otherwise the PLD value is kept as an
    ``estimate`` with flag ``cf_unavailable``.  The PLD pair is kept in ``accuracy``.
    """
    flags = tuple(flags) + (BELOW_FLOOR_FLAG,)
    acc = dict(acc, pld_lower=float(lo), pld_upper=float(up))
    fn = cf.accounting_delta if quantity == "delta" else cf.accounting_epsilon
    try:
        r = fn(float(target), s, q, total_steps, direction, rel_tol)
    except (cf.CFAccuracyError, ValueError, OverflowError, FloatingPointError):
        return AccountingResult(value, "estimate", "pld", acc, lo, up, flags + ("cf_unavailable",))
    acc["cf_err"] = r["accuracy"]["err"]
    v = r["upper"] if bound == "upper" else r["lower"]
    return AccountingResult(float(v), bound, CF_CERTIFIED_METHOD, acc, r["lower"], r["upper"],
                            flags + tuple(r["flags"]))


def epsilon(delta, *, sigma, q, total_steps, direction="add_remove", method="pld",
            bound="upper", rel_tol=DEFAULT_REL_TOL, discretization=None,
            finest_discretization=FINEST_DISCRETIZATION) -> AccountingResult:
    """ε(δ): the smallest ε with δ(ε) ≤ ``delta`` (see :func:`delta`)."""
    _check_method(method, q)
    s = sigma
    if method != "pld":
        return _not_pld("epsilon", delta, s, q, total_steps, direction, method, rel_tol)

    def evaluate(pessimistic, d):
        return pld.epsilon(delta, s, q, total_steps, direction, pessimistic, d)

    value, lo, up, acc, flags = _pld_value(evaluate, bound, rel_tol, discretization, 0.0, finest_discretization)
    if float(delta) < RELIABLE_DELTA_FLOOR:  # ε read off PLD δ below the floor: not reliable
        return _below_floor("epsilon", delta, s, q, total_steps, direction, bound, rel_tol, value, lo, up, acc,
                            flags)
    return AccountingResult(value, bound, "pld", acc, lo, up, flags, lower_method=PLD_LOWER_METHOD,
                            upper_method=PLD_UPPER_METHOD)


# --------------------------------------------------------------------------- calibration


def _gdp_sigma_guess(eps, delta, q, total_steps):
    """Initial σ from the Gaussian-DP central limit approximation.

    T compositions of the q-subsampled Gaussian behave like μ-GDP with
    μ = q·sqrt(T·(e^{1/σ²} - 1)) (Bu et al. 2020); μ-GDP has the analytic
    Gaussian curve with noise 1/μ.  Only used as a starting point.
    """
    s_eff = _analytic_sigma(eps, delta)  # = 1/μ
    mu = 1.0 / s_eff
    return 1.0 / math.sqrt(math.log1p(mu**2 / (q**2 * total_steps)))


@lru_cache(maxsize=64)
def _analytic_sigma(eps, delta):
    """Smallest σ with the Gaussian mechanism (sensitivity 1) (ε, δ)-DP (exact): :func:`gaussian.sigma`."""
    return gaussian.sigma(eps, delta)


def _check_calibration(epsilon, delta, qs, total_steps, direction):
    """Checks shared by the calibration entry points."""
    check_epsilon(epsilon)
    check_delta(delta)
    for qv in qs:
        check_rate(qv)
    check_steps(total_steps, "total_steps")
    check_choice("direction", direction, DIRECTIONS)


def calibrate_sigma(epsilon, delta, *, q, total_steps, direction="add_remove", method="pld",
                    rel_tol=DEFAULT_REL_TOL) -> AccountingResult:
    """Smallest σ such that the mechanism is (ε, δ)-DP, to relative accuracy ``rel_tol``.

    ``value`` is a σ that is *sufficient* by the pessimistic (upper-bound)
    accountant at the final discretisation; ``accuracy["est_rel_error"]`` is
    its estimated relative distance to the converged σ (see :func:`_converge`).
    ``value`` is an upper bound on the smallest σ; no lower bound is certified.  It is returned
    only after a final evaluation of the pessimistic PLD at the reported discretisation shows
    δ(ε; σ) ≤ δ, i.e. ε(σ) ≤ ε (σ is stepped up until it does, :func:`_sufficient`); the RDP
    path returns the safe end of its root bracket, checked the same way.

    Method (pld): solve log δ_pess(ε; e^x) = log δ on x = log σ with secant
    steps, at each level d = 1e-3, 1e-4, ... first at the cheap 10·d (a Gaussian-DP
    approximation gives the first starting point), then at d from there,
    until the discretisation error, estimated from the roots at d, 10·d and
    100·d, is below ``rel_tol`` (see :func:`_calibrate_pld`).
    """
    _check_calibration(epsilon, delta, [q], total_steps, direction)
    check_choice("method", method, tuple(m for m in METHODS if m != "cf"))  # φ answers ε and δ only
    eps, dlt, total_steps = float(epsilon), float(delta), int(total_steps)
    if q == 1.0:  # composition of T Gaussians = one Gaussian with σ/√T, exactly
        s = _analytic_sigma(eps, dlt) * math.sqrt(total_steps)
        return AccountingResult(s, "exact", "analytic", {}, s, s)
    _check_method(method, q)
    if method == "rdp":
        s = _calibrate_rdp(eps, dlt, q, total_steps)
        return AccountingResult(s, "upper", "rdp", {"rel_tol": rel_tol}, None, s)
    r = _calibrate_pld(eps, dlt, q, total_steps, direction, rel_tol)
    s = r.sigma
    acc = {"discretization": r.discretization, "rel_tol": rel_tol, "est_rel_error": r.est_rel_error, **r.evaluations}
    # no certified lower bound on the smallest σ (optimistic PLDs are too loose): lower stays None
    label = _sigma_kind_flags(dlt, r.converged)
    return AccountingResult(s, label.kind, label.method, acc, None, s, label.flags)


class _SigmaLabel(NamedTuple):
    """kind, method and flags of a PLD-calibrated σ (:func:`_sigma_kind_flags`)."""
    kind: str
    method: str
    flags: tuple


def _sigma_kind_flags(dlt, ok) -> _SigmaLabel:
    """The label of a PLD-calibrated σ: sufficient (``upper`` on the smallest σ) by the final pessimistic-PLD
    check (:func:`_sufficient`), unless δ is below the PLD reliability floor, where that check proves nothing
    (``estimate``, flagged)."""
    flags = () if ok else ("not_converged",)
    if dlt < RELIABLE_DELTA_FLOOR:
        return _SigmaLabel(kind="estimate", method="pld", flags=flags + (BELOW_FLOOR_FLAG,))
    return _SigmaLabel(kind="upper", method="pld", flags=flags)


def _calibrate_rdp(eps, dlt, q, total_steps, rel_tol=1e-6):
    """σ with RDP ε(σ) ≤ eps: the safe (upper) end of the root bracket, checked by evaluation."""
    g = lambda x: _rdp_accountant(math.exp(x), q, total_steps).get_epsilon(dlt) - eps
    x0 = math.log(_gdp_sigma_guess(eps, dlt, q, total_steps))
    lo, hi = x0 - 0.5, x0 + 0.5
    while g(lo) < 0:
        lo -= 1.0
    while g(hi) > 0:
        hi += 1.0
    x = find_root(g, lo, hi, xtol=rel_tol)
    # brentq's root is within xtol of the crossing on either side; step to the safe side and check
    step = rel_tol
    while g(x) > 0:
        x = min(x + step, hi)
        step *= 2
    return math.exp(x)


def _log_delta_gap(eps, log_t, q, total_steps, direction, d, counter):
    """x = log σ  ->  log δ_pess(ε; σ) - log δ_target at discretisation d.

    Memoised per x, so ``counter[d]`` counts distinct PLD evaluations at d (a repeated x, e.g. the final
    check at the root finder's last point, costs nothing and is not counted)."""
    seen = {}

    def g(x):
        if x not in seen:
            counter[d] = counter.get(d, 0) + 1
            v = float(pld.delta(eps, math.exp(x), q, total_steps, direction, True, d))
            seen[x] = math.log(v) - log_t if v > 0 else -math.inf
        return seen[x]

    return g


def _coarser(d):
    """The previous discretisation level, 10·d as the decimal (1e-5 -> 1e-4, not 1.0000000000000002e-4), so that
    a refined solve finds the coarser level's evaluations in its cache."""
    return float(f"{d * 10:.6e}")


class _Hint(NamedTuple):
    """A warm start of :func:`_calibrate_pld` from neighbouring problems: log σ guess of the root at 10·d, the
    slope there (None: not known), d, and the predicted ratios of the shifts and of the slopes (d vs 10·d)."""
    log_sigma: float
    slope: float | None
    discretization: float
    shift_ratio: float
    slope_ratio: float


class _Calibrated(NamedTuple):
    """What :func:`_calibrate_pld` returns: the sufficient σ, its estimated relative error, the discretisation d
    it is reported at, whether ``rel_tol`` was met, the PLD evaluation counts and the :class:`_Solved` record."""
    sigma: float
    est_rel_error: float
    discretization: float
    converged: bool
    evaluations: dict
    solved: "_Solved"


def _root_of(x, gx, slope):
    """Secant estimate of the root from a point x (gap ``gx``) and the slope."""
    return x + gx / abs(slope) if np.isfinite(gx) else x


def _calibrate_level(gap, x, slope_c, d, ratio, slope_ratio, measured, tol):
    """Steps 1-3 of :func:`_calibrate_pld` at level d: (x, slope, shift root_d − root_10d, :class:`_Solved`)."""
    xc, slope_c, gxc = _secant(gap(_coarser(d)), x, slope_c, tol, first_may_stop=measured)
    measured_c = measured or xc != x  # the coarse slope was measured at this q
    root_c = _root_of(xc, gxc, slope_c)
    g100 = gap(_coarser(_coarser(d)))(xc)
    shift_c = root_c - _root_of(xc, g100, slope_c) if np.isfinite(g100) and np.isfinite(gxc) else math.nan
    start = root_c + (ratio * shift_c if np.isfinite(shift_c) else 0.0) + 0.5 * tol
    x, slope, gx = _secant(gap(d), start, slope_c * slope_ratio, tol, first_may_stop=measured_c)
    shift = _root_of(x, gx, slope) - root_c
    slope_d = slope if x != start else math.nan  # nan: accepted at its first evaluation, slope not measured at d
    return x, slope, shift, _Solved(root_c, slope_c, slope_d, shift / shift_c if shift_c else math.nan)


def _calibrate_pld(eps, dlt, q, total_steps, direction, rel_tol, hint=None) -> _Calibrated:
    """The smallest sufficient σ by secant steps on coarse-to-fine discretisations (:class:`_Calibrated`).

    ``hint`` (:class:`_Hint`) from neighbouring problems (the previous sampling rates on a curve, :func:`_curve_hint`); without one
    (cold start): the Gaussian-DP guess (:func:`_gdp_sigma_guess`), no slope, d = 1e-3, ratios 0.1 and 1.
    Per level d:

    1. the root at 10·d (cheap: a third of an evaluation at d = 1e-3, a tenth or less below) by secant steps; with a hint at least
       one step is taken, so the slope there is measured at this q (never only predicted from other q);
    2. one cheap probe at 100·d, moved to its root by that slope: the shift s_c from 100·d to 10·d;
    3. the root at d by secant steps from the root at 10·d moved by the predicted shift (ratio·s_c), with
       the slope at 10·d times the predicted ratio of the slopes at d and 10·d; it stops at the first
       sufficient point within SECANT_SHARE·rel_tol above the root by that slope, which may be the first
       evaluation at d (the residual is counted in the error below, and checked by evaluation in tests);
    4. the discretisation error, estimated as :func:`_converge` does: the shift s = root_d − root_10d times
       r/(1-r), with r = s/s_c clipped to [0.01, 0.1]; refine d (÷10) while it is above ``rel_tol``, the
       coarse stage at the new level then starting at this level's answer (cached: no evaluation).

    Measured on the Lebeda Fig. 2 curves: the answer costs 1.8 evaluations at d per warm σ on
    average (at most 2 where the predictions hold, 3 in the curves' bends), against 2.2 when the root at d
    was extrapolated along the curve directly and always solved by two steps at d.
    """
    log_t = math.log(dlt)
    n_evals, gaps = {}, {}
    tol = SECANT_SHARE * rel_tol

    def gap(dd):  # one memo per level, shared by the stages of all levels
        if dd not in gaps:
            gaps[dd] = _log_delta_gap(eps, log_t, q, total_steps, direction, dd, n_evals)
        return gaps[dd]

    if hint is None:
        hint = _Hint(math.log(_gdp_sigma_guess(eps, dlt, q, total_steps)), None, _finer(COARSEST_DISCRETIZATION),
                     0.1, 1.0)
    x, slope_c, d, ratio, slope_ratio = hint
    measured = False  # slope_c: predicted from other q (a hint) or measured at this q
    while True:
        x, slope, shift, solved = _calibrate_level(gap, x, slope_c, d, ratio, slope_ratio, measured, tol)
        g = gap(d)
        r = min(0.1, max(0.01, abs(solved.ratio))) if np.isfinite(solved.ratio) else 0.1
        err = abs(shift) * r / (1 - r)
        if err <= rel_tol or d <= FINEST_DISCRETIZATION * (1 + 1e-9):
            x = _sufficient(g, x, slope)
            # The secant stops at the first sufficient σ within SECANT_SHARE·rel_tol (log σ) above the
            # root, so the reported error adds that residual, -g(x)/|slope| (g(x) is cached: free).
            gx = g(x)
            err += max(0.0, -gx) / abs(slope) if np.isfinite(gx) else tol
            evals = {"pld_evaluations": sum(n_evals.values()), "pld_evaluations_at_discretization": n_evals.get(d, 0)}
            return _Calibrated(math.exp(x), err, d, err <= rel_tol, evals, solved)
        # the coarse stage at the next level starts at this level's answer (cached), its slope measured here
        slope_c, d, ratio, slope_ratio, measured = slope, _finer(d), r, 1.0, True


class _Solved(NamedTuple):
    """What the next point of a curve is predicted from: log σ of the root at 10·d, the slopes at 10·d and at d
    (``slope`` nan if the answer was the first evaluation at d), and the ratio of the shift root_d − root_10d to
    the shift from 100·d to 10·d."""
    root_coarse: float
    slope_coarse: float
    slope: float
    ratio: float


def _sufficient(g, x, slope, max_steps=60):
    """Smallest log σ ≥ x found by stepping up at which the final check g(x) ≤ 0 holds.

    ``g`` is log δ_pess(ε; e^x) − log δ_target at the discretisation that is reported, so g ≤ 0
    means the pessimistic PLD shows (ε, δ_target)-DP at σ = e^x, i.e. ε(σ) ≤ target (δ(ε) is
    non-increasing in ε).  It is evaluated here, whatever the root finder claimed (the composed
    PLD is cached, so this is free when x is the finder's last point); while it fails, x steps up
    by the secant correction, at least 1e-6 (doubling).
    """
    step = 1e-6
    for _ in range(max_steps):
        gx = g(x)
        if gx <= 0:
            return x
        x += max(gx / abs(slope) if np.isfinite(gx) else 0.5, step)
        step *= 2
    raise InternalError(f"sigma calibration: no sufficient sigma found up to {math.exp(x):.6g}")


def calibrate_sigma_curve(epsilon, delta, qs, *, total_steps, direction="add_remove",
                          rel_tol=DEFAULT_REL_TOL) -> list[AccountingResult]:
    """:func:`calibrate_sigma` (method pld) for many sampling rates at once.

    Solves the rates in increasing order, each warm-started from its
    neighbours (:func:`_curve_hint`: root at 10·d, slope, discretisation and
    the ratios that carry them to d), which typically needs one or two PLD
    evaluations at the reported d and three cheap coarser ones per rate
    instead of a full coarse-to-fine search.
    Results are returned in the order of ``qs``; the curve is cached per process.
    """
    _check_calibration(epsilon, delta, qs, total_steps, direction)
    curve = _poisson_curve(float(epsilon), float(delta), tuple(sorted(set(float(q) for q in qs))), int(total_steps),
                           direction, float(rel_tol))
    # lower stays None (no certified lower bound on the smallest σ), also where q = 1 gave the exact σ
    return [AccountingResult(r.value, r.kind, r.method, r.accuracy, None, r.value, r.flags)
            for r in (curve[float(q)] for q in qs)]


@lru_cache(maxsize=16)
def _poisson_curve(eps, dlt, qs, total_steps, direction, rel_tol):
    out, done = {}, []  # done: the solved points (_CurvePoint), in increasing q
    gdp = lambda lq_: math.log(_gdp_sigma_guess(eps, dlt, math.exp(lq_), total_steps))
    for qv in qs:  # increasing
        if qv == 1.0:
            out[qv] = calibrate_sigma(eps, dlt, q=1.0, total_steps=total_steps, direction=direction)
            continue
        lq = math.log(qv)
        hint = None
        if done:
            h = _curve_hint(done, lq)  # its log σ is relative to the Gaussian-DP approximation
            # aim at the middle of the secant's acceptance window [root, root + SECANT_SHARE·rel_tol]
            hint = h._replace(log_sigma=gdp(lq) + h.log_sigma + 0.5 * SECANT_SHARE * rel_tol)
        r = _calibrate_pld(eps, dlt, qv, total_steps, direction, rel_tol, hint)
        done.append(_CurvePoint(lq, r.solved.root_coarse - gdp(lq), r.discretization, r.solved))
        acc = {"discretization": r.discretization, "rel_tol": rel_tol, "est_rel_error": r.est_rel_error,
               **r.evaluations}
        label = _sigma_kind_flags(dlt, r.converged)
        out[qv] = AccountingResult(r.sigma, label.kind, label.method, acc, None, r.sigma, label.flags)
    return out


class _CurvePoint(NamedTuple):
    """A solved point of a σ curve: log q, y = log σ of the root at 10·d minus log σ of the Gaussian-DP
    approximation, d, and its :class:`_Solved` record."""
    log_q: float
    y: float
    discretization: float
    solved: _Solved


def _curve_hint(done, lq) -> _Hint:
    """Warm start (:func:`_calibrate_pld`'s ``hint``, its log σ relative to the Gaussian-DP approximation) at
    log q = ``lq`` from the solved points ``done`` (:class:`_CurvePoint`), y = log σ of the root at 10·d minus
    log σ of the Gaussian-DP approximation (:func:`_gdp_sigma_guess`), which carries most of the curve's shape.  y is extrapolated by
    the cubic through the last four points at the last point's discretisation (fewer at the start; all levels
    if fewer than two are at it), the slope at 10·d by the quadratic through the last three points; the ratio
    of the shifts (d vs 10·d over 10·d vs 100·d) and the ratio of the slopes at d and 10·d by least-squares
    lines through the last three points at the same d (measured, so noisy).  Only a starting point: the roots
    are then solved and checked at this q.

    Measured on the Lebeda Fig. 2 curves (0.1-decade steps in q): extrapolating the root at d itself
    (a cubic on it) missed by up to 1e-2 in log σ at small q, where the discretisation shifts the root most
    and least smoothly, and the slope at 10·d differs from that at d by up to 5%; predicting the shift at this
    q from its own coarser shift and the slope from its own coarse slope takes the mean number of evaluations
    at d per warm σ from 2.2 to 1.8."""
    d = done[-1].discretization
    same = [p for p in done if p.discretization == d]
    last = (same if len(same) >= 2 else done)[-4:]

    def extrapolate(points, values):
        lqs, out = [p.log_q for p in points], 0.0
        for i, (li, vi) in enumerate(zip(lqs, values)):  # Lagrange form
            w = 1.0
            for j, lj in enumerate(lqs):
                if j != i:
                    w *= (lq - lj) / (li - lj)
            out += w * vi
        return out

    slope = extrapolate(done[-3:], [p.solved.slope_coarse for p in done[-3:]])
    if not slope < 0:  # the gap decreases in σ: keep the last measured slope if extrapolation says otherwise
        slope = done[-1].solved.slope_coarse

    def trend(values):  # least-squares line through the last three points at d (measured, so noisy)
        pts = [(p.log_q, v) for p, v in zip(same[-3:], values[-3:]) if np.isfinite(v)]
        if len(pts) < 2:
            return pts[-1][1] if pts else math.nan
        return float(np.polyval(np.polyfit(*zip(*pts), 1), lq))

    ratio = trend([p.solved.ratio for p in same])
    slope_ratio = trend([p.solved.slope / p.solved.slope_coarse for p in same])
    return _Hint(extrapolate(last, [p.y for p in last]), slope, d, ratio if np.isfinite(ratio) else 0.1,
                 slope_ratio if np.isfinite(slope_ratio) else 1.0)


def _secant(f, x0, slope, tol, max_iter=40, first_may_stop=True):
    """Root of a decreasing f near x0 by secant steps, finished on the safe side; returns (x, slope, f(x)).

    ``tol`` is in x units.  Each step aims ``tol``/2 above the secant root, and the search stops at the
    first point with f(x) ≤ 0 whose distance above the root, -f(x)/|slope|, is at most ``tol``: the last
    point evaluated is the answer (the final check :func:`_sufficient` then costs no evaluation), and a
    good starting point and slope (a warm start) make that one Newton step and its check, two evaluations.
    Steps are clipped to ±1 (a factor e in σ) and non-finite values are handled by halving the step.
    ``first_may_stop=False`` (a slope predicted from other problems, not measured on f): the distance to
    the root is never judged by that slope alone, so at least one step (a secant slope of f) is taken.
    Without this, a point accepted at its first evaluation passes the predicted slope on unmeasured and
    the predictions can run away (seen on Räisä Fig. 1, ε = 0.125, T = 1000, q > 0.4: σ 38% too large).
    :func:`_calibrate_pld` runs its cheap stage at 10·d this way on a warm start, so the slope is measured at
    every q, and starts the stage at d from that slope.
    """
    f0 = f(x0)
    stop_ok = first_may_stop
    if slope is None:
        h = 0.05 if f0 > 0 else -0.05
        x1 = x0 + h
        f1 = f(x1)
        slope = (f1 - f0) / h if np.isfinite(f1) and np.isfinite(f0) and f1 != f0 else -10.0
        x0, f0 = (x1, f1) if abs(f1) < abs(f0) else (x0, f0)
    for _ in range(max_iter):
        if not np.isfinite(f0):
            step = -0.5 if f0 < 0 else 0.5  # δ underflowed (σ too large) or exploded
        elif f0 <= 0 and -f0 / abs(slope) <= tol and stop_ok:
            return x0, slope, f0
        elif f0 <= 0 and -f0 / abs(slope) <= tol:  # in the window by the predicted slope: measure the
            step = 0.5 * tol + f0 / abs(slope)  # slope by a step to the window's middle (≥ 0.2·tol long)
            step = math.copysign(max(abs(step), 0.2 * tol), step)
        else:
            step = float(np.clip(-f0 / slope + 0.5 * tol, -1.0, 1.0))
        x1 = x0 + step
        f1 = f(x1)
        stop_ok = True
        if np.isfinite(f1) and np.isfinite(f0) and f1 != f0:
            new_slope = (f1 - f0) / (x1 - x0)
            if new_slope < 0:
                slope = new_slope
        x0, f0 = x1, f1
    raise InternalError(f"sigma calibration did not converge near sigma={math.exp(x0):.6g}")
