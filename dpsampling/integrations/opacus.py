"""Opacus accountants for every batch sampler, a balls-and-bins batch sampler, and a check of every accountant
against the data loader it accounts.

Importing this module registers one accountant per registered sampler with Opacus (``opacus.accountants.registry``),
``dpsampling_<sampler>``, so ``PrivacyEngine(accountant="dpsampling_balls_and_bins")`` and
``make_private_with_epsilon`` work unchanged (:func:`register` adds samplers registered later).  Every number is
:func:`dpsampling.samplers.account`'s (the same as ``dpsampling epsilon``), read off the sampler's spec:

* the run is read off the accountant's ``history`` of ``(noise_multiplier, sample_rate, steps)``; a history of one
  σ and one sample rate is one question (below, ``total_steps`` the number of compositions); a history that changes
  either is a run of phases, each contiguous stretch of one setting a phase (:mod:`._opacus_history`,
  :func:`dpsampling.samplers.phases.epsilon`; refused, saying why, where the phases module does not hold the sampler,
  and for a change inside an epoch of a one-batch-per-step sampler);
* a sampler with a free rate (``spec.batch == "rate"``) is accounted at ``q = sample_rate`` over ``total_steps``;
* a sampler with one batch per step (``spec.batch == "one_per_step"``) has ``steps = 1/sample_rate`` steps per epoch
  (Opacus sets ``sample_rate = 1/len(data_loader)``; a rate that is not 1/T for an integer T is refused) and
  ``total_steps/steps`` epochs; a partial last epoch is accounted as a full one for the upper end (running fewer
  steps is a post-processing of running more, so ε can only be smaller) and left out for the lower end;
* :meth:`DpsamplingAccountant.get_epsilon` returns the certified upper end; ``get_epsilon_interval`` returns
  (lower, upper).  A history of whole epochs of one setting is answered by
  :func:`dpsampling.samplers.per_epoch.epsilon_per_epoch`, which keeps the composition of earlier epochs, so asking
  after every epoch costs about one epoch of composition per call.

σ calibration: :class:`PrivacyEngine`'s ``make_private_with_epsilon`` takes :func:`calibrated_sigma`, the σ ``dpsampling
sigma`` gives (one solve).  Opacus's own ``get_noise_multiplier`` (Opacus's engine, or called directly) sets ``history =
[(σ, q, total_steps)]`` and calls ``get_epsilon`` 15–25 times.  Results are memoised per run (one dict for all
instances: Opacus builds a fresh accountant for the calibration), and for a sampler whose answer is predicted to cost
more than :data:`ENVELOPE_SECONDS`, a history set by assignment with one entry (the calibration's pattern) is answered
from :func:`_envelope`, a certified upper bound read off a geometric σ grid that Opacus's bisection revisits instead of
asking the accountant at every σ it tries.

:class:`PrivacyEngine` (and :func:`check_privacy_engine` for Opacus's own engine) knows the loader it wraps, maps it
to a loader kind (:data:`dpsampling.samplers.spec.LOADERS`) and the kind to the sampler whose ``spec.loader`` is that
kind, and checks the accountant against it: when the accountant assumes another loader, or reports less than the
certified lower end of the sampler actually used, every ``get_epsilon`` warns with both numbers of that call (the
certified interval of the run so far) and the accountant to use, and ``make_private_with_epsilon`` warns before
training with the certified ε at the σ it calibrated; a loader it cannot map is refused.  A ``dpsampling_*``
accountant in Opacus's own engine, which cannot show it the loader, says so once (:class:`DpsamplingUnchecked`), with
how to get the check.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

try:
    import torch
    from opacus import PrivacyEngine as _OpacusPrivacyEngine
    from opacus.accountants import IAccountant
    from opacus.accountants.registry import create_accountant, register_accountant
    from opacus.data_loader import DPDataLoader
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, SequentialSampler
except ImportError as exc:  # pragma: no cover - exercised where Opacus is absent
    raise ImportError(f"dpsampling.integrations.opacus needs Opacus and PyTorch ({exc}): install a CPU-only torch "
                      f"first, then pip install 'dpsampling[opacus]' (README, 'In your training library')") from exc

from dpsampling import render, samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_choice, check_delta, check_int, one_number
from dpsampling.engine.validation import steps_of_rate as _one_per_step
from dpsampling.samplers.per_epoch import epsilon_per_epoch
from dpsampling.samplers.spec import LOADERS, TIME_LIMIT, Cost, CostError

from . import _opacus_history as _history
from ._inputs import plain

#: Opacus's and PyTorch's names -> the loader kind (:data:`~dpsampling.samplers.spec.LOADERS`) they stand for:
#: Opacus's own accountants (all account Poisson sampling), its Poisson loader, and the torch samplers a DataLoader
#: draws its order with (``shuffle=True``: RandomSampler, ``shuffle=False``: SequentialSampler)
SAMPLER_NAMES = {"rdp": "poisson", "prv": "poisson", "gdp": "poisson", "DPDataLoader": "poisson",
                 "RandomSampler": "shuffle", "SequentialSampler": "fixed_order",
                 "BallsAndBinsBatchSampler": "balls_and_bins"}
#: Opacus's default accountant, whose ε a warning quotes as "what Opacus reports"
OPACUS_DEFAULT = "prv"
#: Opacus's own accountants (all of which account Poisson sampling)
POISSON_MECHANISMS = ("rdp", "prv", "gdp")
#: balls_and_bins calibration grid: this many σ points per doubling (ratio 2^(1/36) ≈ 1.019 between points)
GRID_PER_OCTAVE = 36
#: predicted seconds of one answer above which σ calibration reads the certified grid envelope (:func:`_envelope`)
ENVELOPE_SECONDS = 2.0
#: how to go ahead after a cost refusal inside Opacus
FORCE_TEXT = "set accountant.force = True (e.g. privacy_engine.accountant.force = True)"
#: the parameters a cost refusal names, in Opacus's terms
_DRIVERS = {"steps": "the steps per epoch (len(data_loader))", "epochs": "the epochs", "sigma": "noise_multiplier",
            "q": "sample_rate", "method": None}

_MEMO: dict = {}


class DpsamplingWarning(UserWarning):
    """An accountant that does not account the run's loader, with the certified numbers of the loader's sampler."""


class DpsamplingNote(DpsamplingWarning):
    """An accountant's one note on its own answer (an upper end that is only the best known one), said once."""


class DpsamplingUnchecked(DpsamplingWarning):
    """A ``dpsampling_*`` accountant in an engine that cannot show it the data loader (Opacus's own PrivacyEngine),
    said once per accountant, with how to get the check."""


def _check_delta(delta):
    return float(check_delta(one_number("delta", plain(delta))))


def _run_of(history, sampler):
    """(σ, q, total_steps) of a history of one setting ``(noise_multiplier, sample_rate, steps)``; None if empty;
    ParameterError for a history that changes σ or the rate (answered by :func:`_history.results` instead)."""
    runs = _history.stretches(history or [], sampler)
    if not runs:
        return None
    if len(runs) > 1:
        raise ParameterError('history', 'one (noise_multiplier, sample_rate) per run', _history.words(runs),
                             message=f"accountant dpsampling_{sampler}: the history changes the noise multiplier or "
                                     f"the sample rate ({_history.words(runs)}): a run of phases, not one setting")
    return runs[0]


def steps_of_rate(sample_rate, sampler=""):
    """The steps per epoch T with ``sample_rate = 1/T`` (one batch per step); ParameterError naming the rate if there
    is no such integer."""
    t = _one_per_step(sample_rate)
    if t is None:
        raise ParameterError("sample_rate", "1/steps for an integer steps", sample_rate,
                             message=f"sample_rate must be 1/steps (steps per epoch) for sampler '{sampler}' (one "
                                     f"batch "
                                     f"per step; Opacus sets it to 1/len(data_loader)), got {sample_rate!r} = "
                                     f"1/{1.0 / sample_rate:.6g}")
    return t


def _whole_epochs(q, total_steps):
    """(steps per epoch, epochs) if ``total_steps`` is whole epochs of T = 1/q steps, else None."""
    t = _one_per_step(q)
    if t is not None and total_steps % t == 0:
        return t, total_steps // t
    return None


def _opacus_cost_error(err):
    """A cost refusal that says how to go ahead inside Opacus (the accountant's ``force``)."""
    out = CostError(err.what, Cost(err.seconds, err.why, err.drivers), err.limit)
    out.args = (err.text(FORCE_TEXT, _DRIVERS),)
    return out


def _ask(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except CostError as err:
        raise _opacus_cost_error(err) from None
    except ParameterError as err:  # named as Opacus names it
        raise err.renamed({"sigma": "noise_multiplier", "q": "sample_rate"}) from None


def _account(sampler, delta, sigma, q, total_steps, force=False, bound=None):
    """The memoised :func:`account` answer after ``total_steps`` steps (one batch per step: T = 1/q per epoch,
    total_steps/T epochs)."""
    key = (sampler, sigma, q, total_steps, delta, bound)
    if key not in _MEMO:
        if samplers.get_spec(sampler).batch == "one_per_step":
            t = steps_of_rate(q, sampler)
            kw = {"steps": t, "epochs": total_steps // t}
        else:
            kw = {"steps": total_steps, "q": q}
        _MEMO[key] = _ask(samplers.account, sampler, "epsilon", delta, sigma=sigma, bound=bound, force=force, **kw)
    return _MEMO[key]


def calibrated_sigma(sampler, epsilon, delta, sample_rate, epochs, force=False):
    """The σ ``make_private_with_epsilon`` of :class:`PrivacyEngine` uses with ``dpsampling_<sampler>``:
    :func:`dpsampling.samplers.account`'s sufficient σ (its upper end, what ``dpsampling sigma`` prints), for the run
    Opacus's ``get_noise_multiplier`` describes: ``int(epochs / sample_rate)`` steps at ``sample_rate`` (one batch
    per step: 1/sample_rate steps per epoch, a partial last epoch counted whole).  Its certified ε is ≤ ``epsilon``,
    and it is one solve instead of Opacus's bisection over 14–25 certified ε answers (costs: docs/benchmarks.md)."""
    delta = _check_delta(delta)
    epsilon, q = plain(epsilon), plain(sample_rate)
    total_steps = int(plain(epochs) / q)  # as get_noise_multiplier counts them
    if samplers.get_spec(sampler).batch == "one_per_step":  # a partial last epoch as a full one (as get_epsilon)
        t = steps_of_rate(q, sampler)
        kw = {"steps": t, "epochs": -(-total_steps // t)}
    else:
        kw = {"steps": total_steps, "q": q}
    return float(_ends(_ask(samplers.account, sampler, "sigma", (epsilon, delta), force=force, **kw))[1])


def _per_epoch(sampler, delta, sigma, q, steps, epochs, force=False):
    """ε after epochs 1..epochs of ``steps`` steps each (compositions kept between calls).

    A training loop asks after every epoch, so this asks for the epochs up to the next power of two at once
    (:func:`epsilon_per_epoch` answers them from one composition of the last; the next calls find them kept): the
    calls of an E-epoch run compose about 2E epochs in all instead of E²/2.  The look-ahead is skipped where its
    question is predicted beyond the time limit."""
    q = None if samplers.get_spec(sampler).batch == "one_per_step" else q
    ahead = 1 << (epochs - 1).bit_length()
    if ahead > epochs and not force:
        spec = samplers.get_spec(sampler)
        question = samplers.question(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=ahead, q=q)
        if spec.predict_seconds(question) > TIME_LIMIT:
            ahead = epochs
    return _ask(epsilon_per_epoch, sampler, delta, sigma=sigma, steps=steps, epochs=max(ahead, epochs), q=q,
                force=force)[:epochs]


def _ends(r):
    """(lower, upper) certified ends of an AccountingResult (None where it has none)."""
    lower = r.lower if r.lower is not None else (r.value if r.kind in ("lower", "exact") else None)
    upper = r.upper if r.upper is not None else (r.value if r.kind in ("upper", "exact") else None)
    return lower, upper


def _envelope(sampler, delta, sigma, q, total_steps, force=False):
    """A certified upper bound on ε at σ from the memoised upper ends up(g) at grid points g_k = 2^(k/GRID_PER_OCTAVE).

    With g_k ≤ σ < g_{k+1}: ε(σ) ≤ ε(g_k) ≤ up(g_k), since more noise is a post-processing (add independent Gaussian
    noise to a run at g_k).  The value returned interpolates in log σ from max(up(g_{k-1}), up(g_k)) at g_k down to
    up(g_k) at g_{k+1}: ≥ up(g_k) throughout the cell, continuous inside it, and at a grid point it can only jump up,
    so as σ grows it falls through Opacus's tolerance band below the target somewhere, and the bisection ends there.
    (A step function, up(g_k) on the whole cell, can jump over that band, and Opacus's loop would never stop.)
    """
    x = math.log2(sigma) * GRID_PER_OCTAVE
    k = math.floor(x)
    up_prev, up_k = (_ends(_account(sampler, delta, 2.0 ** (j / GRID_PER_OCTAVE), q, total_steps, force))[1]
                     for j in (k - 1, k))
    start = max(up_prev, up_k)
    return start + (up_k - start) * (x - k)


def _count(n, word):
    """'1 epoch', '2 epochs'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _when(total_steps, steps):
    """'after 94 steps (1 epoch)', 'after 141 steps (1 epoch and 47 steps)' with ``steps`` per epoch."""
    e, rest = divmod(total_steps, steps)
    span = _count(e, "epoch") if not rest else (f"{_count(e, 'epoch')} and {_count(rest, 'step')}" if e
                                                else f"{rest} of {steps} steps of an epoch")
    return f"after {_count(total_steps, 'step')} ({span})"


class DpsamplingAccountant(IAccountant):
    """An Opacus accountant answering with :func:`dpsampling.samplers.account` for ``SAMPLER`` (a subclass per sampler).

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` as in Opacus's accountants; :meth:`step` merges
    equal consecutive entries.  ``force = True`` (on the class or an instance, e.g.
    ``privacy_engine.accountant.force = True``) runs a question predicted beyond the time limit instead of refusing.
    """

    SAMPLER = ""
    force = False
    #: True where something that knows the data loader checks this accountant (:class:`PrivacyEngine`,
    #: :func:`check_privacy_engine`); otherwise the first answer in training says once that nothing does
    sees_loader = False

    def __init__(self):
        super().__init__()
        self._assigned = False  # True once `history` is set from outside (σ calibration, load_state_dict)
        self._told = False  # the one-line note of an accountant whose upper end is the best known one, said once
        self._told_unchecked = False  # the one warning of an accountant no engine checks against its loader

    def _say_blind(self):
        """Warn once (:class:`DpsamplingUnchecked`) that this accountant cannot see the data loader, unless an
        engine that does checks it, or the history was set by assignment (σ calibration's scratch accountant)."""
        if self.sees_loader or self._assigned or getattr(self, "_told_unchecked", False):
            return
        self._told_unchecked = True
        m = self.mechanism()
        warnings.warn(f"dpsampling: accountant '{m}' accounts {self.spec.drawn}, but it cannot see the data loader, "
                      f"so nothing checks that the loader draws its batches that way (opacus.PrivacyEngine does not "
                      f"show it the loader; a shuffled loader accounted as Poisson reports an ε several times too "
                      f"small). For the check, use dpsampling.integrations.opacus.PrivacyEngine(accountant='{m}') "
                      f"in place of opacus.PrivacyEngine, or call dpsampling.integrations.opacus."
                      f"check_privacy_engine(privacy_engine, data_loader, delta=...) after make_private",
                      DpsamplingUnchecked, stacklevel=3)

    @property
    def history(self):
        return self._history

    @history.setter
    def history(self, value):
        self._history = list(value)
        self._assigned = True

    @classmethod
    def mechanism(cls) -> str:
        return f"dpsampling_{cls.SAMPLER}"

    @property
    def spec(self):
        return samplers.get_spec(self.SAMPLER)

    def step(self, *, noise_multiplier: float, sample_rate: float):
        noise_multiplier, sample_rate = plain(noise_multiplier), plain(sample_rate)
        h = self._history
        if h and h[-1][0] == noise_multiplier and h[-1][1] == sample_rate:
            h[-1] = (noise_multiplier, sample_rate, h[-1][2] + 1)
        else:
            h.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return sum(int(n) for _, _, n in self._history)

    def _results(self, delta):
        """(upper result, lower result or None) of the run so far, or None before any step; a history that changes
        σ or the rate is a run of phases (:mod:`._opacus_history`)."""
        runs = _history.stretches(self._history, self.SAMPLER)
        if not runs:
            return None
        if len(runs) > 1:
            return _history.results(self.SAMPLER, delta, runs, _ask, self.force)
        sigma, q, total_steps = runs[0]
        if self.spec.batch == "one_per_step":
            t = steps_of_rate(q, self.SAMPLER)
            up_epochs, lo_epochs = -(-total_steps // t), total_steps // t
            if self._assigned:  # σ calibration: one question per σ
                up = _account(self.SAMPLER, delta, sigma, q, up_epochs * t, self.force)
                lo = up if lo_epochs == up_epochs else (
                    _account(self.SAMPLER, delta, sigma, q, lo_epochs * t, self.force) if lo_epochs else None)
                return up, lo
            per = _per_epoch(self.SAMPLER, delta, sigma, q, t, up_epochs, self.force)
            return per[-1], (per[lo_epochs - 1] if lo_epochs else None)
        whole = None if self._assigned else _whole_epochs(q, total_steps)
        if whole is not None:
            r = _per_epoch(self.SAMPLER, delta, sigma, q, *whole, self.force)[-1]
        else:
            r = _account(self.SAMPLER, delta, sigma, q, total_steps, self.force)
        return r, r

    def result(self, delta: float):
        """The :class:`~dpsampling.engine.result.AccountingResult` of the run so far (its certified end)."""
        out = self._results(_check_delta(delta))
        return None if out is None else out[0]

    def get_epsilon(self, delta: float, *args, **kwargs) -> float:
        """Certified upper end of ε(δ) for the history (0 before any step).  Opacus forwards ``make_private``'s keyword
        arguments here during calibration; they do not concern accounting and are not used."""
        delta = _check_delta(delta)
        runs = _history.stretches(self._history, self.SAMPLER)
        if not runs:
            return 0.0
        self._say_blind()
        sigma, q, total_steps = runs[0]
        if self._assigned and len(self._history) == 1:
            if self.spec.batch == "one_per_step":
                t = steps_of_rate(q, self.SAMPLER)
                total_steps = -(-total_steps // t) * t
                kw = {"steps": t, "epochs": total_steps // t}
            else:
                kw = {"steps": total_steps, "q": q}
            question = samplers.question(self.SAMPLER, "epsilon", delta, sigma=sigma, **kw)
            if self.spec.predict_seconds(question) > ENVELOPE_SECONDS:
                return _envelope(self.SAMPLER, delta, sigma, q, total_steps, self.force)
        up = self._results(delta)[0]
        if self.spec.upper_best_known and not self._told and not self._assigned and len(runs) == 1:
            self._told = True
            warnings.warn(_best_known_line(self, delta, up), DpsamplingNote, stacklevel=2)
        return float(_ends(up)[1])

    def get_epsilon_interval(self, delta: float) -> tuple[float, float]:
        """(lower, upper): certified bounds on ε(δ) of the run so far (an exact value: both the same)."""
        out = self._results(_check_delta(delta))
        if out is None:
            return 0.0, 0.0
        up, lo = out
        lower = _ends(lo)[0] if lo is not None else 0.0
        if lower is None and len(_history.stretches(self._history, self.SAMPLER)) == 1:
            lower = _ends(_account(self.SAMPLER, delta, *_run_of(self._history, self.SAMPLER), self.force,
                                   "lower"))[0]
        return float(lower or 0.0), float(_ends(up)[1])

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._history = [tuple(h) for h in self._history]
        self._assigned = False  # a saved training run, not a calibration


def _opacus_epsilon(history, delta):
    """The ε Opacus's default accountant reports for ``history`` (what Opacus prints for this run)."""
    acc = create_accountant(OPACUS_DEFAULT)
    acc.history = [tuple(h) for h in history]
    return float(acc.get_epsilon(delta))


def _best_known_line(acc, delta, r):
    """One line for a sampler whose upper end is only the best known one: what Opacus's default accountant would
    report for this run, whether it is provably wrong, and the certified interval."""
    sigma, q, total_steps = _run_of(acc.history, acc.SAMPLER)
    lower, upper = _ends(r)
    claim = _opacus_epsilon(acc.history, delta)
    when = _when(total_steps, steps_of_rate(q, acc.SAMPLER))
    head = (f"dpsampling: {acc.spec.drawn}, {when} at σ = {sigma:g}: Poisson accounting would claim "
            f"ε = {render.bound(claim, 'value')} at δ = {delta:g} (Opacus's '{OPACUS_DEFAULT}' accountant)")
    claim_relation = _reported_relation(SAMPLER_NAMES[OPACUS_DEFAULT], None, acc.spec.relation)
    return render.best_known_text(head, claim_relation, lower, upper, acc.spec.relation,
                                  lower is not None and lower > claim)


ACCOUNTANTS: dict = {}


def register() -> None:
    """Register ``dpsampling_<sampler>`` for every registered sampler with Opacus (idempotent; done on import, and
    again by :class:`PrivacyEngine`, so a sampler registered later gets its accountant)."""
    for s in samplers.SAMPLERS:
        if s not in ACCOUNTANTS:
            ACCOUNTANTS[s] = type(f"{''.join(w.title() for w in s.split('_'))}Accountant", (DpsamplingAccountant,),
                                  {"SAMPLER": s, "__doc__": f"Opacus accountant: dpsampling's {s} sampler."})
    for s in [s for s in ACCOUNTANTS if s not in samplers.SAMPLERS]:
        del ACCOUNTANTS[s]
    for cls in ACCOUNTANTS.values():
        register_accountant(cls.mechanism(), cls, force=True)


register()


class BallsAndBinsBatchSampler(Sampler):
    """Balls-and-bins batches: each epoch, every example goes to one uniformly random step of ``steps`` (steps per epoch),
    independently of the other examples and of the other epochs (the sampler ``dpsampling_balls_and_bins``
    accounts).

    Use as ``DataLoader(dataset, batch_sampler=BallsAndBinsBatchSampler(len(dataset), T, generator))`` with
    ``make_private(..., poisson_sampling=False)``: ``len(loader) = T``, so Opacus's ``sample_rate = 1/T``.  Batch
    sizes vary (binomial(N, 1/T)); an empty batch is yielded as an empty list (a step still happens: skipping it
    would make the number of steps depend on the data), which the DataLoader's ``collate_fn`` must accept.
    """

    def __init__(self, num_examples: int, steps: int, generator: torch.Generator | None = None):
        num_examples, steps = plain(num_examples), plain(steps)
        num_examples, steps = check_int("num_examples", num_examples, 1), check_int("steps", steps, 1)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise ParameterError('generator', 'a torch.Generator or None', type(generator).__name__,
                                 message=f"generator must be a torch.Generator or None (got "
                                         f"{type(generator).__name__})")
        self.num_examples, self.steps, self.generator = num_examples, steps, generator

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        bins = torch.randint(self.steps, (self.num_examples,), generator=self.generator)
        order = torch.argsort(bins, stable=True)
        counts = torch.bincount(bins, minlength=self.steps).tolist()
        start = 0
        for c in counts:
            yield order[start:start + c].tolist()
            start += c


# --------------------------------------------------------------------------- the loader and the accountant's check


@dataclasses.dataclass(frozen=True)
class LoaderKind:
    """How a data loader draws its batches: ``kind`` (:data:`~dpsampling.samplers.spec.LOADERS`), ``steps`` per
    epoch (``len(loader)``), ``sample_rate`` (Opacus's: the Poisson rate, else 1/steps) and ``drops_at_random``
    (a shuffled loader that drops its last partial batch, so some examples sit out a random epoch: the lower-bound
    construction, which places the differing example in a released batch, does not apply)."""

    kind: str
    steps: int
    sample_rate: float
    drops_at_random: bool = False


_LOADER_HELP = ("Opacus's Poisson loader (make_private(poisson_sampling=True)), DataLoader(shuffle=True), "
                "DataLoader(shuffle=False), or BallsAndBinsBatchSampler")


def _refuse_loader(data_loader, why):
    raise ParameterError("data_loader", "a loader dpsampling can account: " + _LOADER_HELP, type(data_loader).__name__,
                         message=f"data_loader: {why}; dpsampling cannot say what ε this run has, so it reports none. "
                                 f"It accounts {_LOADER_HELP}; if your loader draws batches as one of "
                                 f"{', '.join(LOADERS)} does, pass loader='<kind>' to PrivacyEngine or "
                                 f"check_privacy_engine")


def loader_kind(data_loader, loader=None) -> LoaderKind:
    """The :class:`LoaderKind` of a PyTorch/Opacus DataLoader (``loader``: a kind given by the user, for a loader
    whose classes dpsampling does not know); ParameterError naming ``data_loader`` if it cannot be mapped."""
    steps = len(data_loader)
    rate = float(getattr(data_loader, "sample_rate", 0.0) or 1.0 / steps)
    if loader is not None:
        return LoaderKind(check_choice("loader", loader, LOADERS), steps, rate)
    if type(data_loader).__name__ in SAMPLER_NAMES and isinstance(data_loader, DPDataLoader):
        return LoaderKind(SAMPLER_NAMES[type(data_loader).__name__], steps, float(data_loader.sample_rate))
    if not isinstance(data_loader, DataLoader):
        _refuse_loader(data_loader, f"{type(data_loader).__name__} is not a torch DataLoader")
    bs = data_loader.batch_sampler
    if isinstance(bs, BallsAndBinsBatchSampler):
        return LoaderKind(SAMPLER_NAMES[type(bs).__name__], steps, 1.0 / steps)
    if type(bs) is not BatchSampler:
        _refuse_loader(data_loader, f"its batch sampler {type(bs).__name__} is not one dpsampling knows")
    order = bs.sampler
    if type(order) not in (RandomSampler, SequentialSampler):
        _refuse_loader(data_loader, f"its sampler {type(order).__name__} is not one dpsampling knows")
    n = len(data_loader.dataset)
    if isinstance(order, RandomSampler) and (order.replacement or order.num_samples != n):
        _refuse_loader(data_loader, "its RandomSampler draws with replacement or not every example once an epoch")
    uneven = bs.drop_last and n % bs.batch_size != 0
    return LoaderKind(SAMPLER_NAMES[type(order).__name__], steps, 1.0 / steps,
                      drops_at_random=uneven and isinstance(order, RandomSampler))


def sampler_for(kind: str) -> str:
    """The first registered sampler whose ``spec.loader`` is ``kind``."""
    for spec in samplers.specs():
        if spec.loader == kind:
            return spec.name
    raise ParameterError("loader", "a kind some registered sampler accounts", kind,
                         message=f"no registered sampler accounts a '{kind}' loader, so dpsampling cannot say what ε "
                                 f"this run has")


def _assumed_kind(accountant):
    """(the loader kind the accountant accounts or None, its words, its sampler or None)."""
    mech = accountant.mechanism()
    if isinstance(accountant, DpsamplingAccountant):
        spec = accountant.spec
        return spec.loader, spec.drawn, spec.name
    if mech in SAMPLER_NAMES:
        kind = SAMPLER_NAMES[mech]
        return kind, samplers.get_spec(sampler_for(kind)).drawn, None
    raise ParameterError("accountant", "one of Opacus's (" + ", ".join(POISSON_MECHANISMS) + ") or dpsampling_<sampler>",
                         mech, message=f"accountant '{mech}': dpsampling does not know which loader it accounts, so "
                                       f"it cannot check it against the data loader")


@dataclasses.dataclass(frozen=True)
class Check:
    """One check of an accountant against its loader: the loader's ``kind`` and ``sampler``, the ``reported`` ε, the
    certified ``lower``/``upper`` ends of the sampler actually used (None where unknown or not computed),
    ``mismatch`` (the accountant assumes another loader), and ``message`` (the warning, or None when silent)."""

    kind: str
    sampler: str
    reported: float
    lower: float | None
    upper: float | None
    mismatch: bool
    message: str | None


def _certified(sampler, lk, history, delta, force=False):
    """(lower, upper) of the sampler ``sampler`` on loader ``lk`` for the run in ``history``; a history that changes
    σ or the rate is a run of phases (:mod:`._opacus_history`; ParameterError where that refuses it)."""
    runs = _history.stretches(history, sampler)
    if len(runs) > 1:
        up, lo = _history.results(sampler, delta, runs, _ask, force)
        lower = _ends(lo)[0] if lo is not None else 0.0
        return (None if lk.drops_at_random else lower), _ends(up)[1]
    sigma, _, total_steps = runs[0]
    spec = samplers.get_spec(sampler)
    t = lk.steps
    if spec.batch == "one_per_step":
        up_epochs, lo_epochs = -(-total_steps // t), total_steps // t
        per = _per_epoch(sampler, delta, sigma, None, t, up_epochs, force)
        lower = _ends(per[lo_epochs - 1])[0] if lo_epochs else 0.0
        return (None if lk.drops_at_random else lower), _ends(per[-1])[1]
    if total_steps % t == 0:
        r = _per_epoch(sampler, delta, sigma, lk.sample_rate, t, total_steps // t, force)[-1]
    else:
        r = _account(sampler, delta, sigma, lk.sample_rate, total_steps, force)
    return _ends(r)


def _check(accountant, lk, reported, delta) -> Check:
    """Compare the accountant's ``reported`` ε with the certified ε of the sampler the loader ``lk`` draws with."""
    assumed, assumed_words, own = _assumed_kind(accountant)
    sampler = sampler_for(lk.kind)
    spec = samplers.get_spec(sampler)
    mismatch = assumed != lk.kind
    if not mismatch and own is not None:  # a dpsampling accountant for this very loader: its answer is certified
        return Check(lk.kind, sampler, reported, None, reported, False, None)
    history = accountant.history
    try:
        lower, upper = _certified(sampler, lk, history, delta, getattr(accountant, "force", False))
    except ParameterError as exc:
        if not mismatch:  # Opacus's own accountant on its own loader, a run dpsampling cannot account: unchecked
            return Check(lk.kind, sampler, reported, None, None, False, None)
        raise ParameterError("accountant", f"one that accounts {spec.drawn}", accountant.mechanism(),
                             message=f"accountant '{accountant.mechanism()}' accounts {assumed_words}, but the data "
                                     f"loader draws {spec.drawn}, and dpsampling cannot account this run ({exc}): "
                                     f"no correct ε can be given for it") from None
    if not mismatch and (lower is None or reported >= lower):
        return Check(lk.kind, sampler, reported, lower, upper, False, None)
    runs = _history.stretches(history, sampler)
    sigma = runs[0][0] if len(runs) == 1 else f"{runs[0][0]:g} first ({_history.words(runs)})"
    total_steps = sum(n for _, _, n in runs)
    if lower is not None and reported < lower:
        verdict = "provably too small for this run"
    elif reported >= upper:
        verdict = "still an upper bound for this run" + ("" if reported == upper else ", but a looser one")
    else:
        verdict = "not proven for this run"
    note = (" (the upper end is the best known one)" if spec.upper_best_known else "") + (
        " (no lower bound is known for a shuffled loader that drops its last partial batch)"
        if lower is None else "")
    what = (f"accounts {assumed_words}, but the data loader draws {spec.drawn}" if mismatch
            else f"accounts {assumed_words}, as the data loader draws")
    when = _when(total_steps, lk.steps)
    reported_relation = _reported_relation(assumed, own, spec.relation)
    message = render.opacus_check_text(accountant.mechanism(), what, when, sigma, reported, reported_relation, delta,
                                       verdict, lower, upper, spec.relation, note, sampler)
    return Check(lk.kind, sampler, reported, lower, upper, mismatch, message)


def _reported_relation(assumed, own, used):
    """The neighbouring relation of the ε an accountant reports: a dpsampling accountant's sampler's, else that of
    the sampler accounting the loader kind it assumes (Opacus's accountants: Poisson, add-or-remove); ``used`` (the
    relation of the loader's sampler) where the reported curves are the same under it (a rate sampler's add-or-remove
    and zero-out)."""
    from dpsampling.samplers.relations import coverage

    name = own if own is not None else (sampler_for(assumed) if assumed is not None else None)
    if name is None:
        return None
    spec = samplers.get_spec(name)
    return used if coverage(spec, used).how == "same_curves" else spec.relation


def check_privacy_engine(privacy_engine, data_loader, *, delta, loader=None, warn=True) -> Check | None:
    """Check the accountant of ``privacy_engine`` (Opacus's or this module's :class:`PrivacyEngine`) against
    ``data_loader`` (the one ``make_private`` returned) after the steps taken so far: warn
    (:class:`DpsamplingWarning`, one line) if the accountant assumes another loader or reports an ε below the
    certified lower end of the sampler the loader draws with, and return the :class:`Check` (None before any
    step).  ``loader``: the loader kind, for a loader whose classes dpsampling does not know; a loader it cannot
    map, or a mismatch it cannot account, raises ParameterError instead of giving a number."""
    delta = _check_delta(delta)
    lk = loader_kind(data_loader, loader)
    accountant = privacy_engine.accountant
    if isinstance(accountant, DpsamplingAccountant):
        accountant.sees_loader = True  # checked here: its own "cannot see the loader" warning is not needed
    if len(accountant) == 0:
        return None
    reported = float(accountant.get_epsilon(delta))
    check = _check(accountant, lk, reported, delta)
    if warn and check.message:
        warnings.warn(check.message, DpsamplingWarning, stacklevel=2)
    return check


#: predicted seconds up to which the calibration warning also gives the σ the loader's sampler needs
SIGMA_HINT_SECONDS = 5.0


def _sigma_needed(sampler, lk, target_epsilon, delta, epochs):
    """' With it, ... σ = s ...': a σ certifying ε ≤ ``target_epsilon`` for ``epochs`` epochs of the loader's
    sampler (:func:`dpsampling.samplers.account`'s σ, a sufficient one), or '' where that question is predicted
    beyond :data:`SIGMA_HINT_SECONDS` or refused (the warning's certified ε stands on its own)."""
    spec = samplers.get_spec(sampler)
    kw = ({"steps": lk.steps, "epochs": epochs} if spec.batch == "one_per_step"
          else {"steps": lk.steps * epochs, "q": lk.sample_rate})
    try:
        if spec.predict_seconds(samplers.question(sampler, "sigma", (target_epsilon, delta), **kw)) > \
                SIGMA_HINT_SECONDS:
            return ""
        sigma = samplers.account(sampler, "sigma", (target_epsilon, delta), **kw).value
    except (CostError, ParameterError):
        return ""
    if sigma is None:
        return ""
    return (f" With it, the run needs noise_multiplier = {render.bound(float(sigma), 'upper')} for a certified "
            f"ε ≤ {target_epsilon:g}.")


class PrivacyEngine(_OpacusPrivacyEngine):
    """Opacus's PrivacyEngine that knows the loader it wraps and checks its accountant against it: every
    ``get_epsilon`` on a loader the accountant does not account (or below the certified lower end of the sampler
    the loader draws with) warns with the certified interval of that call (:func:`check_privacy_engine`), and
    ``make_private_with_epsilon`` with such an accountant warns before training with the certified ε at the σ it
    calibrated.  ``loader``: the loader kind (:data:`~dpsampling.samplers.spec.LOADERS`) for a loader whose classes
    dpsampling does not know."""

    def __init__(self, *, accountant: str = "prv", secure_mode: bool = False, loader: str | None = None):
        register()
        super().__init__(accountant=accountant, secure_mode=secure_mode)
        check_choice("loader", loader, (None, *LOADERS))
        self._dpsampling_kind, self._dpsampling_loader = loader, None
        if isinstance(self.accountant, DpsamplingAccountant):
            self.accountant.sees_loader = True

    def make_private(self, *, data_loader, poisson_sampling=True, **kwargs):
        out = super().make_private(data_loader=data_loader, poisson_sampling=poisson_sampling, **kwargs)
        self._dpsampling_loader = loader_kind(out[-1], self._dpsampling_kind)  # (module, optimizer[, crit], loader)
        return out

    def make_private_with_epsilon(self, *, data_loader, target_epsilon, target_delta, epochs, **kwargs):
        """Opacus's ``make_private_with_epsilon``; with a dpsampling accountant σ is :func:`calibrated_sigma` (the
        σ ``dpsampling sigma`` gives for this run) instead of Opacus's bisection over the accountant.  Then, before
        training, a warning if the accountant does not account the loader: the certified ε of the planned run
        (``epochs`` epochs of the loader at the calibrated σ)."""
        if not isinstance(self.accountant, DpsamplingAccountant):
            out = super().make_private_with_epsilon(data_loader=data_loader, target_epsilon=target_epsilon,
                                                    target_delta=target_delta, epochs=epochs, **kwargs)
        else:
            if len(self.accountant) > 0:  # Opacus's own warning
                warnings.warn("You're calling make_private_with_epsilon with non-zero privacy budget already spent. "
                              "Returned noise_multiplier assumes zero starting point, so your overall privacy budget "
                              "will be higher.")
            sigma = calibrated_sigma(self.accountant.SAMPLER, target_epsilon, target_delta, 1 / len(data_loader),
                                     epochs, self.accountant.force)
            out = self.make_private(data_loader=data_loader, noise_multiplier=sigma, **kwargs)
        lk, optimizer = self._dpsampling_loader, out[1]
        planned = create_accountant(self.accountant.mechanism())
        planned.history = [(float(optimizer.noise_multiplier), lk.sample_rate, int(epochs) * lk.steps)]
        check = _check(planned, lk, float(planned.get_epsilon(_check_delta(target_delta))), float(target_delta))
        if check.message:
            head = (f"dpsampling: before training: make_private_with_epsilon calibrated noise_multiplier = "
                    f"{float(optimizer.noise_multiplier):.6g} with accountant '{planned.mechanism()}' for ε = "
                    f"{float(target_epsilon):g} at δ = {float(target_delta):g} after {_count(int(epochs), 'epoch')}; ")
            needed = _sigma_needed(check.sampler, lk, float(target_epsilon), float(target_delta), int(epochs))
            warnings.warn(head + check.message[len("dpsampling: "):] + needed, DpsamplingWarning, stacklevel=2)
        return out

    def get_epsilon(self, delta):
        delta = _check_delta(delta)
        lk = getattr(self, "_dpsampling_loader", None)
        acc = self.accountant
        if isinstance(acc, DpsamplingAccountant):
            acc.sees_loader = True
            if lk is not None and acc.spec.loader != lk.kind:
                acc._told = True  # the mismatch warning below says more than the accountant's own note
        eps = super().get_epsilon(delta)
        if lk is not None and len(self.accountant) > 0:
            check = _check(self.accountant, lk, float(eps), delta)
            if check.message:  # every call: the certified interval of this call's run
                warnings.warn(check.message, DpsamplingWarning, stacklevel=2)
        return eps


__all__ = [
    "ACCOUNTANTS",
    "ENVELOPE_SECONDS",
    "GRID_PER_OCTAVE",
    "POISSON_MECHANISMS",
    "SAMPLER_NAMES",
    "SIGMA_HINT_SECONDS",
    "BallsAndBinsBatchSampler",
    "Check",
    "DpsamplingAccountant",
    "DpsamplingNote",
    "DpsamplingUnchecked",
    "DpsamplingWarning",
    "LoaderKind",
    "PrivacyEngine",
    "calibrated_sigma",
    "check_privacy_engine",
    "loader_kind",
    "register",
    "sampler_for",
    "steps_of_rate",
]
