"""A run of several phases: each a sampler at its own σ, rate and length; ε(δ) and δ(ε) of the whole run.

A training run is rarely one setting repeated: σ changes part-way (a schedule, a resumed run), the batch size
changes, the sampler changes (pre-training then fine-tuning), or several runs use one dataset.  :class:`Phase` is
one stretch of one setting (``sampler``, ``sigma``, ``q``, ``steps`` per epoch, ``epochs``); :func:`epsilon` and
:func:`delta` answer the whole sequence as one certified interval (:mod:`dpsampling.engine.phases`: each phase's
dominating pair composed for the upper end, dominated pairs for the lower end, with the proven rounding bounds).

**Relation.**  The run is answered under one neighbouring relation: ``relation=`` if named, else the phases' own
when they share it, else the first of add_remove, zero_out, replace_one that covers every phase with both ends
(:func:`.relations.coverage`: no ``implied_upper``), else the first that covers every phase at all; a phase not
covered under it is refused, naming the phase and why.  Zero-out and add-or-remove are the same for Poisson (and
any free-rate sampler): the same privacy curves (Chua et al. ICML 2024 §2.2; the zero-out pair of a q-subsampled
Gaussian is exactly its remove pair, the reverse its add pair), so Poisson phases are composed with zero-out phases
under zero_out with their add/remove pairs, labelled zero_out.

**Upper end** (:data:`MECHANISMS`; each phase's pair dominates it for every ordered neighbouring pair, so their
composition dominates the run's):

* ``poisson``: the q-subsampled Gaussian at σ (its remove/add pairs; under zero_out the same curves); under
  replace_one dp_accounting's replace-one pair (:mod:`dpsampling.engine.replace_one`, symmetric);
* ``wor``: under add_remove (its own relation, Lebeda et al. 2024 Prop. 9) the q-subsampled Gaussian's add/remove
  pairs at σ/2, each direction composed apart; under replace_one (and zero_out, whose pairs are replace-one pairs)
  one pair dominating both directions at σ/2 (engine pair ``max_of_directions``,
  :func:`dpsampling.engine.replace_one.max_pair_one_step`; Lebeda et al. §8), since under substitution a step is
  bounded by the remove pair for ε ≥ 0 and the add pair below (their Thm 14) and the directions can be mixed
  (their §7): the single-setting WOR answer's pairs (:mod:`.relations`, ``max_pair``);
* ``deterministic``: one Gaussian at σ per epoch (each record is in one batch per epoch; exact), at σ/2 under
  replace_one (sensitivity 2);
* ``shuffle`` and ``balls_and_bins``: one Gaussian at σ per epoch, the deterministic phase: conditioned on the
  phase's partitions (drawn independently of the data and of the other phases) the run is a run with a fixed
  partition there, and the mixture has the same weights under both datasets, so by joint convexity of the
  hockey-stick divergence its δ(ε) is at most the fixed partition's (Chua et al. ICML 2024 Thm 4.1's argument;
  for balls-and-bins each record is in exactly one of the epoch's bins, so every allocation is a fixed partition
  of the same kind); shuffle at σ/2 under replace_one.  Balls-and-bins has no replace-one analysis (refused);
* ``truncated_poisson`` (add_remove only; ``options`` dataset_size, max_batch_size): its pair dominating its three
  dominating pairs (:mod:`dpsampling.engine.truncated`, per direction), composed as the others (its single-run
  answer may also take dp_accounting's value where smaller, a number, not a pmf: not used in a run).

**Lower end**: the max of (a) the composed dominated pairs of one explicit adversary that every composable phase
shares, the zero-out adversary (one record whose clipped gradient is e at every step, whatever the model, against a
ghost with gradient 0; every other record's gradient 0): under it a Poisson or WOR phase's pair is exactly the
q-subsampled Gaussian's remove pair at σ (the record is in a batch with probability q = b/n, independently at each
step), a truncated phase's the remove pair at the rate the record is drawn and not cut
(:func:`truncated_kept_rate`; the others' gradients are 0 but they take slots), a deterministic phase's one
Gaussian at σ per epoch, and the reversed order the add pairs; the steps are
independent, so dropping the outputs of the phases left out (shuffle, balls-and-bins) is a post-processing and the
composition of the rest is dominated by the run's pair (zero-out pairs are replace-one pairs: a lower end under
replace_one as in :mod:`.relations`; under add_remove the record removed instead of zeroed gives the same pairs,
the others' gradients being 0); (b) under replace_one, the composed dominated pairs of the ±C adversary (the
record's clipped gradient C at every step against −C, every other record's 0; Lebeda et al. 2024 Prop. 13): a
Poisson or WOR phase's pair is exactly the replace-one pair ((1−q)N(0,σ²) + qN(1,σ²), (1−q)N(0,σ²) + qN(−1,σ²))
(with b = qn distinct records the record's slot is in the batch with probability q, independently at each step;
:func:`dpsampling.engine.replace_one.dominated_one_step`), a deterministic phase's N(1, σ²) vs N(−1, σ²) per epoch
(the Gaussian at σ/2); (b') under replace_one and add_remove, the WOR and deterministic phases alone under Lebeda
et al.'s §7 datasets (the record at C against −C, or against absent under add_remove, every other record at −C): a
WOR batch of b sums to −bC + 2C·[record in it]
against −bC, exactly the remove pair of the q-subsampled Gaussian at σ/2 (the add pair in the other order), a
deterministic phase's N(2C) vs N(0) per epoch (the Gaussian at σ/2), the other phases' outputs dropped (a
post-processing: the steps are independent); (c) each shuffle, balls-and-bins or truncated phase's own certified
lower end under the relation
(:func:`dpsampling.samplers.account`; the run's pair dominates each phase's, its adversary being non-adaptive).
The three adversaries are different datasets, so their runs are not composed with each other: the lower end is
the largest, and the gap left (a WOR phase's upper end at σ/2 beside a Poisson phase's lower end at σ) is reported,
not hidden (the width).

A run whose phases all have one sampler, σ and q is :func:`dpsampling.samplers.account`'s question over their total
number of steps (the same answer, object for object, as ``dpsampling.epsilon(sampler, ...)``); a run of Poisson
phases only, or of WOR phases only, under their own relation (add_remove) is the engine's composition of their own
pairs (today's answer; Lebeda et al.'s §7 datasets realise every WOR phase's pairs at once).  The result is
the engine's :class:`~dpsampling.engine.result.AccountingResult` in the one result model (kind ``interval``: value =
the certified upper end, ``lower``/``upper`` the certified interval, ``lower_method``/``upper_method`` the method of
each end, method ``certified``), carrying the run's relation; ``accuracy["phase_pairs"]`` says each phase's pairs.
Before any work the run's cost is predicted (the sum of its groups' Poisson cost models, twice for the lower runs)
and a run beyond :data:`.spec.TIME_LIMIT` seconds is refused unless ``force``, beyond :data:`.spec.MEMORY_LIMIT`
bytes refused (:func:`.spec.check_cost`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dpsampling.engine import lazy
from dpsampling.engine.errors import ParameterError

from . import poisson, wor

engine_phases = lazy.module("dpsampling.engine.phases")

#: sampler -> the factor its σ is divided by to give the Poisson-subsampled Gaussian it is accounted as (under its
#: own relation; one-batch-per-step samplers: one Gaussian per epoch at σ/factor)
MECHANISMS = {poisson.NAME: 1.0, wor.NAME: wor.SENSITIVITY, "deterministic": 1.0, "shuffle": 1.0,
              "balls_and_bins": 1.0, "truncated_poisson": 1.0}
#: the samplers whose phase is one Gaussian step per epoch (q = 1 in the engine)
PER_EPOCH = ("deterministic", "shuffle", "balls_and_bins")
#: the samplers left out of the adversaries' runs (their phase's pair there is not a composable pmf)
OWN_LOWER = ("shuffle", "balls_and_bins")
#: the samplers whose own certified lower end is asked of them (the lower end's part (c))
FLOOR = OWN_LOWER + ("truncated_poisson",)
#: the coverages (:func:`.relations.coverage`) answered with both ends
TWO_SIDED = ("native", "same_curves", "sensitivity_2", "pld_replace_one", "max_pair")

@dataclass(frozen=True)
class Phase:
    """One stretch of a run: ``steps`` per epoch for ``epochs`` epochs of ``sampler`` at noise multiplier ``sigma``
    and sampling rate ``q`` (the keywords of :func:`dpsampling.samplers.account`; None for a sampler with one batch
    per step, whose rate is 1/steps); ``options``: the sampler's own options (truncated_poisson: ``dataset_size``,
    ``max_batch_size``)."""

    sampler: str
    sigma: float
    q: float | None
    steps: int
    epochs: int = 1
    options: dict | None = dataclasses.field(default=None, hash=False)


def _as_phase(i, phase):
    if isinstance(phase, Phase):
        return phase
    why = f"must be a Phase or a dict of its keywords (got {phase!r})"
    if isinstance(phase, dict):
        try:
            return Phase(**phase)
        except TypeError as exc:
            why = f"{exc} (Phase(sampler, sigma, q, steps, epochs=1))"
    raise ParameterError("phases", "a list of Phase (or dicts of its keywords)", phase, message=f"phase {i}: {why}")


def _checked(phases, quantity, target, direction, options):
    """The phases as :class:`Phase`, each checked as :func:`dpsampling.samplers.account` checks a question (its
    error prefixed with the phase) and its sampler supported in a run (:data:`MECHANISMS`)."""
    from dpsampling.engine.validation import check_positive

    from . import _check_question, get_spec

    if isinstance(phases, (Phase, dict)) or not hasattr(phases, "__iter__") or not list(phases):
        raise ParameterError("phases", "a non-empty list of Phase", phases)
    out = []
    for i, phase in enumerate(phases):
        p = _as_phase(i, phase)
        try:
            spec = get_spec(p.sampler)
            if p.sampler not in MECHANISMS:
                raise ParameterError("sampler", "one of " + ", ".join(MECHANISMS) + " in a run of phases", p.sampler,
                                     message=f"sampler {p.sampler} is not supported in a run of phases yet (no "
                                             f"composable dominating pair of its phase is built here): one of "
                                             f"{', '.join(MECHANISMS)}")
            _check_question(spec, quantity, target, p.sigma, p.steps, p.epochs, p.q, spec.default_method, None,
                            direction, dict(options, **(p.options or {})))
            check_positive("sigma", p.sigma)
        except ParameterError as exc:
            raise exc.with_message(f"phase {i} ({p.sampler}): {exc}") from None
        out.append(p)
    return out


def _relation(checked, relation):
    """The run's relation and each phase's coverage under it (module docstring); ParameterError naming the first
    phase not covered."""
    from . import get_spec
    from .relations import NotCovered, check_relation, coverage
    from .spec import RELATIONS

    specs = [get_spec(p.sampler) for p in checked]
    if relation is None:
        own = {s.relation for s in specs}
        if len(own) == 1:
            relation = own.pop()
        else:
            covs = {r: [coverage(s, r).how for s in specs] for r in RELATIONS}
            both = [r for r in RELATIONS if all(h in TWO_SIDED for h in covs[r])]
            some = [r for r in RELATIONS if all(h is not None for h in covs[r])]
            relation = (both or some or [None])[0]
            if relation is None:
                i, p = next((i, p) for i, p in enumerate(checked) if coverage(specs[i], "replace_one").how is None)
                why = coverage(specs[i], "replace_one").why
                raise ParameterError("phases", "phases that one neighbouring relation covers", p.sampler,
                                     message=f"no neighbouring relation covers every phase: phase {i} ({p.sampler}) is"
                                             f" analysed under {specs[i].relation} only ({why}); the phases: "
                                             f"{_words(checked)}")
    check_relation(relation)
    hows = []
    for i, (p, s) in enumerate(zip(checked, specs)):
        cov = coverage(s, relation)
        if cov.how is None:
            exc = NotCovered(p.sampler, relation, cov.why)
            raise exc.with_message(f"phase {i} ({p.sampler}): {exc}") from None
        hows.append(cov.how)
    return relation, hows


def _upper_of(p, how):
    """The phase's dominating pair for the engine: (σ, q, steps, pair) (module docstring)."""
    factor = MECHANISMS[p.sampler] * (2.0 if how == "sensitivity_2" else 1.0)
    if p.sampler in PER_EPOCH:
        return (float(p.sigma) / factor, 1.0, int(p.epochs), "add_remove")
    if p.sampler == "truncated_poisson":
        return (float(p.sigma), float(p.q), int(p.steps) * int(p.epochs), "truncated", *_n_cap(p))
    pair = "add_remove" if how == "native" else {"pld_replace_one": "replace_one"}.get(
        how, "max_of_directions" if p.sampler == wor.NAME else "add_remove")  # WOR beyond add/remove: max_pair
    return (float(p.sigma) / factor, float(p.q), int(p.steps) * int(p.epochs), pair)


def _n_cap(p):
    return int(p.options["dataset_size"]), int(p.options["max_batch_size"])


def truncated_kept_rate(q, dataset_size, max_batch_size):
    """P[the record is in the batch] of truncated Poisson when every other record's gradient is 0: drawn and not
    cut, q·P[K ≤ B − 1] + p·q' (K ~ Bin(n − 1, q) the others drawn, p = P[K ≥ B], q' the rate it is kept then:
    :mod:`dpsampling.engine.truncated`)."""
    from dpsampling.engine import truncated

    p = truncated.truncation_probability(q, dataset_size, max_batch_size)
    return float(q) * (1.0 - p) + p * truncated.kept_rate(q, dataset_size, max_batch_size)


def _zero_out_adversary(p):
    """The phase's pair under the zero-out adversary (module docstring, lower end (a)); None: not composable."""
    if p.sampler in OWN_LOWER:
        return None
    if p.sampler == "truncated_poisson":
        return (float(p.sigma), truncated_kept_rate(float(p.q), *_n_cap(p)), int(p.steps) * int(p.epochs))
    if p.sampler in PER_EPOCH:
        return (float(p.sigma), 1.0, int(p.epochs))
    return (float(p.sigma), float(p.q), int(p.steps) * int(p.epochs))


def _replace_one_adversary(p):
    """The phase's pair under the ±C replace-one adversary (module docstring, lower end (b)); None: not composable."""
    if p.sampler in OWN_LOWER:
        return None
    if p.sampler in PER_EPOCH:
        return (float(p.sigma), 1.0, int(p.epochs), "replace_one")  # N(C) vs N(−C) per epoch: the engine's σ/2
    return (float(p.sigma), float(p.q), int(p.steps) * int(p.epochs), "replace_one")


def _plan(checked, hows, relation):
    """(upper mechanisms, lower runs or None for the run's own, the phases asked for their own lower end, labels)."""
    upper = [_upper_of(p, h) for p, h in zip(checked, hows)]
    if all(h == "native" for h in hows) and len({p.sampler for p in checked}) == 1 and checked[0].sampler in (
            poisson.NAME, wor.NAME) or all(p.sampler == "deterministic" for p in checked):
        return upper, None, [], None  # one analysis throughout: the run's own dominated pairs (today's answer)
    adversary = [m for m in map(_zero_out_adversary, checked) if m is not None]
    if all(m[3] == "add_remove" for m in upper) and [m[:3] for m in upper] == adversary:
        return upper, None, [], None  # the adversary's pairs are the dominating pairs (e.g. Poisson under zero_out)
    own = [i for i, p in enumerate(checked) if p.sampler in FLOOR]
    swap = [m for m in map(_replace_one_adversary, checked) if m is not None] if relation == "replace_one" else []
    fixed = [(float(p.sigma) / 2.0, 1.0, int(p.epochs)) if p.sampler == "deterministic" else
             (float(p.sigma) / 2.0, float(p.q), int(p.steps) * int(p.epochs))
             for p in checked if p.sampler in (wor.NAME, "deterministic")] if relation != "zero_out" else []
    words = ("dominated PLD of the phases under the zero-out adversary" if adversary else "",
             "under the ±C replace-one adversary" if swap else "",
             "of the WOR / deterministic phases under the fixed-size adversary" if fixed else "",
             "each shuffled / balls-and-bins / truncated phase's own lower end" if own else "")
    lo_m = ("max of " if sum(map(bool, words)) > 1 else "") + " and ".join(w for w in words if w)
    up_m = "pessimistic PLD of the phases' dominating pairs, composed" + (
        " (WOR: one pair dominating both directions)" if relation != "add_remove" and any(
            p.sampler == wor.NAME for p in checked) else "")
    return upper, [r for r in (adversary, swap, fixed) if r], own, (lo_m, up_m)


def _pair_words(p, how, mech):
    sigma, q, steps, pair = mech[:4]
    what = "Gaussian per epoch" if q == 1.0 else f"{pair.replace('_', '-')} pair of the q-subsampled Gaussian"
    return f"{p.sampler} ({how}): {what} at σ={sigma:g}, {steps} step(s)"


def _floor(checked, own, quantity, target, relation, force):
    """The largest of the phases' own certified lower ends (module docstring, lower end (c)); 0 without any."""
    from . import account

    out = 0.0
    for i in own:
        p = checked[i]
        try:
            r = account(p.sampler, quantity, target, sigma=p.sigma, steps=p.steps, epochs=p.epochs, q=p.q,
                        relation=relation, force=force, **(p.options or {}))
        except ParameterError as exc:
            raise exc.with_message(f"phase {i} ({p.sampler}), its own lower end: {exc}") from None
        if r.lower is not None:
            out = max(out, float(r.lower))
    return out


def predict_cost(quantity, mechanisms, lower_runs):
    """The run's predicted :class:`.spec.Cost`: its groups' Poisson cost models summed (a replace-one group as its
    add/remove one), the lower runs' added (the default lower run: the run itself)."""
    from .spec import Cost, Question

    def one(run):
        c = [poisson.cost(Question(quantity, sigma=m[0], steps=int(m[2]), epochs=1, q=float(m[1]), target=None,
                                   method=None, options={})) for m in engine_phases.groups(run)]
        return sum(x.seconds for x in c), max([x.bytes for x in c] + [0.0])

    secs, mem = one([m for m in mechanisms if m[3] != "truncated"])
    for m in (m for m in mechanisms if m[3] == "truncated"):  # truncated Poisson's own cost model
        from . import get_spec

        c = get_spec("truncated_poisson").cost(Question(quantity, sigma=m[0], steps=int(m[2]), epochs=1, q=m[1],
                                                        target=None, method=None,
                                                        options={"dataset_size": m[4], "max_batch_size": m[5]}))
        secs, mem = secs + c.seconds, max(mem, c.bytes)
    for r in ([mechanisms] if lower_runs is None else lower_runs):
        s2, b2 = one(r)
        secs, mem = secs + s2, max(mem, b2)
    return Cost(secs, drivers=("sigma", "q", "steps", "epochs"), bytes=mem)


def _answer(quantity, phases, target, direction, rel_tol, force, relation=None):
    options = {} if rel_tol is None else {"rel_tol": rel_tol}
    checked = _checked(phases, quantity, target, direction, options)
    relation, hows = _relation(checked, relation)
    first = checked[0]
    if all((p.sampler, p.sigma, p.q, p.options) == (first.sampler, first.sigma, first.q, first.options)
           for p in checked):
        from . import account, get_spec

        if first.sampler in PER_EPOCH:
            steps, epochs = first.steps, sum(int(p.epochs) for p in checked)
        else:
            steps, epochs = sum(int(p.steps) * int(p.epochs) for p in checked), 1
        named = None if relation == get_spec(first.sampler).relation else relation
        return account(first.sampler, quantity, target, sigma=first.sigma, steps=steps, epochs=epochs, q=first.q,
                       direction=direction, force=force, relation=named, **options, **(first.options or {}))
    mixed = not all(h == "native" for h in hows) or any(p.sampler in PER_EPOCH for p in checked)
    if mixed and direction != "add_remove":
        from dpsampling.engine.validation import check_choice

        check_choice("direction", direction, ("add_remove",))  # a run mixing analyses: both ways
    from ._phase_cost import check_cost

    check_cost(checked, quantity, target, rel_tol, force)  # each phase within the limits, as account checks one
    mechanisms, lower, own, labels = _plan(checked, hows, relation)
    from .spec import TIME_LIMIT, CostError, MEMORY_LIMIT, memory_why

    cost = predict_cost(quantity, mechanisms, lower)
    if cost.bytes > MEMORY_LIMIT or (cost.seconds > TIME_LIMIT and not force):
        why = memory_why(cost.bytes) if cost.bytes > MEMORY_LIMIT else ""
        raise CostError(f"a run of phases ({quantity})", type(cost)(cost.seconds, why, cost.drivers, cost.bytes),
                        TIME_LIMIT)
    floor = _floor(checked, own, quantity, target, relation, force)
    fn = engine_phases.epsilon if quantity == "epsilon" else engine_phases.delta
    kw = {} if rel_tol is None else {"rel_tol": float(rel_tol)}
    if lower is not None:
        kw.update(lower=lower, lower_floor=floor, labels=labels)
    try:
        r = fn(target, mechanisms, direction=direction, **kw)
    except ParameterError as exc:
        raise exc.with_message(f"{exc} (the phases: {_words(checked)})") from None
    from dpsampling.engine.result import settle

    r = settle(r, method=poisson.INTERVAL)
    if lower is not None:
        pairs = [_pair_words(p, h, m) for p, h, m in zip(checked, hows, mechanisms)]
        r = dataclasses.replace(r, accuracy={**r.accuracy, "phase_pairs": pairs, "own_lower_end": floor})
    return dataclasses.replace(r, relation=relation)


def _words(checked):
    return "; ".join(f"{i}: {p.sampler} σ={p.sigma:g} q={'1/steps' if p.q is None else format(p.q, 'g')} "
                     f"{p.steps}×{p.epochs}" for i, p in enumerate(checked))


def epsilon(phases, delta, *, direction="add_remove", rel_tol=None, force=False, relation=None):
    """ε(δ) of the run of ``phases`` (a list of :class:`Phase`) as a certified interval under ``relation`` (None:
    the module docstring's choice)."""
    return _answer("epsilon", phases, delta, direction, rel_tol, force, relation)


def delta(phases, epsilon, *, direction="add_remove", rel_tol=None, force=False, relation=None):
    """δ(ε) of the run of ``phases`` (a list of :class:`Phase`) as a certified interval under ``relation`` (None:
    the module docstring's choice)."""
    return _answer("delta", phases, epsilon, direction, rel_tol, force, relation)


__all__ = ["MECHANISMS", "Phase", "delta", "epsilon"]
