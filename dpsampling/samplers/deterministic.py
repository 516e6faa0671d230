"""Deterministic batching: the same partition into T batches every epoch, E epochs (Chua et al. 2024, Prop. 3.1).

Dominating pair (add and remove coincide): (N(1, σ²), N(0, σ²)) per epoch.  Each record is in exactly
one batch per epoch, so one epoch is a single Gaussian mechanism with sensitivity 1 and T does not
enter; E epochs are E compositions of it, i.e. one Gaussian mechanism with noise σ/√E (dominating
pair (N(1, σ²/E), N(0, σ²/E))).  δ_D(ε) is the analytic Gaussian curve (Balle & Wang 2018, Thm 8) at
σ/√E, computed in closed form by :mod:`dpsampling.engine.gaussian`.  Bounds: ``exact`` only (the
closed form is the curve itself, so it is both an upper and a lower bound).
The paper's vectorised δ_D, ε_D (Chua Prop. 3.1) are :func:`dpsampling.papers.chua.deterministic_delta` etc.
"""

from __future__ import annotations

import numpy as np

from dpsampling.engine import lazy
from dpsampling.engine.result import AccountingResult

accountant, gaussian = (lazy.module(f"dpsampling.engine.{m}") for m in ("accountant", "gaussian"))  # on first use

NAME = "deterministic"
#: the closed form is the curve itself
BOUNDS = ("exact",)


def _exact(quantity, target, sigma):
    """ε(δ) (``quantity="epsilon"``, target δ) or δ(ε) (``"delta"``, target ε) of the analytic Gaussian with
    sensitivity 1 at noise σ, as an exact result (δ in log space, ε by root finding: :mod:`.gaussian`)."""
    target, s = float(target), float(sigma)
    if quantity == "epsilon":
        v = float(gaussian.epsilon(target, s))
    else:
        v = float(np.exp(np.asarray(gaussian.log_delta(np.asarray(target, dtype=float), s), dtype=float)))
    return AccountingResult(v, "exact", "analytic", {}, v, v)


def _at_epochs(res, epochs):
    if epochs == 1:
        return res  # today's single-epoch result, unchanged
    return AccountingResult(res.value, res.kind, res.method, {**res.accuracy, "epochs": epochs}, res.lower,
                            res.upper, res.flags)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """δ_D(ε) of E epochs, exact: the analytic Gaussian at σ/√E (T does not enter)."""
    return _at_epochs(_exact("delta", epsilon, float(sigma) / np.sqrt(epochs)), epochs)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """ε_D(δ) of E epochs, exact: the analytic Gaussian at σ/√E."""
    return _at_epochs(_exact("epsilon", delta, float(sigma) / np.sqrt(epochs)), epochs)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, **options) -> AccountingResult:
    """Smallest σ of E epochs, exact: √E × the one-epoch σ (the Gaussian at σ/√E); by Chua Thm 4.1 also
    sufficient for shuffle batching."""
    r = accountant.calibrate_sigma(epsilon, delta, q=1.0, total_steps=1)  # one epoch: one Gaussian mechanism
    if epochs == 1:
        return r
    v = float(np.sqrt(epochs)) * r.value
    return AccountingResult(v, r.kind, r.method, {**r.accuracy, "epochs": epochs}, v, v, r.flags)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
_ANSWER = {"epsilon": epsilon, "delta": delta, "sigma": sigma}

#: method label of a one-batch-per-step sampler's run with one step per epoch (:func:`one_batch_per_epoch`)
ONE_BATCH_METHOD = "analytic (one batch per epoch: the Gaussian at σ/√epochs)"


def one_batch_per_epoch(quantity, target, sigma, epochs) -> AccountingResult:
    """ε(δ), δ(ε) or σ(ε, δ) (``target`` = (ε, δ)) of a sampler with one batch per step (shuffle, balls_and_bins)
    run with one step per epoch, exactly, kind ``exact``: the one batch of each epoch is the whole dataset (a
    permutation or a random bin assignment puts every record in it), so each epoch is the Gaussian mechanism with
    sensitivity 1 and the run is the Gaussian at σ/√epochs, this module's closed form."""
    answer = _ANSWER[quantity]  # (the parameter sigma hides this module's function of that name)
    r = answer(*target, steps=1, epochs=epochs) if quantity == "sigma" else answer(target, sigma=sigma, steps=1,
                                                                                   epochs=epochs)
    return AccountingResult(r.value, "exact", ONE_BATCH_METHOD, r.accuracy, r.value, r.value, r.flags)


def _cost(question):
    from .spec import Cost

    return Cost(0.3)  # closed form: loading scipy's special functions (~0.3 CPU-s, bench_sidedness) is the cost


def _spec():
    from .spec import SamplerSpec

    return SamplerSpec(
        name=NAME, summary="fixed batches: the same partition into steps batches every epoch (exact; Chua et al.'s lower "
                           "bound for one permutation reused every epoch equals it, so that run's ε is this one)",
        pair_add="(N(0,σ²), N(1,σ²)) per epoch (the record's one batch), E epochs: N(0,σ²/E) vs N(1,σ²/E)",
        pair_remove="(N(1,σ²), N(0,σ²)) per epoch, E epochs: N(1,σ²/E) vs N(0,σ²/E)", batch="one_per_step",
        bounds={None: ("exact", "upper", "lower")}, sigma_bounds=("exact", "upper", "lower"), methods=(), options=(),
        audit_kind="exact", cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma, relation="zero_out",
        drawn="a fixed order (the same partition into batches every epoch)", loader="fixed_order",
        role="once_per_epoch", label="fixed batches", reference="gaussian_epsilon",
        directions=("add_remove", "add", "remove"))


SPEC = _spec()
