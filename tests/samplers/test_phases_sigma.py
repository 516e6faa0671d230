"""σ calibration of a run of phases (samplers/phases_sigma.py, public as dpsampling.phases.sigma): one setting is
today's σ answer; the general path's bracket meets today's where both apply, its ends are certified by the run's
interval (sufficient: upper ε ≤ target; insufficient: lower ε > target) and bracket dp_accounting's PLD at a finer
discretisation."""

import dataclasses

import pytest

import dpsampling
from dpsampling import phases
from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import phases_sigma

Q = 256 / 60000


def test_one_phase_is_todays_sigma():
    today = dpsampling.sigma("poisson", 3.0, 1e-5, steps=235, epochs=30, q=Q)
    assert phases.sigma([phases.Phase("poisson", 1.0, Q, 235, 30)], 3.0, 1e-5) == today
    assert phases.sigma([phases.Phase("poisson", None, Q, 235, 30)], 3.0, 1e-5, scale=0) == today
    wor = dpsampling.sigma("wor", 8.0, 1e-5, steps=235, epochs=30, q=Q)
    r = phases.sigma([{"sampler": "wor", "sigma": 1.0, "q": Q, "steps": 235, "epochs": 30}], 8.0, 1e-5)
    assert r == wor and r.relation == "add_remove"  # WOR's own relation (Lebeda et al. Prop. 9)


def test_two_equal_phases_are_one_run_and_weights_divide():
    """Two equal phases: today's σ over the total length; a weight w divides both ends, rounded outward."""
    today = dpsampling.sigma("poisson", 3.0, 1e-5, steps=7050, q=Q)
    two = phases.sigma([phases.Phase("poisson", 1.0, Q, 3000), phases.Phase("poisson", 1.0, Q, 4050)], 3.0, 1e-5)
    assert (two.lower, two.upper, two.kind, two.relation) == (today.lower, today.upper, today.kind, today.relation)
    w = 1.1
    weighted = phases.sigma([phases.Phase("poisson", w, Q, 3000), phases.Phase("poisson", w, Q, 4050)], 3.0, 1e-5)
    assert weighted.upper * w >= today.upper and weighted.lower * w <= today.lower
    assert weighted.upper * w == pytest.approx(today.upper, rel=1e-15)


def test_general_path_brackets_meet_todays():
    """The run's search (forced on a run of one setting) and today's calibration bracket the same smallest σ: the
    two brackets, each certified, intersect."""
    run = [phases.Phase("poisson", 1.0, Q, 1000), phases.Phase("poisson", 1.0, Q, 1500)]
    ours = phases_sigma._calibrate(run, "all", 1.0, 3.0, 1e-5, "add_remove", None, False)
    today = dpsampling.sigma("poisson", 3.0, 1e-5, steps=2500, q=Q)
    assert ours.kind == "interval" and ours.lower < ours.upper
    assert max(ours.lower, today.lower) < min(ours.upper, today.upper)
    assert (ours.upper - ours.lower) / ours.upper <= 1e-3


def _run(sigmas, steps=7050):
    return [phases.Phase("poisson", s, Q, steps) for s in sigmas]


def _dp_accounting_epsilon(sigmas, steps, d, delta=1e-5):
    import dp_accounting as dpa

    acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=d)
    for s in sigmas:
        acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(s)), steps)
    return acc.get_epsilon(delta)


def test_scaled_schedule_is_certified_on_both_sides():
    """A schedule 1.1 then 0.9 scaled together: the returned multiplier meets ε = 3 by the run's certified upper
    end, the lower end provably does not (certified lower ε > 3), and dp_accounting's pessimistic PLD at 10× finer
    discretisation (an independent composition) lies below the target at the sufficient end."""
    r = phases.sigma(_run([1.1, 0.9], 2000), 3.0, 1e-5)
    assert r.kind == "interval" and r.relation == "add_remove" and r.value == r.upper
    assert r.accuracy["sigmas"] == [1.1 * r.upper, 0.9 * r.upper]
    up = phases.epsilon(_run(r.accuracy["sigmas"], 2000), 1e-5)
    lo = phases.epsilon(_run(r.accuracy["sigmas_insufficient"], 2000), 1e-5)
    assert up.upper <= 3.0 < lo.lower
    assert (r.upper - r.lower) / r.upper <= 1e-3
    d = up.accuracy["discretization"] / 10
    assert _dp_accounting_epsilon(r.accuracy["sigmas"], 2000, d) <= 3.0
    # the bracket is not loose: 1 % below the sufficient end, dp_accounting's PLD exceeds the target
    assert _dp_accounting_epsilon([0.99 * s for s in r.accuracy["sigmas"]], 2000, d) > 3.0


def test_one_phase_calibrated_the_others_fixed():
    """scale=1: phase 1's σ with phase 0 fixed; sufficient and insufficient by the run's certified interval, and
    more noise is needed than for phase 1 alone."""
    run = [phases.Phase("wor", 1.2, Q, 2000), phases.Phase("truncated_poisson", 1.0, Q, 2000,
                                                           options={"dataset_size": 60000, "max_batch_size": 290})]
    with pytest.raises(ParameterError, match="phase 1 \\(truncated_poisson\\)"):  # no relation covers both
        phases.sigma(run, 3.0, 1e-5, scale=1)
    run = [phases.Phase("poisson", 1.2, Q, 2000), phases.Phase("poisson", None, 0.01, 2000)]
    r = phases.sigma(run, 4.0, 1e-5, scale=1)
    assert r.accuracy["sigmas"][0] == 1.2 and r.accuracy["sigmas"][1] == r.upper
    at = lambda s: phases.epsilon([run[0], dataclasses.replace(run[1], sigma=s)], 1e-5)  # noqa: E731
    assert at(r.upper).upper <= 4.0 < at(r.lower).lower
    alone = dpsampling.sigma("poisson", 4.0, 1e-5, steps=2000, q=0.01)
    assert r.lower > alone.upper


@pytest.mark.parametrize("kw,words", [
    ({"scale": 2}, "scale must be 'all'"),
    ({"scale": True}, "scale must be 'all'"),
    ({"epsilon": 0.0}, "epsilon must be in (0,"),
    ({"delta": 1.5}, "delta"),
])
def test_refusals_name_the_parameter(kw, words):
    args = dict(phases=_run([1.1, 0.9], 10), epsilon=1.0, delta=1e-5)
    args.update(kw)
    with pytest.raises(ParameterError) as exc:
        phases.sigma(**args)
    assert words in str(exc.value)


def test_weight_must_be_positive():
    with pytest.raises(ParameterError, match="phase 1 \\(poisson\\): sigma must be > 0"):
        phases.sigma(_run([1.1, 0.0], 10), 1.0, 1e-5)
    with pytest.raises(ParameterError, match="phase 0 \\(poisson\\): sigma"):
        phases.sigma([phases.Phase("poisson", None, Q, 10), phases.Phase("poisson", 1.0, Q, 10)], 1.0, 1e-5, scale=1)


def test_search_on_a_known_curve_backs_off_where_a_phase_is_too_costly(monkeypatch):
    """The search alone, on a synthetic run whose certified interval is ε(c) = 3/c² · [1 − 1e-5, 1 + 1e-5] (true
    root c* = √(3/50) for ε = 50): the bracket contains c*, each end holds by the synthetic interval, and a point
    where a phase's cost model refuses (σ < 0.2) is backed off from, never evaluated."""
    from dpsampling.engine.result import AccountingResult
    from dpsampling.samplers.spec import Cost, CostError

    asked = []

    def fake_epsilon(run, delta, **kw):
        c = run[0].sigma / 1.1
        asked.append(c)
        eps = 3.0 / c**2
        return AccountingResult(eps * (1 + 1e-5), "interval", "certified", {"discretization": 1e-4},
                                eps * (1 - 1e-5), eps * (1 + 1e-5), (), relation="add_remove",
                                lower_method="dominated PLD", upper_method="pessimistic PLD")

    def fake_cost(run, quantity, target, rel_tol, force, what=""):
        if min(p.sigma for p in run) < 0.2:
            raise CostError("phase 1 (poisson)", Cost(1e3, "", ("sigma",)), 60)

    monkeypatch.setattr(phases_sigma._phases, "epsilon", fake_epsilon)
    monkeypatch.setattr(phases_sigma, "check_cost", fake_cost)
    r = phases_sigma._calibrate(_run([1.1, 0.9], 10), "all", 1.0, 50.0, 1e-5, "add_remove", None, False)
    root = (3.0 / 50.0) ** 0.5
    assert r.lower < root < r.upper and (r.upper - r.lower) / r.upper <= 1e-3
    assert 3.0 / r.upper**2 * (1 + 1e-5) <= 50.0 < 3.0 / r.lower**2 * (1 - 1e-5)
    assert min(0.9 * c for c in asked) >= 0.2  # no evaluation where the cost model refused
    assert r.kind == "interval" and r.lower_method == "dominated PLD (provably insufficient σ)"
