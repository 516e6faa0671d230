"""Poisson subsampling with rate q (each record joins each batch independently with probability q).

Dominating pairs (Zhu et al. 2022 Thm 11; Lebeda et al. 2024 Prop. 9), one step, sensitivity 1:
remove = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)), add = (N(0,σ²), (1-q)N(0,σ²) + qN(1,σ²)); the run is
their T-fold composition, accounted by :mod:`dpsampling.engine.accountant` (dp_accounting PLD/RDP).
Bounds: ``upper`` (pessimistic PLD: connect-the-dots discretisation rounds privacy loss up; RDP is an
upper bound by conversion) and ``lower`` (optimistic PLD rounds it down); ``exact`` at q = 1.
One epoch of Chua et al. (q = 1/T): :func:`dpsampling.papers.chua.poisson_epoch_result`.
"""

from __future__ import annotations

from dpsampling.engine import accountant
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_steps

from ._checks import check_epochs

NAME = "poisson"
BOUNDS = ("upper", "lower")


def _kw(q, steps, epochs, sampler, method, rel_tol, options):
    """The engine's keyword arguments for steps·epochs compositions at rate q (shared with :mod:`.wor`)."""
    check_epochs(epochs, sampler, multi_epoch=True)
    check_steps(steps)
    if q is None:
        raise ValueError(f"q (the sampling rate) is required for sampler '{sampler}'")
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ValueError(f"rel_tol must be in (0, 0.1] (got {rel_tol!r})")
    kw = dict(q=q, total_steps=steps * epochs, method="pld" if method is None else method, rel_tol=rel_tol)
    for k in ("discretization", "finest_discretization"):
        if options.get(k) is not None:
            kw[k] = options.pop(k)
        options.pop(k, None)
    if options:
        raise ValueError(f"{sorted(options)[0]} is not an option of sampler '{sampler}'")
    return kw


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
          rel_tol=None, **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps: :func:`dpsampling.engine.accountant.delta`."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return accountant.delta(epsilon, sigma=sigma, bound=bound, direction=direction, **kw)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
            rel_tol=None, **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps: :func:`dpsampling.engine.accountant.epsilon`."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return accountant.epsilon(delta, sigma=sigma, bound=bound, direction=direction, **kw)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, method=None, direction="add_remove", rel_tol=None,
          **options) -> AccountingResult:
    """Smallest σ (an upper bound on it): :func:`dpsampling.engine.accountant.calibrate_sigma`."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return accountant.calibrate_sigma(epsilon, delta, direction=direction, **kw)
