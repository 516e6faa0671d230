"""ε(δ) of shuffling after each epoch of a list (dynamic mode): the ``epsilon_epochs`` of its SPEC
(:func:`dpsampling.samplers.per_epoch.epsilon_per_epoch`).

Epoch 1 is the E_C value (account's; None here).  For epochs 2 … before the last, the lower end is the
max-statistic lower bound of :mod:`._max_statistic` (each epoch post-processed to its max coordinate, a dominated
pair; the epochs independent) from one epoch's optimistic pmf of M on the last epoch's slices and discretisation,
composed epoch by epoch and read with the fold and rounding bounds of
:func:`dpsampling.engine.epochs.lower_epsilon_each_epoch`; the upper end is the deterministic value (Chua Thm 4.1),
as for account's rows.
"""

from __future__ import annotations

from dpsampling.engine import lazy

from . import _max_statistic as ms
from . import deterministic

epochs_engine = lazy.module("dpsampling.engine.epochs")


def epsilon_epochs(delta, *, sigma, steps, epochs, last_epoch, last, q=None, direction="add_remove", mode="dynamic",
                   c_grid=None, **options):
    """A list over ``epochs`` (before ``last_epoch``, whose answer is ``last``): AccountingResult, or None where
    account is to be asked (epoch 1, the persistent mode, a single epoch, δ below the PLD floor)."""
    import dataclasses

    epochs = [int(e) for e in epochs]
    shared = [e for e in epochs if e > 1]
    if last is None:
        return None
    d = last.accuracy.get("discretization")
    if (mode != "dynamic" or len(shared) < 2 or d is None or options.get("discretization") not in (None, d)
            or float(delta) < ms.RELIABLE_DELTA_FLOOR or last.lower_method != ms.PLD_METHOD):
        return None
    edges = ms.slice_edges(2.0, 1.0, sigma, steps, discretization=d, epochs=int(last_epoch))
    lp, lq = ms.slice_log_masses(edges, 2.0, sigma, steps), ms.slice_log_masses(edges, 1.0, sigma, steps)
    pmfs = {"remove": ms._optimistic_pmf(lp, lq, d), "add": ms._optimistic_pmf(lq, lp, d)}  # noqa: SLF001
    ends = epochs_engine.lower_epsilon_each_epoch(delta, pmfs, max(shared))
    out = []
    for e in epochs:
        if e == 1:
            out.append(None)
            continue
        lo, per = ends[e]
        acc = {**last.accuracy, "epochs": e, "max_rounding_slack": e * float(d),
               **{f"value_{k}": float(x) for k, x in per.items()}}
        up = deterministic.epsilon(delta, sigma=sigma, steps=steps, epochs=e).value
        out.append(dataclasses.replace(last, value=up, accuracy=acc, lower=lo, upper=up))
    return out
