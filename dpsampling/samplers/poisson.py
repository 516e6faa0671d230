"""Poisson subsampling with rate q (each record joins each batch independently with probability q).

Dominating pairs (Zhu et al. 2022 Thm 11; Lebeda et al. 2024 Prop. 9), one step, sensitivity 1:
remove = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)), add = (N(0,σ²), (1-q)N(0,σ²) + qN(1,σ²)); the run is
their T-fold composition, accounted by :mod:`dpsampling.engine.accountant` (dp_accounting PLD/RDP).
Bounds: ``upper`` (pessimistic PLD: connect-the-dots discretisation rounds privacy loss up; RDP is an
upper bound by conversion) and ``lower`` (optimistic PLD rounds it down); ``exact`` at q = 1.
One epoch of Chua et al. (q = 1/T): :func:`poisson_epoch_result`.
"""

from __future__ import annotations

import dataclasses

from dpsampling.engine import accountant, poisson_interval
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice

from ._checks import check_epochs, check_quantity, check_sigma_steps

NAME = "poisson"
BOUNDS = ("upper", "lower")


def poisson_epoch_epsilon(delta, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """ε_P(δ) for one epoch of Poisson batching: q = 1/T, T steps (Chua §3, footnote 3).

    A thin wrapper: ``dpsampling.engine.accountant.epsilon(delta, sigma=σ, q=1/T,
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

    PLD values below RELIABLE_DELTA_FLOOR (1e-10) are not reliable upper
    bounds (the accountant flags them ``delta_below_1e-10`` and reports the φ accountant's certified value).
    """
    r = poisson_epoch_result("delta", epsilon, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)



def poisson_epoch_result(quantity, target, sigma, steps, *, method="pld", bound="upper", rel_tol=None,
                         discretization=None, finest_discretization=None):
    """ε_P(δ) or δ_P(ε) for one epoch of Poisson batching (q = 1/T, Chua §3 footnote 3), as a result.

    Delegates to :func:`dpsampling.engine.accountant.epsilon` / ``delta`` (dp_accounting
    PLD or RDP, max over add and remove).  PLD: a fixed ``discretization`` is
    used as is; ``None`` refines it to ``rel_tol``.  ``finest_discretization``
    (PLD, automatic only) stops the refinement there (flag ``not_converged``
    with the estimated error if ``rel_tol`` is not reached); only the
    pessimistic PLD is refined, the optimistic one (``lower``) is evaluated at
    the final discretisation, as in the accountant.
    """
    target = check_quantity(quantity, target)
    _, steps = check_sigma_steps(sigma, steps)
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



#: the default method: the certified interval of :mod:`dpsampling.engine.poisson_interval`
INTERVAL = "interval"


def _kw(q, steps, epochs, sampler, method, rel_tol, options):
    check_epochs(epochs, sampler, multi_epoch=True)
    if q is None:
        raise ValueError(f"q (the sampling rate) is required for sampler '{sampler}'")
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ValueError(f"rel_tol must be in (0, 0.1] (got {rel_tol!r})")
    method = INTERVAL if method is None else method
    check_choice("method", method, (INTERVAL, "pld", "rdp", "analytic", "cf"))
    kw = dict(q=q, steps=steps * epochs, sampler=sampler, method=method, rel_tol=rel_tol)
    for k in ("discretization", "finest_discretization"):
        if options.get(k) is not None:
            kw[k] = options.pop(k)
        options.pop(k, None)
    if options:
        raise ValueError(f"{sorted(options)[0]} is not an option of sampler '{sampler}'")
    return kw


def _interval(fn, target, sigma, bound, direction, kw):
    """The certified interval (default method): ``poisson_interval.epsilon``/``delta`` at the Poisson σ
    (σ/2 for WOR, Lebeda Prop. 9); ``bound="lower"`` reports its lower end as the value (kind ``lower``)."""
    accountant._check_common(sigma, kw["q"], kw["steps"], kw["sampler"], direction, "pld", bound)  # noqa: SLF001
    s = accountant._poisson_sigma(float(sigma), kw["sampler"])  # noqa: SLF001
    extra = {k: kw[k] for k in ("discretization", "finest_discretization") if k in kw}
    r = fn(target, sigma=s, q=float(kw["q"]), steps=int(kw["steps"]), direction=direction, rel_tol=kw["rel_tol"],
           **extra)
    if bound == "lower" and r.kind == "upper":
        return dataclasses.replace(r, value=r.lower, kind="lower")
    return r


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
          rel_tol=None, _sampler=NAME, **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps: by default the certified interval of
    :func:`dpsampling.engine.poisson_interval.delta` (value = its upper end); ``method`` pld/rdp/analytic/cf:
    :func:`dpsampling.engine.accountant.delta`."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    if kw["method"] == INTERVAL:
        check_quantity("delta", epsilon)
        return _interval(poisson_interval.delta, epsilon, sigma, bound, direction, kw)
    return accountant.delta(epsilon, sigma=sigma, bound=bound, direction=direction, **kw)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
            rel_tol=None, _sampler=NAME, **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps: by default the certified interval of
    :func:`dpsampling.engine.poisson_interval.epsilon` (value = its upper end); ``method`` pld/rdp/analytic/cf:
    :func:`dpsampling.engine.accountant.epsilon`."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    if kw["method"] == INTERVAL:
        check_quantity("epsilon", delta)
        return _interval(poisson_interval.epsilon, delta, sigma, bound, direction, kw)
    return accountant.epsilon(delta, sigma=sigma, bound=bound, direction=direction, **kw)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, method=None, direction="add_remove", rel_tol=None,
          _sampler=NAME, **options) -> AccountingResult:
    """Smallest σ: :func:`dpsampling.engine.accountant.calibrate_sigma` gives a sufficient σ (``value`` =
    ``upper``); by default (method interval) ``lower`` is a provably insufficient σ
    (:func:`dpsampling.engine.poisson_interval.insufficient_sigma`, the dominated PLD at the calibration's
    discretisation), so the smallest sufficient σ lies in (lower, upper]."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    interval = kw["method"] == INTERVAL
    if interval:
        kw["method"] = "pld"
    r = accountant.calibrate_sigma(epsilon, delta, direction=direction, **kw)
    if not interval or r.kind != "upper" or r.method != "pld":
        return r
    scale = r.value / accountant._poisson_sigma(r.value, _sampler)  # noqa: SLF001 - 2 for WOR (Prop. 9)
    low = poisson_interval.insufficient_sigma(epsilon, delta, q=float(kw["q"]), steps=int(kw["steps"]),
                                              sigma_sufficient=r.value / scale,
                                              discretization=r.accuracy["discretization"], direction=direction,
                                              rel_tol=kw["rel_tol"])
    acc = dict(r.accuracy, lower_method=poisson_interval.LOWER_PLD + " (provably insufficient σ)",
               upper_method=poisson_interval.UPPER_PLD + " (sufficient σ)")
    return dataclasses.replace(r, lower=low * scale, accuracy=acc,
                               method=f"{poisson_interval.LOWER_PLD} / {poisson_interval.UPPER_PLD}")
