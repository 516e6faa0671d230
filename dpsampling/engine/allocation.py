"""Certified ε(δ) / δ(ε) intervals of random allocation (balls-and-bins) by convex order on a geometric grid.

The pair.  One epoch of T steps (each record in exactly one uniformly random step, noise σ, sensitivity 1)
has the REMOVE dominating pair P = (1/T) Σ_t N(e_t, σ²I_T), Q = N(0, σ²I_T), and ADD is the swapped pair
(Chua et al., AISTATS 2025; Feldman & Shenfeld); E epochs are the E-fold product.  Under Q the likelihood
ratio is X = dP/dQ = Σ_t Z_t with Z_t = exp((x_t − 1/2)/σ²)/T i.i.d. lognormal, E[X] = 1, and both
directions' hockey-stick divergences are expectations of convex functions of X under Q:

    H_γ(P‖Q) = E_Q[(X − γ)_+],    H_γ(Q‖P) = E_Q[(1 − γX)_+]      (every γ = e^ε > 0).

Why the bounds hold.  A pair given by the Q-law of a ratio X' ≥ 0 (plus a P-singular mass ν with
E_Q[X'] + ν = 1) whose law is above that of X in convex order (X' = X + a mean-zero spread) has both
curves ≥ the true ones for every ε, so it dominates (P, Q) (Blackwell), and E-fold products keep the
order; a law below in convex order (a mean-preserving contraction: conditional means over cells) gives
a dominated pair, and dropping mass (a sub-probability law) only lowers both integrals, which have
nonnegative integrands, also after composition.  Convex order is preserved by sums of independent
terms, so X is built by doubling sums S_{2k} = S_k + S_k' (and the binary expansion of T), each sum
re-discretised on the geometric grid g_k = e^{kΔ}:

* upper: every atom is a grid point; the pair sum g_i + g_j lies in the cell [g_c, g_{c+1}) with
  c = min(i, j) + a(|i − j|) and is split to g_c, g_{c+1} keeping its mass and mean (a spread, weights
  depending on |i − j| only).  Mass above a cap is spread to the cap and to +∞ (the limit of a spread to
  the cap and a point M → ∞: its mass stays at the cap, its excess first moment becomes the P-singular
  mass ν, a loss of +∞ in REMOVE); mass below a floor is spread to the floor and 0 (X' = 0 is a loss of
  +∞ in ADD).  The final X' lives on the grid, so its losses ±kΔ are exact: no rounding.
* lower: every cell keeps one atom at its conditional mean (mass and first moment are summed per cell: a
  contraction, valid whichever cell a pair is assigned to); tails beyond the floor/cap are dropped.  The
  final losses ±log x are rounded DOWN onto a uniform grid of step ``loss_step`` (δ of a loss
  distribution is nondecreasing in every loss, also after composition), the only first-order error.

The per-stage errors are second order in Δ (a spread or merge within a cell of relative width Δ), so Δ
of ~1e-2 (MNIST-like) to ~1e-3 (σ = 3, T = 5000) gives 1 % width, unlike a rounding of every loss at
every stage; measured, halving Δ divides each end's distance to the limit by 4.  The lower end's final
rounding is first order (E·loss_step/2 in loss), so its loss step shrinks as 1/E: the composition grid, and
the cost, grow as E² for long runs.  Each pair sum is one O(1) step of a numba
double loop over the n grid points of a stage (O(n²), n ~ 10³-10⁴).  The E epochs are composed by FFT on
the loss grid (:func:`self_compose`: a truncated tail goes to +∞ or onto the lowest kept loss (upper), onto
the highest kept loss or is dropped (lower), as dp_accounting does).  The FFT's rounding is bounded at every
composition (:func:`_fft_error`, a standard error bound of the transform, ~1e-12 of absolute δ at 60 epochs):
added to the +∞ mass for the upper end and subtracted from δ for the lower end, so each end keeps its side at
small δ too (where the bound exceeds δ the upper end is +∞ and the width is reported missed); the grid's own
sums of products are exact up to ~1e-16 of the total mass.  A δ(ε) curve (:func:`delta_curve`) computes each grid
step's laws and compositions once for all its ε; a δ interval stops refining where those FFT bounds alone exceed
a few times the width aimed at.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sp_fft
from scipy import signal, special

from . import gaussian
from .bracket import gdp_sigma, log_bracket
from .errors import InternalError, ParameterError
from .numerics import fft_error, norm2
from .reading import loss_pmf_delta_lower, loss_pmf_epsilon_lower
from .result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, WIDTH_NOT_MET_FLAG, AccountingResult
from .validation import check_delta, check_epsilon, check_int, check_positive


def _kernel(fn):
    """numba compiles the pair kernels; without numba (the core install) the same sums run as numpy row blocks
    (:mod:`._allocation_numpy`, one function of the same name per kernel)."""
    try:
        import numba
    except ImportError:
        from . import _allocation_numpy

        return getattr(_allocation_numpy, fn.__name__)
    return numba.njit(cache=True)(fn)


def _inline_kernel(fn):
    """A helper of the kernels, inlined into them by numba; plain Python without numba (unused then: the numpy row
    blocks do not call it)."""
    try:
        import numba
    except ImportError:
        return fn
    return numba.njit(cache=True, inline="always")(fn)

#: mass budget of each truncation (floor, cap, composition tails) for ε(δ), per unit of δ and of stage × epoch
_TAIL_PER_DELTA = 1e-4
#: the same budget for δ(ε) queries (absolute)
_TAIL_DELTA_QUERY = 1e-15
#: at most this many passes (the grid step is halved after each pass that misses the width)
_MAX_PASSES = 6
#: method labels of the two ends
UPPER_METHOD = "allocation-spread"
LOWER_METHOD = "allocation-merge"
#: the one-term law's grid at the first step holds at most this many points (:func:`_too_fine`); beyond it
#: (σ ≲ 0.044: the O(n²) pair sums of every stage would take minutes to hours) the interval is the closed-form
#: one of :func:`_closed_form_interval`
MAX_GRID_POINTS = 2**14
#: method label of the upper end where the grid is too fine: the Gaussian mechanism at σ/√E
#: (:func:`_closed_form_interval`)
GAUSSIAN_METHOD = "gaussian-mechanism"
#: relative margin by which the closed-form upper end is rounded up: covers the closed form's floating-point
#: error (~1e-15 relative, log space) and the root finder's tolerance of ε (1e-13 relative)
_CLOSED_FORM_MARGIN = 1e-9
#: 1/σ² beyond which e^{1/σ²} overflows a double (its largest is e^{709.78})
_MAX_EXP = 709.0
#: :func:`sigma_interval` searches σ in [MIN_SIGMA, MAX_SIGMA]
MIN_SIGMA = 1e-3
MAX_SIGMA = 1e4


def _ndtr_diff(a, b):
    """Φ(b) − Φ(a) for a ≤ b (arrays), accurate in both tails."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    right = a > 0
    out = np.empty(np.broadcast(a, b).shape)
    out[~right] = special.ndtr(b[~right]) - special.ndtr(a[~right])
    out[right] = special.ndtr(-a[right]) - special.ndtr(-b[right])
    return np.maximum(out, 0.0)


def _initial_cells(sigma, steps, step, k_lo, k_hi):
    """Q-mass and first moment of Z = exp((x − 1/2)/σ²)/T, x ~ N(0, σ²), on the cells [g_k, g_{k+1}),
    k_lo ≤ k < k_hi, and the same two quantities below g_{k_lo} and above g_{k_hi}."""
    m, s = -0.5 / sigma**2 - math.log(steps), 1.0 / sigma
    edges = np.arange(k_lo, k_hi + 1) * step
    z = (edges - m) / s
    zt = z - s  # the first moment: E[Z 1{cell}] = (1/T) × the mass of the tilted normal N(m + s², s²)
    mass = _ndtr_diff(z[:-1], z[1:])
    mom = _ndtr_diff(zt[:-1], zt[1:]) / steps
    below = (special.ndtr(z[0]), special.ndtr(zt[0]) / steps)
    above = (special.ndtr(-z[-1]), special.ndtr(-zt[-1]) / steps)
    return mass, mom, below, above


def _range(sigma, steps, step, tail):
    """Grid indices [k_lo, k_hi] of the one-term law: Q-mass below and first moment above ≤ tail (relative)."""
    m, s = -0.5 / sigma**2 - math.log(steps), 1.0 / sigma
    zq = -special.ndtri(tail)  # > 0
    lo = math.floor((m - zq * s) / step)
    hi = math.ceil((m + s * s + zq * s) / step)
    return lo, hi


def _offsets(step, n):
    """a(d) = ⌊log(1 + e^{dΔ})/Δ⌋ and the weight ω(d) ∈ [0, 1) of g_{c+1} in the mean-preserving split of
    1 + e^{dΔ} (in units of g_min) onto e^{aΔ}, e^{(a+1)Δ}; d = 0..n−1."""
    d = np.arange(n, dtype=float) * step
    extra = np.log1p(np.exp(-d))  # log(1 + e^{dΔ}) − dΔ
    j = np.floor(extra / step)
    a = (np.arange(n) + j).astype(np.int64)
    frac = extra - j * step  # ∈ [0, Δ)
    omega = np.expm1(frac) / math.expm1(step)
    return a, np.clip(omega, 0.0, 1.0)


@_inline_kernel
def _pair(wi, bj, i, j, ii, jj, same, off, k0):
    """(mass, cell, |ii − jj|) of the pair of atoms at grid indices ii and jj: mass wi·bj, doubled in a self-sum
    (``same``: the pair (j, i) is not visited), cell min(ii, jj) + a(|ii − jj|) − k0 (:func:`_offsets`)."""
    p = wi * bj
    if same and j > i:
        p *= 2.0
    if jj >= ii:
        return p, ii + off[jj - ii] - k0, jj - ii
    return p, jj + off[ii - jj] - k0, ii - jj


@_kernel
def _conv_upper(a, ka, b, kb, same, off, omega, out, k0):
    """Pairs of grid atoms (a at ka + i, b at kb + j) split to their two neighbouring grid points."""
    na, nb = a.shape[0], b.shape[0]
    for i in range(na):
        wi = a[i]
        if wi == 0.0:
            continue
        for j in range(i if same else 0, nb):
            p, c, d = _pair(wi, b[j], i, j, ka + i, kb + j, same, off, k0)
            if p == 0.0:
                continue
            w = omega[d]
            out[c] += p * (1.0 - w)
            out[c + 1] += p * w


@_kernel
def _conv_lower(a, xa, ka, b, xb, kb, same, off, grid, mass, mom, k0):
    """Pairs of cell atoms (mass a at position xa in cell ka + i, ...) summed into per-cell mass and moment."""
    for i in range(a.shape[0]):
        wi, xi = a[i], xa[i]
        if wi == 0.0:
            continue
        for j in range(i if same else 0, b.shape[0]):
            p, c, _ = _pair(wi, b[j], i, j, ka + i, kb + j, same, off, k0)
            if p == 0.0:
                continue
            s = xi + xb[j]
            if s >= grid[c + 1]:
                c += 1
            mass[c] += p
            mom[c] += p * s


class _Upper:
    """Law on the grid (atoms w at e^{(k0+i)Δ}) + an atom at 0 (``zero``) + escaped first moment ``nu``."""

    def __init__(self, k0, w, zero, nu):
        self.k0, self.w, self.zero, self.nu = k0, w, zero, nu


class _Lower:
    """Sub-probability law: atom of mass m at position x in cell k0 + i (x ∈ [e^{(k0+i)Δ}, e^{(k0+i+1)Δ}))."""

    def __init__(self, k0, m, x):
        self.k0, self.m, self.x = k0, m, x


def _grid(step, k0, n):
    return np.exp((k0 + np.arange(n)) * step)


def _truncate_upper(u, step, tail_q, tail_p):
    """Floor: Q-mass ≤ tail_q spread to the floor and 0; cap: first moment ≤ tail_p spread to the cap and +∞."""
    w, k0 = u.w, u.k0
    g = _grid(step, k0, len(w))
    cm = np.cumsum(w)
    lo = int(np.searchsorted(cm, tail_q, side="right"))  # w[:lo] has mass ≤ tail_q
    mom = w * g
    tm = np.cumsum(mom[::-1])
    hi = len(w) - int(np.searchsorted(tm, tail_p, side="right"))  # w[hi:] has moment ≤ tail_p
    lo = min(lo, len(w) - 1)
    hi = max(hi, lo + 1)
    zero, nu = u.zero, u.nu
    nw = w[lo:hi].copy()
    if lo > 0:
        m_b, mom_b = cm[lo - 1], mom[:lo].sum()
        to_floor = mom_b / g[lo]
        nw[0] += to_floor
        zero += max(m_b - to_floor, 0.0)
    if hi < len(w):
        m_a, mom_a = w[hi:].sum(), mom[hi:].sum()
        nw[-1] += m_a
        nu += max(mom_a - m_a * g[hi - 1], 0.0)
    return _Upper(k0 + lo, nw, zero, nu)


def _truncate_lower(v, tail_q, tail_p):
    m, x = v.m, v.x
    cm = np.cumsum(m)
    lo = min(int(np.searchsorted(cm, tail_q, side="right")), len(m) - 1)
    tm = np.cumsum((m * x)[::-1])
    hi = max(len(m) - int(np.searchsorted(tm, tail_p, side="right")), lo + 1)
    return _Lower(v.k0 + lo, m[lo:hi].copy(), x[lo:hi].copy())


def _add_upper(u, v, step, off, omega):
    same = u is v
    k0 = min(u.k0, v.k0) + (0 if u.zero > 0 or v.zero > 0 else int(off[0]))  # 0 + g_k = g_k stays at k
    top = max(u.k0 + len(u.w), v.k0 + len(v.w)) + int(off[0]) + 2
    out = np.zeros(top - k0)
    _conv_upper(u.w, u.k0, v.w, v.k0, same, off, omega, out, k0)
    # the atoms at 0: 0 + g = g stays on the grid
    for a, b in ((u, v), (v, u)):
        if a.zero > 0:
            out[b.k0 - k0: b.k0 - k0 + len(b.w)] += a.zero * b.w
    return _Upper(k0, out, u.zero * v.zero, u.nu + v.nu)


def _add_lower(u, v, step, off):
    same = u is v
    k0 = min(u.k0, v.k0) + int(off[0])
    top = max(u.k0 + len(u.m), v.k0 + len(v.m)) + int(off[0]) + 2
    n = top - k0
    grid = _grid(step, k0, n + 1)
    mass, mom = np.zeros(n), np.zeros(n)
    _conv_lower(u.m, u.x, u.k0, v.m, v.x, v.k0, same, off, grid, mass, mom, k0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(mass > 0, mom / mass, grid[:-1])
    return _Lower(k0, mass, x)


def _trim(m):
    nz = np.flatnonzero(m)
    return (nz[0], nz[-1] + 1) if len(nz) else (0, 1)


def epoch_laws(sigma, steps, step, tail):
    """The one-epoch laws of X' (upper: ≥_cx X on the grid; lower: ≤_cx X, a sub-probability law) at grid step
    ``step``; ``tail`` is the mass budget of each truncation, relative to the stage's mean."""
    k_lo, k_hi = _range(sigma, steps, step, tail)
    mass, mom, below, above = _initial_cells(sigma, steps, step, k_lo, k_hi)
    g = _grid(step, k_lo, len(mass) + 1)
    # upper: each cell's (mass, moment) split to its end points; below → floor and 0, above → cap and ∞
    hi_w = np.clip((mom - mass * g[:-1]) / (g[1:] - g[:-1]), 0.0, mass)
    w = np.zeros(len(mass) + 1)
    w[:-1] += mass - hi_w
    w[1:] += hi_w
    to_floor = below[1] / g[0]
    w[0] += to_floor
    w[-1] += above[0]
    up = _Upper(k_lo, w, max(below[0] - to_floor, 0.0), max(above[1] - above[0] * g[-1], 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(mass > 0, mom / mass, g[:-1])
    x = np.clip(x, g[:-1], g[1:])  # rounding only: the conditional mean lies in its cell
    lo = _Lower(k_lo, mass, x)
    off, omega = _offsets(step, 2 * (k_hi - k_lo) + 16)

    def ensure(n):
        nonlocal off, omega
        if n >= len(off):
            off, omega = _offsets(step, 2 * n + 16)

    acc_u = acc_l = None
    bits = steps
    level_mean = 1.0 / steps
    while True:
        if bits & 1:
            if acc_u is None:
                acc_u, acc_l = up, lo
            else:
                ensure(max(acc_u.k0 + len(acc_u.w), up.k0 + len(up.w)) - min(acc_u.k0, up.k0) + 2)
                acc_u = _truncate_upper(_add_upper(acc_u, up, step, off, omega), step, tail,
                                        tail * _mean_upper(acc_u, up, step))
                ensure(max(acc_l.k0 + len(acc_l.m), lo.k0 + len(lo.m)) - min(acc_l.k0, lo.k0) + 2)
                s = _add_lower(acc_l, lo, step, off)
                acc_l = _truncate_lower(s, tail, tail * float(np.dot(s.m, s.x)))
        bits >>= 1
        if not bits:
            break
        ensure(len(up.w) + 2)
        up = _truncate_upper(_add_upper(up, up, step, off, omega), step, tail, tail * 2 * level_mean)
        ensure(len(lo.m) + 2)
        s = _add_lower(lo, lo, step, off)
        lo = _truncate_lower(s, tail, tail * 2 * level_mean)
        level_mean *= 2
    a, b = _trim(acc_u.w)
    acc_u = _Upper(acc_u.k0 + a, acc_u.w[a:b], acc_u.zero, acc_u.nu)
    a, b = _trim(acc_l.m)
    acc_l = _Lower(acc_l.k0 + a, acc_l.m[a:b], acc_l.x[a:b])
    return acc_u, acc_l


def _mean_upper(u, v, step):
    return float(np.dot(u.w, _grid(step, u.k0, len(u.w))) + u.nu + np.dot(v.w, _grid(step, v.k0, len(v.w))) + v.nu)


# ---------------------------------------------------------------------------------------------------------
# loss distributions, composition, hockey stick


class LossPmf:
    """Masses ``probs`` at losses (k0 + i)·``step`` plus ``inf`` at +∞ (one direction, under its first law), and
    ``err``: a bound on the L1 distance of ``probs`` from the exact composition they were computed for (the FFT's
    rounding, :func:`_fft_error`; kept for the lower end only, the upper end adds it to ``inf``)."""

    def __init__(self, step, k0, probs, inf, err=0.0, fft=0.0):
        self.step, self.k0, self.probs, self.inf = step, int(k0), np.asarray(probs, float), float(inf)
        self.err = float(err)
        self.fft = float(fft)  # upper end: the FFT bounds added to ``inf`` (a record for the refinement only)


def upper_pmfs(u, step):
    """(REMOVE, ADD) loss distributions of the upper law: exact on the grid (losses ±kΔ)."""
    g = _grid(step, u.k0, len(u.w))
    remove = LossPmf(step, u.k0, u.w * g, u.nu)
    add = LossPmf(step, -(u.k0 + len(u.w) - 1), u.w[::-1].copy(), u.zero)
    return remove, add


def lower_pmfs(v, loss_step):
    """(REMOVE, ADD) loss distributions of the lower law, losses ±log x rounded DOWN to multiples of loss_step."""
    lx = np.log(v.x)
    out = []
    for loss, mass in ((lx, v.m * v.x), (-lx, v.m)):
        idx = np.floor(loss / loss_step).astype(np.int64)
        k0 = int(idx.min())
        probs = np.bincount(idx - k0, weights=mass)
        out.append(LossPmf(loss_step, k0, probs, 0.0))
    return tuple(out)


def _truncate(probs, k0, tail, pessimistic):
    """Cut ≤ tail/2 of mass on each side: pessimistic → right to +∞, left onto the lowest kept loss;
    optimistic → right onto the highest kept loss, left dropped.  Returns (k0, probs, mass to +∞)."""
    if tail <= 0:
        return k0, probs, 0.0
    cl = np.cumsum(probs)
    cr = np.cumsum(probs[::-1])
    lo = int(np.searchsorted(cl, tail / 2, side="right"))
    hi = len(probs) - int(np.searchsorted(cr, tail / 2, side="right"))
    hi = max(hi, lo + 1)
    left = cl[lo - 1] if lo > 0 else 0.0
    right = cr[len(probs) - hi - 1] if hi < len(probs) else 0.0
    kept = probs[lo:hi].copy()
    if pessimistic:
        kept[0] += left
        return k0 + lo, kept, right
    kept[-1] += right
    return k0 + lo, kept, 0.0


def _fft_error(a, b, c):
    """A bound on ‖c − a∗b‖₁ for c = fftconvolve(a, b) computed in floating point (a, b ≥ 0):
    :func:`.numerics.fft_error` of the two factors at fftconvolve's transform length."""
    n = len(c)
    return fft_error([(float(np.sum(a)), norm2(a), 1), (float(np.sum(b)), norm2(b), 1)], n,
                     sp_fft.next_fast_len(n, real=True), out_norm2=norm2(c))


def _compose(p, q, pessimistic, tail):
    """p ∗ q by FFT.  The rounding error (:func:`_fft_error`) goes to the +∞ mass for the upper end: δ of a loss
    distribution changes by at most the L1 change of its masses at every ε (its integrand lies in [0, 1]), and
    δ of a composition is E_q[δ_p(ε − L)], so a pointwise-larger δ stays larger after composing; for the lower end
    it is carried in ``err`` (with the factors' own ``err`` times the other's mass) and subtracted at the query."""
    raw = signal.fftconvolve(p.probs, q.probs)
    bound = _fft_error(p.probs, q.probs, raw)
    probs = np.maximum(raw, 0.0)  # the true masses are ≥ 0: clipping only moves toward them
    k0, probs, to_inf = _truncate(probs, p.k0 + q.k0, tail, pessimistic)
    inf = p.inf + q.inf - p.inf * q.inf + to_inf
    if pessimistic:
        return LossPmf(p.step, k0, probs, inf + bound, fft=p.fft + q.fft + bound)
    mass_p, mass_q = float(np.sum(p.probs)) + p.inf, float(np.sum(q.probs)) + q.inf
    err = p.err * mass_q + q.err * mass_p + p.err * q.err + bound
    return LossPmf(p.step, k0, probs, inf, err)


def self_compose(pmf, times, pessimistic, tail=0.0):
    """``times``-fold composition by repeated squaring (FFT); truncation as in :func:`_truncate`."""
    times = check_int("times", times, 1)
    result, base = None, pmf
    while True:
        if times & 1:
            result = base if result is None else _compose(result, base, pessimistic, tail)
        times >>= 1
        if not times:
            return result
        base = _compose(base, base, pessimistic, tail)


def delta_of(pmf, epsilon):
    """δ(ε) = inf + Σ_{ℓ > ε} p_ℓ (1 − e^{ε − ℓ}), less ``pmf.err`` (the lower end's FFT error bound; 0 else)."""
    losses = (pmf.k0 + np.arange(len(pmf.probs))) * pmf.step
    sel = losses > epsilon
    return max(0.0, float(pmf.inf + np.sum(pmf.probs[sel] * -np.expm1(epsilon - losses[sel]))) - pmf.err)


def epsilon_lower_of(pmf, delta):
    """A lower end's ε(δ): :func:`.reading.loss_pmf_epsilon_lower` (a proven float guard), :func:`epsilon_of` the hint."""
    return loss_pmf_epsilon_lower(pmf, delta, lambda d: epsilon_of(pmf, d))


def epsilon_of(pmf, delta):
    """Smallest ε ≥ 0 with δ(ε) ≤ delta (exact for the discrete loss distribution); inf if none.

    With U_j = Σ_{k≥j} p_k and W_j = Σ_{k>j} p_k e^{ℓ_j − ℓ_k} (≤ U_{j+1}, a decaying recursion on the uniform
    grid, so no exponential overflows at any loss), δ(ℓ_j) = inf + U_{j+1} − W_j and on [ℓ_{j−1}, ℓ_j]
    δ(ε) = inf + U_j − e^{ε − ℓ_{j−1}} W_{j−1}.  A lower end's ``pmf.err`` (:func:`delta_of`) is honoured by
    solving at delta + err."""
    delta = delta + pmf.err
    if pmf.inf >= delta:
        return math.inf
    p = pmf.probs
    n = len(p)
    losses = (pmf.k0 + np.arange(n)) * pmf.step
    u = np.cumsum(p[::-1])[::-1]
    r = math.exp(-pmf.step)
    w = signal.lfilter([r], [1.0, -r], p[::-1])[::-1]  # w[j] = Σ_{k≥j} p_k e^{ℓ_{j−1} − ℓ_k} = W_{j−1}
    w_at = np.append(w[1:], 0.0)  # W_j
    u1 = np.append(u[1:], 0.0)
    d_at = pmf.inf + u1 - w_at
    j = int(np.flatnonzero(d_at <= delta)[0])  # the last loss always qualifies (δ = inf there)
    excess = pmf.inf + u[j] - delta
    if j == 0:  # ε below the lowest loss: δ(ε) = inf + U_0 − e^{ε − ℓ_0}(p_0 + W_0)
        eps = losses[0] + math.log(excess / (p[0] + w_at[0])) if excess > 0 else -math.inf
    else:
        eps = min(max(losses[j - 1] + math.log(excess / w[j]), losses[j - 1]), losses[j])
    return max(eps, 0.0)


# ---------------------------------------------------------------------------------------------------------
# public


def _check(sigma, steps, epochs, rel_width):
    check_positive("sigma", sigma)
    steps = check_int("steps", steps, 1)
    epochs = check_int("epochs", epochs, 1)
    check_delta(rel_width, "rel_width")  # (the rule of a number in (0, 1))
    return float(sigma), steps, epochs


def first_step(sigma, steps, rel_width):
    """A grid step Δ whose second-order error is about rel_width/4 (a model; only the cost depends on it):
    a spread within cells of relative width Δ adds a relative variance ≈ Δ²/8 at each stage; carried to X it
    sums to ≈ Δ²/8 (2T/v + log₂T) of Var X, v = Var Y = e^{1/σ²} − 1, and ε moves by about half of that.  Where
    e^{1/σ²} overflows, 2T/v is 0 to double precision and v is taken as +∞."""
    v = math.expm1(1.0 / sigma**2) if 1.0 / sigma**2 < _MAX_EXP else math.inf
    stages = max(math.log2(steps), 1.0)
    return min(0.05, math.sqrt(4.0 * rel_width / (2 * steps / v + stages)))


def _lower_loss_step(eps_up, epochs, rel_width, step):
    """Loss step of the lower end: rounding down lowers the E-epoch loss by ≲ E·loss_step/2 = rel_width·ε/8."""
    if not math.isfinite(eps_up) or eps_up <= 0:
        return step / 4
    return min(step / 2, rel_width * eps_up / (4 * epochs))


class _Compositions:
    """The epoch laws and E-epoch compositions of one (σ, T, E, tail), computed once per grid step (upper) and per
    (grid step, loss step) (lower): the δ(ε) queries of a curve share them (:func:`delta_curve`)."""

    def __init__(self, sigma, steps, epochs, tail):
        self.sigma, self.steps, self.epochs, self.tail = sigma, steps, epochs, tail
        self._laws, self._upper, self._lower = {}, {}, {}

    def laws(self, step):
        if step not in self._laws:
            self._laws[step] = epoch_laws(self.sigma, self.steps, step, self.tail)
        return self._laws[step]

    def upper(self, step):
        """The composed (REMOVE, ADD) pmfs of the upper end at grid step ``step``."""
        if step not in self._upper:
            self._upper[step] = [self_compose(p, self.epochs, True, self.tail)
                                 for p in upper_pmfs(self.laws(step)[0], step)]
        return self._upper[step]

    def lower(self, step, loss_step):
        """The composed (REMOVE, ADD) pmfs of the lower end at grid step ``step`` and loss step ``loss_step``."""
        key = (step, loss_step)
        if key not in self._lower:
            self._lower[key] = [self_compose(p, self.epochs, False, self.tail)
                                for p in lower_pmfs(self.laws(step)[1], loss_step)]
        return self._lower[key]


def _interval(comp, step, loss_step, query, lower_query=None):
    """(lower, upper, loss step, FFT floor) of ``query`` (a function of a composed LossPmf; ``lower_query`` for the
    lower end's, default ``query``) maximised over both directions, from the compositions ``comp`` at grid step
    ``step``; the floor is the largest FFT bound in the upper ends plus the largest in the lower ends (δ: the width
    no finer grid step removes)."""
    composed = comp.upper(step)
    upper = max(query(p) for p in composed)
    if callable(loss_step):
        loss_step = loss_step(upper, composed)
    lows = comp.lower(step, loss_step)
    lower = max((lower_query or query)(p) for p in lows)
    return lower, upper, loss_step, max(p.fft for p in composed) + max(p.err for p in lows)


def _too_fine(sigma, steps, step, tail):
    """Whether the one-term law's grid at ``step`` would hold more than :data:`MAX_GRID_POINTS` points: at small σ
    the law of log Z spans ≈ 1/σ² + 2z/σ (z the tail quantile), so its grid grows as 1/(σ²·step)."""
    k_lo, k_hi = _range(sigma, steps, step, tail)
    return k_hi - k_lo > MAX_GRID_POINTS


def _closed_form_interval(value, step):
    """(0, ``value`` rounded up by :data:`_CLOSED_FORM_MARGIN`, info): the interval where the grid is too fine
    (:func:`_too_fine`), ``value`` the Gaussian mechanism's ε(δ) or δ(ε) at σ/√E.

    Why the upper end holds: one epoch's REMOVE pair is the mixture over t of (N(e_t, σ²I), N(0, σ²I)), its ADD
    pair the mixture of the swapped pairs, each against one common law; the hockey-stick divergence is jointly
    convex, so every H_γ of the epoch is ≤ that of the Gaussian pair (N(1, σ²), N(0, σ²)), in both directions.
    The Gaussian pair therefore dominates one epoch, dominating pairs compose (Zhu, Dong & Wang, AISTATS 2022),
    and E compositions of it are the Gaussian mechanism at σ/√E.  The lower end 0 holds for every pair (a caller
    may raise it with another certified lower bound); the width is reported as not met.  No pass is run: ``info``
    has no passes and loss step 0."""
    upper = float(value) * (1 + _CLOSED_FORM_MARGIN)
    info = {"method_upper": GAUSSIAN_METHOD, "method_lower": LOWER_METHOD, "step": step, "loss_step": 0.0,
            "rel_width": 1.0 if upper > 0 else 0.0, "width_met": upper == 0, "passes": []}
    return 0.0, upper, info


def _met(lower, upper, rel_width):
    """The width target: (upper − lower) ≤ rel_width·upper with a finite upper end (or both 0)."""
    return upper == 0 or (math.isfinite(upper) and upper - lower <= rel_width * upper)


#: a δ(ε) interval is not refined once the FFT error bounds in it (which a finer grid does not shrink) exceed this
#: many times the width aimed at
_FLOOR_STOP = 4.0


#: a pass is not started whose pair sums (n² · log2 T over the n grid points of the one-term law at its step, the
#: O(n²) double loop of every stage) would exceed this: ~5.5e-9 CPU-s each, so ~20 s (measured: σ 7.656, T 990,
#: 141 epochs, δ 1.3e-11 ran all six passes, > 70 CPU-s, the last ones 4× the one before)
MAX_PAIR_WORK = 4e9


def _pair_work(sigma, steps, step, tail):
    """n² · log2 T of one pass at ``step`` (:data:`MAX_PAIR_WORK`)."""
    k_lo, k_hi = _range(sigma, steps, step, tail)
    return float(k_hi - k_lo) ** 2 * max(math.log2(steps), 1.0)


def _refine(run, step, fixed, rel_width, refine_from=0.0, too_costly=None):
    """Run passes at step, step/2, ... until (upper − lower) ≤ rel_width·upper (one pass if ``fixed``, or if the
    first pass's upper end is below ``refine_from``).  ``run(step)`` returns (lower, upper, loss_step) and
    optionally the part of the width no finer step removes: refinement stops once it exceeds
    :data:`_FLOOR_STOP` × rel_width·upper, or where ``too_costly(next step)`` (only the cost and the width change,
    never a side)."""
    passes = []
    for _ in range(1 if fixed else _MAX_PASSES):
        lower, upper, loss_step, *floor = run(step)
        passes.append({"step": step, "loss_step": loss_step, "lower": lower, "upper": upper})
        if lower > upper:
            raise InternalError(f"allocation interval crossed ([{lower!r}, {upper!r}] at step {step!r}): a "
                                  f"numerical failure, not a bound")
        if _met(lower, upper, rel_width):
            break
        step /= 2  # (info["step"] of a pass that missed the width: the next step)
        if (len(passes) == 1 and upper < refine_from) or (floor and floor[0] > _FLOOR_STOP * rel_width * upper):
            break
        if too_costly is not None and too_costly(step):
            break
    info = {"method_upper": UPPER_METHOD, "method_lower": LOWER_METHOD, "step": step, "loss_step": loss_step,
            "rel_width": (upper - lower) / upper if 0 < upper < math.inf else (0.0 if upper == 0 else math.inf),
            "width_met": _met(lower, upper, rel_width),
            "passes": passes}
    return lower, upper, info


def epsilon_interval(delta, sigma, steps, epochs=1, rel_width=1e-2, *, step=None):
    """Certified [lower, upper] on ε(δ) of E epochs of random allocation (max over ADD and REMOVE).

    upper (``allocation-spread``): ε of the E-fold product of a pair that dominates one epoch (a convex-order
    spread of X on the geometric grid, losses exact); lower (``allocation-merge``): ε of a dominated
    sub-probability law (cell conditional means; losses rounded down).  The grid step starts at
    :func:`first_step` and is halved until (upper − lower) ≤ rel_width·upper (``info["width_met"]`` says whether
    it was within the passes); ``step`` fixes Δ (one pass).  Where that grid would be too fine (:func:`_too_fine`:
    tiny σ) the interval is :func:`_closed_form_interval`.  Returns (lower, upper, info)."""
    check_delta(delta)
    sigma, steps, epochs = _check(sigma, steps, epochs, rel_width)
    tail = _TAIL_PER_DELTA * delta / (epochs * (math.log2(steps) + 2))
    fixed = step is not None
    h = float(check_positive("step", step)) if fixed else first_step(sigma, steps, rel_width)
    if _too_fine(sigma, steps, h, tail):
        return _closed_form_interval(gaussian.epsilon(delta, sigma / math.sqrt(epochs)), h)

    comp = _Compositions(sigma, steps, epochs, tail)

    def run(hh):
        return _interval(comp, hh, lambda e, _: _lower_loss_step(e, epochs, rel_width, hh),
                         lambda pmf: epsilon_of(pmf, delta), lambda pmf: epsilon_lower_of(pmf, delta))[:3]

    return _refine(run, h, fixed, rel_width, too_costly=lambda hh: _pair_work(sigma, steps, hh, tail) > MAX_PAIR_WORK)


def delta_interval(epsilon, sigma, steps, epochs=1, rel_width=1e-2, *, step=None, loss_step=None,
                   refine_from=0.0):
    """Certified [lower, upper] on δ(ε) (max over ADD and REMOVE), same pairs as :func:`epsilon_interval`.

    The grid step starts at :func:`first_step` (``loss_step`` of the lower end: from the slope of log δ at ε
    unless given) and is halved until (upper − lower) ≤ rel_width·upper; ``step`` fixes Δ (one pass), and a
    first pass whose upper end is below ``refine_from`` is not refined.  Truncated tails cost at most ~1e-13 of
    δ (absolute).  Returns (lower, upper, info); = ``delta_curve([epsilon], ...)[0]``."""
    return delta_curve([epsilon], sigma, steps, epochs, rel_width, step=step, loss_step=loss_step,
                       refine_from=refine_from)[0]


def delta_curve(epsilons, sigma, steps, epochs=1, rel_width=1e-2, *, step=None, loss_step=None,
                refine_from=0.0):
    """:func:`delta_interval` at every ε of ``epsilons`` (a list of (lower, upper, info), the same numbers), with
    each grid step's epoch laws and composed pmfs computed once for all of them (:class:`_Compositions`); where the
    grid would be too fine (:func:`_too_fine`: tiny σ), :func:`_closed_form_interval` at each ε."""
    eps_list = [float(check_epsilon(e)) for e in epsilons]
    sigma, steps, epochs = _check(sigma, steps, epochs, rel_width)
    fixed = step is not None
    h = float(check_positive("step", step)) if fixed else first_step(sigma, steps, rel_width)
    if loss_step is not None:
        check_positive("loss_step", loss_step)
    if _too_fine(sigma, steps, h, _TAIL_DELTA_QUERY):
        return [_closed_form_interval(min(1.0, float(gaussian.delta(e, sigma / math.sqrt(epochs)))), h)
                for e in eps_list]
    comp = _Compositions(sigma, steps, epochs, _TAIL_DELTA_QUERY)

    def one(eps):
        def auto_loss_step(hh):
            def pick(d_up, composed):
                # rounding down lowers the E-epoch loss by ≲ E·loss_step/2, so δ by the factor
                # e^{−κ·E·loss_step/2} with κ = −d log δ/dε (read off the upper end): aim at rel_width/8 of δ
                h = 0.01
                d2 = max(delta_of(p, eps + h) for p in composed)
                kappa = math.log(d_up / d2) / h if d_up > 0 and d2 > 0 else 1.0
                aim = rel_width / (4 * epochs * max(kappa, 1.0))
                # the largest (Δ/2)·2^{−k/4} ≤ aim: the ε of a curve share a few lower ends
                return (hh / 2) * 2.0 ** (-max(0, math.ceil(4 * math.log2((hh / 2) / aim))) / 4)

            return pick

        def run(hh):
            return _interval(comp, hh, auto_loss_step(hh) if loss_step is None else float(loss_step),
                             lambda pmf: delta_of(pmf, eps), lambda pmf: loss_pmf_delta_lower(pmf, eps))

        return _refine(run, h, fixed, rel_width, refine_from,
                       lambda hh: _pair_work(sigma, steps, hh, _TAIL_DELTA_QUERY) > MAX_PAIR_WORK)

    return [one(eps) for eps in eps_list]


def sigma_interval(epsilon, delta, steps, epochs=1, rel_width=1e-2, *, rel_tol=2e-3):
    """Certified noise interval (σ_insufficient, σ_sufficient, info) for (ε, δ) after E epochs of ``steps`` steps.

    σ_sufficient: the upper end of :func:`epsilon_interval` at it is ≤ ε, so that σ certifiably gives (ε, δ);
    σ_insufficient: the lower end at it is > ε, so that σ certifiably does not (0.0 if none was found down to
    :data:`MIN_SIGMA`; ParameterError for an ε that no σ ≤ :data:`MAX_SIGMA` reaches).  Each is the passing side
    of a bracket (a σ that fails, a σ that passes) of ratio ≤ 1 + ``rel_tol`` (:func:`.bracket.log_bracket`, from
    the Gaussian-DP guess :func:`.bracket.gdp_sigma` at q = 1/T), both ends read
    off the same evaluations; the certificate holds at the returned σ itself whatever the monotonicity of the
    bounds in σ."""
    check_epsilon(epsilon)
    check_delta(delta)
    steps = _check(1.0, steps, epochs, rel_width)[1]
    check_positive("rel_tol", rel_tol)
    ends, upper_methods = {}, {}

    def bound(x, end):  # x = log σ; the interval at σ = e^x, memoised per x
        if (x, end) not in ends:
            lo, up, info = epsilon_interval(delta, math.exp(x), steps, epochs, rel_width)
            ends[(x, 0)], ends[(x, 1)], upper_methods[x] = lo, up, info["method_upper"]
        return ends[(x, end)]

    def unreachable():
        raise ParameterError("epsilon", f"reachable with σ ≤ {MAX_SIGMA:g} at delta={delta!r}", epsilon,
                             message=f"no σ ≤ {MAX_SIGMA:g} reaches epsilon={epsilon!r} at delta={delta!r}: ask for "
                                     f"a larger epsilon")

    tol, span = math.log1p(rel_tol), (math.log(MIN_SIGMA), math.log(MAX_SIGMA))
    x0 = math.log(min(MAX_SIGMA, max(MIN_SIGMA, gdp_sigma(epsilon, delta, 1 / steps, steps * epochs))))
    sufficient = log_bracket(lambda x: bound(x, 1) - epsilon, x0, tol, span, unreachable)[1]
    known = [(x, v - epsilon) for (x, e), v in ends.items() if e == 0]  # the lower end where it is known
    insufficient = log_bracket(lambda x: bound(x, 0) - epsilon, sufficient, tol, span, unreachable, known)[0]
    found = insufficient > -math.inf
    info = {"method_sufficient": upper_methods[sufficient], "method_insufficient": LOWER_METHOD,
            "evaluations": len(ends) // 2,
            "epsilon_upper_at_sufficient": float(ends[(sufficient, 1)]),
            "epsilon_lower_at_insufficient": float(ends[(insufficient, 0)]) if found else None}
    return (math.exp(insufficient) if found else 0.0), math.exp(sufficient), info


# ---------------------------------------------------------------------------------------------------------
# results


def method_label(lower_method=LOWER_METHOD, upper_method=UPPER_METHOD):
    """The method string of a result: each end's label, lower / upper."""
    return f"{lower_method} / {upper_method}"


def interval_result(quantity, interval, floor, bound, accuracy, rel_width):
    """The AccountingResult of ``interval`` (lower, upper, info) of :func:`epsilon_interval` or :func:`delta_curve`
    (``quantity`` "epsilon" / "delta"), its lower end raised to ``floor`` (a
    :class:`dpsampling.engine.allocation_pld.Floor`: another certified lower bound) where that is larger: the max
    of two lower bounds is one.  value = the end ``bound`` asks for, both ends filled, each end's method in
    ``accuracy``; flagged where the width misses ``rel_width``, or where a δ upper end is below
    :data:`RELIABLE_DELTA_FLOOR` (not refined there: the width is not claimed)."""
    lo, up, info = interval
    lo, up = float(lo), float(up)
    lower_method = floor.method if floor.method is not None and floor.value > lo else LOWER_METHOD
    lo_merge, lo = lo, max(lo, floor.value)
    width = (up - lo) / up if up > 0 else 0.0
    flags = () if width <= rel_width else (WIDTH_NOT_MET_FLAG,)
    if quantity == "delta" and up < RELIABLE_DELTA_FLOOR:
        flags = (BELOW_FLOOR_FLAG,)
    acc = {"accuracy": accuracy, "rel_width_target": rel_width, "rel_width": width,
           "grid_step": float(info["step"]), "loss_step": float(info["loss_step"]), "passes": len(info["passes"]),
           "upper_method": info["method_upper"], "lower_method": lower_method, "lower_merge": lo_merge,
           "lower_max_statistic": floor.value if floor.method else None}
    return AccountingResult(value=up if bound == "upper" else lo, kind=bound,
                            method=method_label(lower_method, info["method_upper"]), accuracy=acc, lower=lo,
                            upper=up, flags=flags)


def sigma_result(epsilon, delta, steps, epochs, accuracy, rel_width, rel_tol):
    """:func:`sigma_interval` as an AccountingResult, kind ``upper``: value = upper = the sufficient σ, lower = the
    provably insufficient one (0.0 if none was found)."""
    lo, up, info = sigma_interval(float(epsilon), float(delta), steps, epochs, rel_width=rel_width, rel_tol=rel_tol)
    acc = {"accuracy": accuracy, "rel_width_target": rel_width, "rel_tol": rel_tol,
           "upper_method": info["method_sufficient"], "lower_method": info["method_insufficient"],
           **{k: info[k] for k in ("evaluations", "epsilon_upper_at_sufficient", "epsilon_lower_at_insufficient")}}
    return AccountingResult(value=float(up), kind="upper", method=method_label(), accuracy=acc, lower=float(lo),
                            upper=float(up))
