"""A certified interval [lower, upper] for T compositions of the Poisson-subsampled Gaussian.

Each end is a bound by its own method and carries its label (``accuracy["lower_method"]``,
``accuracy["upper_method"]``):

* upper: the pessimistic connect-the-dots PLD (dp_accounting; its chords lie above the privacy profile,
  so its pair dominates the true one), with a proven bound on its composition's rounding added to δ
  (:func:`.pld.certified_delta`, :func:`.pld.certified_epsilon`);
* lower: the dominated PLD (:mod:`.dominated_pld`; tangent lines below the profile, so the true pair
  dominates its pair);
* both, where it certifies its error budget: the φ accountant (:mod:`.cf`; value ± a certified error).

The discretisation d runs over 1e-3, 1e-4, then a level predicted from the width (:func:`_next_level`)
until the relative width (upper − lower)/upper is at most ``rel_tol``; every level's ends are valid
bounds, so the best of each over the levels is kept.  If the width is not reached at
``finest_discretization``, the φ accountant is asked and the two intervals are intersected (each end
from whichever method gives the tighter one); it is not asked otherwise, to save its cost.  The width
is a certified bound on the error of either end (flag ``not_converged`` if it exceeds ``rel_tol``).

Below :data:`.result.RELIABLE_DELTA_FLOOR` PLD δ are not reliable bounds: a δ(ε) query whose upper
end falls below it, and an ε(δ) query at such δ, are answered by the φ accountant alone (flag
``delta_below_...``), or kept as an ``estimate`` flagged ``cf_unavailable``.

q = 1 is the Gaussian at σ/√T in closed form (``exact``).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

from .errors import InternalError, ParameterError
from . import cf, dominated_pld, gaussian, pld
from .result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, AccountingResult

#: end labels
UPPER_PLD = "pessimistic PLD"
LOWER_PLD = "dominated PLD"
CF = "φ accountant"
EXACT = "analytic"
#: the first two discretisation levels, and the finest allowed
LEVELS = (1e-3, 1e-4, 1e-6)
#: the coarsest ``finest_discretization`` accepted (the accountant's range); above 1e-3 the first level is it
COARSEST = 1e-2
#: default finest level: 1e-5 reaches 1e-3 relative width on every measured point of
#: bench/bench_poisson_interval.py (σ ≥ 0.5, up to 1e6 steps) in seconds; 1e-6 costs ~10× more
DEFAULT_FINEST = 1e-5


def _label(lo_method, up_method):
    return lo_method if lo_method == up_method else f"{lo_method} / {up_method}"


def _result(lo, up, lo_m, up_m, acc, flags, rel_tol):
    if lo > up * (1 + 1e-12):  # both ends are certified, so a crossed interval means a bug: never print it
        raise InternalError(f"crossed interval: lower {lo!r} ({lo_m}) > upper {up!r} ({up_m}); please report")
    width = (up - lo) / up if 0 < up < math.inf else (0.0 if up == 0 else math.inf)
    flags = tuple(flags) + (("not_converged",) if width > rel_tol else ())
    acc = dict(acc, rel_tol=rel_tol, rel_width=width, est_rel_error=width, lower_method=lo_m, upper_method=up_m)
    return AccountingResult(float(up), "upper", _label(lo_m, up_m), acc, float(lo), float(up), flags)


def _exact(v):
    return AccountingResult(float(v), "exact", EXACT, {}, float(v), float(v))


def _check_finest(finest):
    finest = DEFAULT_FINEST if finest is None else float(finest)
    if not LEVELS[-1] * (1 - 1e-9) <= finest <= COARSEST * (1 + 1e-9):
        raise ParameterError("finest_discretization", f"in [{LEVELS[-1]:g}, {COARSEST:g}]", finest)
    return finest


def _next_level(d, width, rel_tol, finest):
    """The next discretisation: 1e-3 -> 1e-4, then the d' at which the width, taken as second order in d
    (both ends' errors are), is predicted at rel_tol/4: d·sqrt(rel_tol/(4·width)) (two digits, at most d/2,
    at least ``finest``).  Any d gives valid bounds; the prediction only saves work (1e-4 -> 1e-5 costs
    10×, the predicted level typically 2-3×)."""
    if d > LEVELS[1] * (1 + 1e-9):
        return LEVELS[1]
    nxt = d * min(0.5, math.sqrt(rel_tol / (4.0 * width)))
    return max(finest, float(f"{nxt:.1e}"))


#: the refinement does not start a finer level whose composed grid (the last level's pessimistic pmfs, grown as
#: 1/d) would exceed REFINE_MAX_POINTS points or REFINE_MAX_WORK points × log2(T): ~300 bytes and ~1.2 µs × log2(T)
#: per point for the pair of PLDs (measured: σ 0.0331, q 4.8e-4, T 10: 2.5e6 points at d = 1e-3, 5 s and 317 MiB for
#: one; 2.5e7 at 1e-4 passed 7.5 GB), so about 1.5 GB and 40 s at most.  The cost model (samplers/poisson.py cost)
#: admits a question on its first level; this bound holds the levels after it.  Stopping early only widens the
#: interval (flag not_converged; the φ accountant is asked as at the finest level).  Deterministic: the grid's
#: size, not a clock.
REFINE_MAX_POINTS = 5e6
REFINE_MAX_WORK = 3e7


def _points(sigma, q, total_steps, direction, d):
    """The composed pessimistic pmfs' grid points at ``d`` (the cached composition the upper end just used)."""
    return sum(len(getattr(p, "_probs", ())) for p in pld.direction_pmfs(
        pld.composed(float(sigma), float(q), int(total_steps), True, float(d)), direction))


def _refine(upper_at, lower_at, rel_tol, finest, discretization=None, points_at=None, steps=1, stop_on_stall=False):
    """(lo, up, d, widths) from the PLD pair, refined until the relative width is ≤ rel_tol or d reaches
    ``finest`` (or at the one ``discretization``), or the next level's grid (``points_at(d)`` grown as 1/d) would
    pass :data:`REFINE_MAX_POINTS` or :data:`REFINE_MAX_WORK`, or (``stop_on_stall``: a lower end assembled from other
    pairs, whose gap need not close as d → 0) a level did not halve the width; each level's ends are bounds, the
    best are kept."""
    lo, up, widths, last = 0.0, math.inf, {}, math.inf
    d = max(LEVELS[0], finest) if discretization is None else float(discretization)
    while True:
        up = min(up, upper_at(d))
        lo = max(lo, lower_at(d))
        width = widths[d] = (up - lo) / up if up > 0 else 0.0
        if discretization is not None or width <= rel_tol or d <= finest * (1 + 1e-9) or \
                (stop_on_stall and width > 0.5 * last):
            return lo, up, d, widths
        last = width
        nxt = _next_level(d, width, rel_tol, finest)
        if points_at is not None:
            points = points_at(d) * d / nxt
            if points > REFINE_MAX_POINTS or points * max(1.0, math.log2(steps)) > REFINE_MAX_WORK:
                return lo, up, d, widths
        d = nxt


def _intersect(lo, up, cf_res):
    """The tighter end of each side and its label, from the PLD pair and the φ interval."""
    lo_m, up_m = LOWER_PLD, UPPER_PLD
    if cf_res is not None:
        if cf_res["lower"] > lo:
            lo, lo_m = cf_res["lower"], CF
        if cf_res["upper"] < up:
            up, up_m = cf_res["upper"], CF
    return lo, up, lo_m, up_m


def _with_cf(lo, up, d, widths, fn, target, s, q, steps, direction, rel_tol):
    """The PLD pair's interval, intersected with the φ accountant's where the pair misses the width (an infinite
    upper end included), as a labelled result."""
    cf_res = None
    if not (math.isfinite(up) and up - lo <= rel_tol * up):
        cf_res = _cf(fn, target, s, q, steps, direction, rel_tol)
    lo, up, lo_m, up_m = _intersect(lo, up, cf_res)
    return _result(lo, up, lo_m, up_m, {"discretization": d, "pld_widths": widths}, (), rel_tol)


def _cf(fn, target, sigma, q, steps, direction, rel_tol):
    try:
        return fn(float(target), sigma, q, steps, direction, rel_tol)
    except (cf.CFAccuracyError, ValueError, ArithmeticError):  # the φ accountant cannot answer here (e.g. a δ
        return None  # so small that its error budget underflows): the PLD pair's interval stands alone


def epsilon(delta, *, sigma, q, total_steps, direction="add_remove", rel_tol=1e-3, finest_discretization=None,
            discretization=None) -> AccountingResult:
    """ε(δ) as a certified interval (module docstring); ``sigma`` is the Poisson σ (WOR callers pass σ/2).  Answers
    are kept (a bounded cache: the same question, e.g. a plain audit's row and the last row of its per-epoch table,
    is answered once)."""
    finest = _check_finest(finest_discretization)
    return _epsilon(float(delta), float(sigma), float(q), int(total_steps), direction, float(rel_tol), finest,
                    None if discretization is None else float(discretization))


@lru_cache(maxsize=64)
def _epsilon(dlt, s, q, steps, direction, rel_tol, finest, discretization):
    """:func:`epsilon` of checked arguments (cached; results are immutable)."""
    if q == 1.0:
        return _exact(gaussian.epsilon(dlt, gaussian.composed_sigma(s, steps)))
    if dlt < RELIABLE_DELTA_FLOOR:
        r = _cf(cf.accounting_epsilon, dlt, s, q, steps, direction, rel_tol)
        if r is None:
            return _pld_below_floor(dlt, s, q, steps, direction, rel_tol, finest, discretization)
        return _cf_only(cf.accounting_epsilon, dlt, s, q, steps, direction, rel_tol, cf_result=r)
    lo, up, d, widths = _refine(lambda dd: pld.certified_epsilon(dlt, s, q, steps, direction, dd),
                                lambda dd: dominated_pld.epsilon(dlt, sigma=s, q=q, total_steps=steps,
                                                                 direction=direction, discretization=dd),
                                rel_tol, finest, discretization, lambda dd: _points(s, q, steps, direction, dd), steps)
    return _with_cf(lo, up, d, widths, cf.accounting_epsilon, dlt, s, q, steps, direction, rel_tol)


def delta(epsilon_value, *, sigma, q, total_steps, direction="add_remove", rel_tol=1e-3, finest_discretization=None,
          discretization=None) -> AccountingResult:
    """δ(ε) as a certified interval (module docstring)."""
    finest = _check_finest(finest_discretization)
    s, q, steps, eps = float(sigma), float(q), int(total_steps), float(epsilon_value)
    if q == 1.0:
        return _exact(gaussian.delta(eps, gaussian.composed_sigma(s, steps)))
    lo, up, d, widths = _refine(lambda dd: pld.certified_delta(eps, s, q, steps, direction, dd),
                                lambda dd: dominated_pld.delta(eps, sigma=s, q=q, total_steps=steps,
                                                               direction=direction, discretization=dd),
                                rel_tol, finest, discretization, lambda dd: _points(s, q, steps, direction, dd), steps)
    if up < RELIABLE_DELTA_FLOOR:
        return _cf_only(cf.accounting_delta, eps, s, q, steps, direction, rel_tol,
                        {"pld_lower": lo, "pld_upper": up, "discretization": d})
    return _with_cf(lo, up, d, widths, cf.accounting_delta, eps, s, q, steps, direction, rel_tol)


def _pld_below_floor(dlt, s, q, steps, direction, rel_tol, finest, discretization):
    """ε(δ) below the PLD reliability floor where the φ accountant cannot certify it: the PLD pair's own certified
    ends (the upper one read at δ less the composition's proven FFT rounding bound, the lower one at δ plus the
    dominated pair's, both read by construction: engine/reading.py) are still bounds there — the floor is about
    dp_accounting's unbounded error, not about ours — so where the upper end is finite the interval is the answer,
    flagged :data:`BELOW_FLOOR_FLAG`.  Where the rounding bound reaches δ (measured: ≈ 1.5e-9 at σ 0.43, q 9.6e-5,
    7564 steps; 1.2e-11 at σ 1, q 0.01, 100 steps; 0 at one step) the upper end is ∞ and the question is refused
    (ParameterError naming delta and the floor; the bound barely moves with the discretisation, so the first level
    decides, in under a second)."""
    first = max(LEVELS[0], finest) if discretization is None else float(discretization)
    up = pld.certified_epsilon(dlt, s, q, steps, direction, first)
    if math.isfinite(up):
        lo, up, d, widths = _refine(lambda dd: pld.certified_epsilon(dlt, s, q, steps, direction, dd),
                                    lambda dd: dominated_pld.epsilon(dlt, sigma=s, q=q, total_steps=steps,
                                                                     direction=direction, discretization=dd),
                                    rel_tol, finest, discretization, lambda dd: _points(s, q, steps, direction, dd),
                                    steps)
    if not math.isfinite(up):
        raise ParameterError("delta", f">= {RELIABLE_DELTA_FLOOR:g} for these inputs", dlt,
                             message=f"delta {dlt!r} is below the PLD reliability floor {RELIABLE_DELTA_FLOOR:g}: "
                                     "the φ accountant cannot certify it here, and the PLD's proven FFT rounding "
                                     "bound is not below it (no finite upper end is proven); use a larger delta")
    res = _result(lo, up, LOWER_PLD, UPPER_PLD, {"discretization": d, "pld_widths": widths}, (), rel_tol)
    return dataclasses.replace(res, flags=(BELOW_FLOOR_FLAG, "cf_unavailable") + tuple(res.flags))


def _cf_only(fn, target, s, q, steps, direction, rel_tol, acc=None, cf_result=None):
    """Below the PLD reliability floor: the φ accountant's certified interval, or a flagged estimate."""
    acc = dict(acc or {})
    r = cf_result if cf_result is not None else _cf(fn, target, s, q, steps, direction, rel_tol)
    if r is None:
        if "pld_upper" not in acc:
            raise ParameterError("delta", f">= {RELIABLE_DELTA_FLOOR:g} for these inputs", target,
                                 message=f"delta {target!r} is below the PLD reliability floor "
                                         f"{RELIABLE_DELTA_FLOOR:g} and the φ accountant cannot certify it here; "
                                         f"use a larger delta")
        return AccountingResult(acc["pld_upper"], "estimate", UPPER_PLD, acc, acc["pld_lower"], acc["pld_upper"],
                                (BELOW_FLOOR_FLAG, "cf_unavailable"))
    acc["cf_err"] = r["accuracy"]["err"]
    return _result(r["lower"], r["upper"], CF, CF, acc, (BELOW_FLOOR_FLAG,) + tuple(r["flags"]), rel_tol)


def _log_gap_lower(eps, log_t, q, steps, direction, d):
    """x = log σ -> log δ_lower(ε; e^x) − log δ_target (dominated PLD at d), memoised."""
    seen = {}

    def g(x):
        if x not in seen:
            v = dominated_pld.delta(eps, sigma=math.exp(x), q=q, total_steps=steps, direction=direction,
                                    discretization=d)
            seen[x] = math.log(v) - log_t if v > 0 else -math.inf
        return seen[x]

    return g


def insufficient_sigma(epsilon_value, delta, *, q, total_steps, sigma_sufficient, discretization,
                       direction="add_remove", rel_tol=1e-3):
    """A σ that is provably insufficient: the dominated PLD at ``discretization`` shows δ(ε) > δ_target there.

    The true δ(ε) is at least the dominated one (:mod:`.dominated_pld`), so at the returned σ the mechanism
    is not (ε, δ)-DP, nor at any smaller σ (ε(δ) decreases in σ: more noise is a post-processing).  Found by
    secant steps on log σ from ``sigma_sufficient`` downwards, finished on the insufficient side; the
    smallest sufficient σ lies in (returned σ, sigma_sufficient].
    """
    eps, log_t = float(epsilon_value), math.log(float(delta))
    g = _log_gap_lower(eps, log_t, float(q), int(total_steps), direction, float(discretization))
    tol = 0.1 * rel_tol  # in log σ
    hi = math.log(float(sigma_sufficient))  # sufficient by the upper end, so g(hi) ≤ 0 (δ_lower ≤ δ_upper)
    step, lo = 0.25 * rel_tol, None
    for _ in range(60):  # step down until δ_lower(ε) > δ_target
        x = hi - step
        if g(x) > 0:
            lo = x
            break
        hi, step = x, 2 * step
    if lo is None:
        raise InternalError(f"no provably insufficient sigma found below {sigma_sufficient:g}")
    for _ in range(60):  # regula falsi aimed just below the root, kept inside the bracket [lo, hi]
        if hi - lo <= tol:
            break
        glo, ghi = g(lo), g(hi)
        root = lo + glo * (hi - lo) / (glo - ghi) if math.isfinite(ghi) else 0.5 * (lo + hi)
        x = min(max(root - 0.5 * tol, lo + 0.1 * (hi - lo)), hi - 0.1 * (hi - lo))
        if g(x) > 0:
            lo = x
            if root - lo <= tol:
                break
        else:
            hi = x
    return math.exp(lo)
