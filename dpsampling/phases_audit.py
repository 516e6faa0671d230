"""The audit of a run of phases (``dpsampling audit --phases FILE``): the same schedule under every sampler.

:func:`audit_phases` asks, for each sampler, the run whose phases keep their σ, q, steps and epochs but draw their
batches with that sampler: :func:`dpsampling.phases.epsilon` (the one answer of a run), each row in the one result
model with its neighbouring relation.  A sampler the phases do not allow (not supported in a run, a rate it cannot
have, a relation the run cannot mix) is listed as not computed with the library's reason, never answered another
way.  No sampler is named here: the rows are the registry's (:data:`dpsampling.samplers.SAMPLERS`).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple


class Row(NamedTuple):
    """One sampler's row: its answer (an AccountingResult) or, not computed, why."""

    sampler: str
    result: object = None
    why: str | None = None


def audit_phases(phases, delta, *, samplers=None, force=False, rel_tol=None) -> list:
    """[:class:`Row`, …]: ε(δ) of the run of ``phases`` with every phase's sampler replaced by each of ``samplers``
    (names; default all registered), in the registry's order; a sampler the run cannot be asked under is a row with
    ``why``.  Bad input common to every row (δ, the phases' form) raises ParameterError."""
    from dpsampling import samplers as registry
    from dpsampling.engine.errors import ParameterError
    from dpsampling.engine.validation import check_delta

    from .samplers import phases as api

    check_delta(delta)
    names = registry.SAMPLERS if samplers is None else _names(samplers, registry.SAMPLERS)
    run = [p if isinstance(p, api.Phase) else api.Phase(**p) for p in phases]
    if not run:
        raise ParameterError("phases", "a non-empty list of Phase", phases)
    kw = {} if rel_tol is None else {"rel_tol": rel_tol}
    rows = []
    for name in names:
        try:
            r = api.epsilon([dataclasses.replace(p, sampler=name) for p in run], delta, force=force, **kw)
        except ValueError as exc:  # a ParameterError or a cost refusal: this sampler's row says why
            rows.append(Row(name, None, str(exc)))
            continue
        rows.append(Row(name, r))
    return rows


def _names(samplers, known):
    from dpsampling.engine.errors import ParameterError

    chosen = [s.strip() for s in samplers.split(",")] if isinstance(samplers, str) else list(samplers)
    bad = [s for s in chosen if s not in known]
    if bad or not chosen:
        raise ParameterError("samplers", "a comma-separated subset of " + ",".join(known), samplers)
    return tuple(s for s in known if s in chosen)


def records(rows) -> list:
    """The rows as JSON-ready dicts (sampler, then the result's fields; a row not computed: sampler and why)."""
    return [{"sampler": r.sampler, **r.result.as_dict()} if r.result is not None else
            {"sampler": r.sampler, "not_computed": r.why} for r in rows]


__all__ = ["Row", "audit_phases", "records"]
