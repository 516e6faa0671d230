"""Sampling without replacement (WOR): fixed batch size b, sampling rate q = b/n.

Dominating pairs under add/remove neighbours (Lebeda et al. 2024, Prop. 9 part 2 / Thm 10 part 2: datasets
of n and n − 1 records, batch size b fixed, q = b/n): the add and remove curves are exactly those of Poisson
subsampling with sensitivity 2, so this module's native relation is ``add_remove``.  A Gaussian mechanism with
sensitivity 2 and noise σ has the privacy curves of sensitivity 1 and noise σ/2 (the loss depends
on Δ/σ only), so WOR at σ is the Poisson-subsampled Gaussian at σ/2: :func:`delta` and
:func:`epsilon` ask the engine's accountant at σ/:data:`SENSITIVITY`, and :func:`sigma` returns
:data:`SENSITIVITY` × the Poisson σ.  Bounds: as for Poisson (``upper`` pessimistic PLD / RDP,
``lower`` optimistic PLD), since the curves are equal.

Under replace-one (substitution) the per-direction answer is not proven under composition (Lebeda et al. §7: the
directions can be mixed); :mod:`.relations` answers WOR there with one pair dominating both directions (their §8).
"""

from __future__ import annotations

from dpsampling.engine.result import AccountingResult

from . import poisson
from .poisson import _kw

NAME = "wor"
BOUNDS = ("upper", "lower")
#: sensitivity of WOR's dominating pair (Lebeda et al. Prop. 9): its curves are Poisson's at σ/2
SENSITIVITY = 2.0


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
          rel_tol=None, **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps: the Poisson-subsampled Gaussian at σ/2 (Prop. 9), :func:`.poisson.answer`."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return poisson.answer("delta", epsilon, sigma / SENSITIVITY, bound, direction, kw)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
            rel_tol=None, **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps: the Poisson-subsampled Gaussian at σ/2 (Prop. 9), :func:`.poisson.answer`."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return poisson.answer("epsilon", delta, sigma / SENSITIVITY, bound, direction, kw)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, method=None, direction="add_remove", rel_tol=None,
          **options) -> AccountingResult:
    """Smallest σ (an upper bound on it): 2 × the Poisson one (Prop. 9; σ/2 is sufficient for Poisson
    iff σ is for WOR), :func:`.poisson.calibrate`."""
    return poisson.calibrate(epsilon, delta, direction, _kw(q, steps, epochs, NAME, method, rel_tol, options),
                             scale=SENSITIVITY)


def epsilon_epochs(delta, *, sigma, steps, epochs, last_epoch, last, q=None, direction="add_remove", rel_tol=None,
                   **options):
    """ε(δ) after each epoch of ``epochs`` (before ``last_epoch``, whose answer is ``last``) at the default method:
    the Poisson-subsampled Gaussian at σ/2 (Prop. 9), :func:`.poisson.answer_epochs`."""
    kw = _kw(q, steps, 1, NAME, None, rel_tol, options)
    return poisson.answer_epochs(delta, sigma / SENSITIVITY, direction, kw, list(epochs), last)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
def _cost(question):
    """Poisson's cost model at the σ the engine is asked (σ/SENSITIVITY): the loss support grows as 1/σ²."""
    import dataclasses

    if question.quantity == "sigma" or not isinstance(question.sigma, (int, float)):
        return poisson.cost(question)
    return poisson.cost(dataclasses.replace(question, sigma=question.sigma / SENSITIVITY))


SPEC = poisson._spec(NAME, "sampling without replacement: a fixed batch of b = q·n records",
                     "Poisson's add pair at σ/2 (sensitivity 2)", "Poisson's remove pair at σ/2 (sensitivity 2)",
                     delta, epsilon, sigma, relation="add_remove", loader=None, label="WOR",
                     epsilon_epochs=epsilon_epochs, cost=_cost, sensitivity=SENSITIVITY,
                     drawn="sampling without replacement (a fresh batch of B distinct examples each step)")
