"""PLD_accounting's geometric convolution kernel, computed by window sums instead of pair by pair.

Why this is hand-written: PLD_accounting (Feldman & Shenfeld; behind the random-allocation PLDs of
:mod:`dpsampling.engine.allocation_pld`) sums two distributions on one geometric lattice x_i = x_0·r^i
with an O(n²) loop over pairs (``PLD_accounting.geometric_convolution._numba_geometric_kernel``): the
pair (i, i + d) has probability u[i]·v[i + d] and goes to output bin i + s(d), where the integer offset
s(d) (rounded up for a dominating, down for a dominated distribution) is computed by PLD_accounting and
depends on d only.  At σ = 1, T = 1000 its grids hold 50 000 – 100 000 points and this loop takes nearly
all of the time of a certified bound.  No library offers a faster version of this sum, so we compute the same
sum differently:

* where s(d) is constant over d ∈ [d₁, d₂] (the sum is dominated by the smaller term):
  out[i + s] += u[i] · Σ_{d=d₁..d₂} v[i + d], a window sum of v;
* where g(d) = s(d) − d is constant (dominated by the larger term), with j = i + d:
  out[j + g] += v[j] · Σ_{d=d₁..d₂} u[j − d], a window sum of u.

s is nondecreasing with slope in [0, 1], so the d-axis splits into runs of one kind or the other; a
greedy split gives about (log 2)/log r runs instead of n values of d (n·R instead of n² products:
R ≈ 2 200 against n ≈ 53 000 at σ = 1, T = 1000, E = 5).  Window sums are differences of prefix sums
kept in double-double (a TwoSum running error), so a window in a tail keeps its relative accuracy.
Its time against PLD_accounting's kernel: ``bench/bench_balls_and_bins.py --kernel``.

Every pair's mass goes to exactly the bin PLD_accounting assigns it (the offsets are PLD_accounting's own
arrays), so the side of every rounding, and with it whether a result is an upper or a lower bound, is
PLD_accounting's; only the order of floating-point additions differs.  tests/engine/test_geometric_kernel.py
compares this kernel with PLD_accounting's on its own inputs (each bin to ≤ 1e-9 relative, zero bins
the same) and the resulting ε bounds.  PLD_accounting is pinned (pyproject.toml) because this module
replaces one of its private functions while :func:`geometric_kernel` is active.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np

#: run kinds in the split of the d-axis (see the module doc)
_CONST_SHIFT = 0
_CONST_G = 1


@numba.njit(cache=True)
def _prefix_dd(x):
    """Prefix sums P[m] = Σ_{i<m} x[i] as a double-double (hi, lo): hi is the running float sum and lo the
    running sum of its exact rounding errors (TwoSum), so hi[a] − hi[b] + (lo[a] − lo[b]) is a window sum
    accurate to ~1e-16 of the window itself plus ~1e-30 absolute."""
    n = x.size
    hi = np.zeros(n + 1)
    lo = np.zeros(n + 1)
    s = 0.0
    c = 0.0
    for i in range(n):
        t = s + x[i]
        bb = t - s
        c += (s - (t - bb)) + (x[i] - bb)
        s = t
        hi[i + 1] = s
        lo[i + 1] = c
    return hi, lo


@numba.njit(cache=True)
def _split_runs(shift):
    """Split d = 1..n−1 greedily into runs on which shift[d] or shift[d] − d is constant; arrays
    (kind, first d, last d, constant)."""
    n = shift.size
    kinds = np.empty(n, np.int64)
    lows = np.empty(n, np.int64)
    highs = np.empty(n, np.int64)
    values = np.empty(n, np.int64)
    r = 0
    d = 1
    while d < n:
        es = d
        while es + 1 < n and shift[es + 1] == shift[d]:
            es += 1
        eg = d
        while eg + 1 < n and shift[eg + 1] - (eg + 1) == shift[d] - d:
            eg += 1
        lows[r] = d
        if es >= eg:
            kinds[r], highs[r], values[r] = _CONST_SHIFT, es, shift[d]
            d = es + 1
        else:
            kinds[r], highs[r], values[r] = _CONST_G, eg, shift[d] - d
            d = eg + 1
        r += 1
    return kinds[:r], lows[:r], highs[:r], values[:r]


#: the runs of one orientation are summed in this many parts, one buffer each, added in a fixed order:
#: the parts run on numba's threads and the result does not depend on how many threads there are
PARTS = 2


@numba.njit(cache=True)
def _kahan_add(out, comp, k, mass):
    y = mass - comp[k]
    t = out[k] + y
    comp[k] = (t - out[k]) - y
    out[k] = t


@numba.njit(cache=True)
def _add_run(out, comp, u, v, u_hi, u_lo, v_hi, v_lo, kind, d1, d2, c, nu, nv):
    """Add the pairs u[i]·v[i + d], d1 ≤ d ≤ d2, of one run to ``out`` (module doc).  nu, nv: one past the
    last nonzero entry of u, v (zero tails are skipped); the loops are split where the window meets the end
    of the array, so the inner loops have no branches.  A window sum is clamped at 0 (it can only come out
    below 0 by rounding, at ~1e-30)."""
    n = u.size
    m = out.size
    if kind == _CONST_SHIFT:  # out[i + c] += u[i]·Σ_{d=d1..d2, i+d<n} v[i + d]
        i0 = max(0, -c)
        i1 = min(n - d1, m - c, nu, nv - d1)
        i_end = min(max(i0, n - 1 - d2), i1)  # from here on the window is cut at n
        for i in range(i0, i_end):
            x = i + d2 + 1
            y = i + d1
            _kahan_add(out, comp, i + c, u[i] * max((v_hi[x] - v_hi[y]) + (v_lo[x] - v_lo[y]), 0.0))
        for i in range(i_end, i1):
            y = i + d1
            _kahan_add(out, comp, i + c, u[i] * max((v_hi[n] - v_hi[y]) + (v_lo[n] - v_lo[y]), 0.0))
    else:  # j = i + d: out[j + c] += v[j]·Σ_{d=d1..d2, d≤j} u[j − d]
        j0 = max(d1, -c)
        j1 = min(n, m - c, nv, nu + d2)
        j_full = max(min(d2, j1), j0)  # below it the window is cut at 0
        for j in range(j0, j_full):
            x = j - d1 + 1
            _kahan_add(out, comp, j + c, v[j] * max((u_hi[x] - u_hi[0]) + (u_lo[x] - u_lo[0]), 0.0))
        for j in range(j_full, j1):
            x = j - d1 + 1
            y = j - d2
            _kahan_add(out, comp, j + c, v[j] * max((u_hi[x] - u_hi[y]) + (u_lo[x] - u_lo[y]), 0.0))


@numba.njit(cache=True, parallel=True)
def _add_runs(parts, comps, bounds, u, v, u_hi, u_lo, v_hi, v_lo, kinds, lows, highs, values, nu, nv):
    """Runs bounds[p] ≤ r < bounds[p + 1] into parts[p] (Kahan compensation in comps[p]); parts in parallel."""
    for p in numba.prange(parts.shape[0]):
        for r in range(bounds[p], bounds[p + 1]):
            _add_run(parts[p], comps[p], u, v, u_hi, u_lo, v_hi, v_lo, kinds[r], lows[r], highs[r], values[r], nu, nv)


def _add_orientation(out, u, v, u_prefix, v_prefix, shift, nu, nv):
    """out += Σ_{d ≥ 1, i} u[i]·v[i + d] at bin i + shift[d]."""
    kinds, lows, highs, values = _split_runs(np.asarray(shift, dtype=np.int64))
    bounds = np.linspace(0, kinds.size, PARTS + 1).astype(np.int64)
    parts = np.zeros((PARTS, out.size))
    comps = np.zeros((PARTS, out.size))
    _add_runs(parts, comps, bounds, u, v, *u_prefix, *v_prefix, kinds, lows, highs, values, nu, nv)
    for part, comp in zip(parts, comps):
        out += part - comp  # Kahan: the compensation is the negative of the part's rounding error


def _nonzero_end(x):
    nz = np.flatnonzero(x)
    return int(nz[-1]) + 1 if nz.size else 0


def windowed_geometric_kernel(*, pmf_base, pmf_scaled, delta_lohi, delta_hilo, diagonal_bins, output_size):
    """Drop-in for ``PLD_accounting.geometric_convolution._geometric_kernel`` (same arguments, same bins):
    out[i + diagonal_bins[i]] += a[i]·b[i]; for d ≥ 1: out[i + delta_lohi[d]] += a[i]·b[i + d] and
    out[i + delta_hilo[d]] += a[i + d]·b[i] (a = pmf_base, b = pmf_scaled, equal lengths n), terms whose
    bin falls outside [0, output_size) dropped, as PLD_accounting does.

    A self-convolution (a = b and delta_lohi = delta_hilo, PLD_accounting's squaring steps) has two equal
    orientations: one is computed and doubled (exact in floating point).  Each output bin of a part is a
    Kahan sum, as in PLD_accounting (plain sums drifted by ~1e-15 in total mass, past PLD_accounting's
    repair tolerance of 4 ulp)."""
    a = np.ascontiguousarray(pmf_base, dtype=np.float64)
    b = np.ascontiguousarray(pmf_scaled, dtype=np.float64)
    n = a.size
    out = np.zeros(output_size)
    k = np.arange(n) + np.asarray(diagonal_bins[:n], dtype=np.int64)
    on = (k >= 0) & (k < output_size)
    np.add.at(out, k[on], (a * b)[on])  # the diagonal d = 0 (two neighbours can share a bin: add.at sums them)
    if n < 2:
        return out
    na, a_prefix = _nonzero_end(a), _prefix_dd(a)
    if np.array_equal(a, b) and np.array_equal(delta_lohi, delta_hilo):
        once = np.zeros(output_size)
        _add_orientation(once, a, a, a_prefix, a_prefix, delta_lohi, na, na)
        return out + 2.0 * once
    nb, b_prefix = _nonzero_end(b), _prefix_dd(b)
    _add_orientation(out, a, b, a_prefix, b_prefix, delta_lohi, na, nb)
    _add_orientation(out, b, a, b_prefix, a_prefix, delta_hilo, nb, na)
    return out


@contextlib.contextmanager
def geometric_kernel():
    """While active, PLD_accounting's geometric convolutions use :func:`windowed_geometric_kernel`."""
    import PLD_accounting.geometric_convolution as gc

    library = gc._geometric_kernel
    gc._geometric_kernel = windowed_geometric_kernel
    try:
        yield
    finally:
        gc._geometric_kernel = library
