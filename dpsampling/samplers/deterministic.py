"""Deterministic batching, one epoch of T batches (Chua et al. 2024, Prop. 3.1).

Dominating pair (add and remove coincide): (N(1, σ²), N(0, σ²)).  Each record is in exactly one
batch, so one epoch is a single Gaussian mechanism with sensitivity 1 and T does not enter; δ_D(ε)
is the analytic Gaussian curve (Balle & Wang 2018, Thm 8), computed in closed form by
:mod:`dpsampling.engine.gaussian`.  Bounds: ``exact`` only (the closed form is the curve itself).
"""

from __future__ import annotations

import numpy as np

from dpsampling.engine import accountant, gaussian
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_delta, check_epsilon, check_positive, scalar_or_array

from ._checks import check_epochs, check_quantity

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



def _one_epoch(sigma, steps, epochs, q, bound):
    from ._checks import check_bound, check_one_epoch

    check_epochs(epochs, NAME)
    if q is not None:
        check_one_epoch(q, steps, NAME)
    check_bound(bound, NAME, ("exact", "upper", "lower"))  # the exact value is both bounds


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """δ_D(ε) of one epoch, exact (T does not enter)."""
    _one_epoch(sigma, steps, epochs, q, bound)
    return deterministic_result("delta", epsilon, sigma)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="exact", **options) -> AccountingResult:
    """ε_D(δ) of one epoch, exact."""
    _one_epoch(sigma, steps, epochs, q, bound)
    return deterministic_result("epsilon", delta, sigma)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, **options) -> AccountingResult:
    """Smallest σ of one epoch, exact (also sufficient for shuffle batching, Chua Thm 4.1)."""
    _one_epoch(1.0, steps, epochs, q, "exact")
    return deterministic_sigma_result(epsilon, delta)
