"""The two pair kernels of :mod:`.allocation` in numpy, for an install without numba (the core install).

Same pairs, same cells, same split weights as the numba loops (``allocation._conv_upper`` /
``allocation._conv_lower``): for each block of rows i the pairs (i, j) are formed as arrays and their masses added
into the cells with ``np.bincount``.  Only the order of the floating-point additions differs (each cell's sum of
nonnegative products is exact up to a relative ~n·u either way, which :mod:`.allocation` already allows for).
"""

from __future__ import annotations

import numpy as np

#: pairs formed at once (rows × columns), ~16 MB per array
_BLOCK = 1 << 21


def _pairs(a, ka, b, kb, same, rows):
    """(i, j, p, ii, jj) of the nonzero pairs with i in ``rows`` (j ≥ i when ``same``, doubled off the diagonal)."""
    i = rows[:, None]
    j = np.arange(b.shape[0])[None, :]
    p = a[rows][:, None] * b[None, :]
    keep = p != 0.0
    if same:
        keep &= j >= i
    ii, jj = np.broadcast_to(i, p.shape)[keep], np.broadcast_to(j, p.shape)[keep]
    p = p[keep]
    if same:
        p = np.where(jj > ii, 2.0 * p, p)
    return ii, jj, p, ka + ii, kb + jj


def _cells(ii_abs, jj_abs, off, k0):
    lo = np.minimum(ii_abs, jj_abs)
    dd = np.abs(jj_abs - ii_abs)
    return lo + off[dd] - k0, dd


def _row_blocks(a, nb):
    nz = np.flatnonzero(a != 0.0)
    step = max(1, _BLOCK // max(nb, 1))
    return [nz[s:s + step] for s in range(0, len(nz), step)]


def _conv_upper(a, ka, b, kb, same, off, omega, out, k0):
    """= ``allocation._conv_upper``: pairs of grid atoms split to their two neighbouring grid points."""
    n = out.shape[0]
    for rows in _row_blocks(a, b.shape[0]):
        _, _, p, ii, jj = _pairs(a, ka, b, kb, same, rows)
        c, dd = _cells(ii, jj, off, k0)
        w = omega[dd]
        out += np.bincount(c, weights=p * (1.0 - w), minlength=n)[:n]
        out += np.bincount(c + 1, weights=p * w, minlength=n)[:n]


def _conv_lower(a, xa, ka, b, xb, kb, same, off, grid, mass, mom, k0):
    """= ``allocation._conv_lower``: pairs of cell atoms summed into per-cell mass and moment."""
    n = mass.shape[0]
    for rows in _row_blocks(a, b.shape[0]):
        i, j, p, ii, jj = _pairs(a, ka, b, kb, same, rows)
        c, _ = _cells(ii, jj, off, k0)
        s = xa[i] + xb[j]
        c = c + (s >= grid[c + 1])
        mass += np.bincount(c, weights=p, minlength=n)[:n]
        mom += np.bincount(c, weights=p * s, minlength=n)[:n]
