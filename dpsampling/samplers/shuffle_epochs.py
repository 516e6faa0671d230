"""Deterministic and shuffle batching over E epochs (Chua et al. ICML 2024 and NeurIPS 2024).

``steps`` = T batches per epoch, ``epochs`` = E; each record is in exactly one batch per epoch.

Deterministic (the same partition every epoch; Chua ICML 2024 Prop. 3.1): every record is in E
batches, each a Gaussian query with sensitivity 1, so the run is E compositions of the Gaussian
mechanism = one Gaussian with noise s = σ/√E: δ_D(ε) = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs).  Exact,
independent of T; dominating pair (N(1, s²), N(0, s²)) in both directions.

Shuffle, lower bound (no dominating pair is known).  The pair of Chua ICML 2024 eqs. (1)-(2),
P = MoG(2), Q = MoG(1) per epoch, is the output law of ABLQ_S for one concrete non-adaptive
query method and one adjacent pair, so any post-processing of it gives a valid lower bound:

* ``mode="dynamic"`` (default; a fresh permutation every epoch — Chua et al. NeurIPS 2024,
  the multi-epoch shuffle lower bound): the epochs are independent, so the output law is
  P^⊗E vs Q^⊗E; we post-process each epoch to its max coordinate and compute the optimistic
  PLD of that statistic composed E times (:mod:`dpsampling.max_statistic`).  E = 1 is exactly
  the single-epoch E_C bound (:func:`dpsampling.batching.shuffle_delta_lower`).
* ``mode="persistent"`` (one permutation reused every epoch): the differing record sits in the
  same batch index t in every epoch, so the E noisy answers per batch have the same mean; their
  average is a post-processing with law MoG(·) at noise σ/√E, hence the single-epoch E_C bound
  at σ/√E is a valid lower bound.

Shuffle, upper end: shuffling cannot degrade privacy (Chua ICML 2024 Thm 4.1, proof App. B:
a random permutation before a fixed mechanism), so each epoch is dominated by the Gaussian
N(1, σ²) vs N(0, σ²) and E epochs (adaptive composition of dominated mechanisms) by the Gaussian
at σ/√E — the deterministic value; for persistent shuffling the same argument applies to the
whole run (one permutation, then deterministic E-epoch batching).  Shuffle results therefore
carry ``kind="lower"`` (``value`` is the certified lower bound) with ``upper`` = the deterministic
value: the true ε lies in [lower, upper].  We keep ``kind="lower"`` rather than a new kind
"interval" so that ``value`` always means what ``kind`` says and existing consumers (CSV columns,
Thm 4.1 checks, claims) keep working; the interval is (``lower``, ``upper``).
"""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine import gaussian
from dpsampling.engine.accountant import calibrate_sigma
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice, check_delta, check_epsilon, check_positive, check_steps

from . import _max_statistic as ms

SHUFFLE_MODES = ("dynamic", "persistent")


def _check(sigma, steps, epochs):
    check_positive("sigma", sigma)
    for name, v in (("steps", steps), ("epochs", epochs)):
        if isinstance(v, bool) or np.ndim(v) != 0:
            raise ValueError(f"{name} must be an integer >= 1 (got {v!r})")
        check_steps(v, name=name)
    if np.ndim(sigma) != 0:
        raise ValueError(f"sigma must be a single number > 0 (got {sigma!r})")
    return float(sigma), int(steps), int(epochs)


def _check_bound(bound, allowed, sampler):
    if bound not in allowed:
        raise ValueError(f"bound must be one of {', '.join(allowed)} for sampler '{sampler}' (got {bound!r})")


# --------------------------------------------------------------------------- deterministic


def deterministic_delta(epsilon, *, sigma, steps, epochs=1, bound="exact", **options) -> AccountingResult:
    """δ_D(ε) over E epochs: the analytic Gaussian at σ/√E (exact; T does not enter)."""
    sigma, steps, epochs = _check(sigma, steps, epochs)
    _check_bound(bound, ("exact", "upper", "lower"), "deterministic")
    check_epsilon(epsilon)
    v = float(np.exp(gaussian.log_delta(float(epsilon), sigma / math.sqrt(epochs))))
    return AccountingResult(v, "exact", "analytic", {"epochs": epochs}, v, v)


def deterministic_epsilon(delta, *, sigma, steps, epochs=1, bound="exact", **options) -> AccountingResult:
    """ε_D(δ) over E epochs: the analytic Gaussian at σ/√E (Brent root, tolerance 1e-13)."""
    sigma, steps, epochs = _check(sigma, steps, epochs)
    _check_bound(bound, ("exact", "upper", "lower"), "deterministic")
    check_delta(delta)
    v = float(gaussian.epsilon(float(delta), sigma / math.sqrt(epochs)))
    return AccountingResult(v, "exact", "analytic", {"epochs": epochs}, v, v)


def deterministic_sigma(epsilon, delta, *, steps, epochs=1, **options) -> AccountingResult:
    """Smallest σ with E epochs of deterministic batching (ε, δ)-DP: √E × the analytic-Gaussian σ."""
    _, steps, epochs = _check(1.0, steps, epochs)
    r = calibrate_sigma(epsilon, delta, q=1.0, steps=epochs)  # q = 1: the Gaussian with σ/√E, exactly
    return AccountingResult(r.value, "exact", "analytic", {"epochs": epochs}, r.value, r.value)


# --------------------------------------------------------------------------- shuffle


def _shuffle_lower(quantity, target, sigma, steps, epochs, mode, options):
    check_choice("mode", mode, SHUFFLE_MODES)
    c_grid = options.get("c_grid")
    disc = options.get("discretization", ms.DEFAULT_DISCRETIZATION)
    if mode == "persistent":  # the per-batch average over E epochs: one epoch at σ/√E
        return ms.lower_bound_result(quantity, target, 2.0, 1.0, sigma / math.sqrt(epochs), steps, epochs=1,
                                     c_grid=c_grid)
    return ms.lower_bound_result(quantity, target, 2.0, 1.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                                 discretization=disc)


def _with_upper(res, upper, mode):
    acc = {**res.accuracy, "mode": mode, "upper_method": "deterministic (Chua Thm 4.1)"}
    return AccountingResult(res.value, "lower", res.method, acc, res.lower, upper, res.flags)


def shuffle_delta(epsilon, *, sigma, steps, epochs=1, bound="lower", mode="dynamic", **options) -> AccountingResult:
    """Shuffle batching over E epochs: δ(ε) ∈ [lower, upper] (lower: max statistic; upper: deterministic).

    ``options``: ``c_grid`` (one-epoch thresholds, Chua §4.3), ``discretization`` (PLD Δ, E > 1 dynamic).
    """
    sigma, steps, epochs = _check(sigma, steps, epochs)
    _check_bound(bound, ("lower",), "shuffle")
    res = _shuffle_lower("delta", epsilon, sigma, steps, epochs, mode, options)
    up = deterministic_delta(epsilon, sigma=sigma, steps=steps, epochs=epochs).value
    return _with_upper(res, up, mode)


def shuffle_epsilon(delta, *, sigma, steps, epochs=1, bound="lower", mode="dynamic", **options) -> AccountingResult:
    """Shuffle batching over E epochs: ε(δ) ∈ [lower, upper]; see :func:`shuffle_delta`."""
    sigma, steps, epochs = _check(sigma, steps, epochs)
    _check_bound(bound, ("lower",), "shuffle")
    res = _shuffle_lower("epsilon", delta, sigma, steps, epochs, mode, options)
    up = deterministic_epsilon(delta, sigma=sigma, steps=steps, epochs=epochs).value
    return _with_upper(res, up, mode)


def shuffle_sigma(epsilon, delta, *, steps, epochs=1, mode="dynamic", rel_tol=1e-3, **options) -> AccountingResult:
    """σ bracket for shuffle batching to be (ε, δ)-DP: below ``value`` it provably is not.

    ``value`` = a σ_lo at which the lower bound on ε(δ) still exceeds ε (checked at σ_lo itself);
    since adding noise is post-processing, ε(δ) is non-increasing in σ, so every σ ≤ σ_lo is provably
    insufficient.  ``upper`` = the deterministic σ (sufficient by Chua Thm 4.1).  Bisection on log σ to
    relative width ``rel_tol``.
    """
    check_epsilon(epsilon)
    check_positive("epsilon", epsilon)
    check_delta(delta)
    _, steps, epochs = _check(1.0, steps, epochs)
    up = deterministic_sigma(epsilon, delta, steps=steps, epochs=epochs).value

    def eps_low(s):
        return shuffle_epsilon(delta, sigma=s, steps=steps, epochs=epochs, mode=mode, **options).value

    hi = up  # ε_low(up) ≤ ε_D(up) = ε
    lo = up / 2.0
    while eps_low(lo) <= epsilon:
        lo /= 2.0
        if lo < 1e-6 * up:
            raise ArithmeticError("no σ found at which the shuffle lower bound exceeds the target epsilon")
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if eps_low(mid) > epsilon else (lo, mid)
    acc = {"epochs": epochs, "mode": mode, "rel_tol": rel_tol, "upper_method": "deterministic (Chua Thm 4.1)"}
    return AccountingResult(lo, "lower", "max-statistic bisection", acc, lo, up)


__all__ = ["SHUFFLE_MODES", "deterministic_delta", "deterministic_epsilon", "deterministic_sigma",
           "shuffle_delta", "shuffle_epsilon", "shuffle_sigma"]
