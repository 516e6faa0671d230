"""A dominated PLD of the Poisson-subsampled Gaussian: the lower counterpart of connect-the-dots.

Privacy profile.  For a pair (P, Q) with likelihood ratio X = dP/dQ (no mass of P where Q has none) let

    h(x) = E_Q[(X − x)_+],   x ≥ 0,

so that δ(ε) = H_{e^ε}(P‖Q) = h(e^ε) for every real ε.  h is convex and decreasing, h(0) = E_Q[X] = 1,
h(x) ≥ (1 − x)_+, h → 0, and its right slope is h'(x) = −Q(X > x).  Conversely every such function is
the profile of a pair, and the profiles order pairs: g ≤ h on [0, ∞) iff (P', Q') is a post-processing
of (P, Q) (Blackwell's theorem for binary experiments); the reverse direction's profile is
H_x(Q‖P) = x·h(1/x) + 1 − x, monotone in h, so it is ordered too.  Post-processing commutes with
composition, so the T-fold composition of (P', Q') is dominated by the T-fold composition of (P, Q) in
both directions: its δ(ε) is a lower bound for every ε and its ε(δ) a lower bound for every δ.

Construction (knots on the grid x_i = e^{iΔ}, i = L..U, losses iΔ as dp_accounting's PLDs).
Connect-the-dots (pessimistic, dp_accounting) joins the points (x_i, h(x_i)) by chords, which lie above
the convex h.  Here each cell [x_i, x_{i+1}] gets the tangent t_i of h at its midpoint u_i = e^{(i+½)Δ}
(t_i ≤ h everywhere, by convexity), and the knot value g_i = min(t_{i−1}(x_i), t_i(x_i)) lies below both
tangents of its cells; the chord from (x_i, g_i) to (x_{i+1}, g_{i+1}) then lies below t_i on the cell,
hence below h.  A profile must also stay ≥ (1 − x)_+ (slope ≥ −1, no negative mass), which tangents
need not; the ends fix this with lines below h through points of the bounds: at the start, the last knot
x_j with g_j ≤ 1 − x_j gets g_j = 1 − x_j (≤ h), g = 1 − x on [0, x_j], and g_{j+1} ≤ the line through
(x_j, 1 − x_j) with slope h'(x_j) (below the tangent at x_j since h(x_j) ≥ 1 − x_j); at the end, the
first knot x_k with g_k ≤ 0 gets g_k = 0 and g_{k−1} ≤ the line through (x_k, 0) with slope h'(x_k)
(below the tangent at x_k); g = 0 beyond x_k.  The chords next to these knots are then below those
lines, hence below h, and every knot lies on or above (1 − x)_+.  The lower convex hull
of these points is convex, lies below the polyline, hence below h, above the convex (1 − x)_+ (all points
are), keeps g(0) = 1 and g(x_k) = 0: it is the
profile of a discrete pair with atoms at the knots (Q-mass = the slope change at the knot, P-mass = x_i
times it; the Q-mass of the slope change at 0 sits at X = 0, loss −∞, P-mass 0) and no mass at
infinite loss.  Its error h − g is second order in Δ (a tangent's gap at distance Δx is ½h''Δx²), as the
chords' is.

Composition: our engine's FFT (:func:`dpsampling.engine.pld._self_compose`, dp_accounting's window and
one transform raised to the power T).  dp_accounting 0.6.0 adds the truncated tail mass τ = 1e-15 to the
infinite-loss mass whatever ``pessimistic_estimate`` says (``DensePLDPmf.self_compose``), and the FFT's
circular convolution folds the mass outside the window (≤ τ by dp_accounting's Chernoff bounds) back into
it; here the infinite-loss mass is set to 0 (the pair has none; the truncated mass is dropped, which can only
lower δ), the folded mass is allowed for by subtracting τ from δ (δ's integrand is ≤ 1), and the transform's
rounding by subtracting a proven bound on its effect: ‖w_ε‖₂ times a bound on the 2-norm of the composed
masses' error (:func:`.numerics.fft_error`, linear in T), w_ε = δ(ε)'s weights (1 − e^{ε−ℓ})_+ (Cauchy–Schwarz);
ε is read where the computed δ exceeds δ by that much (:func:`epsilon`).  One step (T = 1) is not composed:
nothing is subtracted.  No composition goes through dp_accounting's own ``self_compose`` (the one-step pmf is
dense).  Round-off of the
one-step profile is treated as on the pessimistic side: δ below
:data:`dpsampling.engine.result.RELIABLE_DELTA_FLOOR` is not reported as a bound by the callers.

The one-step profile h and its slope come from dp_accounting's subsampled Gaussian privacy loss (the
same formulas as the pessimistic PLD's grid values, vectorised in :mod:`.pld`): δ(ε) and Q(L > ε).
"""

from __future__ import annotations

import math
from typing import NamedTuple
from functools import lru_cache

import numpy as np
from dp_accounting.pld import pld_pmf as _pmflib
from dp_accounting.pld import privacy_loss_mechanism as _plm

from .errors import ParameterError
from . import pld
from .reading import delta_lower, epsilon_for_delta_lower

#: the tail mass dp_accounting's composition window leaves out (≤ τ), which the circular FFT folds back in
FOLD_MASS = pld.TAIL_MASS_TRUNCATION

_DIRECTIONS = {"remove": _plm.AdjacencyType.REMOVE, "add": _plm.AdjacencyType.ADD}


def profile(loss, epsilon):
    """(h(e^ε), Q(L > ε)) of a dp_accounting subsampled-Gaussian privacy loss (q < 1), ε an array.

    h(e^ε) = δ(ε) = P(L > ε) − e^ε Q(L > ε); with x the output where the loss equals ε (dp_accounting's
    inverse privacy loss) P(L > ε) = μ_upper_cdf(x) and Q(L > ε) = μ_lower_cdf(x), the formulas of
    ``GaussianPrivacyLoss.get_delta_for_epsilon``.  Outside the loss's range: remove, ε ≤ log(1 − q):
    h = 1 − e^ε, Q(L > ε) = 1; add, ε ≥ −log(1 − q): h = 0, Q(L > ε) = 0.
    """
    q = loss.sampling_prob
    epsilon = np.asarray(epsilon, dtype=float)
    h = np.zeros_like(epsilon)
    tail = np.zeros_like(epsilon)
    if loss.adjacency_type == _plm.AdjacencyType.ADD:
        inside = epsilon < -math.log1p(-q)
    else:
        inside = epsilon > math.log1p(-q)
        h[~inside] = -np.expm1(epsilon[~inside])
        tail[~inside] = 1.0
    pl = epsilon[inside]
    x = pld._inverse_privacy_loss(loss, pl)  # noqa: SLF001 - the engine's vectorised dp_accounting inverse
    upper = loss.mu_upper_cdf(x)
    lower_log = loss.mu_lower_log_cdf(x)
    h[inside] = upper - np.exp(pl + lower_log)
    tail[inside] = np.exp(lower_log)
    return np.clip(h, 0.0, 1.0), np.clip(tail, 0.0, 1.0)


def _lower_hull(x, y):
    """Indices of the lower convex hull of the points (x, y), x increasing (monotone chain)."""
    slopes = np.diff(y) / np.diff(x)
    if np.all(np.diff(slopes) >= 0):
        return np.arange(len(x))
    return np.asarray(lower_chain(x, y, np.arange(len(x))))


def lower_chain(x, y, idx):
    """The lower convex hull (monotone chain) of the points ``idx`` (increasing) of (x, y): a point on or above the
    chord of its neighbours is dropped.

    The same chain, test for test (so the same hull, also where rounding decides a test): the coordinates as
    Python floats (the same IEEE differences and products as numpy's scalars, faster to index), and wherever the
    chain's top is the two points just before point k, the test (k − 2, k − 1, k) is read off one vectorised
    evaluation of the same expression, so a stretch where it never pops is pushed at once.
    """
    idx = np.asarray(idx)
    if idx.size < 3:
        return idx.tolist()
    xa, ya = np.asarray(x, dtype=float)[idx], np.asarray(y, dtype=float)[idx]
    compiled = _compiled_chain() if _worth_compiling(idx.size) else None
    if compiled is not None:
        return idx[compiled(xa, ya)].tolist()
    pop_at = (np.flatnonzero((ya[1:-1] - ya[:-2]) * (xa[2:] - xa[:-2]) >= (ya[2:] - ya[:-2]) * (xa[1:-1] - xa[:-2]))
              + 2).tolist() + [idx.size]  # the positions k whose neighbour test (k − 2, k − 1, k) pops
    xs, ys = xa.tolist(), ya.tolist()
    hull, k, nxt = [0, 1], 2, 0
    while k < idx.size:
        if hull[-1] == k - 1 and hull[-2] == k - 2:  # the neighbour test decides: push up to the next pop
            while pop_at[nxt] < k:
                nxt += 1
            hull.extend(range(k, pop_at[nxt]))
            k = pop_at[nxt]
            if k == idx.size:
                break
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (ys[b] - ys[a]) * (xs[k] - xs[a]) >= (ys[k] - ys[a]) * (xs[b] - xs[a]):
                hull.pop()
            else:
                break
        hull.append(k)
        k += 1
    return idx[hull].tolist()


#: :func:`lower_chain` runs compiled by numba (where installed) on inputs of at least ``COMPILED_CHAIN_MIN`` points
#: once the process has passed ``COMPILED_CHAIN_AFTER`` points to it: importing numba and loading (or making) the
#: compilation costs about as much as the Python loop on a few 10^5 points, so a process with few hulls never pays it
COMPILED_CHAIN_MIN, COMPILED_CHAIN_AFTER = 20_000, 300_000
_chain_points = [0]


def _worth_compiling(n):
    """Count ``n`` points towards ``COMPILED_CHAIN_AFTER``; True once the compiled loop pays for itself."""
    if n < COMPILED_CHAIN_MIN:
        return False
    _chain_points[0] += n
    return _chain_points[0] > COMPILED_CHAIN_AFTER


def _chain(x, y):
    """The loop of :func:`lower_chain` on arrays (positions into x, y), written for numba: the same test on the same
    doubles (two differences, two products, one comparison: no sum a fused multiply-add could replace), so the
    same hull."""
    hull = np.empty(len(x), dtype=np.int64)
    top = 0
    for k in range(len(x)):
        while top >= 2:
            a, b = hull[top - 2], hull[top - 1]
            if (y[b] - y[a]) * (x[k] - x[a]) >= (y[k] - y[a]) * (x[b] - x[a]):
                top -= 1
            else:
                break
        hull[top] = k
        top += 1
    return hull[:top]


@lru_cache(maxsize=1)
def _compiled_chain():
    """:func:`_chain` compiled by numba (imported here, on first use: it is not a core dependency), or None
    without numba."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True)(_chain)


def dominated_pmf(sigma: float, q: float, discretization: float, direction: str, sensitivity: float = 1.0):
    """One-step dominated PLD pmf (dp_accounting ``DensePLDPmf``, optimistic) of the q-subsampled Gaussian.

    The loss distribution under P' of the pair built in the module docstring: its profile lies below the
    true one-step profile for every ε, so every composition of it is dominated (a lower bound on δ(ε) and
    on ε(δ)).  Grid range: dp_accounting's connect-the-dots bounds for the same loss (any range is valid;
    the range only sets the accuracy).  q must be < 1 (q = 1 is the Gaussian in closed form).
    """
    if not 0 < q < 1:
        raise ParameterError("q", "in (0, 1) for the dominated PLD", q,
                             message=f"q must be in (0, 1) for the dominated PLD (got {q!r}); q = 1 is the Gaussian")
    d = float(discretization)
    loss = _plm.GaussianPrivacyLoss(sigma, sensitivity=sensitivity, pessimistic_estimate=False,
                                    sampling_prob=q, adjacency_type=_DIRECTIONS[direction])
    bounds = loss.connect_dots_bounds()
    lo_i, hi_i = math.floor(bounds.epsilon_lower / d), math.ceil(bounds.epsilon_upper / d) + 1
    if direction == "remove":  # start a cell inside the linear part h = 1 − x (ε ≤ log(1 − q)): exact there
        lo_i = min(lo_i, math.floor(math.log1p(-q) / d) - 1)
    return from_profile(lambda eps: profile(loss, eps), lo_i, hi_i, d)


def from_profile(prof, lo_i, hi_i, d):
    """The dominated pmf (module docstring's construction) of the pair whose profile is ``prof`` (ε array ->
    (h(e^ε), Q(L > ε))), on the knots e^{iΔ}, i = ``lo_i`` .. ``hi_i``, Δ = ``d``."""
    i = np.arange(lo_i, hi_i + 1)
    x = np.exp(i * d)
    u = np.exp((i[:-1] + 0.5) * d)  # cell midpoints (in loss)
    hu, tu = prof(np.log(u))
    # tangent of cell k at its two knots: h(u_k) − Q(X > u_k)·(x − u_k)
    left = hu - tu * (x[:-1] - u)
    right = hu - tu * (x[1:] - u)
    g = np.empty_like(x)
    g[0] = left[0]
    g[-1] = right[-1]
    g[1:-1] = np.minimum(right[:-1], left[1:])
    # the start x_j: the last knot with g_j ≤ 1 − x_j (g must stay ≥ 1 − x: slope ≥ −1, a tangent can dip
    # below near the kink of h); g = 1 − x on [0, x_j] and the next knot below the line through
    # (x_j, 1 − x_j) with slope h'(x_j), which lies below the tangent at x_j, so the first chord is below h
    line = -np.expm1(i * d)  # 1 − x_i
    g[0] = min(g[0], line[0])
    j = len(g) - 1 - int(np.argmax((g <= line)[::-1]))
    g[j] = line[j]
    if j + 1 < len(g):
        _, t_start = prof(np.array([(lo_i + j) * d]))
        g[j + 1] = min(g[j + 1], line[j] - float(t_start[0]) * (x[j + 1] - x[j]))
    g[:j] = line[:j]  # on the line 1 − x (collinear with (0, 1): no mass)
    # the end x_k: the first knot whose tangent value is ≤ 0 (h is negligible there); g_k = 0 and the knot
    # before it below the line through (x_k, 0) with slope h'(x_k), so the last chord is below h
    g[-1] = min(g[-1], 0.0)
    k = int(np.argmax(g <= 0.0))
    x, g = x[:k + 1], g[:k + 1]
    g[k] = 0.0
    if k >= 1:
        _, t_end = prof(np.array([(lo_i + k) * d]))
        g[k - 1] = min(g[k - 1], float(t_end[0]) * (x[k] - x[k - 1]))
    # lower convex hull with the point (0, 1)
    xs = np.concatenate(([0.0], x))
    ys = np.concatenate(([1.0], g))
    keep = _lower_hull(xs, ys)
    xk, yk = xs[keep], ys[keep]
    slopes = np.diff(yk) / np.diff(xk)  # segment slopes, nondecreasing; slope 0 after x_k
    q_mass = np.diff(np.concatenate((slopes, [0.0])))  # slope change at the knots xk[1:]
    p_mass = np.maximum(q_mass, 0.0) * xk[1:]
    probs = np.zeros(len(x))  # knots beyond x_k (cut off above) carry no mass
    probs[keep[1:] - 1] = p_mass
    return _pmflib.DensePLDPmf(d, lo_i, probs, 0.0, False)


def _compose_pmf(pmf, total_steps):
    """T-fold composition by :func:`pld._self_compose` with the infinite-loss mass set to 0 (module docstring),
    and a bound on the 2-norm of its masses' rounding error (:func:`.pld.composition_error`)."""
    if total_steps == 1:
        return Composed(pmf, 0.0)
    out = pld._self_compose(pmf, int(total_steps))  # noqa: SLF001 - the engine's composition (dp_accounting's FFT)
    composed_pmf = _pmflib.DensePLDPmf(out._discretization, out._lower_loss, out._probs, 0.0, False)  # noqa: SLF001
    return Composed(composed_pmf, pld.composition_error(pmf._probs, int(total_steps), out._probs))  # noqa: SLF001


class Composed(NamedTuple):
    """A composed dominated pmf and a bound on the 2-norm of its masses' rounding error (0 without composition)."""

    pmf: object
    err2: float


@lru_cache(maxsize=32)
def one_step(sigma: float, q: float, discretization: float, direction: str):
    """:func:`dominated_pmf` of one direction, kept so that compositions of the same step to several T build it once
    (treat as immutable)."""
    return dominated_pmf(float(sigma), float(q), float(discretization), direction)


@lru_cache(maxsize=32)
def composed(sigma: float, q: float, total_steps: int, discretization: float, direction: str):
    """The composed dominated pmf of one direction with its rounding bound (:class:`Composed`); cached, treat as
    immutable."""
    return _compose_pmf(one_step(float(sigma), float(q), float(discretization), direction), int(total_steps))


def _directions(direction):
    return ("remove", "add") if direction == "add_remove" else (direction,)


def _error_at(pmf, err2, total_steps, eps):
    """What the composed pmf's δ(ε) may exceed the dominated pair's by: the folded mass τ (T > 1) plus the
    rounding (:func:`.pld.rounding_at`)."""
    if total_steps == 1:
        return 0.0
    return FOLD_MASS + pld.rounding_at(pmf, err2, eps)


def delta(epsilon, *, sigma, q, total_steps, direction, discretization):
    """A lower bound on δ(ε) after ``total_steps`` compositions: per direction the composed dominated pmf's δ (read
    for a lower bound at any ε, :func:`.reading.delta_lower`) less what it may exceed the pair's by
    (:func:`_error_at`), max over ``direction``."""
    vals = []
    for d in _directions(direction):
        pmf, err2 = composed(sigma, q, total_steps, discretization, d)
        vals.append(float(delta_lower(pmf, float(epsilon))) - _error_at(pmf, err2, total_steps, epsilon))
    return max(0.0, max(vals))


def epsilon(delta, *, sigma, q, total_steps, direction, discretization):
    """A lower bound on ε(δ) after ``total_steps`` compositions, per direction in two readings of the dominated
    pmf's ε: ε₀ at δ + the error bound over all bins (below ε₀ the pair's δ exceeds δ), then ε₁ at δ + the
    bound at ε₀ (≥ the bound at every ε ≥ ε₀, so on [ε₀, ε₁) the pair's δ exceeds δ too); max over
    ``direction``."""
    out = []
    for d in _directions(direction):
        pmf, err2 = composed(sigma, q, total_steps, discretization, d)
        eps0 = epsilon_for_delta_lower(pmf, float(delta) + _error_at(pmf, err2, total_steps, -math.inf))
        out.append(max(eps0, epsilon_for_delta_lower(pmf, float(delta) + _error_at(pmf, err2, total_steps, eps0))))
    return max(out)
