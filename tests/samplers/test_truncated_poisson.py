"""samplers/truncated_poisson: the registry entry, its options and bad input."""

from __future__ import annotations

import math

import pytest

from dpsampling import samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import truncated_poisson as tp

KW = dict(sigma=1.0, steps=8, epochs=2, q=0.25)


def test_registered_with_its_relation_and_loader():
    spec = samplers.get_spec("truncated_poisson")
    assert spec.batch == "capped" and spec.relation == "add_remove" and spec.loader == "truncated_poisson"
    assert {o.flag for o in spec.options} >= {"dataset-size", "max-batch-size"}


def test_account_gives_a_certified_interval_and_its_lower_end():
    r = samplers.account("truncated_poisson", "epsilon", 1e-5, dataset_size=400, max_batch_size=100, **KW)
    lo = samplers.account("truncated_poisson", "epsilon", 1e-5, dataset_size=400, max_batch_size=100, bound="lower",
                          **KW)
    assert r.kind == lo.kind == "interval" and lo == r  # bound="lower": the same interval, its lower end in lower
    assert lo.lower == r.lower < r.upper == r.value == lo.value  # value: the safe (upper) end
    assert (r.lower_method, r.upper_method) == (r.accuracy["lower_method"], r.accuracy["upper_method"])
    # the same engine call with steps·epochs compositions
    from dpsampling.engine import truncated

    e = truncated.epsilon(1e-5, sigma=1.0, q=0.25, dataset_size=400, max_batch_size=100, total_steps=16)
    assert (e.lower, e.upper) == (r.lower, r.upper)


def test_delta_at_the_upper_epsilon_is_within_delta():
    r = samplers.account("truncated_poisson", "epsilon", 1e-5, dataset_size=400, max_batch_size=100, **KW)
    d = samplers.account("truncated_poisson", "delta", r.upper, dataset_size=400, max_batch_size=100, **KW)
    assert d.upper <= 1e-5 * (1 + 1e-6)


def test_cap_at_dataset_size_answers_as_poisson_and_says_so():
    r = samplers.account("truncated_poisson", "epsilon", 1e-5, dataset_size=400, max_batch_size=400, **KW)
    p = samplers.account("poisson", "epsilon", 1e-5, rel_tol=1e-2, **KW)
    theirs = _theirs("epsilon", 1e-5, KW["sigma"], KW["q"], 400, 400, KW["steps"] * KW["epochs"])
    from dpsampling.engine import truncated_event

    # dp_accounting's event as an upper end is its pmf with our proven rounding bound: at or above their float value
    event = truncated_event.certified_epsilon(1e-5, sigma=KW["sigma"], q=KW["q"], dataset_size=400,
                                              max_batch_size=400, total_steps=KW["steps"] * KW["epochs"])
    assert theirs <= event <= theirs * (1 + 1e-6)
    assert r.lower == p.lower and r.upper == min(p.upper, event)  # the smaller of two upper ends
    assert "cap_at_or_above_dataset_size_is_poisson" in r.flags


@pytest.mark.parametrize("kw,param", [
    (dict(dataset_size=400, max_batch_size=0), "max_batch_size"),
    (dict(dataset_size=400, max_batch_size=2.5), "max_batch_size"),
    (dict(max_batch_size=100), "dataset_size"),
    (dict(dataset_size=3, max_batch_size=100), "dataset_size"),
    (dict(dataset_size=400), "max_batch_size"),
])
def test_bad_input_names_the_parameter_and_its_range(kw, param):
    with pytest.raises(ParameterError) as e:
        samplers.account("truncated_poisson", "epsilon", 1e-5, **kw, **KW)
    assert e.value.param == param
    assert param in str(e.value) and "integer" in str(e.value)


def test_q_is_required():
    with pytest.raises(ParameterError) as e:
        samplers.account("truncated_poisson", "epsilon", 1e-5, sigma=1.0, steps=8, dataset_size=400,
                         max_batch_size=100)
    assert e.value.param == "q"


def test_smallest_cap():
    r = tp.smallest_cap(1e-5, sigma=1.0, steps=8, epochs=2, q=0.25, dataset_size=400, factor=0.01)
    assert r.mean_batch_size == 100 and 100 < r.max_batch_size < 400
    assert r.epsilon <= 1.01 * r.poisson_epsilon
    with pytest.raises(ParameterError) as e:
        tp.smallest_cap(1e-5, sigma=1.0, steps=8, q=0.25, dataset_size=400, factor=0)
    assert e.value.param == "factor"


def test_cost_model_stays_below_the_limit_at_the_named_runs():
    spec = samplers.get_spec("truncated_poisson")
    from dpsampling.samplers.spec import Question

    # ours ≤ 3.5 s plus dp_accounting's value of the same question (the upper end's second bound, ~2.3 s)
    assert spec.cost(Question("epsilon", 1.1, 235, 60, 256 / 60000)).seconds <= 6.0
    assert spec.cost(Question("epsilon", 1.0, 5005, 10, 256 / 1281167)).seconds < 10


def _theirs(quantity, target, sigma, q, n, cap, steps):
    """dp_accounting's own value for the question (PLDAccountant, its defaults), computed here independently."""
    import dp_accounting

    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, cap, sigma),
                                                  steps))
    return acc.get_epsilon(target) if quantity == "epsilon" else acc.get_delta(target)


@pytest.mark.parametrize("quantity,target", [("epsilon", 1e-5), ("delta", 2.0)])
def test_upper_end_at_most_dp_accountings_event_with_the_cap_at_least_n(quantity, target):
    """Issue 38: with the cap ≥ n our end is Poisson's certified one, which was above dp_accounting's event value
    (106.7237076 vs 106.7236515 in the issue's case).  Now at most it, and named where it is used."""
    from dpsampling.samplers import account
    from dpsampling.samplers import truncated_poisson as tp

    kw = dict(sigma=0.6, steps=100, q=0.01, dataset_size=1000, max_batch_size=1000)
    theirs = tp.dp_accounting_value(quantity, target, q=0.01, dataset_size=1000, max_batch_size=1000, sigma=0.6,
                                    total_steps=100)
    plain = _theirs(quantity, target, 0.6, 0.01, 1000, 1000, 100)
    assert plain <= theirs <= plain * (1 + 1e-6)  # dp_accounting's float, raised by its rounding bound only
    r = account("truncated_poisson", quantity, target, **kw)
    assert r.lower <= r.upper <= theirs and r.value == r.upper
    if r.upper == theirs:
        assert r.accuracy["upper_method"] == tp.DP_ACCOUNTING_UPPER_METHOD and r.accuracy["upper_ours"] > theirs
        assert r.upper_method == tp.DP_ACCOUNTING_UPPER_METHOD


@pytest.mark.parametrize("quantity,target", [("epsilon", 1e-5), ("delta", 2.0)])
def test_dp_accountings_event_as_an_upper_end_is_above_a_finer_discretisation(quantity, target):
    """The event's value used as an upper end (its composition's rounding bound added, read for an upper bound) is
    at or above dp_accounting's own reading of the same event at a 10× finer discretisation (1e-5: a tighter
    pessimistic PLD, an independent composition): evidence that the value is on the upper side."""
    import dp_accounting

    from dpsampling.samplers import truncated_poisson as tp

    for sigma, q, n, cap, steps in [(0.6, 0.01, 1000, 1000, 100), (1.1, 0.02, 2000, 45, 50)]:
        ours = tp.dp_accounting_value(quantity, target, sigma=sigma, q=q, dataset_size=n, max_batch_size=cap,
                                      total_steps=steps)
        acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-5)
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, cap, sigma), steps))
        finer = acc.get_epsilon(target) if quantity == "epsilon" else acc.get_delta(target)
        assert finer <= ours, (sigma, q, n, cap, steps, finer, ours)


def test_dp_accountings_value_is_not_an_upper_end_where_its_rounding_bound_exceeds_delta():
    """Issue 38: σ 2.29, 6151 steps, q 0.00082, n 12192, B 14, δ 1.16e-10 answered [0.163, ∞] and dp_accounting's
    event gives 0.264; but the proven bound on that composition's FFT rounding is 5.8e-10 > δ at ε = 0.264 (1.0e-9 at
    ε = −∞), so 0.264 is not a proven upper end (issue 38, session 10): the event's certified value is ∞ and the answer
    keeps its proven ends, the lower one below dp_accounting's float."""
    from dpsampling.engine import pld
    from dpsampling.engine import truncated_event as te
    from dpsampling.samplers import truncated_poisson as tp

    plain = _theirs("epsilon", 1.16e-10, 2.29, 0.00082, 12192, 14, 6151)
    for pmf, err2, _ in te._composed(12192, 0.00082, 14, 2.29, 6151):
        assert pld.rounding_at(pmf, err2, plain) > 1.16e-10
    theirs = tp.dp_accounting_value("epsilon", 1.16e-10, sigma=2.29, q=0.00082, dataset_size=12192,
                                    max_batch_size=14, total_steps=6151)
    from dpsampling.samplers import account

    r = account("truncated_poisson", "epsilon", 1.16e-10, sigma=2.29, steps=6151, q=0.00082, dataset_size=12192,
                max_batch_size=14)
    assert theirs == math.inf and 0 < r.lower <= plain and r.upper == math.inf
