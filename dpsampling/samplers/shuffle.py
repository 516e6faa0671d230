"""Shuffle batching: T batches per epoch from a random permutation, E epochs (Chua et al. ICML 2024, NeurIPS 2024).

Dominating pair: none is known (add or remove).  Per epoch we use the pair of Chua ICML 2024 eqs. (1)-(2),
P_S = MoG(2), Q_S = MoG(1) (below), the exact output law on one concrete query method and adjacent pair.

Bounds, and why each is one:

* ``lower`` (``value``): any post-processing of that pair gives δ_S(ε) ≥ P(S) − e^ε Q(S) for every event S.
  E = 1: the sets E_C = {max_t w_t ≥ C} (Chua §4.3).  E > 1, ``mode="dynamic"`` (a fresh permutation
  every epoch): the epochs are independent, so the output is P^⊗E vs Q^⊗E; each epoch reduced to its max
  coordinate, the optimistic (rounded-down) PLD of that statistic composed E times
  (:mod:`._max_statistic`) is a lower bound by the data-processing inequality.  ``mode="persistent"`` (one
  permutation reused every epoch): the differing record sits in the same batch index every epoch, so
  averaging the E answers of each batch (post-processing) gives one epoch at σ/√E: the E_C bound at σ/√E.
* ``upper`` (the interval's other end): shuffling a fixed partition before the mechanism cannot degrade
  privacy (Chua Thm 4.1), so shuffle is dominated by deterministic batching, and E epochs by the Gaussian
  at σ/√E (:mod:`.deterministic`).  Results carry ``kind="lower"``, ``lower`` = ``value``, ``upper`` =
  the deterministic value: the true ε (δ) lies in [lower, upper].
* σ: only ``bound="lower"`` — the σ below which ε provably exceeds the target (``upper`` = the
  deterministic σ, sufficient).

The one-epoch setting of Chua et al. shared by the samplers:

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

from dpsampling.engine import lazy
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_delta, check_epsilon, check_positive, scalar_or_array

from ._checks import check_epochs, check_quantity, check_sigma_steps
from . import _max_statistic as ms
from . import deterministic
from ._max_statistic import DEFAULT_C_GRID, _check_c_grid, _log1m_pow, _log_neg_log_ndtr

log_ndtr = lazy.function("scipy.special", "log_ndtr")  # heavy modules load on first use
log1mexp = lazy.function("dpsampling.engine.numerics", "log1mexp")

NAME = "shuffle"
#: the E_C sets give a lower bound only (no dominating pair is known for shuffling)
BOUNDS = ("lower",)

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


# --------------------------------------------------------------------------- E epochs (Chua et al. NeurIPS 2024)

#: dynamic = a fresh permutation every epoch (default); persistent = one permutation reused every epoch
SHUFFLE_MODES = ("dynamic", "persistent")
#: Method label of the E-epoch dynamic lower bound (optimistic PLD of the per-epoch max statistic).
PLD_METHOD = ms.PLD_METHOD
_UPPER_METHOD = "deterministic (Chua Thm 4.1)"


def _check_run(sigma, steps, epochs, q, bound, direction, mode):
    from ._checks import check_bound, check_one_epoch

    epochs = check_epochs(epochs, NAME, multi_epoch=True)
    if q is not None:
        check_one_epoch(q, steps, NAME)
    if direction != "add_remove":
        raise ParameterError("direction", "add_remove for sampler 'shuffle'", direction,
                             message=f"direction must be add_remove for sampler 'shuffle' (the E_C bound is for the "
                                     f"pair of Chua eqs. (1)-(2)) (got {direction!r})")
    check_bound(bound, NAME, BOUNDS)
    if mode not in SHUFFLE_MODES:
        raise ParameterError("mode", f"one of {', '.join(SHUFFLE_MODES)}", mode)
    if sigma is not None:
        sigma, steps = check_sigma_steps(sigma, steps)
    return sigma, int(steps), epochs


def _lower(quantity, target, sigma, steps, epochs, mode, c_grid, discretization):
    """The lower bound on ε(δ) / δ(ε) of E epochs (``upper`` filled by the caller).

    E = 1 (either mode): today's single-epoch E_C value (:func:`shuffle_result`), bit for bit.
    persistent, E > 1: the same differing record sits in the same batch index in every epoch, so the
    E noisy answers of each batch have the same mean and their average (a post-processing) is one epoch
    of the pair (1)-(2) at σ/√E; the E_C bound at σ/√E is therefore a lower bound.
    dynamic, E > 1: the epochs use independent permutations, so the output law is P^⊗E vs Q^⊗E;
    each epoch is post-processed to its max coordinate and the optimistic (rounded-down) PLD of that
    statistic is composed E times (:mod:`._max_statistic`), a lower bound by the data-processing inequality.
    """
    if epochs == 1:
        return shuffle_result(quantity, target, sigma, steps, c_grid)
    if mode == "persistent":
        r = shuffle_result(quantity, target, sigma / math.sqrt(epochs), steps, c_grid)
        acc = {**r.accuracy, "epochs": epochs, "mode": mode, "upper_method": _UPPER_METHOD}
        return AccountingResult(r.value, "lower", r.method, acc, r.lower, None, r.flags)
    r = ms.lower_bound_result(quantity, target, 2.0, 1.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                              discretization=discretization)
    acc = {**r.accuracy, "mode": mode, "upper_method": _UPPER_METHOD}
    return AccountingResult(r.value, "lower", r.method, acc, r.lower, None, r.flags)


def _with_upper(res, upper):
    """The interval [lower, upper]: ``upper`` = the deterministic value (Chua Thm 4.1: shuffling a fixed
    partition before a mechanism cannot degrade privacy, so shuffle is dominated by deterministic batching,
    for one epoch and — epochs composing adaptively — for E)."""
    return AccountingResult(res.value, "lower", res.method, res.accuracy, res.lower, upper, res.flags)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
          mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """δ_S(ε) of E epochs ∈ [lower, upper]: ``value`` = lower (E_C sets / max-statistic PLD), ``upper`` =
    the deterministic δ (Chua Thm 4.1).  ``mode``: dynamic (fresh permutation per epoch) or persistent."""
    sigma, steps, epochs = _check_run(sigma, steps, epochs, q, bound, direction, mode)
    res = _lower("delta", epsilon, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.delta(epsilon, sigma=sigma, steps=steps, epochs=epochs).value)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
            mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """ε_S(δ) of E epochs ∈ [lower, upper]; see :func:`delta`."""
    sigma, steps, epochs = _check_run(sigma, steps, epochs, q, bound, direction, mode)
    res = _lower("epsilon", delta, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.epsilon(delta, sigma=sigma, steps=steps, epochs=epochs).value)


def _eps_lower(delta, sigma, steps, epochs, mode, options):
    return epsilon_fn(delta, sigma=sigma, steps=steps, epochs=epochs, mode=mode, **options).value


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, direction="add_remove", mode="dynamic",
          rel_tol=1e-3, **options) -> AccountingResult:
    """The σ below which shuffle batching is provably not (ε, δ)-DP (``bound="lower"`` only).

    ``value`` = σ_lo at which the lower bound on ε(δ) still exceeds ε (checked at σ_lo itself); since
    adding noise is post-processing, ε(δ) is non-increasing in σ, so every σ ≤ σ_lo is provably
    insufficient (kind ``lower``).  ``upper`` = the deterministic σ, sufficient by Chua Thm 4.1.
    Bisection on log σ to relative width ``rel_tol``.  Without ``bound="lower"`` this raises: a lower
    bound on ε cannot certify a σ.
    """
    if bound != "lower":
        raise ParameterError("bound", "'lower' for sigma with sampler 'shuffle'", bound, message=
                             f"bound must be 'lower' for sigma with sampler 'shuffle' (got {bound!r}): the E_C sets give "
                         "only a lower bound on ε, hence only the σ below which ε is provably larger than the "
                         "target; ask for bound 'lower' for that, or use sampler deterministic, whose σ suffices "
                         "for shuffling (Chua Thm 4.1)")
    _, steps, epochs = _check_run(None, steps, epochs, q, "lower", direction, mode)
    check_positive("epsilon", epsilon)
    check_delta(delta)
    check_positive("rel_tol", rel_tol)
    up = deterministic.sigma(epsilon, delta, steps=steps, epochs=epochs).value

    hi, lo = up, up / 2.0  # ε_low(up) ≤ ε_D(up) = ε
    while _eps_lower(delta, lo, steps, epochs, mode, options) <= epsilon:
        lo /= 2.0
        if lo < 1e-6 * up:
            raise ArithmeticError("no σ found at which the shuffle lower bound exceeds the target epsilon")
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _eps_lower(delta, mid, steps, epochs, mode, options) > epsilon else (lo, mid)
    acc = {"epochs": epochs, "mode": mode, "rel_tol": rel_tol, "upper_method": _UPPER_METHOD}
    return AccountingResult(lo, "lower", "max-statistic bisection", acc, lo, up)


epsilon_fn = epsilon


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
def _cost(question):
    """Predicted seconds: one epoch is closed form over the C grid; E > 1 dynamic epochs compose the max-statistic
    PLD (measured by bench/bench_cost_model.py); σ is a bisection of about 15 lower bounds."""
    from .spec import Cost

    one = 0.3 if question.epochs == 1 or question.options.get("mode") == "persistent" else 1.5
    return Cost(one * (15 if question.quantity == "sigma" else 1))


def _spec():
    from .spec import Option, SamplerSpec

    return SamplerSpec(
        name=NAME, summary="shuffling: a random permutation cut into steps batches (lower bound; the deterministic "
                           "value is the upper end, Chua Thm 4.1)",
        pair_add="none known (lower bound from the pair MoG(2) vs MoG(1), Chua ICML 2024 eqs. (1)-(2))",
        pair_remove="none known (same pair)", batch="one_per_step",
        bounds={None: ("lower",)}, sigma_bounds=("lower",), methods=(),
        options=(Option("mode", "shuffle-mode", str, "a fresh permutation every epoch (dynamic, default) or one "
                        "reused (persistent)", default="dynamic", choices=SHUFFLE_MODES),
                 Option("c_grid", "c-grid", object, "threshold grid of the E_C events", cli=False),
                 Option("discretization", "discretization", float, "max-statistic PLD step", low=0.0,
                        low_open=True, cli=False),
                 Option("rel_tol", "rel-tol", float, "σ bisection relative width", low=0.0, low_open=True,
                        quantities=("sigma",), cli=False)),
        audit_kind="interval", cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma,
        audit_options={"sigma": {"bound": "lower"}})


SPEC = _spec()
