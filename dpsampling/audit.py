"""`How private is my training run?` — one table, one row per batch sampler (issue 10).

:func:`audit` asks :func:`dpsampling.samplers.account` the practitioner's question for a run of
``epochs`` passes over ``dataset_size`` examples in batches of ``batch_size``: ``steps_per_epoch =
⌈N/B⌉`` steps per epoch, sampling rate ``q = B/N`` for poisson/wor (expected batch size B), one batch
per step for shuffle / deterministic / balls_and_bins.  Three questions, same table shape:

* forward (``sigma`` and ``epochs``): ε(δ) per sampler;
* ``target_epsilon`` and ``epochs``: σ per sampler (the smallest σ it certifies);
* ``target_epsilon`` and ``sigma`` (no ``epochs``): the most epochs each sampler allows.

Every row says what its number is (``kind``):

* ``upper`` (poisson, wor, balls_and_bins): a valid upper bound on ε (pessimistic PLD), so the σ
  returned is sufficient and the epochs returned are allowed; ``lower`` holds the certified lower end
  where the accountant gives one (poisson/wor: the dominated PLD or the φ accountant, so [lower, upper]
  is a certified interval; for σ, ``lower`` is provably insufficient; for epochs, ``upper`` is the most
  epochs not provably exceeding the target).
* ``exact`` (deterministic): the Gaussian at σ/√E, closed form.
* ``interval`` (shuffle): no dominating pair is known; ``lower`` is the Chua et al. lower bound on ε
  (a valid lower bound: a post-processing of the run's output for one adjacent pair) and ``upper`` the
  deterministic value (Chua ICML 2024 Thm 4.1: shuffling cannot hurt).  ``value`` is the number the
  *lower bound* gives — the certified side: ε ≥ value; σ ≤ value is provably insufficient; more than
  ``value`` epochs provably exceed the target.  For σ and epochs ``lower``/``upper`` order the bracket
  of the true answer (σ ∈ (value, deterministic σ]; epochs ∈ [deterministic epochs, value]).

The verdicts (plain sentences comparing the rows: is Poisson accounting of a shuffled run provably
wrong? how far are fixed batches and balls-and-bins from Poisson?) are in ``df.attrs["verdicts"]`` (a
list of str); ``df.attrs["question"]`` is ``"epsilon"``, ``"sigma"`` or ``"epochs"``.

A row whose question the sampler's cost model (``SamplerSpec.cost``, the limit of
:data:`dpsampling.samplers.spec.TIME_LIMIT` seconds that the CLI and :func:`dpsampling.samplers.account` apply too)
predicts beyond the limit stops the audit with :class:`~dpsampling.samplers.spec.CostError` (a ParameterError
naming the parameters to change), except an optional row (``SamplerSpec.audit_optional``: balls_and_bins) of an
audit with ``samplers=None``: it is listed with value NaN and the flag ``skipped_cost``, its reason in
``df.attrs["skipped"]`` (sampler -> the CostError).  ``force=True`` computes every row.  The σ question costs
about 15 ε questions (a bisection); the epochs search stops at the largest number of epochs whose ε question is
predicted within the limit (then the answer is "at least" that many); an optional row's search is listed as
``skipped_cost`` once its predicted questions add up beyond the limit.
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling import samplers as _samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
from dpsampling.engine.validation import check_delta, check_int
from dpsampling.samplers.spec import CostError, check_cost


def __getattr__(name):
    if name == "SAMPLERS":  # every registered sampler, in table order (the registry may grow at run time)
        return _samplers.SAMPLERS
    if name == "KIND":  # sampler -> kind of its row
        return {s.name: s.audit_kind for s in _samplers.specs()}
    raise AttributeError(name)


#: epochs search stops here (the answer is then "at least MAX_EPOCHS")
MAX_EPOCHS = 10_000
#: flag of a row predicted beyond the time limit (listed, not computed)
SKIPPED_COST = "skipped_cost"
COLUMNS = ("sampler", "question", "value", "kind", "method", "lower", "upper", "dataset_size", "batch_size",
           "steps_per_epoch", "q", "epochs", "sigma", "delta", "target_epsilon", "discretization", "rel_tol",
           "est_rel_error", "flags")
#: accuracy settings of a result reported as their own columns (NaN where the method has none)
ACCURACY_COLUMNS = ("discretization", "rel_tol", "est_rel_error")

_NAN = float("nan")


def _check_inputs(dataset_size, batch_size, delta, epochs, sigma, target_epsilon, samplers):
    n = check_int("dataset_size", dataset_size, 1)
    b = check_int("batch_size", batch_size, 1)
    if b > n:
        raise ParameterError("batch_size", f"<= dataset_size = {n}", b)
    check_delta(delta)
    if not 0 < float(delta) < 1:
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    if epochs is not None:
        epochs = check_int("epochs", epochs, 1)
        if epochs > MAX_EPOCHS:
            raise ParameterError("epochs", f"an integer in [1, {MAX_EPOCHS}]", epochs)
    if sigma is not None:
        if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
            raise ParameterError("sigma", "a finite number > 0", sigma)
    if target_epsilon is not None:
        if not (isinstance(target_epsilon, (int, float)) and math.isfinite(target_epsilon) and target_epsilon > 0):
            raise ParameterError("target_epsilon", "a finite number > 0", target_epsilon)
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
    return n, b, float(delta), epochs, samplers


class _Run:
    """The run's fixed parameters and the one question per sampler to :func:`account`."""

    def __init__(self, n, b, delta, accuracy, force=False):
        self.steps = math.ceil(n / b)
        self.q = b / n
        self.delta = delta
        self.accuracy = accuracy
        self.force = force
        self._results = {}

    def _kw(self, sampler):
        spec = _samplers.get_spec(sampler)
        kw = {"steps": self.steps}
        if spec.batch == "rate":
            kw["q"] = self.q
        if spec.option("accuracy") is not None:  # the audit's accuracy setting is the sampler option of that name
            kw["accuracy"] = self.accuracy
        return kw

    def question(self, sampler, quantity, sigma, epochs, target=None):
        kw = self._kw(sampler)
        return _samplers.question(sampler, quantity, target, sigma=sigma, epochs=epochs, **kw)

    def epsilon(self, sampler, sigma, epochs):
        return _samplers.account(sampler, "epsilon", self.delta, sigma=sigma, epochs=epochs, force=True,
                                 **self._kw(sampler))

    def sigma(self, sampler, target, epochs):
        extra = _samplers.get_spec(sampler).audit_options.get("sigma", {})
        return _samplers.account(sampler, "sigma", (target, self.delta), epochs=epochs, force=True,
                                 **{**self._kw(sampler), **extra})

    def eps_value(self, sampler, sigma, epochs, end="value"):
        """The number the epochs search is monotone in: the sampler's own bound on ε (lower for shuffle), or the
        upper / lower end of its interval (``end="upper"`` / ``"lower"``); memoised per run."""
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
                self.last_method = r.method
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


def _row(sampler, question, value, kind, method, lower, upper, flags=(), accuracy=None):
    acc = accuracy or {}
    return {"sampler": sampler, "question": question, "value": value, "kind": kind, "method": method,
            "lower": _NAN if lower is None else lower, "upper": _NAN if upper is None else upper,
            **{k: _NAN if acc.get(k) is None else acc[k] for k in ACCURACY_COLUMNS},
            "flags": ";".join(flags) if not isinstance(flags, str) else flags}


def _forward(run, sampler, sigma, epochs):
    r = run.epsilon(sampler, sigma, epochs)
    if _samplers.get_spec(sampler).audit_kind == "interval":
        return _row(sampler, "epsilon", r.value, "interval", f"{r.method} / deterministic", r.value, r.upper, r.flags,
                    r.accuracy)
    lo = r.lower if r.lower is not None else (r.value if r.kind in ("lower", "exact") else None)
    up = r.upper if r.upper is not None else (r.value if r.kind in ("upper", "exact") else None)
    return _row(sampler, "epsilon", r.value, r.kind, r.method, lo, up, r.flags, r.accuracy)


def _inverse_sigma(run, sampler, target, epochs):
    r = run.sigma(sampler, target, epochs)
    if _samplers.get_spec(sampler).audit_kind == "interval":  # shuffle: σ ≤ value provably insufficient; deterministic σ (r.upper) suffices
        return _row(sampler, "sigma", r.value, "interval", f"{r.method} / deterministic", r.value, r.upper, r.flags)
    if r.kind == "exact":
        return _row(sampler, "sigma", r.value, r.kind, r.method, r.value, r.value, r.flags)
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
    lo = r.lower if r.lower is not None else None
    return _row(sampler, "sigma", s, r.kind, r.method, lo, s, flags, r.accuracy)


def _inverse_epochs(run, sampler, sigma, target, budget=math.inf):
    e, flags = run.max_epochs(sampler, sigma, target, budget=budget)
    kind = _samplers.get_spec(sampler).audit_kind
    if kind == "interval":  # shuffle: more than e epochs provably exceed target; its upper end's epochs suffice
        e_up, _ = run.max_epochs(sampler, sigma, target, end="upper")
        return _row(sampler, "epochs", e, "interval", "max-statistic PLD / deterministic, integer search",
                    e_up, e, flags)
    e_max = e
    if kind == "upper":  # the lower end of ε: more than e_max epochs provably exceed the target
        e_max, _ = run.max_epochs(sampler, sigma, target, end="lower", budget=budget)
    method = "analytic" if kind == "exact" else getattr(run, "last_method", None) or "PLD"
    return _row(sampler, "epochs", e, kind, "integer search on " + method, e, e_max, flags)


def _fmt(x):
    return f"{x:.3g}" if isinstance(x, float) else str(x)


#: how a sampler is named in the verdicts (others: the name with '-' for '_')
VERDICT_NAMES = {"poisson": "Poisson", "wor": "WOR", "balls_and_bins": "balls-and-bins", "shuffle": "shuffling",
                 "deterministic": "fixed batches"}
#: samplers with a verdict of their own (not in the generic comparison with Poisson)
_OWN_VERDICT = ("poisson", "shuffle", "deterministic")


def _name(sampler):
    return VERDICT_NAMES.get(sampler, sampler.replace("_", "-"))


def _outward(x, digits, up):
    """x rounded to ``digits`` significant digits away from the certified side: up for an upper end, down for
    a lower end, so that a printed inequality between ends is as true as the one between the numbers."""
    if x == 0 or not math.isfinite(x):
        return x
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(abs(x))))
    return (math.ceil if up else math.floor)(x * scale) / scale


def interval_text(lower, upper) -> str:
    """'[lower, upper]' rounded outward (lower down, upper up) to the fewest significant digits (4 to 8) that show
    the certified width, so the printed interval contains the certified one (the audit's and the CLI's text)."""
    for digits in range(4, 9):
        a, b = _outward(lower, digits, False), _outward(upper, digits, True)
        if b - a <= 2 * (upper - lower) + 1e-300:
            break
    return f"[{a:.{digits}g}, {b:.{digits}g}]"


def _separating(lo_end, hi_end):
    """(text of lo_end rounded up, text of hi_end rounded down) with the fewest digits (4 to 12) that keep
    them apart (lo_end < hi_end)."""
    for digits in range(4, 13):
        a, b = _outward(lo_end, digits, True), _outward(hi_end, digits, False)
        if a < b:
            return f"{a:.{digits}g}", f"{b:.{digits}g}"
    return f"{lo_end!r}", f"{hi_end!r}"


def _bracket(lower, upper):
    """Texts of an interval's ends rounded outward (lower down, upper up) with the fewest digits (4 to 12)
    that tell them apart."""
    for digits in range(4, 13):
        a, b = _outward(lower, digits, False), _outward(upper, digits, True)
        if a != b or digits == 12:
            return f"{a:.{digits}g}", f"{b:.{digits}g}"


def _has_interval(r):
    lo, up = r.get("lower"), r.get("upper")
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in (lo, up))


def _compare(name, r, p, what, symbol, less_is):
    """A certified comparison of row ``r`` with the Poisson row ``p`` on their intervals [lower, upper] of
    ``symbol``, or by how much the widths would have to shrink to decide it.  ``less_is``: what a smaller
    value means ("more private" for ε, "less noise" for σ)."""
    if r["upper"] < p["lower"]:
        a, b = _separating(r["upper"], p["lower"])
        return (f"{name} is certifiably below Poisson here ({less_is}): {symbol} ≤ {a} < {b} ≤ "
                f"{symbol}_Poisson.")
    if r["lower"] > p["upper"]:
        a, b = _separating(p["upper"], r["lower"])
        return f"{name} is certifiably above Poisson here: {symbol} ≥ {b} > {a} ≥ {symbol}_Poisson."
    overlap = min(r["upper"], p["upper"]) - max(r["lower"], p["lower"])
    wr, wp = r["upper"] - r["lower"], p["upper"] - p["lower"]
    below, above = r["upper"] - p["lower"], p["upper"] - r["lower"]  # how far r's own ends are from deciding it
    alone = (f"the upper end of {name} would have to fall by {below:.2g}, below {_outward(p['lower'], 5, False):.5g}"
             if below <= above else
             f"the lower end of {name} would have to rise by {above:.2g}, above {_outward(p['upper'], 5, True):.5g}")
    return (f"{name} ({symbol} ∈ [{_outward(r['lower'], 4, False):.4g}, {_outward(r['upper'], 4, True):.4g}]) "
            f"and Poisson ({symbol} ∈ [{_outward(p['lower'], 5, False):.5g}, {_outward(p['upper'], 5, True):.5g}]) "
            f"overlap by {overlap:.2g}: neither {what} is certifiably better; the widths ({wr:.2g} and {wp:.2g}) "
            f"would have to shrink by at least {overlap:.2g} in all to decide it ({alone}).")


def _verdicts(rows, question, delta, target_epsilon):
    """Plain-sentence verdicts: shuffle vs Poisson (provably wrong?), fixed batches vs Poisson, and every other
    sampler whose row carries an interval [lower, upper] against Poisson's interval (certified separation
    with the numbers, or by how much the widths would have to shrink): a newly registered sampler gets its
    comparison without a change here."""
    by = {r["sampler"]: r for r in rows if not (isinstance(r["value"], float) and math.isnan(r["value"]))}
    out = []
    p, s, d = by.get("poisson"), by.get("shuffle"), by.get("deterministic")
    reliable = delta >= RELIABLE_DELTA_FLOOR and p is not None and "delta_below" not in p["flags"]
    others = [r for name, r in by.items() if name not in _OWN_VERDICT]
    if question == "epsilon":
        if p is not None and s is not None:
            if reliable and s["value"] > p["value"]:
                out.append(f"a shuffled run reported with Poisson accounting (ε ≤ {_fmt(p['value'])}) is provably "
                           f"wrong: its ε is at least {_fmt(s['value'])} (and at most {_fmt(s['upper'])}).")
            else:
                out.append(f"the shuffle lower bound ({_fmt(s['value'])}) does not exceed the Poisson upper bound "
                           f"({_fmt(p['value'])}): Poisson accounting of a shuffled run is not provably wrong here, "
                           f"nor proven right; the certified ε of shuffling is the deterministic {_fmt(s['upper'])} "
                           f"(no tighter upper bound for shuffling is known).")
        if p is not None and d is not None:
            out.append(f"fixed batches (the same partition every epoch) have ε = {_fmt(d['value'])} exactly, "
                       f"{d['value'] / p['value']:.3g}× the Poisson ε ≤ {_fmt(p['value'])}.")
        if p is not None and _has_interval(p):
            for r in others:
                if _has_interval(r):
                    out.append(_compare(_name(r["sampler"]), r, p, "sampler", "ε", "more private"))
    elif question == "sigma":
        if p is not None and _has_interval(p) and p["lower"] < p["upper"]:
            lo, up = _bracket(p["lower"], p["upper"])
            out.append(f"Poisson: σ = {up} suffices and σ ≤ {lo} is provably insufficient (the smallest "
                       f"sufficient σ lies in between).")
        if p is not None and s is not None:
            if s["value"] > p["value"]:
                out.append(f"a shuffled run trained with the Poisson σ = {_fmt(p['value'])} is provably not "
                           f"(ε = {_fmt(target_epsilon)}, δ = {delta:g})-DP: it needs σ > {_fmt(s['value'])} "
                           f"(σ = {_fmt(s['upper'])} suffices).")
            else:
                out.append(f"the Poisson σ = {_fmt(p['value'])} is not provably too small for shuffling (the shuffle "
                           f"lower bound only rules out σ ≤ {_fmt(s['value'])}); σ = {_fmt(s['upper'])} certifies it.")
        if p is not None and d is not None:
            out.append(f"fixed batches need σ = {_fmt(d['value'])}, {d['value'] / p['value']:.3g}× the Poisson "
                       f"σ = {_fmt(p['value'])}.")
        for r in others:
            if p is None:
                break
            if _has_interval(r) and _has_interval(p) and r["lower"] < r["upper"] and p["lower"] < p["upper"]:
                out.append(_compare(_name(r["sampler"]), r, p, "sampler", "σ", "less noise"))
            else:
                out.append(f"{_name(r['sampler'])} needs σ ≤ {_fmt(r['value'])} (Poisson: {_fmt(p['value'])}).")
    else:
        if p is not None and s is not None:
            if s["value"] < p["value"]:
                n_ep = s["value"]
                beyond = (f"beyond {n_ep} epoch{'s' if n_ep != 1 else ''}" if n_ep > 0 else "even after one epoch")
                out.append(f"a shuffled run trained for the {p['value']} epochs Poisson accounting allows is "
                           f"provably not (ε = {_fmt(target_epsilon)}, δ = {delta:g})-DP: {beyond} its ε provably "
                           f"exceeds the target ({s['lower']} epochs are certified).")
            else:
                out.append(f"Poisson accounting allows {p['value']} epochs; the shuffle lower bound rules out only "
                           f"more than {s['value']}; {s['lower']} epochs are certified for shuffling.")
        if p is not None and p["upper"] > p["lower"]:
            out.append(f"Poisson: {p['lower']} epochs are certified; more than {p['upper']} provably exceed the "
                       f"target.")
        if p is not None and d is not None:
            out.append(f"fixed batches allow {d['value']} epochs (Poisson: {p['value']}).")
        if p is not None:
            for r in others:
                out.append(f"{_name(r['sampler'])} allows at least {r['value']} epochs (Poisson: {p['value']}).")
    return out


def audit(dataset_size, batch_size, *, delta, epochs=None, sigma=None, target_epsilon=None, samplers=None,
          accuracy="default", force=False, per_epoch=False):
    """One row per batch sampler for a DP-SGD run over ``dataset_size`` examples in batches of ``batch_size``.

    ``sigma`` + ``epochs`` → ε(δ); ``target_epsilon`` + ``epochs`` → σ; ``target_epsilon`` + ``sigma`` →
    the most epochs (≤ :data:`MAX_EPOCHS`).  ``samplers``: a subset of the registered samplers (default: all).
    A row predicted beyond the time limit is listed, not computed (flag ``skipped_cost``; the reason in
    ``df.attrs["skipped"]``), unless ``force``.  ``accuracy``: the setting of samplers with an ``accuracy`` option
    (balls_and_bins: relative width ≤ 1e-2 / 1e-3 for "default"/"fine"); the other samplers use their default accuracy.

    Returns a pandas DataFrame with :data:`COLUMNS` (see the module docstring for ``kind`` and
    ``value``); ``df.attrs["verdicts"]`` is a list of plain-sentence verdicts and
    ``df.attrs["question"]`` the question answered.  Bad input raises ParameterError naming the parameter.
    ``per_epoch=True`` (an ε question only): ``df.attrs["per_epoch"]``, each computed row's answer after every
    epoch 1 … E (:mod:`dpsampling.per_epoch_audit`; its epoch-E rows are the table's rows).
    """
    import pandas as pd

    n, b, delta, epochs, chosen = _check_inputs(dataset_size, batch_size, delta, epochs, sigma, target_epsilon,
                                                samplers)
    if accuracy not in ("default", "fine"):
        raise ParameterError("accuracy", "one of default, fine", accuracy)
    run = _Run(n, b, delta, accuracy, force)
    question = "epsilon" if target_epsilon is None else ("sigma" if sigma is None else "epochs")
    rows, skipped = [], {}
    for sampler in chosen or _samplers.SAMPLERS:
        spec = _samplers.get_spec(sampler)
        if question == "epochs":  # the search's first question; later ones stop at epochs_cap
            q = run.question(sampler, "epsilon", float(sigma), 1, delta)
        elif question == "sigma":
            q = run.question(sampler, "sigma", None, epochs, (float(target_epsilon), delta))
        else:
            q = run.question(sampler, "epsilon", float(sigma), epochs, delta)
        try:
            check_cost(spec, q, force=force)
        except CostError as exc:
            if chosen is not None or not spec.audit_optional:
                raise  # a row asked for (or a required one): the question is refused, naming what to change
            skipped[sampler] = exc
            row = _row(sampler, question, _NAN, spec.audit_kind, spec.default_method or "", None, None,
                       (SKIPPED_COST,))
        else:
            if question == "epsilon":
                row = _forward(run, sampler, float(sigma), epochs)
            elif question == "sigma":
                row = _inverse_sigma(run, sampler, float(target_epsilon), epochs)
            else:
                try:  # an optional row's search stops when its predicted questions add up beyond the limit
                    budget = math.inf if force or chosen is not None or not spec.audit_optional else _samplers.TIME_LIMIT
                    row = _inverse_epochs(run, sampler, float(sigma), float(target_epsilon), budget)
                except CostError as exc:
                    skipped[sampler] = exc
                    row = _row(sampler, question, _NAN, spec.audit_kind, spec.default_method or "", None, None,
                               (SKIPPED_COST,))
        row.update(dataset_size=n, batch_size=b, steps_per_epoch=run.steps, q=run.q,
                   epochs=_NAN if question == "epochs" else epochs,
                   sigma=row["value"] if question == "sigma" else float(sigma),
                   delta=delta, target_epsilon=_NAN if target_epsilon is None else float(target_epsilon))
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    df.attrs["question"] = question
    df.attrs["verdicts"] = _verdicts(rows, question, delta, target_epsilon)
    df.attrs["skipped"] = skipped
    # --- per epoch (dpsampling.per_epoch_audit): every computed row's answer after each epoch 1 … E ---
    if per_epoch:
        if question != "epsilon":
            raise ParameterError("per_epoch", "only with sigma and epochs (an ε question)", per_epoch)
        from . import per_epoch_audit

        df.attrs["per_epoch"] = per_epoch_audit.table([s for s in chosen or _samplers.SAMPLERS if s not in skipped],
                                                      float(sigma), epochs, run._kw, delta, _forward)
    # --- end per epoch ---
    return df


__all__ = ["COLUMNS", "MAX_EPOCHS", "SAMPLERS", "SKIPPED_COST", "audit"]


class _CallableModule(__import__("types").ModuleType):
    """Importing this module sets the package attribute ``dpsampling.audit`` to the module itself,
    shadowing the lazily exported function; making the module callable keeps ``dpsampling.audit(...)``
    meaning :func:`audit` either way."""

    def __call__(self, *args, **kwargs):
        return audit(*args, **kwargs)


__import__("sys").modules[__name__].__class__ = _CallableModule
