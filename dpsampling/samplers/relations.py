"""Every sampler under a neighbouring relation asked for (``relation=`` of :func:`dpsampling.samplers.account`).

A sampler's analysis holds under its ``spec.relation``.  Under another relation it is answered only where an argument
carries it there (:func:`coverage`), each end labelled with its method:

* ``native``: the relation is the sampler's own.
* ``same_curves``: a sampler with a free rate (``spec.batch`` "rate") under add-or-remove and zero-out: the same
  privacy curves (Chua et al. ICML 2024 §2.2; dp_accounting: REPLACE_SPECIAL gives ADD_OR_REMOVE_ONE's PLD); the
  same computation.
* ``implied_upper``: a replace-one answer under zero-out (the sampler's own, or WOR's ``max_pair``): every
  zero-out pair (a record replaced by a ghost whose clipped gradient is 0) is a replace-one pair, so the replace-one
  upper end is a zero-out upper end; its lower end is not, so the answer is one-sided (kind ``upper``).
* ``max_pair``: WOR (analysed under add/remove, Lebeda et al. 2024 Prop. 9 / Thm 10 part 2) under replace-one.
  Upper end: one step is bounded by the remove pair of the q-subsampled Gaussian at σ/2 for ε ≥ 0 and the add pair
  below (Lebeda Thm 14, Zhu et al. Prop. 30), so the pair whose profile is their pointwise maximum dominates every
  step whichever direction it takes, and its composition (with the proven rounding bound) dominates the run (their
  §8; :func:`dpsampling.engine.replace_one.max_pair_one_step`, composed by :mod:`dpsampling.engine.phases` as a
  one-group run of pair ``max_of_directions``).  Lower end: the add/remove answer's (its dominated PLD at σ/2, per
  direction): the fixed replace-one pair of Lebeda §7 ((−1,…,−1,1) vs (−1,…,−1,−1)) realises the remove pair at
  σ/2 at every step (the swapped pair the add pair), so composing it is an exact event under replace-one.
* ``sensitivity_2``: a fixed partition (deterministic) under replace-one is the Gaussian mechanism at sensitivity 2
  (the record's clipped gradient moves by at most 2C in its one batch per epoch), i.e. at σ/2: exact.  A shuffled
  run is a mixture over permutations of fixed partitions with the same weights under both datasets, so by joint
  convexity of the hockey-stick divergence its upper end is the deterministic value at σ/2 (Chua et al. 2024
  Thm 4.1's argument at sensitivity 2); its lower end stays the zero-out lower bound at σ (zero-out pairs are
  replace-one pairs).
* ``pld_replace_one``: Poisson under replace-one as dp_accounting does it (``PLDAccountant(REPLACE_ONE)``): the
  certified upper end of :mod:`dpsampling.engine.replace_one`; the lower end is the add-or-remove (= zero-out)
  certified lower end at σ, a valid but loose lower end under replace-one (zero-out pairs are replace-one pairs).

Any other combination is not covered: :func:`account` raises :class:`NotCovered` (a ParameterError about
``relation``) saying why, and the audit lists the row as not covered with that reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_choice

from .spec import RELATIONS

#: the samplers whose replace-one answer is their zero-out computation at sensitivity 2, and the sampler whose
#: answer at σ/2 is their upper end (None: the sampler itself, an exact answer)
SENSITIVITY_2 = {"deterministic": None, "shuffle": "deterministic"}
#: the samplers answered under replace-one by dp_accounting's replace-one PLD (engine.replace_one)
PLD_REPLACE_ONE = ("poisson",)
#: the samplers answered under replace-one by one pair dominating both add/remove directions (engine.replace_one)
MAX_PAIR = ("wor",)
#: the flag of an audit row whose sampler's analysis does not cover the relation asked
NOT_COVERED_FLAG = "not_covered"

#: why a sampler × relation is not covered (sampler -> relation -> reason); a fallback reason otherwise
_WHY = {
    "deterministic": {"add_remove": "a fixed partition into batches of a fixed size is analysed under zero-out "
                                    "(Chua et al. 2024 §2.2); adding or removing a record changes the partition"},
    "shuffle": {"add_remove": "a shuffled partition into batches of a fixed size is analysed under zero-out "
                              "(Chua et al. 2024 §2.2); adding or removing a record changes the partition"},
    "balls_and_bins": {"add_remove": "balls-and-bins is analysed under zero-out (Chua et al. 2025); adding or "
                                     "removing a record changes the number of balls",
                       "replace_one": "no replace-one analysis of random allocation is implemented: its dominating "
                                      "pair is for one record's gradient against none (zero-out), and the "
                                      "sensitivity-2 argument of a fixed partition does not carry over to a random "
                                      "bin"},
    "truncated_poisson": {r: "its analysis holds under add-or-remove with the larger dataset holding dataset_size "
                             "records; under " + r.replace("_", "-") + " the changed record keeps taking a batch "
                             "slot up to the cap, which that analysis does not cover"
                          for r in ("zero_out", "replace_one")},
}


class NotCovered(ParameterError):
    """A sampler whose analysis does not cover the relation asked: ``why`` says so in words."""

    def __init__(self, sampler, relation, why):
        self.sampler, self.relation, self.why = sampler, relation, why
        super().__init__("relation", f"a relation sampler '{sampler}' is analysed under", relation,
                         message=f"sampler '{sampler}' is not covered under {relation}: {why}")

    def __reduce__(self):  # copied and pickled with its own arguments (pandas deep-copies a DataFrame's attrs)
        return (type(self), (self.sampler, self.relation, self.why))


@dataclass(frozen=True)
class Coverage:
    """How a sampler is answered under a relation (``how``: see the module docstring; None: not covered) and, when
    not covered, why."""

    how: str | None
    why: str = ""


def check_relation(relation):
    return check_choice("relation", relation, RELATIONS)


def coverage(spec, relation) -> Coverage:
    """How ``spec``'s sampler is answered under ``relation`` (module docstring)."""
    check_relation(relation)
    if relation == spec.relation:
        return Coverage("native")
    if spec.name in MAX_PAIR and relation in ("replace_one", "zero_out"):  # before same_curves: not Poisson's curves
        return Coverage("max_pair" if relation == "replace_one" else "implied_upper")
    if spec.batch == "rate" and {spec.relation, relation} == {"add_remove", "zero_out"}:
        return Coverage("same_curves")
    if spec.relation == "replace_one" and relation == "zero_out":
        return Coverage("implied_upper")
    if relation == "replace_one" and spec.relation == "zero_out" and spec.name in SENSITIVITY_2:
        return Coverage("sensitivity_2")
    if relation == "replace_one" and spec.name in PLD_REPLACE_ONE:
        return Coverage("pld_replace_one")
    why = _WHY.get(spec.name, {}).get(relation) or (
        f"its analysis holds under {spec.relation}, and no argument here carries it to {relation}")
    return Coverage(None, why)


def _relabel(r, relation, **changes):
    """``r`` under ``relation`` with ``changes`` (the answer's value is its upper end: account settled it)."""
    return dataclasses.replace(r, relation=relation, **changes)


def _ends(r):
    """(lower, upper) of a result, each None where it has none (an exact value is both)."""
    lo = r.lower if r.lower is not None else (r.value if r.kind in ("lower", "exact") else None)
    up = r.upper if r.upper is not None else (r.value if r.kind in ("upper", "exact") else None)
    return lo, up


def _method_of(r, end):
    """The method of ``r``'s ``end`` ("lower" or "upper"): :meth:`AccountingResult.end_methods`."""
    return r.end_methods()[0 if end == "lower" else 1]


def account(sampler, quantity, target, *, relation, sigma=None, **kw):
    """:func:`dpsampling.samplers.account` of ``sampler`` under ``relation`` (``kw``: account's other keywords):
    the result carries ``relation``; NotCovered where the sampler's analysis does not cover it."""
    from . import account as _account
    from . import get_spec

    spec = get_spec(sampler)
    cov = coverage(spec, relation)
    if cov.how is None:
        raise NotCovered(sampler, relation, cov.why)
    if cov.how in ("native", "same_curves"):
        return _relabel(_account(sampler, quantity, target, sigma=sigma, **kw), relation)
    if kw.get("direction", "add_remove") != "add_remove":
        check_choice("direction", kw["direction"], ("add_remove",))  # the other relations' arguments: both ways
    if cov.how == "implied_upper":
        r = (_account(sampler, quantity, target, sigma=sigma, **kw) if spec.relation == "replace_one" else
             account(sampler, quantity, target, relation="replace_one", sigma=sigma, **kw))
        _, up = _ends(r)
        why = f"{_method_of(r, 'upper')} under replace-one (zero-out pairs are replace-one pairs)"
        acc = {k: v for k, v in (r.accuracy or {}).items() if k != "lower_method"}
        return _relabel(r, relation, value=up, kind="upper", lower=None, upper=up,
                        lower_method=None, upper_method=why, accuracy={**acc, "upper_method": why})
    if cov.how == "sensitivity_2":
        return _sensitivity_2(spec, quantity, target, sigma, relation, kw)
    if cov.how == "max_pair":
        return _max_pair(spec, quantity, target, sigma, relation, kw)
    return _pld_replace_one(sampler, quantity, target, sigma, relation, kw)


def _sensitivity_2(spec, quantity, target, sigma, relation, kw):
    from . import account as _account

    upper_sampler = SENSITIVITY_2[spec.name] or spec.name
    ukw = {k: v for k, v in kw.items() if k in ("steps", "epochs", "q", "force", "direction")}
    if quantity == "sigma":
        r = _account(spec.name, "sigma", target, **kw)
        u = r if upper_sampler == spec.name else _account(upper_sampler, "sigma", target, **ukw)
        _, up1 = _ends(u)
        up = 2.0 * up1  # σ sufficient at sensitivity 1 → 2σ at sensitivity 2
        if r.kind == "exact":
            m = f"{_method_of(r, 'upper')} at sensitivity 2 (2σ)"
            return _relabel(r, relation, value=up, lower=up, upper=up, lower_method=m, upper_method=m)
        lo, _ = _ends(r)  # provably insufficient under zero-out, so under replace-one
        lm = f"{_method_of(r, 'lower')} (zero-out; zero-out pairs are replace-one pairs)"
        um = f"{_method_of(u, 'upper')} at sensitivity 2 (2σ)"
        return _relabel(r, relation, value=up, lower=lo, upper=up,
                        lower_method=lm, upper_method=um)
    half = _account(upper_sampler, quantity, target, sigma=sigma / 2.0, **(kw if upper_sampler == spec.name else ukw))
    if upper_sampler == spec.name and half.kind == "exact":
        m = f"{_method_of(half, 'upper')} at sensitivity 2 (σ/2)"
        return _relabel(half, relation, lower_method=m, upper_method=m)
    r = _account(spec.name, quantity, target, sigma=sigma, **kw)
    lo, _ = _ends(r)
    _, up = _ends(half)
    lm = f"{_method_of(r, 'lower')} (zero-out; zero-out pairs are replace-one pairs)"
    um = f"{_method_of(half, 'upper')} at sensitivity 2 (σ/2)"
    return _relabel(r, relation, value=up, lower=lo, upper=up,
                    lower_method=lm, upper_method=um)


def _pld_replace_one(sampler, quantity, target, sigma, relation, kw):
    from dpsampling.engine import replace_one

    from . import account as _account

    r = _account(sampler, quantity, target, sigma=sigma, **kw)  # add-or-remove = zero-out: its lower end holds
    if quantity != "sigma" and float(sigma) == 0:  # non-private: answered exactly under every relation
        return _relabel(r, relation)
    lo, up0 = _ends(r)
    if kw.get("bound") == "lower" or (kw.get("method") not in (None, "certified")):
        raise ParameterError("method", f"the default (certified) for sampler '{sampler}' under {relation}",
                             kw.get("method") or kw.get("bound"))
    q, total = float(kw["q"]), int(kw["steps"]) * int(kw.get("epochs", 1))
    d = kw.get("discretization") or replace_one.DISCRETIZATION
    if quantity == "epsilon":
        up = replace_one.certified_epsilon(target, sigma=float(sigma), q=q, total_steps=total, discretization=d)
    elif quantity == "delta":
        up = replace_one.certified_delta(target, sigma=float(sigma), q=q, total_steps=total, discretization=d)
    else:
        eps, dlt = target
        up = replace_one.sufficient_sigma(float(eps), float(dlt), q=q, total_steps=total, start=float(up0),
                                          discretization=d)
    um = replace_one.UPPER_METHOD + (" (sufficient σ)" if quantity == "sigma" else "")
    if lo is None:
        return _relabel(r, relation, value=up, kind="upper", lower=None, upper=up, lower_method=None,
                        upper_method=um, accuracy={**r.accuracy, "discretization": d})
    lm = f"{_method_of(r, 'lower')} (zero-out; zero-out pairs are replace-one pairs)"
    return _relabel(r, relation, value=up, lower=lo, upper=up, lower_method=lm,
                    upper_method=um, accuracy={**r.accuracy, "discretization": d, "lower_method": lm,
                                               "upper_method": um})


#: the method labels of WOR's ends under replace-one (module docstring, ``max_pair``)
MAX_PAIR_UPPER = "pessimistic PLD of one pair dominating both directions at σ/2 (Lebeda et al. §8), composed"
MAX_PAIR_LOWER = "dominated PLD at σ/2 (Lebeda et al. §7's fixed pair: exact under replace-one)"


def _max_pair(spec, quantity, target, sigma, relation, kw):
    """WOR under replace-one (module docstring, ``max_pair``): upper end the composed pair dominating both directions
    at σ/2, lower end the add/remove answer's (realised under replace-one by Lebeda §7's fixed pair)."""
    from dpsampling.engine import phases as engine_phases
    from dpsampling.engine import replace_one
    from dpsampling.engine.result import settle

    from . import account as _account
    from .poisson import INTERVAL

    if kw.get("bound") == "lower" or (kw.get("method") not in (None, INTERVAL)):
        raise ParameterError("method", f"the default ({INTERVAL}) for sampler '{spec.name}' under {relation}",
                             kw.get("method") or kw.get("bound"))
    r = _account(spec.name, quantity, target, sigma=sigma, **kw)  # checks the question and its cost; the lower end
    if quantity != "sigma" and float(sigma) == 0:  # non-private: answered exactly under every relation
        return _relabel(r, relation)
    factor = spec_sensitivity(spec)
    q, total = float(kw["q"]), int(kw["steps"]) * int(kw.get("epochs", 1))
    lo, up0 = _ends(r)
    if quantity == "sigma":
        eps, dlt = target
        up = factor * replace_one.sufficient_sigma(float(eps), float(dlt), q=q, total_steps=total,
                                                   start=float(up0) / factor, pair="max_of_directions")
        um = MAX_PAIR_UPPER + " (sufficient σ)"
        lm = f"{_method_of(r, 'lower')} (Lebeda et al. §7's fixed pair: exact under replace-one)"
        return _relabel(r, relation, value=up, lower=lo, upper=up, lower_method=lm, upper_method=um)
    fn = engine_phases.epsilon if quantity == "epsilon" else engine_phases.delta
    rt = {} if kw.get("rel_tol") is None else {"rel_tol": float(kw["rel_tol"])}
    m = fn(target, [(float(sigma) / factor, q, total, "max_of_directions")], direction="add_remove",
           labels=(MAX_PAIR_LOWER, MAX_PAIR_UPPER), **rt)
    m = settle(m, method=INTERVAL)
    lo = max(lo or 0.0, m.lower)  # both lower ends of the same per-direction curves at σ/2
    acc = {**(m.accuracy or {}), "lower_method": MAX_PAIR_LOWER, "upper_method": MAX_PAIR_UPPER}
    return _relabel(m, relation, lower=lo, accuracy=acc)


def spec_sensitivity(spec):
    """The factor σ is divided by for the q-subsampled Gaussian a MAX_PAIR sampler's directions are (WOR: 2)."""
    from . import wor

    return {wor.NAME: wor.SENSITIVITY}[spec.name]


def epsilon_per_epoch(sampler, delta, *, relation, sigma, steps, epochs, q=None, force=False, **options) -> list:
    """ε(δ) after each epoch 1 … ``epochs`` under ``relation``: the sampler's own per-epoch answers where the
    relation is its own or has the same curves (relabelled), else :func:`account` epoch by epoch."""
    from . import get_spec
    from .per_epoch import epsilon_per_epoch as native

    spec = get_spec(sampler)
    cov = coverage(spec, relation)
    if cov.how is None:
        raise NotCovered(sampler, relation, cov.why)
    if cov.how in ("native", "same_curves"):
        return [_relabel(r, relation) for r in native(sampler, delta, sigma=sigma, steps=steps, epochs=epochs, q=q,
                                                      force=force, **options)]
    kw = dict(steps=steps, q=q, force=force, **options)
    return [account(sampler, "epsilon", delta, relation=relation, sigma=sigma, epochs=e, **kw)
            for e in range(1, epochs + 1)]


__all__ = ["NOT_COVERED_FLAG", "Coverage", "NotCovered", "account", "coverage", "epsilon_per_epoch"]
