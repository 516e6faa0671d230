"""The audit's ε after every epoch (``dpsampling audit … --per-epoch``, ``dpsampling.audit(…, per_epoch=True)``).

Each sampler's ε after epochs 1 … E comes from :func:`dpsampling.samplers.per_epoch.epsilon_per_epoch` (the e-th
is ``account(…, epochs=e)``, so the epoch-E row is the plain audit's row), and each answer becomes a row the
way the audit makes its own rows (the audit passes its row maker), so every row has its sampler's ``kind``,
``lower``, ``upper``, ``lower_method``, ``upper_method``, ``relation`` and ``value`` (the safe end: the certified
upper end) as the audit's table has them.
"""

from __future__ import annotations

#: the columns of the per-epoch table (``df.attrs["per_epoch"]``)
COLUMNS = ("sampler", "epoch", "lower", "upper", "kind", "method", "value", "lower_method", "upper_method",
           "upper_best_known", "relation", "flags")


class _Answered:
    """Stands for the audit's run: its ``epsilon`` returns an answer already computed."""

    def __init__(self, answer):
        self._answer = answer

    def epsilon(self, sampler, sigma, epochs):
        return self._answer


def table(samplers, sigma, epochs, kw_of, delta, make_row, relation=None):
    """A DataFrame with :data:`COLUMNS`: one row per (sampler, epoch 1 … ``epochs``).

    ``kw_of(sampler)``: the sampler's keywords for account (steps, q, options); ``make_row(run, sampler, sigma,
    epochs)``: the audit's row maker (it calls ``run.epsilon(sampler, sigma, epochs)``); ``relation``: the one
    relation of every row (None: each sampler's own; :func:`dpsampling.samplers.relations.epsilon_per_epoch`)."""
    import pandas as pd

    from dpsampling.samplers import relations
    from dpsampling.samplers.per_epoch import epsilon_per_epoch

    rows = []
    for sampler in samplers:
        if relation is None:
            answers = epsilon_per_epoch(sampler, delta, sigma=sigma, epochs=epochs, force=True, **kw_of(sampler))
        else:
            answers = relations.epsilon_per_epoch(sampler, delta, relation=relation, sigma=sigma, epochs=epochs,
                                                  force=True, **kw_of(sampler))
        for e, r in enumerate(answers, 1):
            row = make_row(_Answered(r), sampler, sigma, e)
            rows.append({"sampler": sampler, "epoch": e, **{k: row[k] for k in COLUMNS[2:]}})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def records(per_epoch) -> list:
    """The per-epoch table as JSON-ready dicts (NaN -> None)."""
    import math

    def clean(x):
        if isinstance(x, float) and math.isnan(x):
            return None
        return x.item() if hasattr(x, "item") else x

    return [{k: clean(v) for k, v in r.items()} for r in per_epoch.to_dict("records")]


def text(per_epoch) -> str:
    """ε after each epoch as an aligned table (:func:`dpsampling.render.per_epoch_text`): one line per epoch, one
    column per sampler headed by its name and relation."""
    from . import render

    return render.per_epoch_text(per_epoch)
