"""Opacus accountants for every batch sampler, a balls-and-bins batch sampler, and a check of Poisson claims.

Importing this module registers one accountant per sampler with Opacus (``opacus.accountants.registry``)::

    dpsampling_poisson  dpsampling_wor  dpsampling_shuffle  dpsampling_deterministic  dpsampling_balls_and_bins

so ``PrivacyEngine(accountant="dpsampling_balls_and_bins")`` and ``make_private_with_epsilon`` work unchanged.
Every number is :func:`dpsampling.samplers.account`'s (the same as ``dpsampling epsilon``):

* the run is read off the accountant's ``history`` of ``(noise_multiplier, sample_rate, steps)``: one σ and one
  sample rate per run (a history that changes either is refused: ``account`` answers one σ and rate per run, and
  silently accounting it as something else would misstate ε);
* poisson / wor: ``steps`` steps at rate ``q = sample_rate``;
* shuffle / deterministic / balls_and_bins have one batch per step: the steps per epoch are ``T = 1/sample_rate``
  (Opacus sets ``sample_rate = 1/len(data_loader)``; a rate that is not 1/T for an integer T is refused) and the
  epochs are ``steps/T``; a partial last epoch is accounted as a full one for the upper end (running fewer steps
  is a post-processing of running more, so ε can only be smaller) and left out for the lower end;
* :meth:`get_epsilon` returns the certified upper end (for shuffle: the deterministic value, Chua et al. ICML
  2024 Thm 4.1, since no upper bound below it is known); :meth:`get_epsilon_interval` returns (lower, upper).

σ calibration (``make_private_with_epsilon``) sets ``history = [(σ, q, steps)]`` and calls ``get_epsilon`` 15–25
times.  Results are memoised per run (one dict for all instances: Opacus builds a fresh accountant for the
calibration), and for balls_and_bins, whose certified bracket costs seconds per σ, a history set by assignment
with one entry (the calibration's pattern) is answered from :func:`_envelope`, a certified upper bound read off a
geometric σ grid that Opacus's bisection revisits instead of asking the PLD accountant at every σ it tries.
"""

from __future__ import annotations

import math
import warnings

try:
    import torch
    from opacus import PrivacyEngine as _OpacusPrivacyEngine
    from opacus.accountants import IAccountant
    from opacus.accountants.registry import register_accountant
    from opacus.data_loader import DPDataLoader
    from torch.utils.data import RandomSampler, Sampler, SequentialSampler
except ImportError as exc:  # pragma: no cover - exercised where Opacus is absent
    raise ImportError(f"dpsampling.integrations.opacus needs Opacus and PyTorch ({exc}): install a CPU-only torch "
                      f"first, then pip install 'dpsampling[opacus]' (README, 'In your training library')") from exc

from dpsampling.samplers import SAMPLERS, account

#: Opacus's own accountants, all of which account Poisson sampling
POISSON_MECHANISMS = ("rdp", "prv", "gdp")
#: samplers with one batch per step (steps per epoch = 1/sample_rate)
PER_EPOCH = ("shuffle", "deterministic", "balls_and_bins")
#: balls_and_bins calibration grid: this many σ points per doubling (ratio 2^(1/36) ≈ 1.019 between points)
GRID_PER_OCTAVE = 36

_MEMO: dict = {}


class DpsamplingWarning(UserWarning):
    """What Poisson accounting would claim for a run that was not Poisson-sampled, beside the certified numbers."""


def _check_delta(delta):
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    return float(delta)


def _run_of(history, sampler):
    """(σ, q, steps) of a history of ``(noise_multiplier, sample_rate, steps)``; ValueError if it mixes σ or rates."""
    if not history:
        return None
    runs = {(float(s), float(q)) for s, q, _ in history}
    if len(runs) > 1:
        raise ValueError(f"accountant dpsampling_{sampler}: the history changes the noise multiplier or the sample "
                         f"rate ({sorted(runs)}); dpsampling accounts one (noise_multiplier, sample_rate) per run and "
                         f"does not compose different ones (no silent Poisson fallback): account each part separately")
    (sigma, q), = runs
    if not (math.isfinite(sigma) and sigma > 0) or not (0 < q <= 1):
        raise ValueError(f"accountant dpsampling_{sampler}: noise_multiplier must be > 0 and sample_rate in (0, 1] "
                         f"(got {sigma!r}, {q!r})")
    return sigma, q, sum(int(n) for _, _, n in history)


def steps_per_epoch(sample_rate, sampler="balls_and_bins"):
    """T with ``sample_rate = 1/T`` (one batch per step); ValueError naming the rate if there is no such integer."""
    t = round(1.0 / sample_rate)
    if t < 1 or abs(t * sample_rate - 1.0) > 1e-9:
        raise ValueError(f"sample_rate must be 1/steps_per_epoch for sampler '{sampler}' (one batch per step; Opacus "
                         f"sets it to 1/len(data_loader)), got {sample_rate!r} = 1/{1.0 / sample_rate:.6g}")
    return t


def _account(sampler, delta, sigma, q, steps, bound=None):
    """The memoised :func:`account` answer for ``steps`` steps (per-epoch samplers: T = 1/q per epoch, steps/T epochs)."""
    key = (sampler, sigma, q, steps, delta, bound)
    if key not in _MEMO:
        if sampler in PER_EPOCH:
            t = steps_per_epoch(q, sampler)
            _MEMO[key] = account(sampler, "epsilon", delta, sigma=sigma, steps=t, epochs=steps // t, bound=bound)
        else:
            _MEMO[key] = account(sampler, "epsilon", delta, sigma=sigma, steps=steps, q=q, bound=bound)
    return _MEMO[key]


def _per_epoch_steps(q, steps, sampler):
    """(steps rounded up, steps rounded down) to whole epochs of T = 1/q steps."""
    t = steps_per_epoch(q, sampler)
    return -(-steps // t) * t, steps // t * t


def _envelope(sampler, delta, sigma, q, steps):
    """A certified upper bound on ε at σ from the memoised upper ends up(g) at grid points g_k = 2^(k/GRID_PER_OCTAVE).

    With g_k ≤ σ < g_{k+1}: ε(σ) ≤ ε(g_k) ≤ up(g_k), since more noise is a post-processing (add independent Gaussian
    noise to a run at g_k).  The value returned interpolates in log σ from max(up(g_{k-1}), up(g_k)) at g_k down to
    up(g_k) at g_{k+1}: ≥ up(g_k) throughout the cell, continuous inside it, and at a grid point it can only jump up,
    so as σ grows it falls through Opacus's tolerance band below the target somewhere, and the bisection ends there.
    (A step function, up(g_k) on the whole cell, can jump over that band, and Opacus's loop would never stop.)
    """
    x = math.log2(sigma) * GRID_PER_OCTAVE
    k = math.floor(x)
    up_prev, up_k = (_account(sampler, delta, 2.0 ** (j / GRID_PER_OCTAVE), q, steps).value for j in (k - 1, k))
    start = max(up_prev, up_k)
    return start + (up_k - start) * (x - k)


class DpsamplingAccountant(IAccountant):
    """An Opacus accountant answering with :func:`dpsampling.samplers.account` for ``SAMPLER`` (a subclass per sampler).

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` as in Opacus's accountants; :meth:`step` merges
    equal consecutive entries.
    """

    SAMPLER = ""

    def __init__(self):
        super().__init__()
        self._assigned = False  # True once `history` is set from outside (σ calibration, load_state_dict)

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

    def step(self, *, noise_multiplier: float, sample_rate: float):
        h = self._history
        if h and h[-1][0] == noise_multiplier and h[-1][1] == sample_rate:
            h[-1] = (noise_multiplier, sample_rate, h[-1][2] + 1)
        else:
            h.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return sum(int(n) for _, _, n in self._history)

    def result(self, delta: float):
        """The :class:`~dpsampling.engine.result.AccountingResult` of the run so far (its certified end)."""
        delta = _check_delta(delta)
        run = _run_of(self._history, self.SAMPLER)
        if run is None:
            return None
        sigma, q, steps = run
        if self.SAMPLER in PER_EPOCH:
            steps = _per_epoch_steps(q, steps, self.SAMPLER)[0]
        return _account(self.SAMPLER, delta, sigma, q, steps)

    def get_epsilon(self, delta: float, *args, **kwargs) -> float:
        """Certified upper end of ε(δ) for the history (0 before any step).  Opacus forwards ``make_private``'s keyword
        arguments here during calibration; they do not concern accounting and are not used."""
        delta = _check_delta(delta)
        run = _run_of(self._history, self.SAMPLER)
        if run is None:
            return 0.0
        sigma, q, steps = run
        if self.SAMPLER in PER_EPOCH:
            steps = _per_epoch_steps(q, steps, self.SAMPLER)[0]
        calibrating = self._assigned and len(self._history) == 1
        if self.SAMPLER == "balls_and_bins" and calibrating:
            return _envelope(self.SAMPLER, delta, sigma, q, steps)
        if self.SAMPLER == "shuffle" and calibrating:  # the certified end: the deterministic value (no lower needed)
            return float(_account("deterministic", delta, sigma, q, steps).value)
        r = _account(self.SAMPLER, delta, sigma, q, steps)
        if self.SAMPLER == "shuffle":
            warnings.warn(_shuffle_line(delta, sigma, q, steps, r), DpsamplingWarning, stacklevel=2)
            return float(r.upper)
        return float(r.value)

    def get_epsilon_interval(self, delta: float) -> tuple[float, float]:
        """(lower, upper): certified bounds on ε(δ) of the run so far (deterministic: both the exact value)."""
        delta = _check_delta(delta)
        run = _run_of(self._history, self.SAMPLER)
        if run is None:
            return 0.0, 0.0
        sigma, q, steps = run
        if self.SAMPLER not in PER_EPOCH:
            up = _account(self.SAMPLER, delta, sigma, q, steps)
            lo = up.lower if up.lower is not None else _account(self.SAMPLER, delta, sigma, q, steps, "lower").value
            return float(lo), float(up.value)
        up_steps, lo_steps = _per_epoch_steps(q, steps, self.SAMPLER)
        up = _account(self.SAMPLER, delta, sigma, q, up_steps)
        lo = _account(self.SAMPLER, delta, sigma, q, lo_steps) if lo_steps else None
        upper = up.upper if up.upper is not None else up.value
        if lo is None:
            return 0.0, float(upper)
        return float(lo.lower if lo.lower is not None else lo.value), float(upper)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._history = [tuple(h) for h in self._history]
        self._assigned = False  # a saved training run, not a calibration


def _shuffle_line(delta, sigma, q, steps, r):
    """One line: the Poisson claim for this shuffled run, whether it is provably wrong, and the certified interval."""
    p = _account("poisson", delta, sigma, q, steps)
    head = (f"dpsampling: shuffled batches, {steps} steps at σ = {sigma:g}: Poisson accounting would claim "
            f"ε ≤ {p.value:.4g} at δ = {delta:g}")
    if r.value > p.value:
        return f"{head}, which is provably wrong (ε ≥ {r.value:.4g}); certified: ε ≤ {r.upper:.4g} (deterministic)"
    return f"{head}, not provably wrong here but not proven either; certified: ε ≤ {r.upper:.4g} (deterministic)"


ACCOUNTANTS = {s: type(f"{''.join(w.title() for w in s.split('_'))}Accountant", (DpsamplingAccountant,),
                       {"SAMPLER": s, "__doc__": f"Opacus accountant: dpsampling's {s} sampler."})
               for s in SAMPLERS}


def register() -> None:
    """Register ``dpsampling_<sampler>`` for every sampler with Opacus (idempotent; done on import)."""
    for cls in ACCOUNTANTS.values():
        register_accountant(cls.mechanism(), cls, force=True)


register()


class BallsAndBinsBatchSampler(Sampler):
    """Balls-and-bins batches: each epoch, every example goes to one uniformly random step of ``steps_per_epoch``,
    independently of the other examples and of the other epochs (the sampler ``dpsampling_balls_and_bins``
    accounts).

    Use as ``DataLoader(dataset, batch_sampler=BallsAndBinsBatchSampler(len(dataset), T, generator))`` with
    ``make_private(..., poisson_sampling=False)``: ``len(loader) = T``, so Opacus's ``sample_rate = 1/T``.  Batch
    sizes vary (binomial(N, 1/T)); an empty batch is yielded as an empty list (a step still happens: skipping it
    would make the number of steps depend on the data), which the DataLoader's ``collate_fn`` must accept.
    """

    def __init__(self, num_examples: int, steps_per_epoch: int, generator: torch.Generator | None = None):
        for name, v in (("num_examples", num_examples), ("steps_per_epoch", steps_per_epoch)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1 (got {v!r})")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise ValueError(f"generator must be a torch.Generator or None (got {type(generator).__name__})")
        self.num_examples, self.steps_per_epoch, self.generator = num_examples, steps_per_epoch, generator

    def __len__(self) -> int:
        return self.steps_per_epoch

    def __iter__(self):
        bins = torch.randint(self.steps_per_epoch, (self.num_examples,), generator=self.generator)
        order = torch.argsort(bins, stable=True)
        counts = torch.bincount(bins, minlength=self.steps_per_epoch).tolist()
        start = 0
        for c in counts:
            yield order[start:start + c].tolist()
            start += c


def _loader_sampler(data_loader) -> str | None:
    """The dpsampling sampler a DataLoader draws its batches with, None if it is Poisson (Opacus's DPDataLoader)."""
    if isinstance(data_loader, DPDataLoader):
        return None
    if isinstance(getattr(data_loader, "batch_sampler", None), BallsAndBinsBatchSampler):
        return "balls_and_bins"
    if isinstance(getattr(data_loader, "sampler", None), SequentialSampler):
        return "deterministic"
    if isinstance(getattr(data_loader, "sampler", None), RandomSampler):
        return "shuffle"
    return "unknown"


def check_privacy_engine(privacy_engine, data_loader, *, delta, sigma=None, epochs=None):
    """If ``privacy_engine`` accounts with a Poisson accountant (rdp, prv, gdp) but ``data_loader`` is not
    Poisson-sampled (``make_private(..., poisson_sampling=False)``), warn in one line with :func:`dpsampling.audit`'s
    numbers for the run and return the audit table; otherwise return None.

    ``sigma`` and ``epochs`` default to the run so far (the accountant's history; a partial epoch counts as one).
    """
    from dpsampling import audit

    mech = privacy_engine.accountant.mechanism()
    used = _loader_sampler(data_loader)
    if mech not in POISSON_MECHANISMS or used is None:
        return None
    hist = privacy_engine.accountant.history
    if sigma is None:
        if not hist:
            raise ValueError("sigma is required before the first step (the accountant's history is empty)")
        sigma = hist[-1][0]
    n_steps = len(data_loader)
    if epochs is None:
        epochs = max(1, -(-sum(int(h[2]) for h in hist) // n_steps))
    n = len(data_loader.dataset)
    batch = math.ceil(n / n_steps)
    if math.ceil(n / batch) != n_steps:
        raise ValueError(f"data_loader: {n} examples in {n_steps} batches is not ceil(N/B) batches for any batch size")
    audited = "shuffle" if used in ("shuffle", "unknown") else used
    samplers = ",".join(dict.fromkeys(("poisson", audited, "deterministic")))
    key = ("audit", n, batch, epochs, float(sigma), float(delta), samplers)
    if key not in _MEMO:  # get_epsilon may be asked every epoch: one audit per run state
        _MEMO[key] = audit(n, batch, delta=delta, epochs=epochs, sigma=float(sigma), samplers=samplers)
    df = _MEMO[key]
    rows = {r["sampler"]: r for r in df.to_dict("records")}
    p, a = rows["poisson"], rows[audited]
    what = {"shuffle": "shuffles", "deterministic": "keeps a fixed order", "balls_and_bins": "uses balls-and-bins",
            "unknown": "is not Poisson-sampled (counted here as shuffled)"}[used]
    got = (f"ε ∈ [{a['lower']:.4g}, {a['upper']:.4g}]" if a["kind"] in ("interval", "lower_best_upper")
           else f"ε ≤ {a['upper']:.4g}" if a["kind"] == "upper" else f"ε = {a['value']:.4g}")
    verdict = next((v for v in df.attrs["verdicts"] if v.startswith("a shuffled run")), "") if audited == "shuffle" else ""
    warnings.warn(f"dpsampling: accountant '{mech}' assumes Poisson sampling (ε ≤ {p['value']:.4g} at δ = {delta:g}, "
                  f"{epochs} epochs) but the data loader {what}: dpsampling audit gives {got}. {verdict} "
                  f"Use accountant='dpsampling_{audited}'.".replace("  ", " "), DpsamplingWarning, stacklevel=2)
    return df


class PrivacyEngine(_OpacusPrivacyEngine):
    """Opacus's PrivacyEngine that runs :func:`check_privacy_engine` on every ``get_epsilon``: a run whose data loader
    is not Poisson-sampled but whose accountant is Poisson's (``poisson_sampling=False`` with rdp/prv/gdp) is told
    the audit's numbers."""

    def make_private(self, *, data_loader, poisson_sampling=True, **kwargs):
        out = super().make_private(data_loader=data_loader, poisson_sampling=poisson_sampling, **kwargs)
        self._dpsampling_loader = out[-1]  # (module, optimizer[, criterion], data_loader)
        return out

    def get_epsilon(self, delta):
        eps = super().get_epsilon(delta)
        loader = getattr(self, "_dpsampling_loader", None)
        if loader is not None and len(self.accountant) > 0:
            check_privacy_engine(self, loader, delta=delta)
        return eps


__all__ = ["ACCOUNTANTS", "BallsAndBinsBatchSampler", "DpsamplingAccountant", "DpsamplingWarning", "GRID_PER_OCTAVE",
           "POISSON_MECHANISMS", "PrivacyEngine", "check_privacy_engine", "register",
           "steps_per_epoch"]
