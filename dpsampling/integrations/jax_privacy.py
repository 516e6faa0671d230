"""ε and σ for JAX Privacy's batch-selection strategies (``jax_privacy.batch_selection``), by dpsampling's samplers.

:func:`epsilon` and :func:`noise_multiplier` map a strategy to one of dpsampling's samplers (:func:`to_sampler`) and
ask :func:`dpsampling.samplers.account`; they return its :class:`~dpsampling.engine.result.AccountingResult` (value,
kind, method, lower, upper) and the neighbouring relation it holds under.

Neighbouring relation: the strategy's own. JAX Privacy documents which relations each strategy is valid under
(:func:`relations`: a cyclic partition into EQUAL_SPLIT groups only under zero-out or replace-one, an INDEPENDENT
one and balls-in-bins under add-or-remove too, fixed batches under replace-one or zero-out); the sampler it maps to
holds under ``spec.relation``, Poisson's add-or-remove analysis gives the same curves as zero-out (Chua et al. ICML
2024 §2.2), and WOR (add-or-remove, Lebeda et al. 2024 Prop. 9) is answered under replace-one by the pair dominating
both directions (:mod:`dpsampling.samplers.relations`, ``max_pair``). The result carries the relation used: the one
asked for (``relation=``) if the strategy is valid under it and the sampler's analysis covers it, else refused; by
default the sampler's own, else the first the strategy is valid under that the analysis answers with both ends
(zero-out for Poisson in EQUAL_SPLIT groups, replace-one for fixed batches).

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
* ``CyclicPoissonSampling(sampling_prob=p, iterations=n, truncated_batch_size=B)``, ``cycle_length=1``:
  ``truncated_poisson`` with ``q = p``, ``dataset_size = num_examples``, ``max_batch_size = B`` over n steps, under
  add-or-remove with the larger dataset of the pair holding ``num_examples`` records (as JAX Privacy's
  ``truncated_dpsgd_event`` and dp_accounting's ``TruncatedSubsampledGaussianDpEvent`` assume); its upper end is at
  most dp_accounting's value.  A cap at or above ``num_examples`` never truncates: the sampler answers as Poisson
  and says so in its flags.  With ``cycle_length=c > 1`` and EQUAL_SPLIT groups of ``num_examples // c`` records,
  the strategy is valid only under zero-out or replace-one, where the zeroed example still takes a batch slot:
  ``truncated_poisson``'s add-or-remove analysis does not cover that mechanism, so it is refused (a ParameterError
  naming ``relation``), unless the cap is at or above the group size, where nothing is ever truncated and the
  untruncated mapping above is exact.  An INDEPENDENT partition into c > 1 groups with truncation is refused (the
  groups' sizes are random; JAX Privacy refuses it too).
* ``FixedBatchSampling(batch_size=B, iterations=n, replace=False)``: ``wor`` with ``q = B/N`` over n steps (a fresh
  sample of B distinct examples each step, as JAX Privacy's FIXED_BATCH_SIZE analysis assumes), under replace-one
  (JAX Privacy declares it valid under replace-one or zero-out; WOR's two-sided answer there).

A question predicted beyond the time limit is refused unless ``force=True``.  numpy, JAX and torch scalars (and 0-d
arrays) are accepted wherever a number is.

Refused with a ValueError naming the strategy and why (never accounted as Poisson instead): truncation in cyclic
groups (above) or at a cap below 1, ``FixedBatchSampling(replace=True)``, ``BMinSepSampling`` and
``UserSelectionStrategy`` (user-level), and any other strategy.
"""

from __future__ import annotations

import dataclasses
import math

try:
    from jax_privacy import batch_selection as bs
except ImportError as exc:  # pragma: no cover - exercised where JAX Privacy is absent
    raise ImportError(f"dpsampling.integrations.jax_privacy needs JAX Privacy ({exc}): pip install "
                      f"'dpsampling[jax]' (README, 'In your training library')") from exc

from dpsampling import samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_choice, check_int, check_positive, one_number
from dpsampling.samplers.spec import RELATIONS, Cost, CostError

from ._inputs import plain

#: JAX Privacy's strategies (and the settings that change what they draw) -> the dpsampling sampler that accounts them
SAMPLER_NAMES = {"CyclicPoissonSampling": "poisson", "CyclicPoissonSampling(sampling_prob=1, cycle_length=1)":
                 "deterministic", "CyclicPoissonSampling(sampling_prob=1, EQUAL_SPLIT)": "shuffle",
                 "BallsInBinsSampling": "balls_and_bins", "FixedBatchSampling": "wor",
                 "CyclicPoissonSampling(truncated_batch_size=B)": "truncated_poisson"}
_ALL = RELATIONS
_NOT_ADD_REMOVE = tuple(r for r in RELATIONS if r != "add_remove")


@dataclasses.dataclass(frozen=True)
class Mapping:
    """A strategy as one of dpsampling's samplers: ``account(sampler, ..., steps=steps, epochs=epochs, q=q,
    **options)`` at noise multiplier ``sigma_scale`` × σ; ``relations``: the neighbouring relations JAX Privacy
    documents the strategy as valid under; ``note`` says how (one sentence)."""

    sampler: str
    steps: int
    epochs: int = 1
    q: float | None = None
    sigma_scale: float = 1.0
    options: dict = dataclasses.field(default_factory=dict)
    note: str = ""
    relations: tuple = _ALL


def _ceil_div(a, b):
    return -(-a // b)


def _int(value, name):
    return check_int(name, plain(value))


def to_sampler(strategy, num_examples: int) -> Mapping:
    """The dpsampling sampler that accounts ``strategy`` on ``num_examples`` examples (module docstring)."""
    num_examples = _int(num_examples, "num_examples")
    name = type(strategy).__name__
    if isinstance(strategy, bs.CyclicPoissonSampling):
        p, n, c = float(plain(strategy.sampling_prob)), plain(strategy.iterations), plain(strategy.cycle_length)
        if not (0 < p <= 1) or not isinstance(n, int) or not isinstance(c, int) or n < 1 or c < 1:
            raise ParameterError('strategy', 'sampling_prob in (0, 1], iterations and cycle_length >= 1', (p, n, c),
                                 message=f"{name}: sampling_prob must be in (0, 1], iterations and cycle_length >= 1 "
                             f"(got {p!r}, {n!r}, {c!r})")
        independent = strategy.partition_type == bs.PartitionType.INDEPENDENT
        relations = _ALL if c == 1 or independent else _NOT_ADD_REMOVE
        cap = plain(strategy.truncated_batch_size)
        if cap is not None:
            truncated = _truncated(p, n, c, cap, independent, num_examples, relations, name)
            if truncated is not None:
                return truncated
        if p < 1:
            return Mapping(SAMPLER_NAMES[name], _ceil_div(n, c), q=p, relations=relations,
                           note=f"Poisson at q = {p:g} over ⌈{n}/{c}⌉ eligible steps")
        if c == 1:
            return Mapping(SAMPLER_NAMES[f"{name}(sampling_prob=1, cycle_length=1)"], 1, epochs=n,
                           note=f"full batches: {n} Gaussian steps")
        if independent:
            return _balls_in_bins(n, c, name)
        return Mapping(SAMPLER_NAMES[f"{name}(sampling_prob=1, EQUAL_SPLIT)"], c, epochs=_ceil_div(n, c),
                       options={"mode": "persistent"}, relations=relations,
                       note=f"one random partition into {c} batches reused for ⌈{n}/{c}⌉ cycles (persistent shuffle)")
    if isinstance(strategy, bs.BallsInBinsSampling):
        return _balls_in_bins(plain(strategy.iterations), plain(strategy.cycle_length), name)
    if isinstance(strategy, bs.FixedBatchSampling):
        b, n = plain(strategy.batch_size), plain(strategy.iterations)
        if strategy.replace:
            raise ParameterError('strategy', 'FixedBatchSampling(replace=False)', name,
                                 message=f"{name}(replace=True): an example can appear more than once in a batch; "
                                         f"dpsampling's "
                             f"wor sampler draws distinct examples (use replace=False)")
        if not (1 <= b <= num_examples) or n < 1:
            raise ParameterError('strategy', 'batch_size in [1, num_examples], iterations >= 1', (b, n),
                                 message=f"{name}: batch_size must be in [1, num_examples={num_examples}] and "
                                         f"iterations >= 1 "
                             f"(got {b!r}, {n!r})")
        return Mapping(SAMPLER_NAMES[name], n, q=b / num_examples, relations=_NOT_ADD_REMOVE,
                       note=f"fixed batches of {b} distinct examples, fresh each step")
    if isinstance(strategy, bs.BMinSepSampling):
        raise ParameterError('strategy', 'a strategy dpsampling accounts', name,
                             message=f"{name}: b-min-sep sampling has no dpsampling sampler (JAX Privacy analyses it "
                                     f"by Monte Carlo only)")
    if isinstance(strategy, bs.UserSelectionStrategy):
        raise ParameterError('strategy', 'an example-level strategy', name,
                             message=f"{name}: user-level selection is not accounted by dpsampling (example-level "
                                     f"samplers only)")
    raise ParameterError('strategy', 'one of CyclicPoissonSampling, BallsInBinsSampling, FixedBatchSampling',
                         name,
                         message=f"strategy {name!r} has no dpsampling sampler; supported: CyclicPoissonSampling, "
                     f"BallsInBinsSampling, FixedBatchSampling(replace=False)")


def _truncated(p, n, c, cap, independent, num_examples, relations, name):
    """The mapping of a truncated strategy (module docstring), or None where it never truncates (a cap at or above
    its group's size, c > 1: the untruncated strategy's draws exactly)."""
    cap = check_int("truncated_batch_size", cap)
    if c == 1:
        if p * num_examples < 1 - 1e-9:  # the sampler's range for its dataset size, in this library's words
            raise ParameterError("num_examples", f"an integer >= {math.ceil(1 / p - 1e-9)} (= 1/sampling_prob: at "
                                                 f"least one example expected per batch, for truncation)", num_examples)
        return Mapping(SAMPLER_NAMES[f"{name}(truncated_batch_size=B)"], n, q=p, relations=relations,
                       options={"dataset_size": num_examples, "max_batch_size": cap},
                       note=f"truncated Poisson at q = {p:g} over {n} steps, batches cut to {cap}, "
                            f"{num_examples} records in the larger dataset")
    if independent:
        raise ParameterError('strategy', 'an EQUAL_SPLIT partition (or cycle_length 1) with a cap', name,
                             message=f"{name} with truncated_batch_size={cap} and an INDEPENDENT partition into {c} "
                                     f"groups: the "
                         f"groups' sizes are random, and dpsampling's truncated Poisson analysis needs the number of "
                         f"records a batch is drawn from (JAX Privacy refuses this combination too); use "
                         f"cycle_length=1 or no truncation")
    group = num_examples // c
    if cap >= group:
        return None
    return Mapping(SAMPLER_NAMES[f"{name}(truncated_batch_size=B)"], _ceil_div(n, c), q=p, relations=relations,
                   options={"dataset_size": group, "max_batch_size": cap},
                   note=f"truncated Poisson at q = {p:g} over ⌈{n}/{c}⌉ eligible steps in EQUAL_SPLIT groups of "
                        f"{group}, batches cut to {cap}: under zero-out or replace-one the changed example keeps its "
                        f"batch slot, which the add-or-remove analysis does not cover; use cycle_length=1, or a cap "
                        f">= {group} (never truncates)")


def _balls_in_bins(n, c, name):
    if not isinstance(n, int) or not isinstance(c, int) or n < 1 or c < 1:
        raise ParameterError('strategy', 'iterations and cycle_length >= 1', (n, c),
                             message=f"{name}: iterations and cycle_length must be >= 1 (got {n!r}, {c!r})")
    e = _ceil_div(n, c)
    pad = "" if n % c == 0 else f" (padded from {n} to {e * c} steps)"
    return Mapping(SAMPLER_NAMES["BallsInBinsSampling"], c, sigma_scale=1.0 / math.sqrt(e),
                   note=f"bins drawn once and reused for {e} cycles: one balls-and-bins epoch of {c} steps at "
                        f"σ/√{e}{pad}")


def _covers(spec, relation):
    """Whether the sampler's analysis (under ``spec.relation``) answers ``relation`` with both ends
    (:func:`dpsampling.samplers.relations.coverage`): the same relation, zero-out from Poisson's add-or-remove
    analysis (the same dominating pairs, Chua et al. ICML 2024 §2.2), or WOR (add-or-remove, Lebeda et al. Prop. 9)
    under replace-one by the pair dominating both directions (their §8)."""
    from dpsampling.samplers.relations import coverage

    return coverage(spec, relation).how in ("native", "same_curves", "max_pair")


def _named(m, rel):
    """``relation=`` for :func:`dpsampling.samplers.account`: None for the sampler's own, else ``rel``."""
    return None if rel == samplers.get_spec(m.sampler).relation else rel


def relation_of(strategy, num_examples: int, relation=None) -> str:
    """The neighbouring relation ``strategy`` is accounted under (module docstring); ParameterError naming
    ``relation`` if the strategy is not valid under the one asked for, or its sampler cannot account it."""
    return _relation(to_sampler(strategy, num_examples), type(strategy).__name__, relation)


def _relation(m, name, relation):
    spec = samplers.get_spec(m.sampler)
    if relation is not None:
        check_choice("relation", relation, RELATIONS)
        if relation not in m.relations:
            raise ParameterError("relation", "one of " + ", ".join(m.relations), relation,
                                 message=f"{name} is valid only under {' or '.join(m.relations)} adjacency (JAX "
                                         f"Privacy's batch_selection), not {relation} (got relation={relation!r})")
        if not _covers(spec, relation):
            raise ParameterError("relation", spec.relation, relation,
                                 message=f"{name} is accounted by dpsampling's {m.sampler} sampler, whose analysis "
                                         f"holds under {spec.relation} adjacency; it cannot be accounted under "
                                         f"{relation} (got relation={relation!r}; {m.note})")
        return relation
    for r in (spec.relation, *RELATIONS):
        if r in m.relations and _covers(spec, r):
            return r
    raise ParameterError("relation", " or ".join(m.relations), None,
                         message=f"{name} is valid only under {' or '.join(m.relations)} adjacency, and dpsampling's "
                                 f"{m.sampler} sampler's analysis holds under {spec.relation}: it cannot be accounted "
                                 f"({m.note})")


def _with_relation(result, relation):
    """``result`` carrying the neighbouring relation it holds under."""
    if any(f.name == "relation" for f in dataclasses.fields(result)):
        return dataclasses.replace(result, relation=relation)
    out = dataclasses.replace(result)  # a result type without the field: an attribute outside its value
    object.__setattr__(out, "relation", relation)
    return out


#: the parameters a cost refusal names, as a JAX Privacy caller sets them (None: not settable here, left out)
_DRIVERS = {"steps": "the strategy's iterations", "epochs": "the strategy's iterations", "sigma": "noise_multiplier",
            "q": "the strategy's sampling_prob", "method": None}


def _ask(m, name, quantity, target, sigma=None, **kw):
    try:
        return samplers.account(m.sampler, quantity, target, sigma=sigma, **kw)
    except CostError as err:
        out = CostError(err.what, Cost(err.seconds, err.why, err.drivers), err.limit)
        out.args = (err.text("force=True", _DRIVERS),)
        raise out from None
    except ParameterError as err:  # named as this caller names it (σ is its noise_multiplier)
        raise err.renamed({"sigma": "noise_multiplier"}) from None
    except (OverflowError, ZeroDivisionError) as exc:
        where = f"noise multiplier {sigma:.4g}" if sigma is not None else f"target {target!r}"
        raise ParameterError("noise_multiplier", "a value the accountant can compute at", sigma,
                             message=f"{name}: accounted as dpsampling's {m.sampler} sampler ({m.note}) at {where}, "
                                     f"the accountant's numerics overflow ({exc}): ε is very large there; use a larger "
                                     f"noise_multiplier or fewer iterations") from None


def _scaled(result, factor):
    """A σ result for σ_eff = σ·scale, given back in the strategy's σ (divide by scale)."""
    f = {k: (None if getattr(result, k) is None else getattr(result, k) * factor) for k in ("value", "lower", "upper")}
    return dataclasses.replace(result, **f)


def epsilon(strategy, num_examples: int, noise_multiplier: float, delta: float, *, relation=None, force=False):
    """ε(δ) of ``strategy`` on ``num_examples`` examples at ``noise_multiplier``: dpsampling's AccountingResult
    (``value`` the safe end, the certified upper end — the number to log: kind ``interval`` for
    poisson/wor/balls_and_bins, truncated Poisson and shuffling, whose upper end is the deterministic value,
    ``upper_best_known``; ``exact`` for full batches; ``lower``/``upper`` the ends, ``lower_method``/``upper_method``
    the method of each), carrying its neighbouring
    relation (``relation``: the one to account under; ``force=True`` runs a question predicted beyond the time
    limit)."""
    m = to_sampler(strategy, num_examples)
    rel = _relation(m, type(strategy).__name__, relation)
    noise_multiplier, delta = plain(noise_multiplier), plain(delta)
    check_positive("noise_multiplier", one_number("noise_multiplier", noise_multiplier))
    r = _ask(m, type(strategy).__name__, "epsilon", delta, sigma=noise_multiplier * m.sigma_scale, steps=m.steps,
             epochs=m.epochs, q=m.q, force=force, relation=_named(m, rel), **m.options)
    return _with_relation(r, rel)


def noise_multiplier(strategy, num_examples: int, epsilon: float, delta: float, *, relation=None, force=False):
    """The noise multiplier for a target (ε, δ): dpsampling's AccountingResult; ``value`` = ``upper`` is a σ that
    certifies the target (the safe end, never an insufficient σ); ``lower``, where given, a σ at or below which ε
    provably exceeds it (shuffling: kind ``interval``, ``upper`` the deterministic σ).  ``relation``, ``force``: as in
    :func:`epsilon`."""
    m = to_sampler(strategy, num_examples)
    rel = _relation(m, type(strategy).__name__, relation)
    spec = samplers.get_spec(m.sampler)
    kw = dict(steps=m.steps, epochs=m.epochs, q=m.q, force=force, relation=_named(m, rel), **m.options)
    if "upper" not in spec.sigma_bounds:
        kw["bound"] = spec.sigma_bounds[0]
    target = (plain(epsilon), plain(delta))
    return _with_relation(_scaled(_ask(m, type(strategy).__name__, "sigma", target, **kw), 1.0 / m.sigma_scale), rel)


def _config_base():
    from jax_privacy.accounting import accountants

    return accountants.PldAccountantConfig


@dataclasses.dataclass(kw_only=True, slots=True)
class CertifiedAccountantConfig(_config_base()):
    """JAX Privacy's accountant configuration answered by dpsampling's certified accountant: the one-line swap
    ``DpsgdTrainingAccountant(CertifiedAccountantConfig())`` where ``DpsgdTrainingAccountant(PldAccountantConfig())``
    stood.  ``create_accountant`` returns :class:`~dpsampling.integrations.dp_accounting.CertifiedAccountant` under
    add-or-remove (JAX Privacy's configurations' relation), so every ε JAX Privacy computes from it (its events:
    Poisson, truncated Poisson; fixed batches as JAX Privacy's Poisson event at σ/2, the analysis dpsampling's wor
    sampler uses too) is the certified upper end.  A subclass of ``PldAccountantConfig`` (JAX Privacy asks for one
    with truncated batches); ``value_discretization_interval`` is not used (each answer meets ``rel_tol``)."""

    rel_tol: float | None = None

    def create_accountant(self):
        import dp_accounting

        from .dp_accounting import CertifiedAccountant

        return CertifiedAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, rel_tol=self.rel_tol)


__all__ = ["SAMPLER_NAMES", "CertifiedAccountantConfig", "Mapping", "epsilon", "noise_multiplier", "relation_of",
           "to_sampler"]
