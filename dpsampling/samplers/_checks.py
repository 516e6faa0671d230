"""The samplers' input layer (:func:`dpsampling.samplers.account` checks a question once, from its spec, with the
rules of :mod:`dpsampling.engine.validation`): array-library numbers, the papers' one-epoch targets, σ = 0."""

from __future__ import annotations

import math

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import (as_number, check_choice, check_delta, check_epsilon, check_int,
                                          check_positive, check_rate, check_steps, is_one_over, one_number)

QUANTITIES = ("epsilon", "delta")


def check_sigma_steps(sigma, steps):
    """(σ, steps) of the papers' one-epoch functions: σ one number > 0, steps an integer >= 1."""
    sigma = check_positive("sigma", one_number("sigma", as_number(sigma)))
    return float(sigma), check_int("steps", one_number("steps", as_number(steps)), 1)


def check_quantity(quantity, target):
    """The target of an ε (δ in (0, 1)) or δ (ε >= 0) question of the papers' functions, as one float."""
    check_choice("quantity", quantity, QUANTITIES)
    name = "delta" if quantity == "epsilon" else "epsilon"
    target = one_number(name, as_number(target))
    return float(check_delta(target) if quantity == "epsilon" else check_epsilon(target))


def check_one_epoch(q, steps, sampler):
    """Deterministic, shuffle and balls-and-bins batching have T batches per epoch (one per step): q must be 1/T."""
    q, steps = check_rate(q), check_steps(steps)
    if not is_one_over(q, steps):
        raise ParameterError("q", f"1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}'", q,
                             message=f"q must be 1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}' (one batch "
                                     f"per step, steps batches per epoch) (got q={q!r}, steps={steps!r})")


def as_numbers(sigma, steps, epochs, q, target):
    """The numbers of one question of :func:`dpsampling.samplers.account` as Python numbers when they come from
    an array library (:func:`~dpsampling.engine.validation.as_number`; a σ target (ε, δ) element-wise)."""
    if isinstance(target, (tuple, list)):
        target = type(target)(as_number(t) for t in target)
    else:
        target = as_number(target)
    return as_number(sigma), as_number(steps), as_number(epochs), as_number(q), target


#: the method of a σ = 0 answer (:func:`non_private`)
NON_PRIVATE_METHOD = "sigma = 0 (noiseless sums, closed form)"


def non_private(spec, quantity, target, *, sigma, steps, epochs, q, bound, direction):
    """ε(δ) or δ(ε) of a run without noise (σ = 0, a non-private baseline), exactly (kind ``exact``); None when
    σ is not 0 or the quantity is σ.  With σ = 0 each step releases the exact sum of its batch's clipped
    gradients, so two neighbouring datasets (the record's gradient of norm 1 against it absent or 0, every other
    gradient 0) give disjoint outputs whenever the record is in a batch, and equal outputs otherwise:

    * one batch per step (``spec.batch == "one_per_step"``): the record is in a batch of every epoch, so
      δ(ε) = 1 for every ε and ε(δ) = ∞ for every δ < 1, in every direction;
    * a free rate q (``"rate"``) over T = steps·epochs independent steps, the record is never drawn with
      probability (1-q)^T.  Remove (P = the run with the record): δ(ε) = 1-(1-q)^T for every ε ≥ 0, the mass
      of P off the all-zero output; add: δ(ε) = max(0, 1-e^ε(1-q)^T), the all-zero output's mass under the run
      without the record (1) against e^ε times its mass under the run with it; add_remove is their maximum,
      1-(1-q)^T.  So ε(δ) = ∞ when δ < 1-(1-q)^T and 0 otherwise (add: max(0, log(1-δ) - T·log(1-q))).
      These are the σ → 0 limits of Poisson's dominating pairs, which are tight.  Under replace-one (the two
      records' sums differ whenever drawn) both orders give 1-(1-q)^T; only ``add_remove`` is answered there.

    Any other batch model (a capped rate: truncation may drop the record) is refused with a ParameterError on
    ``sigma``.  The inputs are those :func:`dpsampling.samplers.account` checked."""
    if quantity not in QUANTITIES or sigma != 0:
        return None
    total = steps * epochs
    if spec.batch == "one_per_step":
        drawn = 1.0  # P(the record is in some batch)
        log_missed = -math.inf
    elif spec.batch == "rate":
        log_missed = total * math.log1p(-q) if q < 1 else -math.inf  # log (1-q)^T
        drawn = -math.expm1(log_missed)
        if spec.relation == "replace_one" and direction != "add_remove":
            raise ParameterError("direction", f"add_remove for sampler '{spec.name}' at sigma = 0", direction)
    else:
        raise ParameterError("sigma", f"> 0 for sampler '{spec.name}' (sigma = 0 is answered for samplers with a "
                                      "free rate or one batch per step)", sigma)
    add = direction == "add" and spec.batch == "rate"
    if quantity == "delta":
        value = (1.0 if log_missed == -math.inf else max(0.0, -math.expm1(target + log_missed))) if add else drawn
    elif add:
        value = max(0.0, math.log1p(-target) - log_missed)
    else:
        value = math.inf if target < drawn else 0.0
    accuracy = {"sigma": 0.0, "total_steps": total, "p_drawn": drawn}
    return AccountingResult(value, "exact", NON_PRIVATE_METHOD, accuracy, value, value)
