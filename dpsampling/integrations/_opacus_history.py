"""An Opacus accountant's ``history`` as a run: its stretches of one setting, and the certified answer of a history
that changes σ or the sample rate as a run of phases (:mod:`dpsampling.samplers.phases`).

Opacus's accountants keep ``history``, a list of ``(noise_multiplier, sample_rate, steps)``.  Each maximal
contiguous stretch of one ``(σ, q)`` is one :class:`~dpsampling.samplers.phases.Phase`:

* a sampler with a free rate (``spec.batch`` "rate"): ``Phase(sampler, σ, q, steps=n)`` for a stretch of n steps;
* a sampler with one batch per step: a phase is whole epochs of T = 1/q steps (the loader's partition of an epoch
  is drawn once for the epoch, so a setting that changes inside an epoch is not a run of phases: refused, saying
  so); the last stretch may end inside an epoch: accounted as a full epoch for the upper end (running fewer steps
  is a post-processing of running more, so ε can only be smaller) and left out for the lower end.

Composition is commutative, so the order of the phases does not change ε; which samplers a run of phases can hold
is :mod:`dpsampling.samplers.phases`' rule (its refusal names the phase and why).  A history of one stretch is not
answered here: the accountant answers it as before (:func:`dpsampling.samplers.account`, the same answer).
"""

from __future__ import annotations

import math

from dpsampling import samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import steps_of_rate as _one_per_step
from dpsampling.samplers import phases as _phases

from ._inputs import plain

_MEMO: dict = {}


def stretches(history, sampler):
    """The history as maximal contiguous stretches ``(σ, q, steps)`` of one setting ([] if empty); ParameterError
    naming ``noise_multiplier`` for σ ≤ 0 or a rate outside (0, 1]."""
    out = []
    for s, q, n in history:
        s, q, n = float(plain(s)), float(plain(q)), int(plain(n))
        if not (math.isfinite(s) and s > 0) or not (0 < q <= 1):
            raise ParameterError('noise_multiplier', '> 0 (and sample_rate in (0, 1])', (s, q),
                                 message=f"accountant dpsampling_{sampler}: noise_multiplier must be > 0 and "
                                         f"sample_rate in (0, 1] (got {s!r}, {q!r})")
        if out and out[-1][:2] == (s, q):
            out[-1] = (s, q, out[-1][2] + n)
        elif n > 0:
            out.append((s, q, n))
    return out


def words(runs) -> str:
    """'σ = 1.1 for 7050 steps, then σ = 0.9 for 7050 steps' (the rate named where it changes)."""
    rates = {q for _, q, _ in runs}
    parts = [f"σ = {s:g}" + (f", sample_rate = {q:.6g}" if len(rates) > 1 else "") + f" for {n} steps"
             for s, q, n in runs]
    return ", then ".join(parts)


def _refuse_inside_epoch(sampler, runs, i, t, done):
    s, q, n = runs[i]
    raise ParameterError("history", "changes of noise_multiplier or sample_rate at epoch boundaries only",
                         words(runs),
                         message=f"accountant dpsampling_{sampler}: the history ({words(runs)}) changes the noise "
                                 f"multiplier or the sample rate after {done + n} steps, inside an epoch of {t} "
                                 f"steps ({n} steps at σ = {s:g} is {n / t:.4g} epochs): a {sampler} loader draws one "
                                 f"batch per step from a partition of the whole epoch, so a phase of the run is "
                                 f"whole epochs; change noise_multiplier or the batch size only between epochs")


def phase_lists(sampler, runs):
    """(phases for the upper end, phases for the lower end) of the stretches ``runs`` (module docstring)."""
    spec = samplers.get_spec(sampler)
    if spec.batch != "one_per_step":
        ps = [_phases.Phase(sampler, s, q, n) for s, q, n in runs]
        return ps, ps
    up, lo, done = [], [], 0
    for i, (s, q, n) in enumerate(runs):
        t = _one_per_step(q)
        if t is None:
            raise ParameterError("sample_rate", "1/steps for an integer steps", q,
                                 message=f"sample_rate must be 1/steps (steps per epoch) for sampler '{sampler}' "
                                         f"(one batch per step; Opacus sets it to 1/len(data_loader)), got {q!r}")
        if n % t and i < len(runs) - 1:
            _refuse_inside_epoch(sampler, runs, i, t, done)
        done += n
        up.append(_phases.Phase(sampler, s, None, t, -(-n // t)))
        if n // t:
            lo.append(_phases.Phase(sampler, s, None, t, n // t))
    return up, lo


def results(sampler, delta, runs, ask, force=False):
    """(upper result, lower result or None) of a history of several stretches, each an
    :class:`~dpsampling.engine.result.AccountingResult` of :func:`dpsampling.samplers.phases.epsilon` (memoised);
    ``ask`` wraps the call (the accountant's renaming of errors and cost refusals).  A refusal of the phases
    module (a sampler a run of phases cannot hold yet) is raised naming the accountant and the history."""
    up, lo = phase_lists(sampler, runs)

    def answer(ps):
        key = (sampler, tuple(ps), delta, force)
        if key not in _MEMO:
            try:
                _MEMO[key] = ask(_phases.epsilon, ps, delta, force=force)
            except ParameterError as exc:
                raise exc.with_message(f"accountant dpsampling_{sampler}: the history changes the noise multiplier "
                                       f"or the sample rate ({words(runs)}), a run of phases: {exc}") from None
        return _MEMO[key]

    top = answer(up)
    return top, (top if lo == up else (answer(lo) if lo else None))


__all__ = ["phase_lists", "results", "stretches", "words"]
