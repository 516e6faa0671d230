"""What a batch sampler is, as data: :class:`SamplerSpec` (one per sampler module) and its :class:`Option` s.

Every sampler module ends with ``SPEC = SamplerSpec(...)``; ``dpsampling.samplers.register`` adds it to
the registry that :func:`dpsampling.samplers.account`, the command line, ``audit``, the config check and
the pipeline read.  This module imports nothing heavy (no numpy, scipy or dp_accounting), so the command
line builds its parser from the registry without loading an accountant.

One limit for every entry point: :data:`TIME_LIMIT` seconds of predicted time (a spec's cost model,
measured on a 2-core machine by bench/bench_cost_model.py).  :func:`check_cost` refuses a question
predicted beyond it, saying the predicted time in words and how to force it (``force=True`` in the
library, ``--force`` on the command line).  One memory limit: :data:`MEMORY_LIMIT` bytes of predicted peak memory
(``Cost.bytes``); a question predicted beyond it is refused even when forced, naming what to change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from dpsampling.engine.errors import ParameterError

#: predicted seconds beyond which a question is refused unless forced (CLI, audit, account, pipeline)
TIME_LIMIT = 60.0
#: predicted peak bytes beyond which a question is refused, forced or not (a laptop's memory to spare; a cost
#: model's ``Cost.bytes``, measured as the child's ru_maxrss by bench/bench_sidedness.py)
MEMORY_LIMIT = 2 * 2**30
#: the batch models: ``rate`` = q is a free sampling rate (required); ``one_per_step`` = one batch per step,
#: q = 1/steps (optional, checked); ``capped`` = a free rate q whose batches are cut to a maximum size
BATCH_MODELS = ("rate", "one_per_step", "capped")
#: neighbouring relations an analysis holds under: ``add_remove`` (add or remove one record; for a rate sampler
#: the same curves as zero-out, Chua et al. ICML 2024 §2.2), ``zero_out`` (one record replaced by a ghost whose
#: gradient is 0: fixed-size batches, Chua et al. §2.2), ``replace_one`` (substitution, Lebeda et al. 2024)
RELATIONS = ("add_remove", "zero_out", "replace_one")
#: how the relation is written in a statement
RELATION_WORDS = {"add_remove": "add-or-remove-one adjacency", "zero_out": "zero-out adjacency",
                  "replace_one": "replace-one (substitution) adjacency"}
#: the data loaders a training library can wrap, by how they draw batches (an integration maps its own loader
#: objects to one of these; a sampler's ``loader`` says which one it accounts)
LOADERS = ("poisson", "shuffle", "fixed_order", "balls_and_bins", "truncated_poisson")
#: what a sampler stands for in the upper layers (``SamplerSpec.role``): ``baseline`` = the sampler every other is
#: compared with (the audit's verdicts, the statement's "assuming Poisson sampling" line: the first registered
#: sampler with this role); ``once_per_epoch`` = each example exactly once per epoch in the same batches, an exact
#: value (the statement's first line, and the certified, best known upper end of a sampler with ``upper_best_known``)
ROLES = ("baseline", "once_per_epoch")


@dataclass(frozen=True)
class Option:
    """One sampler option: library keyword ``name``, command-line ``flag`` (without ``--``), type, default,
    allowed values (``choices``, or ``low``/``high`` with open/closed ends), and where it applies
    (``methods``/``quantities``; None = everywhere).  ``cli=False``: a library-only option (no flag);
    ``fill_unless``: see the field."""

    name: str
    flag: str
    type: type
    help: str
    default: object = None
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    methods: tuple | None = None
    quantities: tuple | None = None
    cli: bool = True
    #: the command line passes ``default`` when the option is unset and so is the option named here (e.g. the Monte
    #: Carlo sample size, unless a half-width sets it); None: the library's own default applies
    fill_unless: str | None = None
    #: the question needs it (where it applies): unset, ``account`` refuses the question saying it is missing
    required: bool = False

    @property
    def allowed(self) -> str:
        """The allowed values as text (as a ParameterError carries them)."""
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        kind = "an integer" if self.type is int else "a number"
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            return f"{kind} {'<' if self.high_open else '<='} {self.high:g}"
        return kind

    def check(self, value):
        """``value`` if allowed, else ParameterError naming this option."""
        if value is None or (self.choices is None and self.type not in (int, float)):
            return value  # free-form options (grids, specs) are checked by the sampler
        ok = True
        if self.choices is not None:
            ok = value in self.choices
        else:
            try:
                v = float(value)
            except (TypeError, ValueError):
                ok = False
            else:
                ok = not math.isnan(v) and not isinstance(value, bool) and not (self.type is int and v != int(v))
                if ok and self.low is not None:
                    ok = v > self.low if self.low_open else v >= self.low
                if ok and self.high is not None:
                    ok = v < self.high if self.high_open else v <= self.high
        if not ok:
            raise ParameterError(self.name, self.allowed, value)
        return value

    def applies(self, quantity, method) -> bool:
        return ((self.methods is None or method in self.methods)
                and (self.quantities is None or quantity in self.quantities))


@dataclass(frozen=True)
class Question:
    """One question to a sampler, as the cost model sees it (``steps`` per epoch)."""

    quantity: str
    sigma: float | None
    steps: int
    epochs: int = 1
    q: float | None = None
    target: object = None
    method: str | None = None
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Cost:
    """Predicted seconds of one question, (if it cannot run at all) why, in words, the parameters whose values
    drive the cost (named in a refusal) and the predicted peak memory in bytes (0: small; beyond
    :data:`MEMORY_LIMIT` :func:`check_cost` refuses the question, forced or not)."""

    seconds: float
    why: str = ""
    drivers: tuple = ("steps", "epochs")
    bytes: float = 0.0


@dataclass(frozen=True)
class SamplerSpec:
    """A batch sampler as data.

    ``bounds``: method -> the bounds it gives on ε/δ (first = default); ``sigma_bounds``: the bounds the σ
    calibration gives; ``methods``: () when the sampler has no method choice (``method`` must stay unset);
    ``bracket_methods``: methods whose ε/δ answers carry both ends of a certified bracket through
    :func:`account`; ``quantities``: method -> the quantities it answers (default: all three);
    ``directions``: neighbouring directions accepted; ``audit_kind``: the kind of its audit row;
    ``cost``: the cost model, Question -> :class:`Cost`; ``relation``: the neighbouring relation its bounds hold
    under (:data:`RELATIONS`); ``drawn``: how it draws batches, in words (a statement's first sentence);
    ``loader``: the training-library loader it accounts (:data:`LOADERS`; None: no common loader draws so);
    ``upper_best_known``: True when the upper end is certified but only the best known one, not claimed tight
    (shuffle: the deterministic value, Chua et al. ICML 2024 Thm 4.1); its answers carry ``upper_best_known``.

    How the upper layers word it (no layer above ``samplers`` names a sampler): ``role`` (:data:`ROLES` or None);
    ``label``: its name in verdicts and footnotes ("" = the name with '-' for '_'); ``run_words``: a run drawn so
    ("" = "a <label> run"); ``lower_source``: where a lower bound comes from (cited after it); ``upper_source``: for
    an upper end that is only the best known, what it is and why it bounds (cited after it); ``upper_method``:
    the short label of that upper end in an audit's words.
    """

    name: str
    summary: str
    pair_add: str
    pair_remove: str
    batch: str
    bounds: dict
    sigma_bounds: tuple
    methods: tuple
    options: tuple
    audit_kind: str
    cost: Callable
    delta: Callable
    epsilon: Callable
    sigma: Callable
    relation: str
    drawn: str
    loader: str | None = None
    upper_best_known: bool = False
    default_method: str | None = None
    bracket_methods: tuple = ()
    quantities: dict = field(default_factory=dict)
    directions: tuple = ("add_remove",)
    audit_options: dict = field(default_factory=dict)
    #: an optional audit row: with the default sampler list it is listed, not computed, when predicted beyond the
    #: limit (a required row stops the audit instead)
    audit_optional: bool = False
    role: str | None = None
    label: str = ""
    run_words: str = ""
    lower_source: str = ""
    upper_source: str = ""
    upper_method: str = ""
    #: its independent reference in the pipeline's certified_intervals check: the name of a reference function of
    #: ``dpsampling.references`` (a key of its ``REFERENCES``: "gaussian_epsilon", "pld_pair", "allocation_range",
    #: "shuffle_ec_lower"), which says where it applies and why not elsewhere; "" = none
    reference: str = ""
    #: a rate sampler whose curves under its relation are the Poisson-subsampled Gaussian's at σ/sensitivity (WOR: 2,
    #: Lebeda et al. 2024 Prop. 9; the loss depends on Δ/σ only): the sensitivity of that dominating pair
    sensitivity: float = 1.0
    #: ε(δ) after each epoch of a list before ``last_epoch`` at the default method, given account's answer ``last``
    #: there (``last=None``: the last epoch itself, exactly as account), sharing work between the epochs
    #: (:func:`dpsampling.samplers.per_epoch.epsilon_per_epoch`; None, or None for an epoch: account is asked there)
    epsilon_epochs: Callable | None = None
    #: a sampler that caps its batches (batch "capped"): the smallest cap whose certified upper ε(δ) is within
    #: ``factor`` of the baseline's, ``cap_search(delta, *, sigma, steps, epochs, q, dataset_size, factor)`` -> an
    #: object with ``max_batch_size``, ``epsilon``, ``poisson_epsilon``, ``factor``, ``mean_batch_size``
    cap_search: Callable | None = None

    def __post_init__(self):
        from dpsampling.engine.validation import check_choice  # (numpy, loaded by the registry anyway)

        check_choice("batch", self.batch, BATCH_MODELS)
        check_choice("relation", self.relation, RELATIONS)
        check_choice("loader", self.loader, (None, *LOADERS))
        check_choice("role", self.role, (None, *ROLES))

    @property
    def words(self) -> str:
        """How verdicts and footnotes name this sampler."""
        return self.label or self.name.replace("_", "-")

    @property
    def run(self) -> str:
        """A run drawn by this sampler, in words."""
        return self.run_words or f"a {self.words} run"

    @property
    def relation_words(self) -> str:
        """The neighbouring relation, as a statement writes it."""
        return RELATION_WORDS[self.relation]

    def default_bound(self, method) -> str:
        return self.bounds[method][0]

    def answers(self, quantity, method) -> bool:
        return quantity in self.quantities.get(method, ("epsilon", "delta", "sigma"))

    def predict_seconds(self, question: Question) -> float:
        return float(self.cost(question).seconds)

    def option(self, name) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


def in_words(seconds: float) -> str:
    """``about 4 minutes``, ``about 20 s``, ``more than a day``."""
    if not math.isfinite(seconds) or seconds > 86400:
        return "more than a day"
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 5400:
        return f"about {round(seconds / 60)} minutes"
    return f"about {round(seconds / 3600)} hours"


class CostError(ParameterError):
    """A question predicted beyond the time limit (or that cannot run at all): ``param`` = "force"; ``seconds``,
    ``limit``, ``why`` and ``drivers`` (the parameters to change) say what and why."""

    def __init__(self, what, cost, limit):
        self.what, self.seconds, self.why, self.drivers, self.limit = what, cost.seconds, cost.why, cost.drivers, limit
        self.bytes = cost.bytes
        super().__init__("force", "True to run a question predicted beyond the limit", False,
                         message=self.text("force=True", {d: d for d in cost.drivers}))

    def __reduce__(self):  # copyable (pandas deep-copies DataFrame.attrs)
        return (type(self), (self.what, Cost(self.seconds, self.why, self.drivers, self.bytes), self.limit))

    def text(self, force_name, names):
        """The refusal in words, with ``force_name`` (e.g. "--force") and ``names``: parameter -> its name (None: the
        caller cannot set it, e.g. ``method`` of an integration; left out)."""
        # each name once: two parameters may be set by one flag (the audit's --batch-size sets q and the steps)
        change = " or ".join(n for n in dict.fromkeys(names.get(d, d) for d in self.drivers) if n is not None)
        if self.why:
            return f"{self.what}: {self.why}; change {change}"
        return (f"{self.what} would take {in_words(self.seconds)} on a laptop (limit {self.limit:g} s); change "
                f"{change}, or {force_name} to run it")


def in_bytes(n: float) -> str:
    """``about 3.8 GB``, ``about 600 MB``."""
    if not math.isfinite(n) or n > 1e15:
        return "more than a petabyte"
    return f"about {n / 2**30:.1f} GB" if n >= 2**30 else f"about {max(1, round(n / 2**20))} MB"


def memory_why(n: float, limit=MEMORY_LIMIT) -> str:
    """The refusal of a question predicted to need ``n`` bytes (``Cost.why``)."""
    return f"these inputs would need {in_bytes(n)} of memory, more than a laptop spares (limit {in_bytes(limit)[6:]})"


#: the max-statistic lower bound (samplers/_max_statistic.py) of E > 1 epochs, measured (CPU s, ru_maxrss) on the
#: shared 2-core machine, balls-and-bins T = 235: 5.8e5 slices 2.2 s 391 MiB, 1.4e6 4.1 s 766 MiB, 2.9e6 9.7 s
#: 1415 MiB, 1.1e7 (σ 0.01) 28 s 3.8 GB; its time and memory grow with the number of slices of M
_MS_BASE_BYTES = 130 * 2**20
_MS_BYTES_PER_SLICE = 500.0
_MS_SECONDS_PER_SLICE = 3.5e-6
_MS_SECONDS_PER_EPOCH = 2e-3


def max_statistic_slices(sigma, steps, epochs=1, mean_p=1.0, mean_q=0.0, discretization=1e-3, log_tail=-40.0):
    """The number of slices of the max coordinate M in the max-statistic PLD (as ``_max_statistic.slice_edges``
    counts them, with the standard library's normal quantile: no scipy here)."""
    from statistics import NormalDist

    nd = NormalDist()
    tau = log_tail - math.log(2.0 * epochs)
    lo = sigma * nd.inv_cdf(min(math.exp(tau / steps), 1 - 1e-16))
    tail = -math.expm1(math.log1p(-math.exp(tau)) / steps)
    hi = max(mean_p, mean_q) - sigma * nd.inv_cdf(max(tail, 1e-300))
    return max(1.0, (hi - lo) / (discretization * sigma**2 / abs(mean_p - mean_q)))


def max_statistic_cost(sigma, steps, epochs, mean_p=1.0, mean_q=0.0):
    """(seconds, bytes) of the max-statistic lower bound of ``epochs`` > 1 epochs (its PLD over slices of M)."""
    n = max_statistic_slices(sigma, steps, epochs, mean_p, mean_q)
    return (0.5 + _MS_SECONDS_PER_SLICE * n + _MS_SECONDS_PER_EPOCH * epochs,
            _MS_BASE_BYTES + _MS_BYTES_PER_SLICE * n)


def check_cost(spec: SamplerSpec, question: Question, *, force=False, limit=TIME_LIMIT) -> Cost:
    """Raise :class:`CostError` if ``spec`` predicts more than ``limit`` seconds for ``question`` (or says it cannot
    run at all, or more than :data:`MEMORY_LIMIT` bytes), unless ``force`` (a question that cannot run, or that
    would not fit in memory, is refused even then).  Returns the :class:`Cost`."""
    try:
        c = spec.cost(question)
    except (TypeError, ValueError, ArithmeticError):  # out-of-range input: the sampler itself names the parameter
        return Cost(0.0)
    if not c.why and c.bytes > MEMORY_LIMIT:
        c = Cost(c.seconds, memory_why(c.bytes), c.drivers, c.bytes)
    if question.quantity in c.drivers:  # σ is what a σ question answers: not a parameter to change
        c = Cost(c.seconds, c.why, tuple(d for d in c.drivers if d != question.quantity), c.bytes)
    if c.why or (c.seconds > limit and not force):
        raise CostError(f"{spec.name} {question.quantity}", c, limit)
    return c
