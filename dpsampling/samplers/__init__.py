"""Batch samplers: one module per sampler, one entry point :func:`account` for all of them.

Each module (``poisson``, ``wor``, ``shuffle``, ``deterministic``, ``balls_and_bins``) states its dominating pair and the
bounds it can give (``BOUNDS``) and answers ``delta(ε)``, ``epsilon(δ)`` and ``sigma(ε, δ)`` (or says
in a ValueError why it cannot).  This layer imports the engine only.
"""

from __future__ import annotations

from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice

from . import balls_and_bins, deterministic, poisson, shuffle, wor

#: every batch sampler, in the order the CLI lists them
SAMPLERS = ("poisson", "wor", "shuffle", "deterministic", "balls_and_bins")
_MODULES = {"poisson": poisson, "wor": wor, "shuffle": shuffle, "deterministic": deterministic,
            "balls_and_bins": balls_and_bins}
QUANTITIES = ("epsilon", "delta", "sigma")


def account(sampler, quantity, target, *, sigma=None, steps, epochs=1, q=None, bound=None, method=None,
            direction="add_remove", **accuracy_options) -> AccountingResult:
    """ε(δ), δ(ε) or σ(ε, δ) of ``steps·epochs`` steps of DP-SGD under ``sampler``.

    ``target`` is δ for ``quantity="epsilon"``, ε for ``"delta"`` and (ε, δ) for ``"sigma"``.
    ``steps`` is the number of steps per epoch, ``epochs`` (integer ≥ 1) the number of epochs.
    ``q`` (sampling rate) is required for poisson/wor; shuffle/deterministic/balls_and_bins have one
    batch per step (q = 1/steps; checked if given).  ``bound=None`` takes the sampler's first bound
    (``BOUNDS[0]``: upper for poisson/wor/balls_and_bins, lower for shuffle, exact for deterministic).

    Per sampler:

    * poisson / wor: steps·epochs steps at q; by default (``method`` None or "interval") the certified
      interval of :mod:`dpsampling.engine.poisson_interval` (value = upper end, kind ``upper``; each end's
      method in ``accuracy["lower_method"]``/``["upper_method"]``; σ: ``lower`` a provably insufficient σ);
      ``method`` pld/rdp/analytic/cf: the accountant's answer, kind = ``bound``.  q = 1: exact.
    * deterministic: exact, the Gaussian at σ/√E (E = 1: today's one-epoch value).
    * shuffle: kind ``lower`` with ``upper`` = the deterministic value (Chua Thm 4.1), i.e. the interval
      [lower, upper]; option ``mode`` "dynamic" (default, fresh permutation each epoch) or "persistent".
      σ: only ``bound="lower"`` (the σ below which ε provably exceeds the target; ``upper`` = deterministic σ).
    * balls_and_bins: ``method`` "pld" (default; certified PLD_accounting bracket, kind = ``bound``
      upper/lower with both ends filled), "montecarlo" (δ only; kind ``estimate`` with its band in
      lower/upper; options n, seed, beta, half_width, max_samples) or "max_statistic" (Chua et al. lower
      bound, kind ``lower``).

    One step per epoch (shuffle, balls_and_bins): exact, the Gaussian at σ/√epochs (:func:`_one_batch_per_epoch`).

    ``accuracy_options``: ``rel_tol``, ``discretization``, ``finest_discretization`` (PLD),
    ``c_grid``/``mode``/``discretization`` (shuffle), ``accuracy``/``loss_discretization``/``tail_truncation``
    (balls_and_bins pld).
    """
    check_choice("sampler", sampler, SAMPLERS)
    check_choice("quantity", quantity, QUANTITIES)
    one = _one_batch_per_epoch(sampler, quantity, target, sigma, steps, epochs, q, bound, method)
    if one is not None:
        return one
    mod = _MODULES[sampler]
    kw = dict(steps=steps, epochs=epochs, q=q, **accuracy_options)
    if sampler != "deterministic":
        kw["direction"] = direction
    if sampler in ("poisson", "wor"):
        kw["method"] = method
    elif sampler == "balls_and_bins":
        kw["method"] = "pld" if method is None else method
    elif method is not None:
        raise ValueError(f"method does not apply to sampler '{sampler}' (got {method!r}); leave it unset")
    if quantity == "sigma":
        eps, dlt = target
        if sampler in ("poisson", "wor"):
            if bound not in (None, "upper"):
                raise ValueError(f"bound must be 'upper' for sigma with sampler '{sampler}' (got {bound!r}): the "
                                 "calibrated σ is sufficient, i.e. an upper bound on the smallest σ")
        else:
            kw["bound"] = bound
        return mod.sigma(eps, dlt, **kw)
    if sampler == "balls_and_bins":
        if kw["method"] == "max_statistic" and bound is None:
            bound = "lower"
        kw["both_ends"] = kw["method"] == "pld"
    return getattr(mod, quantity)(target, sigma=sigma, bound=mod.BOUNDS[0] if bound is None else bound, **kw)


#: method label of the one-batch-per-epoch answers (:func:`_one_batch_per_epoch`)
ONE_BATCH_METHOD = "analytic (one batch per epoch: the Gaussian at σ/√epochs)"


def _one_batch_per_epoch(sampler, quantity, target, sigma, steps, epochs, q, bound, method):
    """shuffle and balls_and_bins with one step per epoch, exactly: the one batch of each epoch is the whole
    dataset (a permutation or a random bin assignment puts every record in it), so each epoch is the Gaussian
    mechanism with sensitivity 1 and the run is the Gaussian at σ/√epochs (:mod:`.deterministic`, closed
    form), kind ``exact``.  None otherwise (and for an explicit non-PLD balls_and_bins method)."""
    if sampler not in ("shuffle", "balls_and_bins") or isinstance(steps, bool) or steps != 1:
        return None
    if sampler == "balls_and_bins" and method not in (None, "pld"):
        return None
    if sampler == "shuffle" and method is not None:
        return None
    from ._checks import check_epochs, check_one_epoch

    check_epochs(epochs, sampler, multi_epoch=True)
    if q is not None:
        check_one_epoch(q, 1, sampler)
    if bound not in (None, "upper", "lower", "exact"):
        raise ValueError(f"bound must be one of upper, lower, exact (got {bound!r})")
    if quantity == "sigma":
        r = deterministic.sigma(*target, steps=1, epochs=epochs)
    else:
        r = getattr(deterministic, quantity)(target, sigma=sigma, steps=1, epochs=epochs)
    return AccountingResult(r.value, "exact", ONE_BATCH_METHOD, r.accuracy, r.value, r.value, r.flags)


__all__ = ["SAMPLERS", "QUANTITIES", "account", "balls_and_bins", "deterministic", "poisson", "shuffle", "wor"]
