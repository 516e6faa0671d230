"""Input checks shared by the sampler modules (one message per parameter, as in the engine)."""

from __future__ import annotations

import numpy as np

from dpsampling.engine.validation import check_delta, check_epsilon, check_positive, check_rate, check_steps

QUANTITIES = ("epsilon", "delta")


def check_sigma_steps(sigma, steps):
    check_positive("sigma", sigma)
    if np.ndim(sigma) != 0:
        raise ValueError(f"sigma must be a single number > 0 (got an array of shape {np.shape(sigma)})")
    if isinstance(steps, bool) or np.ndim(steps) != 0:
        raise ValueError(f"steps must be an integer >= 1 (got {steps!r})")
    check_steps(steps)
    return float(sigma), int(steps)



def check_quantity(quantity, target):
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(QUANTITIES)} (got {quantity!r})")
    if np.ndim(target) != 0:
        raise ValueError(f"{'delta' if quantity == 'epsilon' else 'epsilon'} must be a single number (got {target!r})")
    (check_delta if quantity == "epsilon" else check_epsilon)(target)
    return float(target)



def check_one_epoch(q, steps, sampler):
    """Deterministic, shuffle and balls-and-bins batching have T batches per epoch (one per step): q must be 1/T."""
    check_rate(q)
    check_steps(steps)
    if abs(float(q) * float(steps) - 1.0) > 1e-6:
        raise ValueError(f"q must be 1/steps = {1.0 / float(steps):.6g} for sampler '{sampler}' (one batch per "
                         f"step, steps batches per epoch) (got q={q!r}, steps={steps!r})")



def check_epochs(epochs, sampler, multi_epoch=False):
    """``epochs`` is an integer >= 1; samplers analysed for one epoch only accept 1."""
    if isinstance(epochs, bool) or np.ndim(epochs) != 0 or epochs != int(epochs) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1 (got {epochs!r})")
    if not multi_epoch and epochs != 1:
        raise ValueError(f"epochs != 1 not yet supported for sampler '{sampler}' (one epoch of steps batches, "
                         f"Chua et al. §3) (got epochs={epochs!r})")
    return int(epochs)


def check_bound(bound, sampler, allowed):
    if bound not in allowed:
        raise ValueError(f"bound must be one of {', '.join(allowed)} for sampler '{sampler}' (got {bound!r})")
    return bound
