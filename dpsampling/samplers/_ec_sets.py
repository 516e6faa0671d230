"""The threshold sets E_C of Chua et al. (ICML 2024, §4.3, eq. (3)): the one-epoch lower bound of shuffle
batching, used by :mod:`.shuffle` (and re-exported under the paper's names by :mod:`dpsampling.papers.chua`).

Under the pair P_S = Σ_t N(2e_t, σ²I)/T, Q_S = Σ_t N(e_t, σ²I)/T of Chua eqs. (1)-(2) (the exact output law
on one concrete query method and adjacent pair), any event gives δ_S(ε) ≥ P_S(E) − e^ε Q_S(E); we use
E_C = {w : max_t w_t ≥ C} on a grid 𝒞 of thresholds.

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
from dpsampling.engine.errors import ParameterError
from dpsampling.engine import lazy
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_delta, check_epsilon, check_finite_list, scalar_or_array

from . import _max_statistic as ms
from ._checks import check_quantity, check_sigma_steps
from ._max_statistic import DEFAULT_C_GRID, _check_c_grid, _log1m_pow, _log_neg_log_ndtr

# scipy and the engine's numerics load on first use: shuffle.py imports this module, and the command line reads
# the samplers' descriptions without loading scipy (dpsampling.engine.lazy)
log_ndtr = lazy.function("scipy.special", "log_ndtr")
log1mexp = lazy.function("dpsampling.engine.numerics", "log1mexp")

# --------------------------------------------------------------------------- shuffle: the sets E_C (§4.3)


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
    return c, ms.log_sf_max(c, 2.0, sigma, steps, l1m), ms.log_sf_max(c, 1.0, sigma, steps, l1m)


def shuffle_log_delta_lower(epsilon, sigma, steps, c_grid=None, return_argmax=False):
    """log of :func:`shuffle_delta_lower` (−inf where the bound is 0).

    The max over C is :func:`._max_statistic._best_log_hockey` on the event {M ≥ C} (the one
    implementation of the threshold-event bound)."""
    check_epsilon(epsilon)
    c, lp, lq = shuffle_log_pq(sigma, steps, c_grid)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    best, i = ms._best_log_hockey(eps.ravel(), lp, lq)
    arg = np.where(i >= 0, c[np.maximum(i, 0)], np.nan)
    best, arg = best.reshape(eps.shape), arg.reshape(eps.shape)
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
    (to 1e-8 relative) at any ε > 0 we tried; see
    ``tests/samplers/test_shuffle.py::test_reverse_direction_not_larger``.)

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
    best, i = ms._best_epsilon(flat, lp, lq)
    arg = c[i]
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
    """The thresholds 𝒞 of Chua §4.3 from a config value; ParameterError naming ``c_grid`` on bad input.

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
        if set(spec) != {"start", "stop", "step"}:
            raise ParameterError("c_grid", "a list or a mapping with keys start, stop, step", spec,
                                 message=f"c_grid must be a list or a mapping with keys start, stop, step "
                                         f"(missing {sorted({'start', 'stop', 'step'} - set(spec))}, unknown "
                                         f"{sorted(set(spec) - {'start', 'stop', 'step'})})")
        start, stop, step = check_finite_list("c_grid", [spec[k] for k in ("start", "stop", "step")])
        if not (step > 0 and stop >= start):
            raise ParameterError("c_grid", "a mapping with step > 0 and stop >= start", spec)
        return start + step * np.arange(_c_grid_size(math.floor((stop - start) / step + 1e-9) + 1), dtype=float)
    c = check_finite_list("c_grid", spec)  # (a string or a nested list is not a list of numbers)
    _c_grid_size(c.size)
    return _check_c_grid(c)


def _c_grid_size(n):
    if n > MAX_C_GRID_SIZE:
        raise ParameterError("c_grid", f"at most {MAX_C_GRID_SIZE:,} values", n,
                             message=f"c_grid must have at most {MAX_C_GRID_SIZE:,} values (got {n:,})")
    return n


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
