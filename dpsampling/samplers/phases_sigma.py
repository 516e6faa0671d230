"""σ calibration of a run of phases: one multiplier of every phase's σ, or the σ of one phase with the others fixed.

``sigma(phases, epsilon, delta, scale="all")`` answers the smallest multiplier c such that the run with every phase's
σ multiplied by c is (ε, δ)-DP (the phases' σ are then relative weights: a schedule 1.1 then 0.9 scaled together);
``scale=i`` answers the smallest σ of phase i with the other phases as given (phase i's own σ, if given, is only the
search's starting point).  The answer is a bracket in the one result model, as a single run's σ question
(:func:`dpsampling.samplers.account` with quantity "sigma"): ``upper`` (= ``value``) is sufficient — the run at it has
a certified upper ε(δ) ≤ ε — and ``lower`` is provably insufficient — the run at it has a certified lower ε(δ) > ε —,
so the smallest sufficient multiplier (or σ) lies in (lower, upper].

Why the ends are valid: every evaluation is :func:`dpsampling.samplers.phases.epsilon` (the run's certified interval,
whatever samplers it accepts), and ε(δ) decreases as any phase's σ grows (more noise is a post-processing), so a
certified upper ε ≤ target at c holds at every larger c, and a certified lower ε > target at c at every smaller one.

Search: secant steps on log c against the log of the interval's midpoint at a coarse width (each coarse interval is
still certified; it only places the root), then the two ends at the requested width (``rel_tol``), each stepped
outward until its certificate holds.  A run of one setting (one sampler and q; one phase, or ``scale="all"`` with
equal σ) is :func:`~dpsampling.samplers.account`'s σ question over its total steps: today's answer (divided by the
common weight, rounded outward, for ``scale="all"``).
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling.engine.errors import InternalError, ParameterError

from . import phases as _phases
from ._phase_cost import check_cost

#: the coarsest width of an interval used only to place the root (its certified ends are not returned)
SEARCH_REL_TOL = 1e-2
#: at most this many evaluations of the run's interval per calibration
MAX_EVALUATIONS = 40
#: the largest step of the search in log σ before a bracket is found (a factor 2: small σ is costly)
MAX_STEP = math.log(2.0)
#: the starting guess of −d log ε / d log σ (ε ≈ ∝ 1/σ when the composition is far from one step)
SLOPE_GUESS = 1.0


def _as_phases(phases, scale):
    if isinstance(phases, (_phases.Phase, dict)) or not hasattr(phases, "__iter__"):
        raise ParameterError("phases", "a non-empty list of Phase", phases)
    out = [_phases._as_phase(i, p) for i, p in enumerate(phases)]  # noqa: SLF001 - the one conversion of a phase
    if not out:
        raise ParameterError("phases", "a non-empty list of Phase", phases)
    return out


def _check_scale(scale, n):
    if isinstance(scale, str) and scale == "all":
        return scale
    if isinstance(scale, int) and not isinstance(scale, bool) and 0 <= scale < n:
        return scale
    raise ParameterError("scale", f"'all' or a phase index in 0 … {n - 1}", scale,
                         message=f"scale must be 'all' (one multiplier of every phase's σ) or the index of the phase "
                                 f"whose σ is calibrated, 0 … {n - 1} (got {scale!r})")


def _check_sigma(i, p, required):
    """Phase ``i``'s σ: a positive number (``required``: a weight or a fixed σ), or None where it is calibrated."""
    if p.sigma is None and not required:
        return None
    s = p.sigma
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not (math.isfinite(s) and s > 0):
        what = "a relative weight (scale='all')" if required == "weight" else "fixed"
        raise ParameterError("sigma", "> 0 and finite", s,
                             message=f"phase {i} ({p.sampler}): sigma must be > 0 and finite, {what} (got {s!r})")
    return float(s)


def _scaled(phases, scale, x):
    """The run at ``x``: every σ times x (``scale="all"``), or phase ``scale``'s σ = x."""
    if scale == "all":
        return [dataclasses.replace(p, sigma=float(p.sigma) * x) for p in phases]
    return [dataclasses.replace(p, sigma=x) if i == scale else p for i, p in enumerate(phases)]


def _one_setting(phases, scale):
    """The common weight w if the run is one setting to calibrate (one sampler and q; one phase, or ``scale="all"``
    with equal σ), else None."""
    first = phases[0]
    if any((p.sampler, float(p.q)) != (first.sampler, float(first.q)) for p in phases):
        return None
    if len(phases) == 1:
        return 1.0 if scale == 0 else float(first.sigma)
    if scale == "all" and all(float(p.sigma) == float(first.sigma) for p in phases):
        return float(first.sigma)
    return None


def _divided(x, w, up):
    """x / w rounded outward (``up``: so that the result times w is ≥ x in floating point, else ≤ x)."""
    c = x / w
    if up and c * w < x:
        c = math.nextafter(c, math.inf)
    elif not up and c * w > x:
        c = math.nextafter(c, 0.0)
    return c


def _today(phases, scale, w, epsilon, delta, direction, rel_tol, force):
    from . import account

    p = phases[0]
    steps = sum(int(ph.steps) * int(ph.epochs) for ph in phases)
    kw = {} if rel_tol is None else {"rel_tol": rel_tol}
    r = account(p.sampler, "sigma", (epsilon, delta), steps=steps, epochs=1, q=p.q, direction=direction, force=force,
                **kw)
    if w == 1.0:
        return r
    lo = None if r.lower is None else _divided(r.lower, w, False)
    up = None if r.upper is None else _divided(r.upper, w, True)
    value = up if r.value == r.upper else _divided(r.value, w, True)
    acc = dict(r.accuracy, scale=scale, sigmas=[float(p.sigma) * up for p in phases] if up is not None else None,
               sigmas_insufficient=None if lo is None else [float(p.sigma) * lo for p in phases])
    return dataclasses.replace(r, value=value, lower=lo, upper=up, accuracy=acc)


def sigma(phases, epsilon, delta, *, scale="all", direction="add_remove", rel_tol=None, force=False):
    """The σ bracket of the run of ``phases`` for a target (``epsilon``, ``delta``) (module docstring):
    ``scale="all"``: the multiplier c of every phase's σ; ``scale=i``: phase i's σ.  Returns an
    :class:`~dpsampling.engine.result.AccountingResult` (kind ``interval``: ``lower`` provably insufficient, ``upper``
    = ``value`` sufficient; ``accuracy["sigmas"]`` the phases' σ at the sufficient end, ``["sigmas_insufficient"]`` at
    the insufficient one)."""
    from dpsampling.engine import validation

    from . import MAX_SIGMA_EPSILON, _checks

    phases = _as_phases(phases, scale)
    scale = _check_scale(scale, len(phases))
    eps = float(validation.check_epsilon(_checks.one_number("epsilon", epsilon)))
    dlt = float(validation.check_delta(_checks.one_number("delta", delta)))
    if not 0 < eps <= MAX_SIGMA_EPSILON:
        raise ParameterError("epsilon", f"in (0, {MAX_SIGMA_EPSILON:g}] for the sigma question of a run", eps,
                             message=f"epsilon must be in (0, {MAX_SIGMA_EPSILON:g}] for the sigma question of a run "
                                     f"of phases (got {eps!r})")
    start = None
    for i, p in enumerate(phases):
        s = _check_sigma(i, p, "weight" if scale == "all" else (i != scale))
        if i == scale:
            start = s
    if scale == "all":
        start = 1.0
    elif start is None:  # phase `scale`'s σ not given: start from the others' geometric mean
        others = [float(p.sigma) for i, p in enumerate(phases) if i != scale]
        start = math.exp(math.fsum(map(math.log, others)) / len(others)) if others else 1.0
        phases = [dataclasses.replace(p, sigma=start) if i == scale else p for i, p in enumerate(phases)]
    w = _one_setting(phases, scale)
    if w is not None:
        return _today(phases, scale, w, eps, dlt, direction, rel_tol, force)
    return _calibrate(phases, scale, start, eps, dlt, direction, rel_tol, force)


class _Run:
    """The run's certified ε(δ) interval at x (memoised per (x, width)), counted."""

    def __init__(self, phases, scale, delta, direction, force):
        self.phases, self.scale, self.delta, self.direction, self.force = phases, scale, delta, direction, force
        self.seen, self.count = {}, 0

    def __call__(self, x, rel_tol):
        key = (x, rel_tol)
        if key not in self.seen:
            run = _scaled(self.phases, self.scale, x)
            check_cost(run, "epsilon", self.delta, rel_tol, self.force, "in the σ calibration of the run")
            self.count += 1
            if self.count > MAX_EVALUATIONS:
                raise InternalError(f"σ calibration of a run: no bracket after {MAX_EVALUATIONS} evaluations")
            self.seen[key] = _phases.epsilon(run, self.delta, direction=self.direction, rel_tol=rel_tol,
                                             force=self.force)
        return self.seen[key]


def _log_mid(r):
    """log of the interval's geometric midpoint (+∞ for an infinite upper end, its end for a zero lower end)."""
    if not math.isfinite(r.upper):
        return math.inf
    if r.upper <= 0:
        return -math.inf
    return math.log(r.upper) if r.lower is None or r.lower <= 0 else 0.5 * (math.log(r.lower) + math.log(r.upper))


def _root(run, x0, log_t, coarse):
    """log x where the coarse interval's midpoint meets the target (secant, kept in a bracket once one is found),
    and the slope k = −d log ε / d log x there (> 0); a point beyond the cost limits is backed off towards more
    noise."""
    from .spec import CostError

    pts = []  # (log x, log mid − log target)
    lx, k = math.log(x0), SLOPE_GUESS
    below = above = None  # the nearest points with f < 0 (enough noise) and f > 0
    first_refusal = None  # the refusal at the starting point: what to change is said there, not at 1000× its σ
    for _ in range(MAX_EVALUATIONS):
        try:
            r = run(math.exp(lx), coarse)
        except CostError as exc:  # beyond the limits here: back towards more noise (cheaper), or give up near the root
            first_refusal = first_refusal or exc
            if pts and abs(lx - pts[-1][0]) > 1e-3:
                lx = 0.5 * (lx + pts[-1][0])
                continue
            if not pts and lx - math.log(x0) < 10 * MAX_STEP:
                lx += MAX_STEP
                continue
            raise (first_refusal if not pts else exc) from None
        f = _log_mid(r) - log_t
        pts.append((lx, f))
        if f == math.inf:
            above = (lx, f) if above is None or lx > above[0] else above
        elif f > 0:
            above = (lx, f) if above is None or lx > above[0] else above
        else:
            below = (lx, f) if below is None or lx < below[0] else below
        if math.isfinite(f) and abs(f) <= 0.1 * coarse:
            break
        if len(pts) >= 2 and all(map(math.isfinite, (pts[-1][1], pts[-2][1]))) and pts[-1][0] != pts[-2][0]:
            slope = -(pts[-1][1] - pts[-2][1]) / (pts[-1][0] - pts[-2][0])
            if slope > 0:
                k = min(max(slope, 0.05), 20.0)
        nxt = lx + (max(-MAX_STEP, min(MAX_STEP, f / k)) if math.isfinite(f) else MAX_STEP)
        if below is not None and above is not None:  # bracketed: stay inside, away from the ends
            a, b = above[0], below[0]
            nxt = min(max(nxt, a + 0.05 * (b - a)), b - 0.05 * (b - a))
            if b - a <= 0.1 * coarse:
                break
        if abs(nxt - lx) <= 1e-3 * coarse:
            break
        lx = nxt
    finite = [p for p in pts if math.isfinite(p[1])]
    best = min(finite, key=lambda p: abs(p[1])) if finite else pts[-1]
    return best[0], k


def _calibrate(phases, scale, start, eps, dlt, direction, rel_tol, force):
    rel = 1e-3 if rel_tol is None else float(rel_tol)
    coarse = max(SEARCH_REL_TOL, rel)
    run = _Run(phases, scale, dlt, direction, force)
    log_t = math.log(eps)
    lx, k = _root(run, start, log_t, coarse)
    # the sufficient end: step up until the certified upper ε(δ) ≤ target
    margin = 0.05 * rel
    x_up = lx
    r_up = run(math.exp(x_up), rel_tol)
    while not r_up.upper <= eps:
        gap = math.log(r_up.upper) - log_t if math.isfinite(r_up.upper) else 1.0
        x_up += gap / k + margin
        margin *= 2
        r_up = run(math.exp(x_up), rel_tol)
    # then as low as the interval allows: the predicted crossing of the upper end, checked
    tight = x_up - (log_t - math.log(r_up.upper)) / k + 0.05 * rel if r_up.upper > 0 else x_up
    if tight < x_up:
        r = run(math.exp(tight), rel_tol)
        if r.upper <= eps:
            x_up, r_up = tight, r
    # the insufficient end: step down from the sufficient one until the certified lower ε(δ) > target
    margin = 0.05 * rel
    x_lo = x_up - ((math.log(r_up.upper) - math.log(r_up.lower)) / k if r_up.lower and r_up.lower > 0 else rel)
    x_lo -= margin
    r_lo = run(math.exp(x_lo), rel_tol)
    while not (r_lo.lower is not None and r_lo.lower > eps):
        low = r_lo.lower if r_lo.lower else 0.0
        gap = log_t - math.log(low) if low > 0 else 1.0
        x_lo -= gap / k + margin
        margin *= 2
        r_lo = run(math.exp(x_lo), rel_tol)
    return _result(phases, scale, math.exp(x_lo), math.exp(x_up), r_lo, r_up, rel, run.count)


def _result(phases, scale, lo, up, r_lo, r_up, rel, count):
    from dpsampling.engine.result import UPPER_CERTIFIED_KINDS, WIDTH_NOT_MET_FLAG, AccountingResult

    sig = lambda x: [float(p.sigma) for p in _scaled(phases, scale, x)]  # noqa: E731
    acc = {"scale": scale, "rel_tol": rel, "evaluations": count, "sigmas": sig(up), "sigmas_insufficient": sig(lo),
           "epsilon_upper_at_sigma": r_up.upper, "epsilon_lower_at_insufficient": r_lo.lower,
           "discretization": r_up.accuracy.get("discretization"),
           "lower_method": f"{r_lo.lower_method} (provably insufficient σ)",
           "upper_method": f"{r_up.upper_method} (sufficient σ)"}
    acc["rel_width"] = (up - lo) / up
    # an ε interval wider than asked only widens the σ bracket (rel_width says by how much): both ends stay bounds
    flags = tuple(f for f in dict.fromkeys(r_up.flags + r_lo.flags) if f != WIDTH_NOT_MET_FLAG)
    if r_up.kind not in UPPER_CERTIFIED_KINDS:  # the run's upper end is not certified here: σ is not either
        return AccountingResult(up, "estimate", r_up.method, acc, lo, up, flags, relation=r_up.relation)
    lower_ok = r_lo.kind in ("interval", "exact", "lower")
    return AccountingResult(up, "interval" if lower_ok else "upper", r_up.method, acc, lo if lower_ok else None, up,
                            flags, relation=r_up.relation, lower_method=acc["lower_method"] if lower_ok else None,
                            upper_method=acc["upper_method"])


__all__ = ["sigma"]
