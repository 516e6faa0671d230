"""Input checks shared by the sampler modules (one message per parameter, as in the engine)."""

from __future__ import annotations

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_delta, check_epsilon, check_positive, check_rate, check_steps

QUANTITIES = ("epsilon", "delta")


def check_sigma_steps(sigma, steps):
    check_positive("sigma", sigma)
    if np.ndim(sigma) != 0:
        raise ParameterError("sigma", "a single number > 0", sigma,
                             message=f"sigma must be a single number > 0 (got an array of shape {np.shape(sigma)})")
    if isinstance(steps, bool) or np.ndim(steps) != 0:
        raise ParameterError("steps", "an integer >= 1", steps)
    check_steps(steps)
    return float(sigma), int(steps)



def check_quantity(quantity, target):
    if quantity not in QUANTITIES:
        raise ParameterError("quantity", f"one of {', '.join(QUANTITIES)}", quantity)
    if np.ndim(target) != 0:
        raise ParameterError('delta' if quantity == 'epsilon' else 'epsilon', "a single number", target)
    (check_delta if quantity == "epsilon" else check_epsilon)(target)
    return float(target)



def check_one_epoch(q, steps, sampler):
    """Deterministic, shuffle and balls-and-bins batching have T batches per epoch (one per step): q must be 1/T."""
    check_rate(q)
    check_steps(steps)
    if abs(float(q) * float(steps) - 1.0) > 1e-6:
        raise ParameterError("q", f"1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}'", q,
                             message=f"q must be 1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}' (one batch "
                                     f"per step, steps batches per epoch) (got q={q!r}, steps={steps!r})")



def check_epochs(epochs, sampler, multi_epoch=False):
    """``epochs`` is an integer >= 1; samplers analysed for one epoch only accept 1."""
    if isinstance(epochs, bool) or np.ndim(epochs) != 0 or epochs != int(epochs) or epochs < 1:
        raise ParameterError("epochs", "an integer >= 1", epochs)
    if not multi_epoch and epochs != 1:
        raise ParameterError("epochs", "1", epochs, message=f"epochs != 1 not yet supported for sampler '{sampler}' (one epoch of steps batches, "
                         f"Chua et al. §3) (got epochs={epochs!r})")
    return int(epochs)


def check_bound(bound, sampler, allowed):
    if bound not in allowed:
        raise ParameterError("bound", f"one of {', '.join(allowed)} for sampler '{sampler}'", bound)
    return bound
