"""Deterministic, shuffle and Poisson batching for one epoch (Chua et al. 2024).

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
  :mod:`dpsampling.accountant` with ``q = 1/steps`` (dp_accounting PLD / RDP).

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

import itertools
import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from . import gaussian
from .numerics import log1mexp
from .validation import check_delta, check_epsilon, check_positive, check_steps

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


def _check_sigma_steps(sigma, steps):
    check_positive("sigma", sigma)
    if np.ndim(sigma) != 0:
        raise ValueError(f"sigma must be a single number > 0 (got an array of shape {np.shape(sigma)})")
    if isinstance(steps, bool) or np.ndim(steps) != 0:
        raise ValueError(f"steps must be an integer >= 1 (got {steps!r})")
    check_steps(steps)
    return float(sigma), int(steps)


def _scalar_or_array(x, like):
    return float(x) if np.ndim(like) == 0 else x


# --------------------------------------------------------------------------- deterministic (Prop. 3.1)


def deterministic_log_delta(epsilon, sigma):
    """log δ_D(ε) (Chua Prop. 3.1), vectorised over ``epsilon``; see :func:`deterministic_delta`."""
    check_epsilon(epsilon)
    check_positive("sigma", sigma)
    out = np.asarray(gaussian.log_delta(np.asarray(epsilon, dtype=float), float(sigma)), dtype=float)
    return _scalar_or_array(out, epsilon)


def deterministic_delta(epsilon, sigma):
    """δ_D(ε) for deterministic batching (Chua Prop. 3.1 = Balle & Wang 2018, Thm 8).

        δ_D(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)),

    the analytic Gaussian mechanism with sensitivity 1 (the dominating pair is
    (N(1, σ²), N(0, σ²)); each record is in exactly one batch, so T does not
    enter).  Evaluated in log space (:func:`dpsampling.gaussian.log_delta`:
    log Φ(a) + log1mexp(ε + log Φ(b) − log Φ(a))), so values far below 1e-16
    keep their digits.  Vectorised over ``epsilon`` (array in, array out).
    """
    return _scalar_or_array(np.exp(deterministic_log_delta(epsilon, sigma)), epsilon)


def deterministic_epsilon(delta, sigma):
    """ε_D(δ): the smallest ε ≥ 0 with δ_D(ε) ≤ δ (Chua Prop. 3.1), by root finding.

    Brent's method on log δ_D(ε) − log δ (monotone decreasing in ε), tolerance
    1e-13.  Vectorised over ``delta`` by a loop (each root is ~30 evaluations).
    """
    check_delta(delta)
    check_positive("sigma", sigma)
    d = np.asarray(delta, dtype=float)
    out = np.array([gaussian.epsilon(float(x), float(sigma)) for x in d.ravel()], dtype=float).reshape(d.shape)
    return _scalar_or_array(out, delta)


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
    sigma, steps = _check_sigma_steps(sigma, steps)
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
    val = _scalar_or_array(val, epsilon)
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
    sigma, steps = _check_sigma_steps(sigma, steps)
    c = _check_c_grid(c_grid)
    lpow = (steps - 1) * log_ndtr(c / sigma)
    la, lb = log_ndtr((c - 1) / sigma), log_ndtr((c - 2) / sigma)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    diff = eps[:, None] + lb[None, :] - la[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(diff < 0, lpow + la + log1mexp(np.minimum(diff, 0.0)), -np.inf)
    return val.max(axis=1)


# --------------------------------------------------------------------------- Poisson, one epoch (q = 1/T)


def poisson_epoch_epsilon(delta, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """ε_P(δ) for one epoch of Poisson batching: q = 1/T, T steps (Chua §3, footnote 3).

    A thin wrapper: ``dpsampling.accountant.epsilon(delta, sigma=σ, q=1/T,
    steps=T, sampler="poisson", direction="add_remove", ...)`` — dp_accounting
    PLD (``bound="upper"``: pessimistic, ``"lower"``: optimistic; max over add
    and remove) or RDP (default orders; upper only).  ``discretization`` is
    the PLD value discretisation (None: the accountant picks it from its
    accuracy target, which can take minutes at T ≥ 1e4).  Returns a float.
    """
    r = poisson_epoch_result("epsilon", delta, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)


def poisson_epoch_delta(epsilon, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """δ_P(ε) for one epoch of Poisson batching (q = 1/T); see :func:`poisson_epoch_epsilon`.

    PLD values below 1e-12 are dominated by truncated tail mass and are not
    reliable bounds (the accountant flags them ``delta_below_1e-12``).
    """
    r = poisson_epoch_result("delta", epsilon, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)


# --------------------------------------------------------------------------- helpers for the figures


def _check_curves(eps, delta_a, delta_b):
    x = np.asarray(eps, dtype=float)
    a = np.asarray(delta_a, dtype=float)
    b = np.asarray(delta_b, dtype=float)
    if x.ndim != 1 or x.size < 2 or np.any(~(np.diff(x) > 0)):
        raise ValueError("eps must be a strictly increasing 1-D grid with at least 2 points")
    if a.shape != x.shape or b.shape != x.shape:
        raise ValueError(f"curves must have the shape of eps {x.shape} (got {a.shape} and {b.shape})")
    return x, a, b


def _gap(a, b):
    """log a − log b where both are positive, else a − b (same sign as a − b)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a > 0) & (b > 0), np.log(np.where(a > 0, a, 1.0)) - np.log(np.where(b > 0, b, 1.0)), a - b)


def _cross_between(x, a, b, i, j):
    """Interpolated crossing of a and b between grid points i < j (g(i), g(j) of opposite sign)."""
    if j > i + 1:  # exact ties in between: the middle of the tie run
        return float(0.5 * (x[i + 1] + x[j - 1]))
    both_pos = a[i] > 0 and b[i] > 0 and a[j] > 0 and b[j] > 0
    gi, gj = _gap(a[[i, j]], b[[i, j]]) if both_pos else (a[[i, j]] - b[[i, j]])
    return float(x[i] + (x[j] - x[i]) * gi / (gi - gj))


def crossover_points(eps, delta_a, delta_b):
    """The ε at which curve ``delta_a`` crosses curve ``delta_b`` (Fig. 2's ε0/ε1, Conj. 4.3).

    Both curves are sampled on the strictly increasing grid ``eps``.  A
    crossing is a sign change of a − b between grid points (touching without a
    sign change is not one); its location is interpolated linearly in
    log a − log b when both curves are positive there, else in a − b.
    Returns a sorted 1-D array (empty if the curves do not cross).  With
    bounds instead of exact curves, one crossing is evidence for Conjecture
    4.3 (ε0 = ε1), not a proof.
    """
    x, a, b = _check_curves(eps, delta_a, delta_b)
    s = np.sign(_gap(a, b))
    nz = np.flatnonzero(s != 0)
    out = [_cross_between(x, a, b, i, j) for i, j in itertools.pairwise(nz) if s[i] != s[j]]
    return np.asarray(out, dtype=float)


def provably_wrong_region(eps, shuffle_lower, poisson_upper):
    """ε intervals where the shuffle lower bound exceeds the Poisson upper bound.

    There δ_S(ε) ≥ shuffle_lower > poisson_upper ≥ δ_P(ε): reporting the
    Poisson guarantee for a shuffled implementation is provably wrong (Chua
    §4.3, Fig. 3).  Returns a list of (start, end) pairs: maximal runs of grid
    points with shuffle_lower > poisson_upper, extended to the interpolated
    crossings (or clipped to the grid ends).
    """
    x, s, p = _check_curves(eps, shuffle_lower, poisson_upper)
    above = _gap(s, p) > 0
    regions = []
    i, n = 0, x.size
    while i < n:
        if not above[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and above[j + 1]:
            j += 1
        start = x[0] if i == 0 else _cross_between(x, s, p, i - 1, i)
        end = x[-1] if j == n - 1 else _cross_between(x, s, p, j, j + 1)
        regions.append((float(start), float(end)))
        i = j + 1
    return regions


def conjecture_4_3_single_crossing(sigma=0.3, steps=10, eps_max=20.0, n_eps=201, discretization=1e-3):
    """True iff δ_D crosses both PLD bounds on δ_P exactly once on [0, eps_max] (Chua Fig. 2, Conj. 4.3).

    δ_P is bracketed by the optimistic (lower) and pessimistic (upper)
    dp_accounting PLD of one epoch (q = 1/T); grid points where the upper PLD
    bound is below 1e-12 (unreliable) are dropped.
    """
    from . import accountant

    _, steps = _check_sigma_steps(sigma, steps)
    eps = np.linspace(0.0, float(eps_max), int(n_eps))
    dd = deterministic_delta(eps, sigma)
    res = [
        accountant.delta(
            e, sigma=float(sigma), q=1.0 / steps, steps=steps, bound="upper", discretization=discretization
        )
        for e in eps
    ]
    up = np.array([r.upper for r in res])
    lo = np.array([r.lower for r in res])
    m = up >= 1e-12
    return bool(crossover_points(eps[m], dd[m], up[m]).size == 1 and crossover_points(eps[m], dd[m], lo[m]).size == 1)


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

QUANTITIES = ("epsilon", "delta")
BATCHING_SAMPLERS = ("deterministic", "shuffle", "poisson")
#: Method label of the shuffle lower bound (Chua §4.3, eq. (3)).
EC_METHOD = "E_C sets"


def _result(*args, **kw):
    from .accountant import AccountingResult

    return AccountingResult(*args, **kw)


def _check_quantity(quantity, target):
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(QUANTITIES)} (got {quantity!r})")
    if np.ndim(target) != 0:
        raise ValueError(f"{'delta' if quantity == 'epsilon' else 'epsilon'} must be a single number (got {target!r})")
    (check_delta if quantity == "epsilon" else check_epsilon)(target)
    return float(target)


def deterministic_result(quantity, target, sigma):
    """ε_D(δ) (``quantity="epsilon"``, target δ) or δ_D(ε) (``"delta"``, target ε) as an exact result.

    Chua Prop. 3.1: the analytic Gaussian curve with sensitivity 1, independent
    of T; ``kind="exact"``, ``method="analytic"``.
    """
    target = _check_quantity(quantity, target)
    check_positive("sigma", sigma)
    f = deterministic_epsilon if quantity == "epsilon" else deterministic_delta
    v = float(f(target, float(sigma)))
    return _result(v, "exact", "analytic", {}, v, v)


def shuffle_result(quantity, target, sigma, steps, c_grid=None):
    """Lower bound on ε_S(δ) or δ_S(ε) from the sets E_C (Chua §4.3, eq. (3)), as a result.

    ``kind="lower"``, ``method="E_C sets"``; ``accuracy`` records the C grid and
    the maximising C.  Flag ``argmax_c_at_grid_end``: the best C is the first
    or last grid value, so a wider grid might give a larger bound.
    """
    target = _check_quantity(quantity, target)
    c = c_grid_from_spec(c_grid)
    f = shuffle_epsilon_lower if quantity == "epsilon" else shuffle_delta_lower
    v, arg = f(target, sigma, steps, c_grid=c, return_argmax=True)
    flags = ()
    if np.isfinite(arg) and c.size > 1 and (arg == c[0] or arg == c[-1]):
        flags = ("argmax_c_at_grid_end",)
    acc = {"c_grid": describe_c_grid(c), "argmax_c": float(arg) if np.isfinite(arg) else None}
    return _result(float(v), "lower", EC_METHOD, acc, float(v), None, flags)


def poisson_epoch_result(quantity, target, sigma, steps, *, method="pld", bound="upper", rel_tol=None,
                         discretization=None, finest_discretization=None):
    """ε_P(δ) or δ_P(ε) for one epoch of Poisson batching (q = 1/T, Chua §3 footnote 3), as a result.

    Delegates to :func:`dpsampling.accountant.epsilon` / ``delta`` (dp_accounting
    PLD or RDP, max over add and remove).  PLD: a fixed ``discretization`` is
    used as is; ``None`` refines it to ``rel_tol``.  ``finest_discretization``
    (PLD, automatic only) stops the refinement there (flag ``not_converged``
    with the estimated error if ``rel_tol`` is not reached); only the
    pessimistic PLD is refined, the optimistic one (``lower``) is evaluated at
    the final discretisation, as in the accountant.
    """
    from . import accountant

    target = _check_quantity(quantity, target)
    _, steps = _check_sigma_steps(sigma, steps)
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ValueError(f"rel_tol must be in (0, 0.1] (got {rel_tol!r})")
    finest = None if finest_discretization is None else float(finest_discretization)  # the accountant checks it
    q, s = 1.0 / steps, float(sigma)
    call = accountant.epsilon if quantity == "epsilon" else accountant.delta
    kw = {}
    if method == "pld":
        kw = {"discretization": None if discretization is None else float(discretization)}
        if finest is not None:
            kw["finest_discretization"] = finest
    return call(target, sigma=s, q=q, steps=steps, sampler="poisson", direction="add_remove",
                method=method, bound=bound, rel_tol=rel_tol, **kw)


def check_one_epoch(q, steps, sampler):
    """Deterministic and shuffle batching are analysed for one epoch of T batches: q must be 1/T."""
    from .validation import check_rate

    check_rate(q)
    check_steps(steps)
    if abs(float(q) * float(steps) - 1.0) > 1e-6:
        raise ValueError(f"q must be 1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}' (one epoch of "
                         f"steps batches, Chua et al. §3) (got q={q!r}, steps={steps!r})")


def account(quantity, target, *, sampler, sigma, steps, method="pld", bound="upper", rel_tol=None,
            discretization=None, finest_discretization=None, c_grid=None):
    """ε(δ) or δ(ε) of one epoch (T batches) under ``sampler`` (Chua et al. 2024), as an AccountingResult.

    ``deterministic``: exact (Prop. 3.1).  ``shuffle``: a lower bound from the
    sets E_C (§4.3, eq. (3)), ``c_grid`` as in :func:`c_grid_from_spec`.
    ``poisson``: q = 1/T, :func:`poisson_epoch_result` (``method``, ``bound``,
    ``rel_tol``, ``discretization``, ``finest_discretization`` apply to it only).
    """
    if sampler not in BATCHING_SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(BATCHING_SAMPLERS)} (got {sampler!r})")
    if sampler == "deterministic":
        return deterministic_result(quantity, target, sigma)
    if sampler == "shuffle":
        return shuffle_result(quantity, target, sigma, steps, c_grid)
    return poisson_epoch_result(quantity, target, sigma, steps, method=method, bound=bound, rel_tol=rel_tol,
                                discretization=discretization, finest_discretization=finest_discretization)


def deterministic_sigma_result(epsilon, delta):
    """Smallest σ with deterministic batching (ε, δ)-DP (one epoch), exact.

    One epoch of deterministic batching is a single Gaussian mechanism with
    sensitivity 1 (Chua Prop. 3.1), so this is the analytic-Gaussian
    calibration (:func:`dpsampling.accountant.calibrate_sigma` with q = 1,
    T = 1).  By Theorem 4.1 this σ is also sufficient for shuffle batching.
    """
    from . import accountant

    return accountant.calibrate_sigma(epsilon, delta, q=1.0, steps=1)


# --------------------------------------------------------------------------- checks on a figure's grid


def theorem_4_1_margin(shuffle_lower, deterministic, rtol=1e-9):
    """Margin of Theorem 4.1 (δ_S ≤ δ_D, hence also ε_S ≤ ε_D) on a grid: (margin, holds).

    ``margin = deterministic − shuffle_lower`` (≥ 0 by the theorem);
    ``holds`` allows a relative rounding slack ``rtol`` (relative to
    ``deterministic``).  NaN entries (no shuffle value) hold trivially.
    """
    s = np.asarray(shuffle_lower, dtype=float)
    d = np.asarray(deterministic, dtype=float)
    margin = d - s
    with np.errstate(invalid="ignore"):
        holds = ~(margin < -rtol * np.abs(d) - 1e-300)
    return margin, holds


def provably_wrong_mask(shuffle_lower, poisson_upper):
    """True where the shuffle lower bound exceeds the Poisson upper bound (NaN: False).

    There δ_S ≥ shuffle_lower > poisson_upper ≥ δ_P (or the same with ε), so
    reporting the Poisson guarantee for a shuffled implementation is provably
    wrong (Chua §4.3).
    """
    s = np.asarray(shuffle_lower, dtype=float)
    p = np.asarray(poisson_upper, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(s) & np.isfinite(p) & (_gap(s, p) > 0)


def provably_wrong_intervals(x, shuffle_lower, poisson_upper):
    """:func:`provably_wrong_region` on the grid points where both curves are finite."""
    x = np.asarray(x, dtype=float)
    s = np.asarray(shuffle_lower, dtype=float)
    p = np.asarray(poisson_upper, dtype=float)
    m = np.isfinite(s) & np.isfinite(p)
    if m.sum() < 2:
        return [(float(v), float(v)) for v in x[m & provably_wrong_mask(s, p)]]
    return provably_wrong_region(x[m], s[m], p[m])


def deterministic_vs_poisson_crossings(eps, delta_d, poisson_lower, poisson_upper):
    """ε0 and ε1 of Chua Theorem 4.2 / Conjecture 4.3 from sampled curves.

    Below ε0 deterministic batching is provably worse (δ_D > upper bound ≥
    δ_P): ε0 is where δ_D crosses the upper bound on δ_P.  Above ε1 Poisson is
    provably worse (δ_P ≥ lower bound > δ_D): ε1 is where δ_D crosses the lower
    bound.  ε0 ≤ ε1 and the true crossing lies in [ε0, ε1].  Returns a dict:
    ``eps0``, ``eps1`` (first crossing each; nan if none), ``n_crossings_upper``,
    ``n_crossings_lower``, ``gap = eps1 − eps0``, ``resolution`` (the largest
    grid step) and ``equal_within_resolution`` (one crossing each and
    |ε1 − ε0| ≤ resolution: evidence for Conjecture 4.3, not a proof).
    Grid points with a non-finite value in any curve are dropped.
    """
    x = np.asarray(eps, dtype=float)
    d, lo, up = (np.asarray(a, dtype=float) for a in (delta_d, poisson_lower, poisson_upper))
    m = np.isfinite(x) & np.isfinite(d) & np.isfinite(lo) & np.isfinite(up)
    x, d, lo, up = x[m], d[m], lo[m], up[m]
    c_up = crossover_points(x, d, up)
    c_lo = crossover_points(x, d, lo)
    e0 = float(c_up[0]) if c_up.size else math.nan
    e1 = float(c_lo[0]) if c_lo.size else math.nan
    res = float(np.max(np.diff(x)))
    return {
        "eps0": e0,
        "eps1": e1,
        "n_crossings_upper": int(c_up.size),
        "n_crossings_lower": int(c_lo.size),
        "gap": e1 - e0,
        "resolution": res,
        "equal_within_resolution": bool(c_up.size == 1 and c_lo.size == 1 and abs(e1 - e0) <= res),
    }
