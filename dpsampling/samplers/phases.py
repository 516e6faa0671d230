"""A run of several phases: each a sampler at its own σ, rate and length; ε(δ) and δ(ε) of the whole run.

A training run is rarely one setting repeated: σ changes part-way (a schedule, a resumed run), the batch size
changes, or several runs use one dataset.  :class:`Phase` is one stretch of one setting (``sampler``, ``sigma``,
``q``, ``steps`` per epoch, ``epochs``); :func:`epsilon` and :func:`delta` answer the whole sequence as one certified
interval (:mod:`dpsampling.engine.phases`: each phase's dominating pair composed for the upper end, its dominated pair
for the lower end, with the proven rounding bounds).

Samplers (:data:`MECHANISMS`): those whose analysis is the Poisson-subsampled Gaussian: ``poisson`` at σ and ``wor``
at σ/2 (its dominating pair, :mod:`.wor`).  Every phase must hold under one neighbouring relation (``spec.relation``:
poisson add_remove, wor replace_one): a run mixing them is refused naming the first phase that differs (covering
both needs the replace-one analysis of every Poisson phase, not built yet).  Any other sampler is refused naming the
phase.

A run whose phases all have one sampler, σ and q is :func:`dpsampling.samplers.account`'s question over their total
number of steps (the same answer, object for object, as ``dpsampling.epsilon(sampler, ...)``); otherwise equal
settings are merged by the engine (composition is commutative) and the groups composed.  The result is the engine's
:class:`~dpsampling.engine.result.AccountingResult` in the one result model, as ``account``'s (kind ``interval``: value
= the certified upper end, ``lower`` and ``upper`` the certified interval, ``lower_method`` / ``upper_method`` the
method of each end, method ``certified``), carrying the run's relation.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dpsampling.engine import lazy
from dpsampling.engine.errors import ParameterError

from . import poisson, wor

engine_phases = lazy.module("dpsampling.engine.phases")

#: sampler -> the factor its σ is divided by to give the Poisson-subsampled Gaussian it is accounted as
MECHANISMS = {poisson.NAME: 1.0, wor.NAME: wor.SENSITIVITY}


@dataclass(frozen=True)
class Phase:
    """One stretch of a run: ``steps`` per epoch for ``epochs`` epochs of ``sampler`` at noise multiplier ``sigma``
    and sampling rate ``q`` (the keywords of :func:`dpsampling.samplers.account`)."""

    sampler: str
    sigma: float
    q: float
    steps: int
    epochs: int = 1


def _as_phase(i, phase):
    if isinstance(phase, Phase):
        return phase
    why = f"must be a Phase or a dict of its keywords (got {phase!r})"
    if isinstance(phase, dict):
        try:
            return Phase(**phase)
        except TypeError as exc:
            why = f"{exc} (Phase(sampler, sigma, q, steps, epochs=1))"
    raise ParameterError("phases", "a list of Phase (or dicts of its keywords)", phase, message=f"phase {i}: {why}")


def _checked(phases, quantity, target, direction, options):
    """The phases as :class:`Phase`, each checked as :func:`dpsampling.samplers.account` checks a question (its
    error prefixed with the phase), its sampler supported and its relation the first phase's."""
    from dpsampling.engine.validation import check_positive

    from . import _check_question, get_spec

    if isinstance(phases, (Phase, dict)) or not hasattr(phases, "__iter__") or not list(phases):
        raise ParameterError("phases", "a non-empty list of Phase", phases)
    out, relation = [], None
    for i, phase in enumerate(phases):
        p = _as_phase(i, phase)
        try:
            spec = get_spec(p.sampler)
            if p.sampler not in MECHANISMS:
                raise ParameterError("sampler", "one of " + ", ".join(MECHANISMS) + " in a run of phases", p.sampler,
                                     message=f"sampler {p.sampler} is not supported in a run of phases yet (its "
                                             f"analysis is not a Poisson-subsampled Gaussian): one of "
                                             f"{', '.join(MECHANISMS)}")
            _check_question(spec, quantity, target, p.sigma, p.steps, p.epochs, p.q, spec.default_method, None,
                            direction, dict(options))
            check_positive("sigma", p.sigma)
        except ParameterError as exc:
            raise exc.with_message(f"phase {i} ({p.sampler}): {exc}") from None
        if relation is None:
            relation = spec.relation
        elif spec.relation != relation:
            raise ParameterError("phases", f"phases under one neighbouring relation ({relation})", p.sampler,
                                 message=f"phase {i} ({p.sampler}) is analysed under {spec.relation}, phase 0 under "
                                         f"{relation}: a run mixing relations is not covered yet")
        out.append(p)
    return out, relation


def _answer(quantity, phases, target, direction, rel_tol, force):
    options = {} if rel_tol is None else {"rel_tol": rel_tol}
    checked, relation = _checked(phases, quantity, target, direction, options)
    first = checked[0]
    if all((p.sampler, p.sigma, p.q) == (first.sampler, first.sigma, first.q) for p in checked):
        from . import account

        total = sum(int(p.steps) * int(p.epochs) for p in checked)
        return account(first.sampler, quantity, target, sigma=first.sigma, steps=total, epochs=1, q=first.q,
                       direction=direction, force=force, **options)
    from ._phase_cost import check_cost

    check_cost(checked, quantity, target, rel_tol, force)  # each phase within the limits, as account checks one
    mechanisms = [(float(p.sigma) / MECHANISMS[p.sampler], float(p.q), int(p.steps) * int(p.epochs)) for p in checked]
    fn = engine_phases.epsilon if quantity == "epsilon" else engine_phases.delta
    kw = {} if rel_tol is None else {"rel_tol": float(rel_tol)}
    try:
        r = fn(target, mechanisms, direction=direction, **kw)
    except ParameterError as exc:
        raise exc.with_message(f"{exc} (the phases: {_words(checked)})") from None
    from dpsampling.engine.result import settle

    return dataclasses.replace(settle(r, method=poisson.INTERVAL), relation=relation)


def _words(checked):
    return "; ".join(f"{i}: {p.sampler} σ={p.sigma:g} q={p.q:g} {p.steps}×{p.epochs}" for i, p in enumerate(checked))


def epsilon(phases, delta, *, direction="add_remove", rel_tol=None, force=False):
    """ε(δ) of the run of ``phases`` (a list of :class:`Phase`) as a certified interval (module docstring)."""
    return _answer("epsilon", phases, delta, direction, rel_tol, force)


def delta(phases, epsilon, *, direction="add_remove", rel_tol=None, force=False):
    """δ(ε) of the run of ``phases`` (a list of :class:`Phase`) as a certified interval (module docstring)."""
    return _answer("delta", phases, epsilon, direction, rel_tol, force)


__all__ = ["MECHANISMS", "Phase", "delta", "epsilon"]
