"""ε and σ for JAX Privacy's batch-selection strategies (``jax_privacy.batch_selection``), by dpsampling's samplers.

:func:`epsilon` and :func:`noise_multiplier` map a strategy to one of dpsampling's samplers (:func:`to_sampler`) and
ask :func:`dpsampling.samplers.account`; they return its :class:`~dpsampling.engine.result.AccountingResult` (value,
kind, method, lower, upper).  Neighbouring datasets: add/remove one example (JAX Privacy's ``ADD_OR_REMOVE_ONE``; for
its zero-out notion, zeroing an example's clipped gradient removes it from the noisy sum, so the same pairs apply).

How each strategy is accounted, and where its semantics differ from the sampler's:

* ``CyclicPoissonSampling(sampling_prob=p, iterations=n, cycle_length=c)``, ``0 < p < 1``: ``poisson`` with
  ``q = p`` over ``⌈n/c⌉`` steps.  An example is eligible only in the steps of its group (every c-th step), so it
  takes part in at most ⌈n/c⌉ Poisson(p) rounds; this is JAX Privacy's own analysis (``DpsgdTrainingAccountant``
  composes ⌈n/c⌉ Poisson events at rate batch_size/(N // c)).  With INDEPENDENT partitions an added example's group
  is random and independent of the data: a mixture over groups, whose hockey-stick divergence is at most the
  largest of the groups' (joint convexity), each of which is at most the ⌈n/c⌉-round one.
* ``CyclicPoissonSampling`` with ``p = 1``: every example in every step of its group.  ``c = 1``: full batches,
  ``deterministic`` with one step per epoch and n epochs (exact).  EQUAL_SPLIT partition: one random partition
  into c equal groups reused every cycle, i.e. ``shuffle`` with ``mode="persistent"``, c steps per epoch,
  ⌈n/c⌉ epochs (JAX Privacy: "no accounting support" for shuffling; we give the certified interval, lower bound
  and deterministic upper end).  INDEPENDENT partition: each example's group drawn once: the same as
  ``BallsInBinsSampling(n, c)`` below.
* ``BallsInBinsSampling(iterations=n, cycle_length=c)``: an example's bin is drawn once and reused every cycle
  (dpsampling's ``balls_and_bins`` draws a fresh bin each epoch).  With E = ⌈n/c⌉ cycles the run's likelihood
  ratio depends on the data only through the E-step sums of each bin, each N(E·[bin = b], Eσ²): after dividing by
  E this is one epoch of ``balls_and_bins`` with c steps at noise multiplier σ/√E, which is how we account it
  (exactly when c divides n; otherwise the run is padded to E full cycles, an upper bound since dropping the extra
  steps is a post-processing).  JAX Privacy accounts this strategy by Monte Carlo only.
* ``FixedBatchSampling(batch_size=B, iterations=n, replace=False)``: ``wor`` with ``q = B/N`` over n steps (a fresh
  sample of B distinct examples each step, as JAX Privacy's FIXED_BATCH_SIZE analysis assumes).

Refused with a ValueError naming the strategy and why (never accounted as Poisson instead): a truncated batch
(``truncated_batch_size``: JAX Privacy's own PLD accountant handles it), ``FixedBatchSampling(replace=True)``,
``BMinSepSampling`` and ``UserSelectionStrategy`` (user-level), and any other strategy.
"""

from __future__ import annotations

import dataclasses
import math

try:
    from jax_privacy import batch_selection as bs
except ImportError as exc:  # pragma: no cover - exercised where JAX Privacy is absent
    raise ImportError(f"dpsampling.integrations.jax_privacy needs JAX Privacy ({exc}): pip install "
                      f"'dpsampling[jax]' (README, 'In your training library')") from exc

from dpsampling.samplers import account


@dataclasses.dataclass(frozen=True)
class Mapping:
    """A strategy as one of dpsampling's samplers: ``account(sampler, ..., steps=steps, epochs=epochs, q=q,
    **options)`` at noise multiplier ``sigma_scale`` × σ; ``note`` says how (one sentence)."""

    sampler: str
    steps: int
    epochs: int = 1
    q: float | None = None
    sigma_scale: float = 1.0
    options: dict = dataclasses.field(default_factory=dict)
    note: str = ""


def _ceil_div(a, b):
    return -(-a // b)


def to_sampler(strategy, num_examples: int) -> Mapping:
    """The dpsampling sampler that accounts ``strategy`` on ``num_examples`` examples (module docstring)."""
    if isinstance(num_examples, bool) or not isinstance(num_examples, int) or num_examples < 1:
        raise ValueError(f"num_examples must be an integer >= 1 (got {num_examples!r})")
    name = type(strategy).__name__
    if isinstance(strategy, bs.CyclicPoissonSampling):
        p, n, c = float(strategy.sampling_prob), int(strategy.iterations), int(strategy.cycle_length)
        if strategy.truncated_batch_size is not None:
            raise ValueError(f"{name} with truncated_batch_size={strategy.truncated_batch_size}: truncated Poisson "
                             f"batches are not one of dpsampling's samplers (JAX Privacy's DpsgdTrainingAccountant "
                             f"with a PLD accountant accounts them)")
        if not (0 < p <= 1) or n < 1 or c < 1:
            raise ValueError(f"{name}: sampling_prob must be in (0, 1], iterations and cycle_length >= 1 "
                             f"(got {p!r}, {n!r}, {c!r})")
        if p < 1:
            return Mapping("poisson", _ceil_div(n, c), q=p, note=f"Poisson at q = {p:g} over ⌈{n}/{c}⌉ eligible steps")
        if c == 1:
            return Mapping("deterministic", 1, epochs=n, note=f"full batches: {n} Gaussian steps")
        if strategy.partition_type == bs.PartitionType.INDEPENDENT:
            return _balls_in_bins(n, c, name)
        return Mapping("shuffle", c, epochs=_ceil_div(n, c), options={"mode": "persistent"},
                       note=f"one random partition into {c} batches reused for ⌈{n}/{c}⌉ cycles (persistent shuffle)")
    if isinstance(strategy, bs.BallsInBinsSampling):
        return _balls_in_bins(int(strategy.iterations), int(strategy.cycle_length), name)
    if isinstance(strategy, bs.FixedBatchSampling):
        b, n = int(strategy.batch_size), int(strategy.iterations)
        if strategy.replace:
            raise ValueError(f"{name}(replace=True): an example can appear more than once in a batch; dpsampling's "
                             f"wor sampler draws distinct examples (use replace=False)")
        if not (1 <= b <= num_examples) or n < 1:
            raise ValueError(f"{name}: batch_size must be in [1, num_examples={num_examples}] and iterations >= 1 "
                             f"(got {b!r}, {n!r})")
        return Mapping("wor", n, q=b / num_examples, note=f"fixed batches of {b} distinct examples, fresh each step")
    if isinstance(strategy, bs.BMinSepSampling):
        raise ValueError(f"{name}: b-min-sep sampling has no dpsampling sampler (JAX Privacy analyses it by Monte "
                         f"Carlo only)")
    if isinstance(strategy, bs.UserSelectionStrategy):
        raise ValueError(f"{name}: user-level selection is not accounted by dpsampling (example-level samplers only)")
    raise ValueError(f"strategy {name!r} has no dpsampling sampler; supported: CyclicPoissonSampling, "
                     f"BallsInBinsSampling, FixedBatchSampling(replace=False)")


def _balls_in_bins(n, c, name):
    if n < 1 or c < 1:
        raise ValueError(f"{name}: iterations and cycle_length must be >= 1 (got {n!r}, {c!r})")
    e = _ceil_div(n, c)
    pad = "" if n % c == 0 else f" (padded from {n} to {e * c} steps)"
    return Mapping("balls_and_bins", c, sigma_scale=1.0 / math.sqrt(e),
                   note=f"bins drawn once and reused for {e} cycles: one balls-and-bins epoch of {c} steps at "
                        f"σ/√{e}{pad}")


def _scaled(result, factor):
    """A σ result for σ_eff = σ·scale, given back in the strategy's σ (divide by scale)."""
    f = {k: (None if getattr(result, k) is None else getattr(result, k) * factor) for k in ("value", "lower", "upper")}
    return dataclasses.replace(result, **f)


def epsilon(strategy, num_examples: int, noise_multiplier: float, delta: float):
    """ε(δ) of ``strategy`` on ``num_examples`` examples at ``noise_multiplier``: dpsampling's AccountingResult
    (``value`` the certified end of its ``kind``: upper for poisson/wor/balls_and_bins, exact for full batches, lower
    for shuffling with ``upper`` the deterministic value)."""
    m = to_sampler(strategy, num_examples)
    if not (isinstance(noise_multiplier, (int, float)) and math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise ValueError(f"noise_multiplier must be a finite number > 0 (got {noise_multiplier!r})")
    return account(m.sampler, "epsilon", delta, sigma=noise_multiplier * m.sigma_scale, steps=m.steps,
                   epochs=m.epochs, q=m.q, **m.options)


def noise_multiplier(strategy, num_examples: int, epsilon: float, delta: float):
    """The noise multiplier for a target (ε, δ): dpsampling's AccountingResult; ``upper`` is a σ that certifies the
    target (for shuffling the deterministic one; ``value``, kind ``lower``, the σ at or below which ε provably
    exceeds it)."""
    m = to_sampler(strategy, num_examples)
    kw = dict(steps=m.steps, epochs=m.epochs, q=m.q, **m.options)
    if m.sampler == "shuffle":
        kw["bound"] = "lower"
    return _scaled(account(m.sampler, "sigma", (epsilon, delta), **kw), 1.0 / m.sigma_scale)


__all__ = ["Mapping", "epsilon", "noise_multiplier", "to_sampler"]
