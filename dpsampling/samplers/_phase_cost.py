"""The cost check of a run of phases: each phase's question within the time and memory limits.

A run costs at least each of its phases (the engine composes every phase's pmf at the run's discretisation), so each
phase's question at its σ, q, steps and epochs is checked by its sampler's cost model (:func:`.spec.check_cost`, as
:func:`dpsampling.samplers.account` checks one setting); a phase beyond the limits is refused naming it and its σ.
"""

from __future__ import annotations

from dpsampling.engine.errors import ParameterError


def check_cost(run, quantity, target, rel_tol, force, what="") -> None:
    """Raise :class:`.spec.CostError` naming the first phase of ``run`` (Phases) whose ``quantity`` question (epsilon
    or delta at ``target``) its cost model predicts beyond the time limit (unless ``force``) or the memory limit;
    ``what`` is added to the phase's name (e.g. "in the σ calibration of the run")."""
    from . import get_spec
    from .spec import Cost, CostError, Question
    from .spec import check_cost as check_one

    for i, p in enumerate(run):
        try:
            spec = get_spec(p.sampler)
        except ParameterError:
            return  # the run's own check names the phase
        options = dict({} if rel_tol is None else {"rel_tol": rel_tol}, **(getattr(p, "options", None) or {}))
        try:
            check_one(spec, Question(quantity, sigma=float(p.sigma), steps=p.steps, epochs=p.epochs, q=p.q,
                                     target=target, method=spec.default_method, options=options), force=force)
        except CostError as exc:
            raise CostError(f"phase {i} ({p.sampler}) at σ = {float(p.sigma):.4g}{' ' + what if what else ''}",
                            Cost(exc.seconds, exc.why, exc.drivers, exc.bytes), exc.limit) from None


__all__ = ["check_cost"]
