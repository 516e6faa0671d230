"""Batch samplers: one module per sampler, one entry point :func:`account` for all of them.

Each module (``poisson``, ``wor``, ``shuffle``, ``deterministic``) states its dominating pair and the
bounds it can give (``BOUNDS``) and answers ``delta(ε)``, ``epsilon(δ)`` and ``sigma(ε, δ)`` (or says
in a ValueError why it cannot).  This layer imports the engine only.
"""

from __future__ import annotations

from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice

from . import deterministic, poisson, shuffle, wor

#: every batch sampler, in the order the CLI lists them
SAMPLERS = ("poisson", "wor", "shuffle", "deterministic")
_MODULES = {"poisson": poisson, "wor": wor, "shuffle": shuffle, "deterministic": deterministic}
QUANTITIES = ("epsilon", "delta", "sigma")


def account(sampler, quantity, target, *, sigma=None, steps, epochs=1, q=None, bound=None, method=None,
            direction="add_remove", **accuracy_options) -> AccountingResult:
    """ε(δ), δ(ε) or σ(ε, δ) of ``steps·epochs`` steps of DP-SGD under ``sampler``.

    ``target`` is δ for ``quantity="epsilon"``, ε for ``"delta"`` and (ε, δ) for ``"sigma"``.
    ``q`` (sampling rate) is required for poisson/wor; shuffle/deterministic have one batch per
    step (q = 1/steps; checked if given).  ``bound=None`` takes the sampler's first bound
    (``BOUNDS[0]``: upper for poisson/wor, lower for shuffle, exact for deterministic).
    ``accuracy_options``: ``rel_tol``, ``discretization``, ``finest_discretization`` (PLD),
    ``c_grid`` (shuffle).
    """
    check_choice("sampler", sampler, SAMPLERS)
    check_choice("quantity", quantity, QUANTITIES)
    mod = _MODULES[sampler]
    kw = dict(steps=steps, epochs=epochs, q=q, **accuracy_options)
    if sampler != "deterministic":
        kw["direction"] = direction
    if sampler in ("poisson", "wor"):
        kw["method"] = method
    if quantity == "sigma":
        eps, dlt = target
        return mod.sigma(eps, dlt, **kw)
    return getattr(mod, quantity)(target, sigma=sigma, bound=mod.BOUNDS[0] if bound is None else bound, **kw)


__all__ = ["SAMPLERS", "QUANTITIES", "account", "deterministic", "poisson", "shuffle", "wor"]
