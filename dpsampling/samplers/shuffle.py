"""Shuffle batching, one epoch of T batches (Chua et al. 2024): a lower bound from the sets E_C.

Bounds: ``lower`` only (any set E gives δ_S(ε) ≥ P_S(E) − e^ε Q_S(E) for the concrete pair below).
The rest of this docstring is the one-epoch setting of Chua et al. shared by the samplers:

ABLQ_B (Chua Alg. 1) with T batches, noise σ and batch sampler B:

* Deterministic batching D (Chua Prop. 3.1): the tightly dominating pair is
  (N(1, σ²), N(0, σ²)), so δ_D(ε) is the analytic Gaussian curve with
  sensitivity 1 (Balle & Wang 2018, Thm 8), independent of T.
* Shuffle batching S (Chua §3, eqs. (1)-(2)): no dominating pair is known; the
  pair P_S = Σ_t N(2e_t, σ²I)/T, Q_S = Σ_t N(e_t, σ²I)/T comes from one
  concrete query method and adjacent pair, so any set E gives the *lower bound*
  δ_S(ε) ≥ P_S(E) − e^ε Q_S(E).  We use the sets E_C = {w : max_t w_t ≥ C}
  of Chua §4.3, eq. (3).
* Poisson batching P with q = 1/T (Chua §3, footnote 3): the T-fold
  composition of the q-subsampled Gaussian.  Not reimplemented here — the
  helpers :func:`poisson_epoch_epsilon` / :func:`poisson_epoch_delta` call
  :mod:`dpsampling.engine.accountant` with ``q = 1/steps`` (dp_accounting PLD / RDP).

Theorem 4.1: δ_S(ε) ≤ δ_D(ε) for all ε, so the E_C lower bound never exceeds
:func:`deterministic_delta` (checked in the tests).

Numerics (why the E_C bound is hand-written: no library computes it).  With
a = (C−2)/σ (or (C−1)/σ for Q) and b = C/σ,

    1 − Φ(a)·Φ(b)^(T−1) = Φ(−a) + Φ(a)·(1 − Φ(b)^(T−1)),

a sum of two non-negative terms, evaluated with log Φ (``log_ndtr``) and
log(1 − Φ(b)^(T−1)) = log1mexp((T−1)·log Φ(b)).  The naive form loses the
(T−1)·Φ(−b) part of Q when Φ(b) rounds to 1 (e.g. σ=0.5, T=1e4, C=4.25:
Φ(8.5) = 1 − 9.5e-18 → 1.0, which drops 9.5e-14 from Q = 4.03e-11 and moves
ε_S(1e-6) from 10.99478 to 10.99714).  The hockey-stick term P − e^ε Q is a
log-space difference log P + log1mexp(ε + log Q − log P).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from dpsampling.engine.numerics import log1mexp
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_delta, check_epsilon, scalar_or_array

from ._checks import check_epochs, check_quantity, check_sigma_steps

NAME = "shuffle"
#: the E_C sets give a lower bound only (no dominating pair is known for shuffling)
BOUNDS = ("lower",)

#: The paper's set 𝒞 of thresholds (Chua §4.3): 0 to 100 in steps of 0.01 (10,001 values).
DEFAULT_C_GRID = np.arange(0.0, 100.0001, 0.01)
DEFAULT_C_GRID.setflags(write=False)

# Rows of the (ε × C) work array per block, so that a block has ≲ 4e6 entries.
_BLOCK_ENTRIES = 4_000_000


# --------------------------------------------------------------------------- validation


def _check_c_grid(c_grid):
    if c_grid is None:
        return DEFAULT_C_GRID
    c = np.asarray(c_grid, dtype=float)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"c_grid must be a non-empty 1-D list of numbers (got shape {c.shape})")
    if not np.all(np.isfinite(c)):
        raise ValueError("c_grid must contain only finite numbers (got nan or inf)")
    if np.any(np.diff(c) <= 0):
        raise ValueError("c_grid must be strictly increasing (got a non-increasing step)")
    return c


# --------------------------------------------------------------------------- shuffle: the sets E_C (§4.3)


def _log_neg_log_ndtr(x):
    """log(−log Φ(x)), accurate also where log Φ(x) underflows (x ≳ 38).

    For x > 0, −log Φ(x) = −log1p(−s) with s = Φ(−x); its log is
    log s + log(−log1p(−s)/s), and the second term is ≈ s/2 → 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = ndtr(-x)
        pos = log_ndtr(-x) + np.where(s > 1e-8, np.log(-np.log1p(-s) / np.where(s > 0, s, 1.0)), 0.5 * s)
        neg = np.log(-log_ndtr(x))
    return np.where(x > 0, pos, neg)


def _log1m_pow(log_neg_log_phi_b, steps):
    """log(1 − Φ(b)^(T−1)) from log(−log Φ(b)), accurate for tiny and huge T·Φ(−b)."""
    if steps == 1:
        return np.full(np.shape(log_neg_log_phi_b), -np.inf)
    big_l = math.log(steps - 1) + log_neg_log_phi_b  # log((T−1)·(−log Φ(b)))
    with np.errstate(over="ignore"):
        u = np.exp(big_l)
        # log(1 − e^{−u}); for u < 1e-10, log(u) − u/2 avoids exp(−u) rounding to 1.
        return np.where(big_l < -23.0, big_l - 0.5 * u, log1mexp(-u))


def shuffle_log_pq(sigma, steps, c_grid=None):
    """log P_S(E_C) and log Q_S(E_C) on a grid of thresholds C (Chua §4.3).

        P_S(E_C) = 1 − Φ((C−2)/σ)·Φ(C/σ)^(T−1),
        Q_S(E_C) = 1 − Φ((C−1)/σ)·Φ(C/σ)^(T−1),

    for E_C = {w ∈ R^T : max_t w_t ≥ C} under the pair (1)-(2).  Computed as
    log[Φ(−a) + Φ(a)(1 − Φ(b)^(T−1))] (a sum of non-negative terms, no
    cancellation).  Returns ``(c, log_p, log_q)`` with ``c`` the validated grid.
    """
    sigma, steps = check_sigma_steps(sigma, steps)
    c = _check_c_grid(c_grid)
    l1m = _log1m_pow(_log_neg_log_ndtr(c / sigma), steps)

    def log_mass(shift):
        a = (c - shift) / sigma
        return np.logaddexp(log_ndtr(-a), log_ndtr(a) + l1m)

    return c, log_mass(2.0), log_mass(1.0)


def _blocks(n_rows, n_cols):
    step = max(1, _BLOCK_ENTRIES // max(1, n_cols))
    for i in range(0, n_rows, step):
        yield slice(i, min(n_rows, i + step))


def shuffle_log_delta_lower(epsilon, sigma, steps, c_grid=None, return_argmax=False):
    """log of :func:`shuffle_delta_lower` (−inf where the bound is 0)."""
    check_epsilon(epsilon)
    c, lp, lq = shuffle_log_pq(sigma, steps, c_grid)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    flat = eps.ravel()
    best = np.full(flat.shape, -np.inf)
    arg = np.full(flat.shape, np.nan)
    keep = np.isfinite(lp)  # P_C = 0 (underflow far beyond any ε of interest) cannot win
    c, lp, lq = c[keep], lp[keep], lq[keep]
    if c.size:
        for sl in _blocks(flat.size, c.size):
            diff = flat[sl, None] + lq[None, :] - lp[None, :]  # log(e^ε Q / P)
            with np.errstate(divide="ignore", invalid="ignore"):
                val = np.where(diff < 0, lp[None, :] + log1mexp(np.minimum(diff, 0.0)), -np.inf)
            i = np.argmax(val, axis=1)
            best[sl] = val[np.arange(val.shape[0]), i]
            arg[sl] = np.where(np.isfinite(best[sl]), c[i], np.nan)
    best = best.reshape(eps.shape)
    arg = arg.reshape(eps.shape)
    if np.ndim(epsilon) == 0:
        best, arg = float(best[0]), float(arg[0])
    return (best, arg) if return_argmax else best


def shuffle_delta_lower(epsilon, sigma, steps, c_grid=None, return_argmax=False):
    """Lower bound on δ_S(ε) for shuffle batching (Chua §4.3, eq. (3)).

        δ_S(ε) ≥ max_{C ∈ 𝒞} [P_S(E_C) − e^ε Q_S(E_C)],   (and ≥ 0)

    with 𝒞 = ``c_grid`` (default: the paper's 0, 0.01, …, 100).  Vectorised
    over ``epsilon`` (array in, array out); log P_C, log Q_C are computed once
    per (σ, T) and the max over C is one array operation per block of ε.

    Direction: only P_S(E_C) − e^ε Q_S(E_C) is used.  The reverse order with
    the same sets, Q_S(E_C) − e^ε P_S(E_C), is never larger: Φ((C−2)/σ) ≤
    Φ((C−1)/σ) gives Q_S(E_C) ≤ P_S(E_C), so it is ≤ (1 − e^ε)·Q_S(E_C) ≤ 0.
    (The reverse divergence with the complements {max_t w_t < C} equals the
    forward one at ε = 0 — total variation is symmetric — and was not larger
    (to 1e-8 relative) at any ε > 0 we tried; see ``tests/test_batching.py``.)

    ``return_argmax=True`` also returns the C attaining the max (nan where
    the bound is 0).  Returns 0.0 where no C gives a positive difference.
    """
    out = shuffle_log_delta_lower(epsilon, sigma, steps, c_grid, return_argmax=True)
    val, arg = np.exp(out[0]), out[1]
    val = scalar_or_array(val, epsilon)
    return (val, arg) if return_argmax else val


def shuffle_epsilon_lower(delta, sigma, steps, c_grid=None, return_argmax=False):
    """Lower bound on ε_S(δ) for shuffle batching (Chua §4.3, from eq. (3)).

    If P_S(E_C) − e^ε Q_S(E_C) > δ the mechanism is not (ε, δ)-DP, hence

        ε_S(δ) ≥ max_{C ∈ 𝒞, P_C > δ} log((P_C − δ)/Q_C),   (and ≥ 0)

    evaluated as log P_C + log1mexp(log δ − log P_C) − log Q_C.  Vectorised
    over ``delta``.  ``return_argmax=True`` also returns the maximising C (nan
    where the bound is 0).
    """
    check_delta(delta)
    c, lp, lq = shuffle_log_pq(sigma, steps, c_grid)
    d = np.atleast_1d(np.asarray(delta, dtype=float))
    flat = np.log(d.ravel())
    best = np.full(flat.shape, -np.inf)
    arg = np.full(flat.shape, np.nan)
    for sl in _blocks(flat.size, c.size):
        diff = flat[sl, None] - lp[None, :]  # log(δ / P)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(diff < 0, lp[None, :] + log1mexp(np.minimum(diff, 0.0)) - lq[None, :], -np.inf)
        i = np.argmax(val, axis=1)
        best[sl] = val[np.arange(val.shape[0]), i]
        arg[sl] = c[i]
    arg = np.where(best > 0, arg, np.nan)
    best = np.maximum(best, 0.0)
    best, arg = best.reshape(d.shape), arg.reshape(d.shape)
    if np.ndim(delta) == 0:
        best, arg = float(best[0]), float(arg[0])
    return (best, arg) if return_argmax else best


def _shuffle_log_delta_reverse_complement(epsilon, sigma, steps, c_grid=None):
    """log max_C [Q_S(F_C) − e^ε P_S(F_C)] for F_C = {max_t w_t < C} (not used by default).

    Q_S(F_C) − e^ε P_S(F_C) = Φ(C/σ)^(T−1)·[Φ((C−1)/σ) − e^ε Φ((C−2)/σ)].
    Kept to check that this reverse-direction bound is not larger than
    :func:`shuffle_delta_lower` (see its docstring).
    """
    sigma, steps = check_sigma_steps(sigma, steps)
    c = _check_c_grid(c_grid)
    lpow = (steps - 1) * log_ndtr(c / sigma)
    la, lb = log_ndtr((c - 1) / sigma), log_ndtr((c - 2) / sigma)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    diff = eps[:, None] + lb[None, :] - la[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(diff < 0, lpow + la + log1mexp(np.minimum(diff, 0.0)), -np.inf)
    return val.max(axis=1)


# --------------------------------------------------------------------------- the set 𝒞 from a config / CLI spec

#: Largest C grid accepted from a spec (memory: the max over C is done in blocks, but log P_C, log Q_C are kept).
MAX_C_GRID_SIZE = 10_000_000


def c_grid_from_spec(spec=None):
    """The thresholds 𝒞 of Chua §4.3 from a config value; ValueError naming ``c_grid`` on bad input.

    ``None``: the paper's 𝒞 = {0, 0.01, …, 100} (:data:`DEFAULT_C_GRID`).
    A list: the values themselves (non-empty, finite, strictly increasing).
    A mapping ``{start, stop, step}``: start, start + step, …, up to stop
    (inclusive within 1e-9 steps), computed as ``start + step·i`` like
    ``numpy.arange``, so ``{start: 0, stop: 100, step: 0.01}`` is exactly
    :data:`DEFAULT_C_GRID`.
    """
    if spec is None:
        return DEFAULT_C_GRID
    if isinstance(spec, dict):
        missing = sorted({"start", "stop", "step"} - set(spec))
        extra = sorted(set(spec) - {"start", "stop", "step"})
        if missing or extra:
            raise ValueError(f"c_grid must be a list or a mapping with keys start, stop, step "
                             f"(missing {missing}, unknown {extra})")
        try:
            start, stop, step = (float(spec[k]) for k in ("start", "stop", "step"))
        except (TypeError, ValueError):
            raise ValueError(f"c_grid start, stop, step must be numbers (got {spec!r})") from None
        if not all(math.isfinite(v) for v in (start, stop, step)):
            raise ValueError(f"c_grid start, stop, step must be finite (got {spec!r})")
        if not step > 0:
            raise ValueError(f"c_grid step must be > 0 (got {step!r})")
        if not stop >= start:
            raise ValueError(f"c_grid stop must be >= start (got start={start!r}, stop={stop!r})")
        n = math.floor((stop - start) / step + 1e-9) + 1
        if n > MAX_C_GRID_SIZE:
            raise ValueError(f"c_grid must have at most {MAX_C_GRID_SIZE:,} values (got {n:,})")
        return start + step * np.arange(n, dtype=float)
    if isinstance(spec, (str, bytes)) or np.ndim(spec) != 1:
        raise ValueError(f"c_grid must be a non-empty list of numbers or a mapping {{start, stop, step}} (got {spec!r})")
    try:
        c = np.asarray(spec, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"c_grid must contain only numbers (got {spec!r})") from None
    if c.size > MAX_C_GRID_SIZE:
        raise ValueError(f"c_grid must have at most {MAX_C_GRID_SIZE:,} values (got {c.size:,})")
    return _check_c_grid(c)


def describe_c_grid(c_grid=None) -> str:
    """A short description of 𝒞 for CSVs and labels, e.g. ``0:0.01:100 (10001 values)``."""
    c = _check_c_grid(c_grid)
    if c.size == 1:
        return f"{c[0]:g} (1 value)"
    steps = np.diff(c)
    if np.allclose(steps, steps[0], rtol=1e-6, atol=0):
        return f"{c[0]:g}:{steps[0]:g}:{c[-1]:g} ({c.size} values)"
    return f"{c.size} values in [{c[0]:g}, {c[-1]:g}]"


# --------------------------------------------------------------------------- one interface for the pipeline and the CLI

#: Method label of the shuffle lower bound (Chua §4.3, eq. (3)).
EC_METHOD = "E_C sets"


def shuffle_result(quantity, target, sigma, steps, c_grid=None):
    """Lower bound on ε_S(δ) or δ_S(ε) from the sets E_C (Chua §4.3, eq. (3)), as a result.

    ``kind="lower"``, ``method="E_C sets"``; ``accuracy`` records the C grid and
    the maximising C.  Flag ``argmax_c_at_grid_end``: the best C is the first
    or last grid value, so a wider grid might give a larger bound.
    """
    target = check_quantity(quantity, target)
    c = c_grid_from_spec(c_grid)
    f = shuffle_epsilon_lower if quantity == "epsilon" else shuffle_delta_lower
    v, arg = f(target, sigma, steps, c_grid=c, return_argmax=True)
    flags = ()
    if np.isfinite(arg) and c.size > 1 and (arg == c[0] or arg == c[-1]):
        flags = ("argmax_c_at_grid_end",)
    acc = {"c_grid": describe_c_grid(c), "argmax_c": float(arg) if np.isfinite(arg) else None}
    return AccountingResult(float(v), "lower", EC_METHOD, acc, float(v), None, flags)






def _one_epoch(steps, epochs, q, bound, direction):
    from ._checks import check_bound, check_one_epoch

    check_epochs(epochs, NAME)
    if q is not None:
        check_one_epoch(q, steps, NAME)
    if direction != "add_remove":
        raise ValueError(f"direction must be add_remove for sampler 'shuffle' (the E_C bound is for the pair "
                         f"of Chua eqs. (1)-(2)) (got {direction!r})")
    check_bound(bound, NAME, BOUNDS)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
          **options) -> AccountingResult:
    """Lower bound on δ_S(ε) of one epoch (sets E_C); see :func:`shuffle_result`."""
    _one_epoch(steps, epochs, q, bound, direction)
    return shuffle_result("delta", epsilon, sigma, steps, c_grid)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
            **options) -> AccountingResult:
    """Lower bound on ε_S(δ) of one epoch (sets E_C); see :func:`shuffle_result`."""
    _one_epoch(steps, epochs, q, bound, direction)
    return shuffle_result("epsilon", delta, sigma, steps, c_grid)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, direction="add_remove", **options) -> AccountingResult:
    """Not available: a lower bound on ε cannot certify a σ."""
    _one_epoch(steps, epochs, q, "lower", direction)
    raise ValueError("sampler 'shuffle' cannot calibrate sigma: the E_C sets give only a lower bound on ε; "
                     "use --sampler deterministic, whose σ also suffices for shuffling (Chua Thm 4.1)")
