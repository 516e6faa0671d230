"""Contour (Bromwich / Lévy) inversion of the composed M(s) into δ(ε) or Pr[L ≤ x], with the
certified error budget described in :mod:`dpsampling.engine.cf` (trapezoid |T_h − T_2h|, tail bound
by a Lipschitz march / total variation, output-quadrature error, Chernoff alias bound).

One module for one algorithm (contour choice, truncation certificate, trapezoid refinement) whose helpers
share the contour plan; split further it would only scatter one proof.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..numerics import find_root, logsumexp
from .mechanisms import CFAccuracyError
from .pairs import U_CHUNK, _clogsumexp, _compose_atoms, _atomic_value

_C_MAX = 2000.0          # largest contour abscissa we use
_MAX_WORK = 60_000_000   # cap on (#u nodes × #output nodes) per δ evaluation
#: float64 machine epsilon (np.finfo(float).eps = 2.22e-16) as the rounding bounds below were calibrated with it
#: (2.2e-16; the factors 8 and 64 in front of it are the slack): one value, so that every bound uses the same one
MACHINE_EPS = 2.2e-16


# --------------------------------------------------------------------------
# contour inversion
# --------------------------------------------------------------------------
def _total_cumulants(terms, c):
    K = K1 = K2 = 0.0
    for pair, n in terms:
        k, k1, k2, _ = pair.cumulants(c)
        K += n * k
        K1 += n * k1
        K2 += n * k2
    return K, K1, K2


def _saddle(terms, x):
    """c* solving K'(c) = x (K = total CGF, convex), clipped to [-_C_MAX, _C_MAX]."""
    k1 = lambda c: _total_cumulants(terms, c)[1] - x  # noqa: E731
    f0, fm1 = k1(0.0), k1(-1.0)
    if not (math.isfinite(f0) and math.isfinite(fm1)):
        raise CFAccuracyError("non-finite cumulant generating function at the saddle search")
    if f0 <= 0.0 <= fm1 or (fm1 <= 0.0 <= f0):
        a, b = -1.0, 0.0
    elif f0 < 0:
        a, b = 0.0, 1.0
        while k1(b) < 0:
            a, b = b, 2 * b
            if b > _C_MAX:
                return _C_MAX
    else:
        a, b = -2.0, -1.0
        while k1(a) > 0:
            a, b = 2 * a, a
            if a < -_C_MAX:
                return -_C_MAX
    if k1(a) * k1(b) > 0:
        return 0.5 * (a + b)
    return find_root(k1, a, b, xtol=1e-6 * (1 + abs(a) + abs(b)), maxiter=200)


def _choose_c(c_star, kernel):
    """Keep the contour at least 0.25 away from the poles s = 0 (and s = -1)."""
    c = c_star
    if kernel == "hockey":
        if abs(c) < 0.25:
            c = 0.25 if c >= 0 else -0.25
        if abs(c + 1.0) < 0.25:
            c = -0.75 if c > -1.0 else -1.25
    else:
        if abs(c) < 0.25:
            c = 0.25 if c >= 0 else -0.25
    return c


def _grid_plan(x, c, terms, kernel, err):
    """Cumulants at c and the initial u-step h and truncation U of the inversion."""
    Kc, _, K2c = _total_cumulants(terms, c)
    logA = Kc - c * x  # log of the scale of the integrand
    kern0 = abs(_kernel(c, kernel))
    s_u = 1.0 / math.sqrt(max(K2c, 1e-300))
    L_rel = max(math.log(max(16.0 * math.exp(min(logA, 700.0)) * kern0 / err, 10.0)), 3.0)
    h = min(0.7 * math.pi * s_u * math.sqrt(2.0 / L_rel), 1e6)
    d_pole = abs(c) if kernel == "tail" else min(abs(c), abs(1.0 + c))
    res_mag = max(1.0, math.exp(min(x, 700.0))) if kernel == "hockey" else 1.0
    h = min(h, 2 * math.pi * d_pole / math.log(max(64.0 * res_mag / err, 10.0)))
    D = _alias_distance(x, c, terms, kernel, err / 8.0)
    if math.isfinite(D):
        h = min(h, 2 * math.pi / D)
    elif not -1.0 <= c <= 0.0:
        # no Chernoff bound at any c' beyond c could be evaluated: the aliases of the trapezoid
        # rule on this contour are unbounded, so no error on it can be certified
        raise CFAccuracyError(
            f"cannot bound the trapezoid aliases on the contour c={c:.3g} (the cumulant "
            "generating function failed at every c' beyond it); cannot meet the error budget")
    U = max(s_u * math.sqrt(2.0 * L_rel) + 4 * h, 8 * h)
    return _GridPlan(Kc, K2c, logA, kern0, s_u, L_rel, h, U)


class _GridPlan(NamedTuple):
    """The contour's plan (:func:`_grid_plan`): total cumulants K(c), K''(c), log of the integrand's scale
    K(c) − c·x, |kernel(c)|, the u-scale 1/√K''(c), the log of the relative target, the initial u-step h and the
    initial truncation U."""
    Kc: float
    K2c: float
    logA: float
    kern0: float
    s_u: float
    L_rel: float
    h: float
    U: float


def _pick_contour(x, c_star, terms, kernel, err):
    """Contour abscissa c (and its grid plan) with the least estimated work.

    Any c > 0 gives the exact value; the saddle point c* minimises the integrand's scale
    (relative accuracy for tiny δ), but far in the tail the tilted law can be multimodal
    (e.g. single "hits" of a subsampled Gaussian), which forces a fine u-step (see
    :func:`_alias_distance`).  With an absolute error budget a smaller c is often much
    cheaper, so c*/2^k (k ≤ 6, c ≥ 0.25) are tried and the one with the fewest estimated
    node evaluations (U/h × output-grid size) is used.  A candidate on which the trapezoid
    aliases cannot be bounded (:func:`_grid_plan` raises) is dropped; if every candidate is
    dropped, CFAccuracyError is raised instead of an uncertified number.
    """
    cands = [c_star]
    if c_star > 0.25:
        cands += [c_star / 2**k for k in range(1, 7) if c_star / 2**k >= 0.25]
    plans, failed = [], None
    for c in cands:  # a contour whose aliases cannot be bounded is not used (never certified)
        try:
            plans.append(_grid_plan(x, c, terms, kernel, err))
        except CFAccuracyError as exc:
            plans.append(None)
            failed = exc
    cands = [c for c, p in zip(cands, plans) if p is not None]
    plans = [p for p in plans if p is not None]
    if not plans:
        raise failed
    # the truncation point is set later by the tail bound and depends mostly on the slowest
    # decaying part of φ, common to all c (the variance-based U of a multimodal tilted law
    # underestimates it): compare the candidates at a common U
    U = max(p.U for p in plans)
    best = None
    for c, plan in zip(cands, plans):
        h = plan.h
        w = (U / h + 1) * sum(1 + (p._grid_size(c, U) if p.quadrature else 0) for p, _ in terms)
        if best is None or w < 0.5 * best[0]:  # prefer c closer to the saddle unless 2× cheaper
            best = (w, c, plan)
    return best[1], best[2]


def _alias_distance(x, c, terms, kernel, budget):
    """Shift D beyond which the trapezoid aliases on the side the poles do not cover are < budget.

    The trapezoid rule with step h in u returns Σ_k ψ(x + kD) e^{-cx}, D = 2π/h, where
    ψ(y) = f(y) e^{cy} and f is the function being inverted (δ, or the tail, minus the
    residues / exactly handled parts).  For c > 0 the aliases k ≥ 1 are f(x+kD) e^{ckD}:
    δ decays but e^{ckD} grows, and for a multimodal tilted law (e.g. a subsampled
    Gaussian tilted so far that single "hits" carry visible mass) a remote mode can sit at
    a multiple of both D and D/2, which the |T_h - T_2h| estimate cannot see.  Chernoff at
    c' > c bounds them: f(y) ≤ 3κ(c') e^{K(c') - c'y}, κ(t) = t^t/(1+t)^{1+t} (hockey
    kernel; 1 for the tail), so alias_k ≤ 3κ e^{K(c') - c'x} e^{-(c'-c)kD}.  Symmetrically
    for c < -1 (lower side, c' < c, κ at t = -c'-1).  For -1 ≤ c ≤ 0 both sides decay like
    the pole distance, handled by the caller.  Returns the smallest such D over a set of c'
    (any one c' gives a valid bound, so c' whose cumulants fail are skipped); inf when c is in
    [-1, 0] or when no c' could be evaluated (the caller then refuses the contour).
    """
    if -1.0 <= c <= 0.0:
        return math.inf
    sign = 1.0 if c > 0 else -1.0
    best = math.inf
    for step in (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0):
        cp = c + sign * step * max(1.0, abs(c)) ** 0.5
        if abs(cp) > 2 * _C_MAX:
            break
        try:
            Kp = _total_cumulants(terms, cp)[0]
        except (FloatingPointError, OverflowError, ValueError):
            continue
        if not math.isfinite(Kp):
            continue
        t = cp if sign > 0 else -cp - 1.0
        log_kappa = (t * math.log(t) - (1 + t) * math.log1p(t)) if (kernel == "hockey" and t > 0) else 0.0
        gap = abs(cp - c)
        need = (math.log(3.0) + log_kappa + Kp - cp * x - math.log(budget / 2.0)) / gap
        best = min(best, max(need, math.log(2.0) / gap, 1e-12))
    return best


def _kernel(s, kernel):
    return 1.0 / (s * (s + 1.0)) if kernel == "hockey" else 1.0 / s


class _Atoms(NamedTuple):
    """The exactly summed atoms of an all-atomic composition: E[g(L)] over them (hockey kernel), their mass at
    losses ≤ x (cdf), d/dx of the hockey value, and the rounding bound of the sum."""
    value: float
    value_le: float
    deriv: float
    rounding: float


class _FirstOrder(NamedTuple):
    """The closed-form first-order continuous terms (exponential densities): which terms, their hockey value,
    their mass ≤ x, and the derivative accumulated so far (the atoms' plus theirs)."""
    indices: list
    value: float
    value_le: float
    deriv: float


class _Residue(NamedTuple):
    """Residues of the poles the contour passes (c < 0): their value and their x-derivative term (subtracted)."""
    value: float
    deriv: float


class _Truncation(NamedTuple):
    """Phase 1: the u-truncation point U and its certified tail error."""
    U: float
    tail_err: float


class _Integrand(NamedTuple):
    """The integrand at nodes u (:func:`_integrand`): Re F(u) scaled by exp(−(K(c) − c x)), the bound on its
    output-quadrature and rounding error (≥ 0), and the integrand of dδ/dx (hockey kernel)."""
    value: np.ndarray
    error: np.ndarray
    deriv: np.ndarray


class _TailBound(NamedTuple):
    """The u-truncation tail bound at U (:func:`_tail_bound`): whether it is within the budget, the bound
    (absolute units; inf when a march failed) and the U to try next (U itself when within the budget)."""
    ok: bool
    bound: float
    next_U: float


class _Trapezoid(NamedTuple):
    """Phase 2: the trapezoid value on [0, U] at step h, its errors |T_h − T_2h| and output-quadrature φ error,
    and the integrand's x-derivative nodes D (for cf_epsilon's Newton steps)."""
    value: float
    trap_err: float
    phi_err: float
    h: float
    D: np.ndarray


def _outside_support(x, terms, want_cdf):
    """(value, 0) where x is outside the composed support (δ = 0 or Pr[L ≤ x] ∈ {0, 1} exactly), else None."""
    lo_sup = sum(n * p.support[0] for p, n in terms)
    hi_sup = sum(n * p.support[1] for p, n in terms)
    if x >= hi_sup:  # nothing above x: δ = 0, Pr[L ≤ x] = 1 exactly
        return (1.0, 0.0) if want_cdf else (0.0, 0.0)
    if want_cdf and x < lo_sup:
        return 0.0, 0.0
    return None


def _atoms(x, terms, kernel, want_cdf):
    """The atoms of an all-atomic composition summed exactly (:class:`_Atoms`)."""
    vals, lws = _compose_atoms(terms)
    atomic = _atomic_value(x, vals, lws, kernel)
    deriv = 0.0
    if np.any(vals > x):
        deriv -= math.exp(x) * float(np.exp(logsumexp(lws[vals > x] - vals[vals > x])))
    # rounding: each log-weight / loss carries an absolute error ~ eps·|value|
    atom_rnd = 8 * MACHINE_EPS * (1.0 + float(np.max(np.abs(lws))) + float(np.max(np.abs(vals)))
                                  + abs(x) + math.log(vals.size + 1.0)) * max(atomic, 1e-300)
    atomic_le = 0.0
    if want_cdf:
        atomic_le = float(np.exp(logsumexp(lws[vals <= x]))) if np.any(vals <= x) else 0.0
    return _Atoms(atomic, atomic_le, deriv, atom_rnd)


def _first_order(x, terms, kernel, split, deriv):
    """First-order continuous terms n_i A_i^{n_i-1} C_i Π_{k≠i} A_k^{n_k} decay only like 1/u; when the
    continuous parts are exponential densities (Laplace) they are evaluated in closed form and subtracted
    from the integrand (:class:`_FirstOrder`; ``deriv`` comes in with the atoms' part)."""
    first = [i for i, (p, n) in enumerate(terms) if p.has_cont]
    if not (split and all(terms[i][0].cont_exp is not None for i in first)):
        first = []
    first_val = first_le = 0.0
    for i in first:
        sub_terms = [(p, n - 1 if j == i else n) for j, (p, n) in enumerate(terms)
                     if not (j == i and n == 1)]
        if sub_terms:
            v1, lw1 = _compose_atoms(sub_terms)
        else:
            v1, lw1 = np.zeros(1), np.zeros(1)
        lw1 = lw1 + math.log(terms[i][1])
        fv, fl, fd = _exp_density_expect(x, v1, lw1, terms[i][0].cont_exp, kernel)
        first_val += fv
        first_le += fl
        deriv += fd
    return _FirstOrder(first, first_val, first_le, deriv)


def _residues(x, c, terms, kernel, split, first):
    """Residues at s = 0 (and s = −1, hockey kernel) of a contour to the left of the poles (c < 0)."""
    if c >= 0:
        return _Residue(0.0, 0.0)
    m0, m1 = 0.0, 0.0  # log M(0), log M(-1) of the total law; 0 for probability pairs
    for pair, n in terms:
        m0 += n * pair.cumulants(0.0)[0]
        m1 += n * pair.cumulants(-1.0)[0]
    a0 = a1 = -np.inf
    if split:
        a0 = sum(n * float(logsumexp(p.atoms[1])) for p, n in terms)
        a1 = sum(n * float(logsumexp(p.atoms[1] - p.atoms[0])) for p, n in terms)
    j0 = float(np.exp(_first_order_log(0.0, np.zeros(1), terms, first)[0]).real)
    j1 = float(np.exp(_first_order_log(-1.0, np.zeros(1), terms, first)[0]).real)
    residue, deriv = math.exp(m0) - math.exp(a0) - j0, 0.0
    if kernel == "hockey" and c < -1:
        residue -= math.exp(x) * (math.exp(m1) - math.exp(a1) - j1)
        deriv = math.exp(x) * (math.exp(m1) - math.exp(a1) - j1)
    return _Residue(residue, deriv)


class _Work:
    """Node evaluations (#u nodes × output-grid size) of a trapezoid on [0, U] at step h on contour c, and the
    cap :data:`_MAX_WORK` on them."""

    def __init__(self, terms, c, err):
        self.terms, self.c, self.err = terms, c, err

    def __call__(self, U_, h_, refine_):
        n_ = U_ / h_ + 1
        return n_ * sum(1 + (p._grid_size(self.c, U_) * refine_ if p.quadrature else 0)
                        for p, _ in self.terms)

    def check(self, U_, h_, refine_):
        w = self(U_, h_, refine_)
        if w > _MAX_WORK:
            raise CFAccuracyError(
                f"φ inversion would need {w:.3g} node evaluations (cap {_MAX_WORK:.3g}) "
                f"to reach err={self.err:g} (u-range {U_:.3g}, step {h_:.3g}); "
                "cannot meet the error budget")


def _truncate(x, c, plan, terms, kernel, split, first, budget, work, err):
    """Phase 1: the truncation point U, certified by the tail bound (independent of h)."""
    U, h = plan.U, plan.h
    why = _tail_out_of_reach(x, c, U, h, terms, kernel, plan.Kc, budget, work)
    if why is not None:
        raise CFAccuracyError(f"φ inversion cannot reach err={err:g}: {why}; cannot meet the error budget")
    march_work = [0]
    for _ in range(60):
        tail = _tail_bound(x, c, U, terms, kernel, plan.Kc, split, budget, first, march_work)
        if tail.ok:
            return _Truncation(U, tail.bound)
        U = tail.next_U
        work.check(U, h, 1.0)
    raise CFAccuracyError(f"could not certify the u-truncation error for err={err:g}")


def _interleave(u, h, nodes, mid):
    """(u, F, Fe, D, h) at half the step: the nodes u with values ``nodes`` = (F, Fe, D) and the midpoints
    u + h/2 with the values ``mid`` (an :class:`_Integrand`), interleaved."""
    u2 = np.empty(2 * u.size - 1)
    u2[::2], u2[1::2] = u, u[:-1] + 0.5 * h
    out = []
    for old, new in zip(nodes, (mid.value, mid.error, mid.deriv)):
        a = np.empty_like(u2)
        a[::2], a[1::2] = old, new
        out.append(a)
    return (u2, *out, h / 2)


def _trapezoid(x, c, plan, U, terms, kernel, split, first, budget, scale, work, err):
    """Phase 2: trapezoid on [0, U]; halve h (reusing the nodes) / refine the output grid until the trapezoid
    error |T_h − T_2h| and the output-quadrature error are each within the budget."""
    Kc, h = plan.Kc, plan.h
    quad = any(p.quadrature for p, _ in terms)
    refine = 1.0
    n_nodes = int(math.ceil(U / h))
    n_nodes += n_nodes % 2
    work.check(n_nodes * h, h, refine)
    u = h * np.arange(n_nodes + 1)
    last_phi = np.inf

    def over_budget(phi):  # the output-quadrature error alone exceeds the budget
        return quad and scale * phi / math.pi > budget

    def at_floor(phi):  # ... and it no longer halves when the output grid is refined: err cannot be met
        return refine >= 4.0 and phi > 0.5 * last_phi

    def output_pass():
        """_integrand on u at the current ``refine``, or on its first U_CHUNK nodes only when those settle the pass
        (their φ error h·ΣFe is a lower bound on the whole one, Fe ≥ 0): over the budget at refine 1 (values then
        discarded; ``last_phi`` is compared from refine 4 on), or at the floor at refine ≥ 4, where the inversion
        raises.  The head is a whole chunk of the pairs' log_mgf: head and rest are the full evaluation's values."""
        if refine == 2.0 or u.size <= 2 * U_CHUNK:
            return _integrand(x, c, u, terms, kernel, Kc, split, refine, first)
        head = _integrand(x, c, u[:U_CHUNK], terms, kernel, Kc, split, refine, first)
        phi = h * (0.5 * head.error[0] + head.error[1:].sum())
        if over_budget(phi) and (refine == 1.0 or at_floor(phi)):
            return head
        rest = _integrand(x, c, u[U_CHUNK:], terms, kernel, Kc, split, refine, first)
        return _Integrand(np.concatenate((head.value, rest.value)), np.concatenate((head.error, rest.error)),
                          np.concatenate((head.deriv, rest.deriv)))

    nodes = output_pass()
    F, Fe, D = nodes.value, nodes.error, nodes.deriv
    for _ in range(16):
        phi_err = h * (0.5 * Fe[0] + Fe[1:].sum())  # output quadrature + rounding
        if over_budget(phi_err):
            if at_floor(phi_err):
                raise CFAccuracyError(
                    f"output-space quadrature error of the one-step φ is at its rounding "
                    f"floor (≥ {scale * phi_err / math.pi:.3g} after {len(terms)}-term "
                    f"composition) above the budget err/4={budget:g}; cannot meet err={err:g}")
            last_phi = phi_err
            refine *= 2.0
            work.check(u[-1], h, refine)
            nodes = output_pass()
            F, Fe, D = nodes.value, nodes.error, nodes.deriv
            continue
        val_f = h * (0.5 * F[0] + F[1:].sum())
        val_c = 2 * h * (0.5 * F[0] + F[2::2].sum())
        trap_err = abs(val_f - val_c)  # |T_h - T_2h| (bounds the error of T_h)
        if scale * trap_err / math.pi > budget:
            work.check(u[-1], h / 2, refine)
            mid = _integrand(x, c, u[:-1] + 0.5 * h, terms, kernel, Kc, split, refine, first)
            u, F, Fe, D, h = _interleave(u, h, (F, Fe, D), mid)
            continue
        return _Trapezoid(val_f, trap_err, phi_err, h, D)
    raise CFAccuracyError(
        f"φ inversion did not reach err={err:g} after refinement (h={h:.3g}, U={U:.3g})")


def _chernoff_shortcut(x, c, terms, kernel, err, exact):
    """(value, error) where the Chernoff bound at the saddle point (where it is tightest) puts the whole remainder
    beyond the exact parts ``exact`` below err/2 (hockey-stick kernel, c > 0); else None."""
    if kernel == "hockey" and c > 0:
        cb = _total_cumulants(terms, c)[0] - c * x + c * math.log(c) - (1 + c) * math.log1p(c)
        if cb < math.log(err / 2.0):
            bound = math.exp(cb)
            return exact + bound / 2.0, bound / 2.0 + 1e-15 * exact
    return None


def _contour_value(res, tz, tr, scale, err):
    """(value, certified error) of the contour part: residues plus the trapezoid, their errors (trapezoid, output
    quadrature, truncation tail, rounding) summed; CFAccuracyError beyond ``err``."""
    value = res.value + scale * tz.value / math.pi
    rounding = 64 * MACHINE_EPS * (abs(res.value) + scale * abs(tz.value) / math.pi)
    total_err = scale * (tz.trap_err + tz.phi_err) / math.pi + tr.tail_err + rounding
    if total_err > err:
        raise CFAccuracyError(
            f"φ inversion reached error {total_err:.3g} > requested err={err:g}")
    return value, total_err


def _invert(x, terms, kernel, err, want_cdf=False, info=None):
    """Value of E_P[g(L)] for the composition `terms`; g = (1-e^{x-L})_+ or 1{L>x}.

    Returns (value, error_bound).  Raises CFAccuracyError if err is not reachable.  Phases: the support
    (:func:`_outside_support`), the exact parts (:func:`_atoms`, :func:`_first_order`), the contour
    (:func:`_choose_c`, a Chernoff shortcut, :func:`_pick_contour`, :func:`_residues`), the truncation
    (:func:`_truncate`) and the trapezoid (:func:`_trapezoid`); each error term is certified where it arises.
    """
    all_atoms = all(p.atoms is not None for p, _ in terms)
    any_cont = any(p.has_cont for p, _ in terms)
    if info is not None:
        info["deriv"] = None
    outside = _outside_support(x, terms, want_cdf)
    if outside is not None:
        return outside

    atoms = _Atoms(0.0, 0.0, 0.0, 0.0)  # deriv: d/dx of the hockey-stick value (cf_epsilon's Newton steps)
    if all_atoms:
        atoms = _atoms(x, terms, kernel, want_cdf)
        if not any_cont:
            if want_cdf:
                return atoms.value_le, 1e-15 + atoms.rounding
            if info is not None:
                info["deriv"] = atoms.deriv
            return atoms.value, atoms.rounding
    split = all_atoms
    fo = _first_order(x, terms, kernel, split, atoms.deriv)
    atomic, first_val, deriv = atoms.value, fo.value, fo.deriv
    if fo.indices and len(fo.indices) == 1 and terms[fo.indices[0]][1] == 1:
        # a single continuous factor: the remainder beyond first order is identically 0
        e0 = 1e-15 * (atomic + first_val + 1e-300)
        if want_cdf:
            return atoms.value_le + fo.value_le, 1e-15
        if info is not None:
            info["deriv"] = deriv
        return atomic + first_val, e0

    c = _choose_c(_saddle(terms, x), kernel)
    short = _chernoff_shortcut(x, c, terms, kernel, err, atomic + first_val) if not want_cdf else None
    if short is not None:
        return short
    c, plan = _pick_contour(x, c, terms, kernel, err)
    res = _residues(x, c, terms, kernel, split, fo.indices)
    deriv -= res.deriv

    budget = err / 4.0
    scale = math.exp(plan.logA) if plan.logA < 700 else float("inf")
    work = _Work(terms, c, err)
    tr = _truncate(x, c, plan, terms, kernel, split, fo.indices, budget, work, err)
    tz = _trapezoid(x, c, plan, tr.U, terms, kernel, split, fo.indices, budget, scale, work, err)
    value, total_err = _contour_value(res, tz, tr, scale, err)
    if info is not None and kernel == "hockey":
        info["deriv"] = deriv + scale * tz.h * (0.5 * tz.D[0] + tz.D[1:].sum()) / math.pi
    if want_cdf:  # Pr[L <= x] without the 1 - (1 - small) cancellation
        if c < 0:
            return atoms.value_le + fo.value_le - scale * tz.value / math.pi, total_err + 1e-15
        return 1.0 - atomic - first_val - value, total_err + 1e-15
    return atomic + first_val + value, total_err + 1e-15 * (atomic + abs(first_val))


def _composed_log_mgf(c, u, terms, refine, coarse=False):
    tot = np.zeros(u.shape, dtype=complex)
    atom = np.zeros(u.shape, dtype=complex)
    perr = np.zeros(u.shape)
    for pair, n in terms:
        if pair.quadrature:
            lm, e = pair.log_mgf(c, u, refine=refine)
            k = pair.cumulants(c)[0]
            perr += n * e * np.exp(k - lm.real)  # relative error of M^n ≈ n |ΔM|/|M|
        else:
            lm, _ = pair.log_mgf(c, u)
        tot += n * lm
        if pair.atoms is not None:
            atom += n * pair.log_mgf_atoms(c, u)
    return tot, atom, perr


def _first_order_log(c, u, terms, first):
    """log Σ_i n_i A_i^{n_i-1} C_i Π_{k≠i} A_k^{n_k} at s = c+iu (complex; -inf if empty)."""
    u = np.asarray(u, dtype=float)
    if not first:
        return np.full(u.shape, -np.inf + 0j)
    la = [p.log_mgf_atoms(c, u) for p, _ in terms]
    tot_a = sum(n * a for (p, n), a in zip(terms, la))
    parts = [math.log(terms[i][1]) + tot_a - la[i] + terms[i][0].log_mgf_cont(c, u) for i in first]
    return _clogsumexp(parts)


def _exp_density_expect(x, v, lw, cont_exp, kernel):
    """Σ_k e^{lw_k} E[g(v_k + Y)] for Y with density e^{k0 + r y} on (lo, hi), and
    Σ_k e^{lw_k} Pr[v_k + Y ≤ x] (for the CDF)."""
    lo, hi, r, k0 = cont_exp
    t = np.maximum(lo, x - v)
    live = t < hi
    val = tail_mass = deriv = 0.0
    if np.any(live):
        tt, vv, ww = t[live], v[live], lw[live]
        base = np.exp(ww + k0 + r * tt)
        tail = np.expm1(r * (hi - tt)) / r
        tail_mass = float(np.sum(base * tail))
        q_tail = np.exp(x - vv - tt) * np.expm1((r - 1) * (hi - tt)) / (r - 1)
        if kernel == "hockey":
            val = float(np.sum(base * (tail - q_tail)))
            deriv = -float(np.sum(base * q_tail))
        else:
            val = tail_mass
    mass = float(np.sum(np.exp(lw + k0 + r * lo) * np.expm1(r * (hi - lo)) / r))
    return val, mass - tail_mass, deriv


def _integrand(x, c, u, terms, kernel, Kc, split, refine, first=()) -> _Integrand:
    """Re F(u) scaled by exp(-(K(c) - c x)), a bound on its output-quadrature error, and the dδ/dx integrand."""
    tot, atom, perr = _composed_log_mgf(c, u, terms, refine)
    s = c + 1j * u
    ph = -1j * u * x
    R = np.exp(tot - Kc + ph)
    kabs = np.abs(_kernel(s, kernel))
    # floating-point error of the terms (exponent error ≈ eps |log term|)
    big = 1.0 + abs(Kc) + np.abs(u * x)
    rnd = np.abs(R) * (big + np.abs(tot))
    if split:
        Ra = np.exp(atom - Kc + ph)
        rnd = rnd + np.abs(Ra) * (big + np.abs(atom))
        R = R - Ra
    if first:
        lf = _first_order_log(c, u, terms, first)
        Rf = np.exp(lf - Kc + ph)
        rnd = rnd + np.abs(Rf) * (big + np.abs(lf))
        R = R - Rf
    G = R * _kernel(s, kernel)
    D = (-R / (s + 1.0)).real  # integrand of dδ/dx (hockey kernel)
    # propagated output-quadrature error: |ΔR| ≲ perr |R|; rounding error bound
    return _Integrand(G.real, np.minimum(perr, 1.0) * np.abs(G) + 8 * MACHINE_EPS * rnd * kabs, D)


def _tail_bound(x, c, U, terms, kernel, Kc, split, budget, first=(), work=None) -> _TailBound:
    """Bound on (1/π)|∫_U^∞ F| in absolute units, as a :class:`_TailBound`.

    ``work`` (a one-element list) accumulates the output-quadrature nodes spent
    by the Lipschitz marches; see :func:`_march`."""
    logA = Kc - c * x
    # ratio bounds b_i(u) ≥ |M_i(c+iu)|/M_i(c), valid and non-increasing for u ≥ U
    atom_frac = _atom_fractions(terms, c)
    u_grid = U * np.exp2(np.arange(0, 61))
    log_b = np.zeros(u_grid.shape)  # log Π (a_i + b_i)^{n_i}
    n_quad = sum(n for p, n in terms if p.quadrature)
    other, log_a = _other_log_bound(terms, atom_frac, c, u_grid)
    if n_quad:
        log_target = _march_log_target(budget, logA, other[0], U, kernel, n_quad)
        for pair, n in terms:
            if not pair.quadrature:
                continue
            ok, blog, u_fail = _march(pair, c, U, log_target, work)
            if not ok:
                return _TailBound(ok=False, bound=np.inf, next_U=max(2 * U, 1.2 * u_fail))
            other += n * blog(u_grid)
    log_b = other
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        B = np.exp(log_b)
        if split and np.isfinite(log_a):
            B = B - math.exp(log_a)
            for i in first:  # remove the first-order terms (handled exactly)
                pair, n = terms[i]
                B = B - n * pair.cont_bound(c, u_grid) * math.exp(log_a) / atom_frac[i]
        B = np.maximum(B, 0.0)
    if kernel == "hockey":
        seg = 1.0 / u_grid[:-1] - 1.0 / u_grid[1:]
        last = 1.0 / u_grid[-1]
    else:
        seg = np.full(u_grid.size - 1, math.log(2.0))
        last = 1.0  # assumes ≥ 1/u decay of the bound beyond the last point
    tail = (np.sum(B[:-1] * seg) + B[-1] * last) * math.exp(min(logA, 700.0)) / math.pi
    if tail > budget:
        return _TailBound(ok=False, bound=tail, next_U=2 * U)
    return _TailBound(ok=True, bound=tail, next_U=U)


def _atom_fractions(terms, c):
    """Per term, the atomic part's share a_i of M_i(c) (0 without atoms)."""
    out = []
    for pair, n in terms:
        if pair.atoms is not None:
            k = pair.cumulants(c)[0]
            out.append(math.exp(float(logsumexp(pair.atoms[1] + c * pair.atoms[0])) - k))
        else:
            out.append(0.0)
    return out


def _other_log_bound(terms, atom_frac, c, u_grid):
    """log Π (a_i + b_i(u))^{n_i} over the non-quadrature terms at u_grid (non-increasing in u), and
    log Π a_i^{n_i} over the same terms."""
    other = np.zeros(u_grid.shape)
    log_a = 0.0
    for (pair, n), a in zip(terms, atom_frac):
        if pair.quadrature:
            continue
        with np.errstate(divide="ignore"):
            other += n * np.log(np.minimum(a + pair.cont_bound(c, u_grid), 1.0 + 1e-12))
        log_a += n * (math.log(a) if a > 0 else -np.inf)
    return other, log_a


def _march_log_target(budget, logA, other0, U, kernel, n_quad):
    """log of the ratio |M_i(c+iu)|/M_i(c) each quadrature factor must stay below beyond U so that the
    tail is within budget (other0: the non-quadrature terms' log bound at U).  Non-decreasing in U
    (other0 is non-increasing in U, and the hockey kernel's integral 1/U decreases)."""
    kern_int = 1.0 / U if kernel == "hockey" else 60 * math.log(2.0)
    log_target = (math.log(budget * math.pi / 2) - logA - other0 - math.log(kern_int)) / n_quad
    return min(log_target, math.log(1 - 1e-9))


def _tail_out_of_reach(x, c, U0, h, terms, kernel, Kc, budget, work):
    """Why the u-truncation of the coming inversion cannot be certified within the work caps
    (a message), or None if it may be.  A necessary condition only, read off cheap quantities, so
    that a budget the inversion cannot meet fails in microseconds instead of after a long march.

    The inversion succeeds only if phase 1 ends at a truncation U_end ≥ U0 with work(U_end, h, 1) ≤
    _MAX_WORK (phase 2 checks exactly this with h ≤ the initial h, and work grows with U), i.e.
    U_end < Ū for any Ū with work(Ū, h, 1) > _MAX_WORK; and only if every quadrature factor's march
    from U_end reaches u_tv = tv/target within 400 probes and _MAX_WORK output-quadrature nodes.
    The march's steps are at most s = max(target/λ, 1e-9 (1 + u_tv)), so each interval of length s
    in [Ū, u_tv) holds a probe, costing at least the grid size at the interval's start (the output
    grid grows with u); target is largest (u_tv smallest) at Ū, which makes the counts below lower
    bounds for every admissible U_end.
    """
    quad = [(p, n) for p, n in terms if p.quadrature]
    if not quad:
        return None
    if work(U0, h, 1.0) > _MAX_WORK:
        return f"the trapezoid on [0, {U0:.3g}] alone needs {work(U0, h, 1.0):.3g} node evaluations"
    lo, hi = U0, 2.0 * U0
    while work(hi, h, 1.0) <= _MAX_WORK:
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            return None
    for _ in range(60):  # keep work(hi) > cap, shrink towards the largest admissible U
        mid = 0.5 * (lo + hi)
        if work(mid, h, 1.0) > _MAX_WORK:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * hi:
            break
    u_bar = hi
    logA = Kc - c * x
    atom_frac = _atom_fractions(terms, c)
    ends = np.array([U0, u_bar])
    other, _ = _other_log_bound(terms, atom_frac, c, ends)
    n_quad = sum(n for _, n in quad)
    # (1 ± 1e-6: rounding of the target's logarithm must not turn the bounds around)
    t_bar = math.exp(_march_log_target(budget, logA, other[1], u_bar, kernel, n_quad)) * (1 + 1e-6)
    t_0 = math.exp(_march_log_target(budget, logA, other[0], U0, kernel, n_quad)) * (1 - 1e-6)
    if not t_0 > 0.0:
        return None
    for pair, _ in quad:
        tv = pair.tv_bound(c)
        u_tv_min, u_tv_max = tv / t_bar, tv / t_0
        lam = pair.cumulants(c)[3]
        step = max(t_bar / max(lam, 1e-300), 1e-9 * (1.0 + u_tv_max))
        if not (math.isfinite(u_tv_max) and u_tv_min > u_bar):
            continue
        probes = math.floor((u_tv_min - u_bar) / step)
        nodes, a = 0, u_bar  # dyadic pieces [a, 2a): ⌊length/s⌋ probes each, none cheaper than at a
        while a < u_tv_min and nodes <= _MAX_WORK:
            b = min(2.0 * a, u_tv_min)
            nodes += math.floor((b - a) / step) * pair._grid_size(c, a)
            a = b
        if probes > 400 or nodes > _MAX_WORK:
            return (f"certifying the φ tail needs ≥ {probes:.3g} probes / {nodes:.3g} output-quadrature "
                    f"nodes (caps 400 / {_MAX_WORK:.3g}) for any truncation below u={u_bar:.3g}")
    return None


#: share of the previous probe's margin below the target a windowed probe may spend on its trivially bounded mass
WINDOW_SLACK = 0.01


def _march(pair, c, U, log_target, work=None):
    """Certify |M(c+iu)|/M(c) ≤ target for all u ≥ U (quadrature pairs).

    Lipschitz march: |d/du M(c+iu)| ≤ E_P[|L| e^{cL}] = λ M(c); probes until the
    total-variation bound TV/u is below the target.  Returns (ok, log_bound_fn, u_fail).
    Each probe at u costs an output grid of O(u) nodes; ``work`` (a one-element
    list, shared by all marches of one inversion) counts them, and once it exceeds
    _MAX_WORK a CFAccuracyError is raised (near-lattice privacy losses, e.g. very
    small q·√T with small σ, whose φ decays too slowly to certify the budget).
    First with windowed probes after the first one (``modulus_bound``: an upper bound on |M|/M(c) spending at
    most :data:`WINDOW_SLACK` of the last margin, on a far smaller grid): any upper bound certifies the same claim,
    and the bound returned depends on the target and TV only, so a success is the full march's answer.  On a
    failure (or the cap) the full march reruns from the same ``work`` (counted at full-grid size either way).
    """
    if work is None:
        work = [0]
    if getattr(pair, "modulus_bound", None) is not None:
        spent = work[0]
        try:
            out = _march_probes(pair, c, U, log_target, work, windowed=True)
        except CFAccuracyError:
            out = (False, None, U)
        if out[0]:
            return out
        work[0] = spent
    return _march_probes(pair, c, U, log_target, work, windowed=False)


def _march_probes(pair, c, U, log_target, work, windowed):
    """The probes of :func:`_march`: full ones (``log_mgf``), or windowed ones after the first."""
    target = math.exp(log_target)
    lam = pair.cumulants(c)[3]
    tv = pair.tv_bound(c)
    u_tv = tv / target
    u, rho = U, None
    for _ in range(400):
        if u >= u_tv:
            break
        work[0] += pair._grid_size(c, u)
        if work[0] > _MAX_WORK:
            raise CFAccuracyError(
                f"certifying the φ tail beyond u={u:.3g} (up to {u_tv:.3g}) exceeds the work cap "
                f"({_MAX_WORK:.3g} output-quadrature nodes): φ decays too slowly; "
                "cannot meet the error budget")
        if windowed and rho is not None:
            rho = pair.modulus_bound(c, u, WINDOW_SLACK * (target - rho)) + 1e-13
        else:
            lm, e = pair.log_mgf(c, np.array([u]))
            rho = math.exp(lm[0].real - pair.cumulants(c)[0]) + e[0] + 1e-13
        if rho >= target:
            return False, None, u
        # |M(u')| ≤ |M(u)| + λ|u'-u| M(c): the bound stays below the target up to u + step
        step = (target - rho) / max(lam, 1e-300)
        u = u + max(step, 1e-9 * (1 + u))
    else:
        return False, None, u

    def log_bound(uu, tv=tv, target=target):
        uu = np.asarray(uu, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(np.minimum(target, np.maximum(tv / uu, 0.0)))

    return True, log_bound, u
