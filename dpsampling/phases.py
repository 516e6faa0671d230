"""A run of several phases: :class:`Phase`, ``epsilon(phases, delta)``, ``delta(phases, epsilon)``
(:mod:`dpsampling.samplers.phases`), ``sigma(phases, epsilon, delta, scale="all" | i)``
(:mod:`dpsampling.samplers.phases_sigma`), ``statement(phases, delta=...)``
(:func:`dpsampling.statements.phases_statement`) and ``audit(phases, delta)``
(:func:`dpsampling.phases_audit.audit_phases`), public here: the functions the command line's ``--phases`` asks."""

from dpsampling.phases_audit import audit_phases as audit
from dpsampling.samplers.phases import Phase, delta, epsilon
from dpsampling.samplers.phases_sigma import sigma
from dpsampling.statements import phases_statement as statement

__all__ = ["Phase", "audit", "delta", "epsilon", "sigma", "statement"]
