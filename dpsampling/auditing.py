"""`How private is my training run?` — one table, one row per batch sampler.

:func:`audit` asks :func:`dpsampling.samplers.account` the practitioner's question for a run of
``epochs`` passes over ``dataset_size`` examples in batches of ``batch_size``: ``steps = ⌈N/B⌉`` steps
per epoch (``total_steps = steps × epochs`` compositions), sampling rate ``q = B/N`` for a sampler with a free rate (``spec.batch`` "rate"
or "capped"; expected batch size B), one batch per step for the others.  Every row is asked and worded from its
sampler's spec (:class:`dpsampling.samplers.spec.SamplerSpec`); no sampler is named here.  Three questions, same
table shape:

* forward (``sigma`` and ``epochs``): ε(δ) per sampler;
* ``target_epsilon`` and ``epochs``: σ per sampler (the smallest σ it certifies);
* ``target_epsilon`` and ``sigma`` (no ``epochs``): the most epochs each sampler allows.

Every row is in the one result model (:class:`dpsampling.engine.result.AccountingResult`): ``value`` is the safe
end of its question — for ε the certified upper end, for σ a sufficient σ, for epochs the most epochs the
certified upper end of ε allows — never a lower end; ``lower``/``upper`` the ends, ``lower_method``/``upper_method``
the method of each, ``method`` the selector (the sampler's default method; empty for a sampler without a choice),
``relation`` the neighbouring relation, and ``kind``:

* ``interval`` (poisson, wor, balls_and_bins, shuffle): both ends certified.  For ε the true value lies in
  [``lower``, ``upper``] (poisson/wor: dominated PLD or the φ accountant below, pessimistic PLD above); for σ,
  ``lower`` is provably insufficient and ``upper`` = ``value`` sufficient; for epochs, ``lower`` = ``value`` epochs
  are certified and more than ``upper`` provably exceed the target.  Shuffle's upper end is the deterministic
  value (Chua ICML 2024 Thm 4.1: shuffling cannot hurt), certified but only the best known (``upper_best_known``
  True; ``spec.upper_best_known``); its lower end the Chua et al. lower bound (a post-processing of the run's
  output for one adjacent pair).  A row with no certified lower end is ``upper``.
* ``exact`` (deterministic): the Gaussian at σ/√E, closed form.

The verdicts (plain sentences comparing every row with the baseline row, the sampler whose ``spec.role`` is
"baseline": is baseline accounting of a run whose upper end is not certified provably wrong? how far is the exact
row, and every certified interval, from the baseline?) are in ``df.attrs["verdicts"]`` (a list of str; every bound
printed on its side by :func:`dpsampling.engine.result.bound_text`); ``df.attrs["question"]`` is ``"epsilon"``,
``"sigma"`` or ``"epochs"``.  Every row carries its neighbouring relation (``relation``, the sampler's
``spec.relation``).

A row whose question the sampler's cost model (``SamplerSpec.cost``, the limit of
:data:`dpsampling.samplers.spec.TIME_LIMIT` seconds that the CLI and :func:`dpsampling.samplers.account` apply too)
predicts beyond the limit does not stop the audit: it is listed with value NaN and the flag ``skipped_cost``, its
reason in ``df.attrs["skipped"]`` (sampler -> the :class:`~dpsampling.samplers.spec.CostError`, naming the
parameters to change and ``force``).  A row that cannot be computed at all (its cost model says why,
or its accountant refuses the inputs) is listed with value NaN and the flag ``not_computed``, the error in
``df.attrs["skipped"]``, and the other rows still answer; only when no row answers does the audit raise.
``force=True`` computes every row.  The σ question costs about 15 ε questions (a bisection); the epochs search stops at the largest number of epochs whose ε question is
predicted within the limit (then the answer is "at least" that many); an optional row's search is listed as
``skipped_cost`` once its predicted questions add up beyond the limit.
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling import samplers as _samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR
from dpsampling.engine.validation import (as_number, check_choice, check_delta, check_epsilon, check_int,
                                          check_positive)
from dpsampling.samplers._checks import one_number
from dpsampling.samplers.relations import NOT_COVERED_FLAG, NotCovered, check_relation
from dpsampling.samplers.spec import CostError, check_cost

#: epochs search stops here (the answer is then "at least MAX_EPOCHS")
MAX_EPOCHS = 10_000
#: ``max_batch_size`` asking for the smallest cap whose certified ε is within CAP_FACTOR of the baseline's
SMALLEST = "smallest"
#: how far above the baseline's certified upper ε a cap may leave ε (relative)
CAP_FACTOR = 0.01
#: flag of a row predicted beyond the time limit (listed, not computed)
SKIPPED_COST = "skipped_cost"
#: flag of a row that cannot be computed at all (its reason in ``df.attrs["skipped"]``)
NOT_COMPUTED = "not_computed"
#: flag of a row whose sampler's analysis does not cover the relation asked (its reason in ``df.attrs["skipped"]``)
NOT_COVERED = NOT_COVERED_FLAG
COLUMNS = ("sampler", "question", "value", "kind", "method", "lower", "upper", "lower_method", "upper_method",
           "upper_best_known", "relation", "dataset_size",
           "batch_size", "steps", "total_steps", "q", "epochs", "sigma", "delta", "target_epsilon", "discretization",
           "rel_tol", "est_rel_error", "flags")
#: significant digits of a number in a verdict (bounds rounded outward)
VERDICT_DIGITS = 3
#: accuracy settings of a result reported as their own columns (NaN where the method has none)
ACCURACY_COLUMNS = ("discretization", "rel_tol", "est_rel_error")

_NAN = float("nan")


def _check_inputs(dataset_size, batch_size, delta, epochs, sigma, target_epsilon, samplers):
    dataset_size, batch_size, delta, epochs, sigma, target_epsilon = map(
        as_number, (dataset_size, batch_size, delta, epochs, sigma, target_epsilon))
    n = check_int("dataset_size", dataset_size, 1)
    b = check_int("batch_size", batch_size, 1)
    if b > n:
        raise ParameterError("batch_size", f"<= dataset_size = {n}", b)
    check_delta(delta)
    if epochs is not None:
        epochs = check_int("epochs", epochs, 1)
        if epochs > MAX_EPOCHS:
            raise ParameterError("epochs", f"an integer in [1, {MAX_EPOCHS}]", epochs)
    if sigma is not None:  # σ = 0 is a non-private baseline: every sampler answers it exactly
        sigma = check_epsilon(one_number("sigma", sigma), "sigma", finite=True)
    if target_epsilon is not None:
        target_epsilon = check_positive("target_epsilon", one_number("target_epsilon", target_epsilon))
    if sigma is None and target_epsilon is None:
        raise ParameterError("sigma", "given (or target_epsilon)", None, message="sigma or target_epsilon is required (sigma and epochs: ε; target_epsilon and epochs: σ; "
                         "target_epsilon and sigma: the most passes over the data)")
    if sigma is not None and target_epsilon is not None and epochs is not None:
        raise ParameterError("epochs", "unset when sigma and target_epsilon are given", epochs,
                             message="epochs cannot be given together with sigma and target_epsilon: leave out one of "
                                     "the three")
    if epochs is None and (sigma is None or target_epsilon is None):
        raise ParameterError("epochs", "given unless both sigma and target_epsilon are", None,
                             message="epochs is required unless both sigma and target_epsilon are given")
    if samplers is not None:
        if isinstance(samplers, str):
            samplers = [s for s in samplers.split(",") if s]
        known = _samplers.SAMPLERS
        bad = [s for s in samplers if s not in known]
        if bad or not samplers:
            raise ParameterError("samplers", f"a non-empty list of {', '.join(known)}", samplers)
        samplers = tuple(dict.fromkeys(samplers))
    return n, b, float(delta), epochs, sigma, target_epsilon, samplers


def _check_cap(max_batch_size, chosen, question):
    """The cap of the samplers whose batches are capped (``spec.batch`` "capped"): None (such a sampler joins the
    audit only when asked for, and then needs a cap), an integer ≥ 1, or :data:`SMALLEST` (the smallest cap within
    :data:`CAP_FACTOR` of the baseline, an ε question only)."""
    capped = [s for s in (chosen or ()) if _samplers.get_spec(s).batch == "capped"]
    if max_batch_size is not None and chosen and not capped:  # the cap adds a row only of a sampler that caps
        names = " or ".join(s.name for s in _samplers.specs() if s.batch == "capped")
        raise ParameterError("max_batch_size", f"unset unless a sampler that caps its batches ({names}) is asked",
                             max_batch_size)
    if max_batch_size is None:
        if capped:
            raise ParameterError("max_batch_size", f"an integer >= 1 or {SMALLEST!r} (sampler {capped[0]} caps its "
                                 f"batches)", None)
        return None
    if max_batch_size == SMALLEST:
        if question != "epsilon":
            raise ParameterError("max_batch_size", f"an integer >= 1 ({SMALLEST!r} only with sigma and epochs)",
                                 max_batch_size)
        return SMALLEST
    return check_int("max_batch_size", as_number(max_batch_size), 1)


class _Run:
    """The run's fixed parameters and the one question per sampler to :func:`account`."""

    def __init__(self, n, b, delta, accuracy, force=False, cap=None, relation=None):
        self.n, self.b, self.cap, self.relation = n, b, cap, relation
        self.steps = math.ceil(n / b)
        self.q = b / n
        self.delta = delta
        self.accuracy = accuracy
        self.force = force
        self._results = {}
        self.last_result = None  # the last ε answer of an epochs search (its per-end methods name the row's)

    def _kw(self, sampler):
        spec = _samplers.get_spec(sampler)
        kw = {"steps": self.steps}
        if spec.batch in ("rate", "capped"):
            kw["q"] = self.q
        if spec.batch == "capped":
            kw.update(dataset_size=self.n, max_batch_size=self.cap)
        if spec.option("accuracy") is not None:  # the audit's accuracy setting is the sampler option of that name
            kw["accuracy"] = self.accuracy
        return kw

    def question(self, sampler, quantity, sigma, epochs, target=None):
        kw = self._kw(sampler)
        return _samplers.question(sampler, quantity, target, sigma=sigma, epochs=epochs, **kw)

    def epsilon(self, sampler, sigma, epochs):
        return _samplers.account(sampler, "epsilon", self.delta, sigma=sigma, epochs=epochs, force=True,
                                 relation=self.relation, **self._kw(sampler))

    def sigma(self, sampler, target, epochs):
        extra = _samplers.get_spec(sampler).audit_options.get("sigma", {})
        return _samplers.account(sampler, "sigma", (target, self.delta), epochs=epochs, force=True,
                                 relation=self.relation, **{**self._kw(sampler), **extra})

    def eps_value(self, sampler, sigma, epochs, end="value"):
        """The number the epochs search is monotone in: the safe end of ε (``value``, the certified upper end), or
        the upper / lower end of its interval (``end="upper"`` / ``"lower"``); memoised per run."""
        key = (sampler, sigma, epochs)
        if key not in self._results:
            self._results[key] = self.epsilon(sampler, sigma, epochs)
        r = self._results[key]
        return getattr(r, end), r

    def epochs_cap(self, sampler, sigma):
        """The largest E ≤ MAX_EPOCHS whose ε question the sampler's cost model predicts within the time limit
        (costs grow with E: bisection on E), at least 1."""
        spec = _samplers.get_spec(sampler)

        def ok(e):
            return self.force or spec.predict_seconds(self.question(sampler, "epsilon", sigma, e, self.delta)) \
                <= _samplers.TIME_LIMIT

        if ok(MAX_EPOCHS):
            return MAX_EPOCHS
        lo, hi = 1, MAX_EPOCHS
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo

    def max_epochs(self, sampler, sigma, target, end="value", budget=math.inf):
        """Largest integer E ≤ MAX_EPOCHS with ε(E) ≤ target (ε non-decreasing in E: composing one more
        epoch is a post-processing-monotone addition).  Doubling then integer bisection; returns
        (E, method, flags).  ``budget``: predicted seconds the whole search may take (CostError beyond)."""
        f = {}
        spent = [0.0]
        spec = _samplers.get_spec(sampler)

        def ok(e):
            if e not in f:
                c = spec.cost(self.question(sampler, "epsilon", sigma, e, self.delta))
                spent[0] += c.seconds
                if spent[0] > budget:
                    raise CostError(f"{sampler} epochs search", dataclasses.replace(c, seconds=spent[0]), budget)
                v, r = self.eps_value(sampler, sigma, e, end)
                f[e] = v <= target
                self.last_result = r
            return f[e]

        cap = self.epochs_cap(sampler, sigma)
        if not ok(1):
            return 0, ("epsilon_above_target_at_1_epoch",)
        lo, hi = 1, min(2, cap)
        while ok(hi):
            lo = hi
            if hi >= cap:
                return cap, (f"at_least_{cap}",)
            hi = min(2 * hi, cap)
        while hi - lo > 1:  # ok(lo), not ok(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo, ()


def _row(sampler, question, value, kind, method, lower, upper, flags=(), accuracy=None, lower_method=None,
         upper_method=None, upper_best_known=False, relation=None):
    acc = accuracy or {}
    return {"sampler": sampler, "question": question, "value": _NAN if value is None else value, "kind": kind,
            "method": method, "lower": _NAN if lower is None else lower, "upper": _NAN if upper is None else upper,
            "lower_method": lower_method, "upper_method": upper_method, "upper_best_known": bool(upper_best_known),
            "relation": relation or _samplers.get_spec(sampler).relation,
            **{k: _NAN if acc.get(k) is None else acc[k] for k in ACCURACY_COLUMNS},
            "flags": ";".join(flags) if not isinstance(flags, str) else flags}


def _result_row(sampler, question, r, value=None, flags=None):
    """The row of account's answer ``r`` (the one result model: ``value`` its safe end, ``method`` the selector)."""
    return _row(sampler, question, r.value if value is None else value, r.kind, r.method, r.lower,
                r.upper if value is None else value, r.flags if flags is None else flags, r.accuracy,
                r.lower_method, r.upper_method, r.upper_best_known, r.relation)


def _forward(run, sampler, sigma, epochs):
    return _result_row(sampler, "epsilon", run.epsilon(sampler, sigma, epochs))


def _inverse_sigma(run, sampler, target, epochs):
    r = run.sigma(sampler, target, epochs)
    spec = _samplers.get_spec(sampler)
    if r.kind == "exact" or spec.upper_best_known:  # the upper end's σ (r.value) suffices, as computed
        return _result_row(sampler, "sigma", r)
    # Upper-bound samplers: a calibration stops at a root tolerance, so ε(σ) may exceed the target by
    # ~1e-9 relative (measured for wor); we re-ask the same pessimistic accountant at σ and raise σ
    # until ε(σ) ≤ target, so the σ reported is verified sufficient.
    s, flags = float(r.value), tuple(r.flags)
    for i in range(40):
        if run.epsilon(sampler, s, epochs).value <= target:
            break
        s *= 1.0 + 1e-9 * 4.0 ** i
        flags = (*r.flags, "sigma_raised_to_verify")
    else:
        raise ArithmeticError(f"could not verify a σ for sampler {sampler!r} with ε ≤ {target!r}")
    return _result_row(sampler, "sigma", r, value=s, flags=flags)


def _inverse_epochs(run, sampler, sigma, target, budget=math.inf):
    """The most epochs: ``value`` = ``lower`` = the most epochs the certified upper end of ε allows (the safe end);
    ``upper`` = the most epochs its certified lower end does not rule out (more provably exceed the target)."""
    e, flags = run.max_epochs(sampler, sigma, target, budget=budget)
    spec = _samplers.get_spec(sampler)
    kind = spec.audit_kind
    r = run.last_result
    rel = r.relation if r is not None and r.relation else run.relation
    if kind == "interval" and r is not None and r.lower is None:  # one-sided under the relation asked
        kind = "upper"
    lm = um = None
    if r is not None:
        um = f"integer search on {r.lower_method}" if r.lower_method else None
        lm = f"integer search on {r.upper_method}" if r.upper_method else None
    e_max = e
    if kind == "interval":  # the lower end of ε: more than e_max epochs provably exceed the target
        e_max, _ = run.max_epochs(sampler, sigma, target, end="lower", budget=budget)
    method = r.method if r is not None else spec.default_method
    return _row(sampler, "epochs", e, kind, method, e, e_max, flags, None, lm, um if kind != "exact" else lm,
                spec.upper_best_known, relation=rel)


def _has_interval(r):
    lo, up = r.get("lower"), r.get("upper")
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in (lo, up))


def _verdicts(rows, question, delta, target_epsilon):
    """Plain-sentence verdicts against the baseline row (the sampler whose spec has role "baseline"), worded by
    :func:`dpsampling.render.verdicts` (every bound on its side, each number's relation named where they differ)."""
    from . import render

    base = _samplers.with_role("baseline")
    p = next((r for r in rows if base is not None and r["sampler"] == base.name), None)
    reliable = p is not None and p["delta"] >= RELIABLE_DELTA_FLOOR and BELOW_FLOOR_FLAG not in p["flags"].split(";")
    return render.verdicts(rows, question, delta, target_epsilon, reliable)


def audit(dataset_size, batch_size, *, delta, epochs=None, sigma=None, target_epsilon=None, samplers=None,
          accuracy="default", force=False, per_epoch=False, max_batch_size=None, relation=None):
    """One row per batch sampler for a DP-SGD run over ``dataset_size`` examples in batches of ``batch_size``.

    ``sigma`` + ``epochs`` → ε(δ); ``target_epsilon`` + ``epochs`` → σ; ``target_epsilon`` + ``sigma`` →
    the most epochs (≤ :data:`MAX_EPOCHS`).  ``samplers``: a subset of the registered samplers (default: all but
    those that cap their batches, unless ``max_batch_size`` is given).  A row predicted beyond the time limit is
    listed, not computed (flag ``skipped_cost``; the reason in ``df.attrs["skipped"]``), unless ``force``.
    ``accuracy``: the setting of samplers with an ``accuracy`` option (balls_and_bins: relative width ≤ 1e-2 / 1e-3
    for "default"/"fine"); the other samplers use their default accuracy.  ``max_batch_size``: the cap of a sampler
    whose batches are capped (``spec.batch`` "capped"), or ``"smallest"``: the smallest cap whose certified upper ε
    is within :data:`CAP_FACTOR` of the baseline's (each under its own relation); ``relation``: one neighbouring
    relation for every row (None: each sampler's own; a sampler whose analysis does not cover it is listed with the
    flag ``not_covered`` and why in ``df.attrs["skipped"]``); with an ε question the smallest cap is also reported
    (``df.attrs["smallest_cap"]``: sampler -> the spec's ``cap_search`` answer, and a verdict).

    Returns a pandas DataFrame with :data:`COLUMNS` (see the module docstring for ``kind`` and
    ``value``); ``df.attrs["verdicts"]`` is a list of plain-sentence verdicts and
    ``df.attrs["question"]`` the question answered.  Bad input raises ParameterError naming the parameter.
    ``per_epoch=True`` (an ε question only): ``df.attrs["per_epoch"]``, each computed row's answer after every
    epoch 1 … E (:mod:`dpsampling.per_epoch_audit`; its epoch-E rows are the table's rows).
    """
    import pandas as pd

    n, b, delta, epochs, sigma, target_epsilon, chosen = _check_inputs(dataset_size, batch_size, delta, epochs, sigma,
                                                                       target_epsilon, samplers)
    check_choice("accuracy", accuracy, ("default", "fine"))
    question = "epsilon" if target_epsilon is None else ("sigma" if sigma is None else "epochs")
    if per_epoch and question != "epsilon":
        raise ParameterError("per_epoch", "only with sigma and epochs (an ε question)", per_epoch)
    if relation is not None:
        check_relation(relation)
    cap = _check_cap(max_batch_size, chosen, question)
    names = chosen or tuple(s for s in _samplers.SAMPLERS if cap is not None or _samplers.get_spec(s).batch != "capped")
    run = _Run(n, b, delta, accuracy, force, cap, relation)
    caps = _smallest_caps(run, names, sigma, epochs) if question == "epsilon" and cap is not None else {}
    rows, skipped = _rows(run, names, chosen, question, sigma, epochs, target_epsilon, force)
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    df.attrs["question"] = question
    df.attrs["relation"] = relation
    df.attrs["verdicts"] = _verdicts(rows, question, delta, target_epsilon) + [_cap_verdict(c, rows, cap)
                                                                              for c in caps.items()]
    df.attrs["skipped"] = skipped
    df.attrs["smallest_cap"] = caps
    if per_epoch:  # every computed row's answer after each epoch 1 … E (its epoch-E rows are the table's)
        from . import per_epoch_audit

        df.attrs["per_epoch"] = per_epoch_audit.table([s for s in names if s not in skipped], float(sigma), epochs,
                                                      run._kw, delta, _forward, relation)
    return df


def _rows(run, names, chosen, question, sigma, epochs, target_epsilon, force):
    """(rows, skipped): one row per sampler of ``names``; a row that cannot be computed is listed with why (in
    ``skipped``) and the others still answer (the audit raises only if none does)."""
    rows, skipped = [], {}
    for sampler in names:
        spec = _samplers.get_spec(sampler)
        try:
            row = _answer(run, spec, question, sigma, epochs, target_epsilon, run.delta, force, chosen)
        except NotCovered as exc:  # the sampler's analysis does not cover the relation asked: listed with why
            skipped[sampler] = exc
            row = _row(sampler, question, _NAN, spec.audit_kind, "", None, None, (NOT_COVERED_FLAG,),
                       relation=run.relation)
        except CostError as exc:  # beyond the limits: listed with why (--force runs a row refused on time only)
            skipped[sampler] = exc
            row = _row(sampler, question, _NAN, spec.audit_kind, spec.default_method, None, None,
                       (NOT_COMPUTED if exc.why else SKIPPED_COST,))
        except (ValueError, ArithmeticError, RuntimeError) as exc:
            if isinstance(exc, ParameterError) and exc.param not in ("sigma", "epochs", "target_epsilon", "delta"):
                raise
            skipped[sampler] = exc  # this sampler's accountant cannot answer these inputs; the others still do
            row = _row(sampler, question, _NAN, spec.audit_kind, spec.default_method, None, None,
                       (NOT_COMPUTED,))
        row.update(dataset_size=run.n, batch_size=run.b, steps=run.steps,
                   total_steps=_NAN if question == "epochs" else run.steps * epochs, q=run.q,
                   epochs=_NAN if question == "epochs" else epochs,
                   sigma=row["value"] if question == "sigma" else float(sigma),
                   delta=run.delta, target_epsilon=_NAN if target_epsilon is None else float(target_epsilon))
        rows.append(row)
    if skipped and len(skipped) == len(rows):
        raise next(iter(skipped.values()))  # no row answers: the first refusal says why
    return rows, skipped


def _smallest_caps(run, names, sigma, epochs):
    """sampler -> its spec's ``cap_search`` answer (the smallest cap within :data:`CAP_FACTOR` of the baseline's
    certified upper ε), for every capped sampler of ``names``; a cap asked as :data:`SMALLEST` becomes the run's."""
    out = {}
    for name in names:
        spec = _samplers.get_spec(name)
        if spec.batch != "capped" or spec.cap_search is None:
            continue
        kw = {k: v for k, v in run._kw(name).items() if k != "max_batch_size"}
        out[name] = spec.cap_search(run.delta, sigma=float(sigma), epochs=epochs, factor=CAP_FACTOR, **kw)
        if run.cap == SMALLEST:
            run.cap = out[name].max_batch_size
    return out


def _cap_verdict(item, rows, asked):
    """The smallest cap in words (:func:`dpsampling.render.cap_verdict`)."""
    from . import render

    name, c = item
    base = _samplers.with_role("baseline")
    row = next(r for r in rows if r["sampler"] == name)
    base_row = next((r for r in rows if r["sampler"] == base.name and _has_interval(r)), None)
    return render.cap_verdict(_samplers.get_spec(name), base, c, row, asked, SMALLEST, base_row)


def _answer(run, spec, question, sigma, epochs, target_epsilon, delta, force, chosen):
    """The row of one sampler (CostError if refused by its cost model)."""
    sampler = spec.name
    if question == "epochs":  # the search's first question; later ones stop at epochs_cap
        q = run.question(sampler, "epsilon", float(sigma), 1, delta)
    elif question == "sigma":
        q = run.question(sampler, "sigma", None, epochs, (float(target_epsilon), delta))
    else:
        q = run.question(sampler, "epsilon", float(sigma), epochs, delta)
    check_cost(spec, q, force=force)
    if question == "epsilon":
        return _forward(run, sampler, float(sigma), epochs)
    if question == "sigma":
        return _inverse_sigma(run, sampler, float(target_epsilon), epochs)
    # an optional row's search stops when its predicted questions add up beyond the limit
    budget = math.inf if force or chosen is not None or not spec.audit_optional else _samplers.TIME_LIMIT
    return _inverse_epochs(run, sampler, float(sigma), float(target_epsilon), budget)


__all__ = ["COLUMNS", "MAX_EPOCHS", "NOT_COMPUTED", "NOT_COVERED", "SKIPPED_COST", "audit"]
