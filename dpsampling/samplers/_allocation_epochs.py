"""ε(δ) of balls-and-bins after each epoch of a list at the default method ('allocation'): the ``epsilon_epochs``
of its SPEC (:func:`dpsampling.samplers.per_epoch.epsilon_per_epoch`).

The last epoch is :func:`dpsampling.samplers.account`'s answer.  With several epochs the earlier ones are the
certified interval of :func:`dpsampling.engine.epochs.allocation_epsilon_each_epoch` at the last epoch's grid step,
loss step (its ``accuracy``) and truncation budget (one epoch's laws, composed one epoch at a time): upper end from the dominating
spread, lower end from the dominated merge (without the max-statistic floor the last epoch may add; the merge alone
is a certified lower bound), both rows containing ε.
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling.engine import lazy

epochs_engine = lazy.module("dpsampling.engine.epochs")


def epsilon_epochs(delta, *, sigma, steps, epochs, last_epoch, last, q=None, direction="add_remove", **options):
    """ε(δ) after each epoch of ``epochs`` (before ``last_epoch``, whose answer is ``last``): a list of
    AccountingResult (module docstring); None (ask account epoch by epoch) for a single epoch or one step per
    epoch, where nothing is shared."""
    from dpsampling.engine import allocation as al
    from dpsampling.engine.result import WIDTH_NOT_MET_FLAG

    epochs = [int(e) for e in epochs]
    if last is None or len(epochs) < 2 or steps <= 1 or "grid_step" not in last.accuracy:
        return None
    rel_width = last.accuracy["rel_width_target"]
    tail = al._TAIL_PER_DELTA * float(delta) / (int(last_epoch) * (math.log2(int(steps)) + 2))  # noqa: SLF001 - as epsilon_interval
    ends = epochs_engine.allocation_epsilon_each_epoch(delta, sigma=sigma, steps=steps, epochs=max(epochs),
                                                       step=last.accuracy["grid_step"],
                                                       loss_step=last.accuracy["loss_step"], tail=tail)
    out = []
    for e in epochs:
        lo, up = ends[e - 1]
        width = (up - lo) / up if up > 0 else 0.0
        acc = {**last.accuracy, "rel_width": width, "lower_method": al.LOWER_METHOD, "lower_merge": lo,
               "lower_max_statistic": None, "passes": 1}
        flags = () if width <= rel_width else (WIDTH_NOT_MET_FLAG,)
        out.append(dataclasses.replace(last, value=up,
                                       method=f"{al.LOWER_METHOD} / {al.UPPER_METHOD}", accuracy=acc, lower=lo,
                                       upper=up, flags=flags))
    return out
