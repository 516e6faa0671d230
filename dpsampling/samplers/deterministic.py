"""Deterministic batching: the same partition into T batches every epoch, E epochs (Chua et al. 2024, Prop. 3.1).

Dominating pair (add and remove coincide): (N(1, σ²), N(0, σ²)) per epoch.  Each record is in exactly
one batch per epoch, so one epoch is a single Gaussian mechanism with sensitivity 1 and T does not
enter; E epochs are E compositions of it, i.e. one Gaussian mechanism with noise σ/√E (dominating
pair (N(1, σ²/E), N(0, σ²/E))).  δ_D(ε) is the analytic Gaussian curve (Balle & Wang 2018, Thm 8) at
σ/√E, computed in closed form by :mod:`dpsampling.engine.gaussian`.  Bounds: ``exact`` only (the
closed form is the curve itself, so it is both an upper and a lower bound).
"""

from __future__ import annotations

import numpy as np

from dpsampling.engine import lazy
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_delta, check_epsilon, check_positive, scalar_or_array

from ._checks import check_epochs, check_quantity

accountant, gaussian = (lazy.module(f"dpsampling.engine.{m}") for m in ("accountant", "gaussian"))  # on first use

NAME = "deterministic"
#: the closed form is the curve itself
BOUNDS = ("exact",)


def deterministic_log_delta(epsilon, sigma):
    """log δ_D(ε) (Chua Prop. 3.1), vectorised over ``epsilon``; see :func:`deterministic_delta`."""
    check_epsilon(epsilon)
    check_positive("sigma", sigma)
    out = np.asarray(gaussian.log_delta(np.asarray(epsilon, dtype=float), float(sigma)), dtype=float)
    return scalar_or_array(out, epsilon)



def deterministic_delta(epsilon, sigma):
    """δ_D(ε) for deterministic batching (Chua Prop. 3.1 = Balle & Wang 2018, Thm 8).

        δ_D(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)),

    the analytic Gaussian mechanism with sensitivity 1 (the dominating pair is
    (N(1, σ²), N(0, σ²)); each record is in exactly one batch, so T does not
    enter).  Evaluated in log space (:func:`dpsampling.engine.gaussian.log_delta`:
    log Φ(a) + log1mexp(ε + log Φ(b) − log Φ(a))), so values far below 1e-16
    keep their digits.  Vectorised over ``epsilon`` (array in, array out).
    """
    return scalar_or_array(np.exp(deterministic_log_delta(epsilon, sigma)), epsilon)



def deterministic_epsilon(delta, sigma):
    """ε_D(δ): the smallest ε ≥ 0 with δ_D(ε) ≤ δ (Chua Prop. 3.1), by root finding.

    Brent's method on log δ_D(ε) − log δ (monotone decreasing in ε), tolerance
    1e-13.  Vectorised over ``delta`` by a loop (each root is ~30 evaluations).
    """
    check_delta(delta)
    check_positive("sigma", sigma)
    d = np.asarray(delta, dtype=float)
    out = np.array([gaussian.epsilon(float(x), float(sigma)) for x in d.ravel()], dtype=float).reshape(d.shape)
    return scalar_or_array(out, delta)



def deterministic_result(quantity, target, sigma):
    """ε_D(δ) (``quantity="epsilon"``, target δ) or δ_D(ε) (``"delta"``, target ε) as an exact result.

    Chua Prop. 3.1: the analytic Gaussian curve with sensitivity 1, independent
    of T; ``kind="exact"``, ``method="analytic"``.
    """
    target = check_quantity(quantity, target)
    check_positive("sigma", sigma)
    f = deterministic_epsilon if quantity == "epsilon" else deterministic_delta
    v = float(f(target, float(sigma)))
    return AccountingResult(v, "exact", "analytic", {}, v, v)



def deterministic_sigma_result(epsilon, delta):
    """Smallest σ with deterministic batching (ε, δ)-DP (one epoch), exact.

    One epoch of deterministic batching is a single Gaussian mechanism with
    sensitivity 1 (Chua Prop. 3.1), so this is the analytic-Gaussian
    calibration (:func:`dpsampling.engine.accountant.calibrate_sigma` with q = 1,
    T = 1).  By Theorem 4.1 this σ is also sufficient for shuffle batching.
    """
    return accountant.calibrate_sigma(epsilon, delta, q=1.0, steps=1)



def _check_run(steps, epochs, q, bound):
    from ._checks import check_bound, check_one_epoch

    epochs = check_epochs(epochs, NAME, multi_epoch=True)
    if q is not None:
        check_one_epoch(q, steps, NAME)
    check_bound(bound, NAME, ("exact", "upper", "lower"))  # the exact value is both bounds
    return epochs


def _at_epochs(res, epochs):
    if epochs == 1:
        return res  # today's single-epoch result, unchanged
    return AccountingResult(res.value, res.kind, res.method, {**res.accuracy, "epochs": epochs}, res.lower,
                            res.upper, res.flags)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """δ_D(ε) of E epochs, exact: the analytic Gaussian at σ/√E (T does not enter)."""
    epochs = _check_run(steps, epochs, q, bound)
    check_positive("sigma", sigma)
    return _at_epochs(deterministic_result("delta", epsilon, float(sigma) / np.sqrt(epochs)), epochs)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """ε_D(δ) of E epochs, exact: the analytic Gaussian at σ/√E."""
    epochs = _check_run(steps, epochs, q, bound)
    check_positive("sigma", sigma)
    return _at_epochs(deterministic_result("epsilon", delta, float(sigma) / np.sqrt(epochs)), epochs)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, **options) -> AccountingResult:
    """Smallest σ of E epochs, exact: √E × the one-epoch σ (the Gaussian at σ/√E); by Chua Thm 4.1 also
    sufficient for shuffle batching."""
    epochs = _check_run(steps, epochs, q, "exact" if bound is None else bound)
    r = deterministic_sigma_result(epsilon, delta)
    if epochs == 1:
        return r
    v = float(np.sqrt(epochs)) * r.value
    return AccountingResult(v, r.kind, r.method, {**r.accuracy, "epochs": epochs}, v, v, r.flags)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
def _cost(question):
    from .spec import Cost

    return Cost(0.05)  # closed form


def _spec():
    from .spec import SamplerSpec

    return SamplerSpec(
        name=NAME, summary="fixed batches: the same partition into steps batches every epoch (exact)",
        pair_add="(N(0,σ²), N(1,σ²)) per epoch (the record's one batch), E epochs: N(0,σ²/E) vs N(1,σ²/E)",
        pair_remove="(N(1,σ²), N(0,σ²)) per epoch, E epochs: N(1,σ²/E) vs N(0,σ²/E)", batch="one_per_step",
        bounds={None: ("exact",)}, sigma_bounds=("exact", "upper", "lower"), methods=(), options=(),
        audit_kind="exact", cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma,
        directions=("add_remove", "add", "remove"))


SPEC = _spec()
