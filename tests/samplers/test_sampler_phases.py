"""A run of phases (samplers/phases.py, public as dpsampling.phases): today's answer for one setting, the engine's
interval for several, refusals naming the phase.  Named apart from tests/engine/test_phases.py (pytest's rootdir
imports need unique basenames)."""

import dataclasses

import numpy as np
import pytest

import dpsampling
from dpsampling import phases
from dpsampling.engine import phases as engine_phases
from dpsampling.engine.errors import ParameterError

Q = 256 / 60000


def test_one_setting_is_todays_answer():
    """One phase, or equal phases, give dpsampling.epsilon's answer (the same floats and relation)."""
    today = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=235, epochs=60)
    one = phases.epsilon([phases.Phase("poisson", 1.1, Q, 235, 60)], 1e-5)
    two = phases.epsilon([dpsampling.Phase("poisson", 1.1, Q, 235, 20),
                          {"sampler": "poisson", "sigma": 1.1, "q": Q, "steps": 235, "epochs": 40}], 1e-5)
    for r in (one, two):
        assert (r.value, r.lower, r.upper, r.kind, r.relation) == (today.value, today.lower, today.upper, today.kind,
                                                                    today.relation)
    wor_today = dpsampling.delta("wor", 10.0, sigma=1.1, q=Q, steps=235, epochs=60)
    assert phases.delta([phases.Phase("wor", 1.1, Q, 235, 60)], 10.0) == wor_today


def test_wor_phases_are_poisson_at_half_sigma_under_add_remove_and_one_pair_under_replace_one():
    """WOR phases: under their own relation add_remove the engine's run at σ/2, each direction (Lebeda et al. Prop. 9,
    samplers/wor.py); under replace_one the run of one pair dominating both directions (Lebeda §8): above the
    per-direction run, below dp_accounting's RDP for the same WOR events, within 1e-3 of dp_accounting's own
    composition of that pair's one-step pmf at 10× finer d, its lower end the per-direction run's (Lebeda §7's
    fixed pair realises it under replace-one)."""
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from dpsampling.engine import replace_one

    run = [phases.Phase("wor", 2.2, Q, 7050), phases.Phase("wor", 1.8, Q, 7050)]
    r = phases.epsilon(run, 1e-5)
    e = engine_phases.epsilon(1e-5, [(1.1, Q, 7050), (0.9, Q, 7050)])
    assert (r.lower, r.upper) == (e.lower, e.upper) and r.relation == "add_remove"
    rdp = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SampledWithoutReplacementDpEvent(60000, 256, dpa.GaussianDpEvent(1.1)), 7050)
    rdp.compose(dpa.SampledWithoutReplacementDpEvent(60000, 256, dpa.GaussianDpEvent(0.9)), 7050)
    ro = phases.epsilon(run, 1e-5, relation="replace_one")
    assert ro.relation == "replace_one" and "one pair dominating both directions" in ro.upper_method
    assert e.upper < ro.upper < rdp.get_epsilon(1e-5)
    fine = ro.accuracy["discretization"] / 10
    ref = [pldlib.PrivacyLossDistribution(replace_one.max_pair_one_step(s, Q, fine)).self_compose(7050)
           for s in (1.1, 0.9)]
    ref = ref[0].compose(ref[1]).get_epsilon_for_delta(1e-5)
    assert ro.upper == pytest.approx(ref, rel=1e-3)
    assert ro.lower == pytest.approx(e.lower, rel=1e-3) and ro.lower <= e.upper
    p = phases.epsilon([phases.Phase("poisson", 1.1, Q, 7050), phases.Phase("poisson", 0.9, Q, 7050)], 1e-5)
    assert p.relation == "add_remove" and (p.lower, p.upper) == (e.lower, e.upper)
    today = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=7050)  # the one result model, as account's
    assert (p.kind, p.method, p.value) == (today.kind, today.method, p.upper) == ("interval", "certified", p.upper)
    assert (p.lower_method, p.upper_method) == (today.lower_method, today.upper_method)
    assert (p.upper - p.lower) / p.upper <= 1e-3


@pytest.mark.parametrize("bad,words", [
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("truncated_poisson", 1.1, Q, 10)],
     "phase 1 (truncated_poisson)"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("shuffle", 1.1, 0.5, 10)], "phase 1 (shuffle): q"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("poisson", 0.0, Q, 10)], "phase 1 (poisson): sigma"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("poisson", 1.1, 1.5, 10)], "phase 1 (poisson): q"),
    ([phases.Phase("poisson", 1.1, Q, 10), {"sampler": "poisson", "sigma": 1.0}], "phase 1"),
    ([], "phases"),
])
def test_refused_naming_the_phase(bad, words):
    with pytest.raises(ParameterError) as exc:
        phases.epsilon(bad, 1e-5)
    assert words in str(exc.value)


@pytest.mark.parametrize("run,relation,words", [
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("shuffle", 3.0, None, 10)], "add_remove",
     "phase 1 (shuffle): sampler 'shuffle' is not covered under add_remove"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("balls_and_bins", 3.0, None, 10)], "replace_one",
     "phase 1 (balls_and_bins): sampler 'balls_and_bins' is not covered under replace_one"),
    ([phases.Phase("wor", 1.1, Q, 10), phases.Phase("deterministic", 3.0, None, 10)], "add_remove",
     "phase 1 (deterministic)"),
])
def test_relation_not_covering_a_phase_is_refused_naming_it(run, relation, words):
    with pytest.raises(ParameterError) as exc:
        phases.epsilon(run, 1e-5, relation=relation)
    assert words in str(exc.value)


P, W = phases.Phase("poisson", 1.1, Q, 2000), phases.Phase("wor", 1.8, Q, 2000)


@pytest.fixture(scope="module")
def poisson_wor():
    return phases.epsilon([P, W], 1e-5, relation="replace_one")


def _dpa(sigma, q, steps, d, relation=None):
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    kw = {} if relation is None else {"neighboring_relation": getattr(dpa.NeighboringRelation, relation)}
    return pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=True, value_discretization_interval=d,
                                          sampling_prob=q, use_connect_dots=True, **kw).self_compose(steps)


def test_poisson_and_wor_answered_under_replace_one_against_dp_accounting(poisson_wor):
    """Poisson beside WOR under replace-one (Poisson's replace-one PLD, WOR's pair dominating both σ/2 directions),
    each end labelled; the upper end is at or just above dp_accounting's pessimistic composition of those PLDs at 10×
    finer d (the WOR pair's one-step pmf ours, checked against mpmath in tests/engine), the lower end below its
    pessimistic replace-one PLD of the ±C adversary's run (both phases' replace-one pairs at σ) and above that of
    the zero-out adversary (the remove pairs at σ: dp_accounting's add/remove accountant)."""
    import dp_accounting as dpa

    r = poisson_wor
    assert r.relation == "replace_one" and r.kind == "interval" and r.value == r.upper
    assert "±C replace-one adversary" in r.lower_method and "composed" in r.upper_method
    assert r.accuracy["phase_pairs"][0].startswith("poisson (pld_replace_one)")
    fine = r.accuracy["discretization"] / 10
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from dpsampling.engine import replace_one

    wor_pair = pldlib.PrivacyLossDistribution(replace_one.max_pair_one_step(0.9, Q, fine)).self_compose(2000)
    up = _dpa(1.1, Q, 2000, fine, "REPLACE_ONE").compose(wor_pair).get_epsilon_for_delta(1e-5)
    swap = _dpa(1.1, Q, 2000, fine, "REPLACE_ONE").compose(_dpa(1.8, Q, 2000, fine, "REPLACE_ONE"))
    zero = dpa.pld.PLDAccountant(value_discretization_interval=fine)
    zero.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1)), 2000)
    zero.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.8)), 2000)
    assert up <= r.upper <= up * (1 + 1e-3)
    assert zero.get_epsilon(1e-5) < r.lower <= swap.get_epsilon_for_delta(1e-5)


def test_poisson_and_wor_under_add_remove_like_for_like():
    """Poisson beside WOR under their shared relation add_remove: the upper end at or just above dp_accounting's
    add/remove composition of Poisson at σ and the subsampled Gaussian at σ/2 (WOR, Lebeda Prop. 9) at 10× finer d;
    the lower end at least the WOR phase's own lower end alone (Lebeda §7's datasets, the Poisson outputs dropped)
    and at least dp_accounting's optimistic PLD of the remove adversary's run (both phases' remove pairs at σ)."""
    import dp_accounting as dpa

    r = phases.epsilon([P, W], 1e-5)
    assert r.relation == "add_remove" and r.kind == "interval"
    assert "fixed-size adversary" in r.lower_method
    fine = r.accuracy["discretization"] / 10
    acc = dpa.pld.PLDAccountant(value_discretization_interval=fine)
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1)), 2000)
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(0.9)), 2000)
    assert acc.get_epsilon(1e-5) <= r.upper <= acc.get_epsilon(1e-5) * (1 + 1e-3)
    alone = dpsampling.epsilon("wor", 1e-5, sigma=1.8, q=Q, steps=2000)
    assert r.lower >= alone.lower * (1 - 1e-3) and r.lower <= alone.upper


def test_a_run_between_each_phase_and_basic_composition(poisson_wor):
    """The run's upper end ≥ each phase's lower end alone (under the run's relation), its lower end ≤ the sum of the
    phases' upper ends each at δ/2 (basic composition)."""
    r = poisson_wor
    for p in (P, W):
        alone = dpsampling.epsilon(p.sampler, 1e-5, sigma=p.sigma, q=p.q, steps=p.steps, relation="replace_one")
        assert r.upper >= alone.lower
    basic = [dpsampling.epsilon(p.sampler, 0.5e-5, sigma=p.sigma, q=p.q, steps=p.steps, relation="replace_one")
             for p in (P, W)]
    assert r.lower <= sum(b.upper for b in basic)


def test_deterministic_phases_are_one_gaussian_exactly():
    """Deterministic phases: one Gaussian at (Σ Eᵢ/σᵢ²)^{−1/2}, exact (mpmath's analytic Gaussian δ); under
    replace-one at sensitivity 2 (σ/2); equal phases are one run of their total epochs."""
    import mpmath as mp

    mp.mp.dps = 40

    def gauss_delta(eps, sigma):
        mu = 1 / mp.mpf(sigma)
        return float(mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2))

    run = [phases.Phase("deterministic", 2.0, None, 100, 3), phases.Phase("deterministic", 3.0, None, 50, 2)]
    sigma = (3 / 4 + 2 / 9) ** -0.5
    r = phases.delta(run, 1.0)
    assert r.kind == "exact" and r.relation == "zero_out"
    assert r.value == pytest.approx(gauss_delta(1.0, sigma), rel=1e-10)
    r1 = phases.delta(run, 1.0, relation="replace_one")
    assert r1.relation == "replace_one" and r1.value == pytest.approx(gauss_delta(1.0, sigma / 2), rel=1e-10)
    same = phases.delta([phases.Phase("deterministic", 2.0, None, 100, 3), phases.Phase("deterministic", 2.0, None,
                                                                                           100, 2)], 1.0)
    assert same == dpsampling.delta("deterministic", 1.0, sigma=2.0, steps=100, epochs=5)


def test_poisson_and_deterministic_under_zero_out_against_dp_accounting():
    """Poisson beside a deterministic phase: zero-out (Poisson's same curves), the run's own dominated pairs, width
    ≤ 1e-3, containing dp_accounting's PLDAccountant at 10× finer d (Poisson events and the Gaussian per epoch)."""
    import dp_accounting as dpa

    r = phases.epsilon([P, phases.Phase("deterministic", 3.0, None, 235, 5)], 1e-5)
    assert r.relation == "zero_out" and (r.upper - r.lower) / r.upper <= 1e-3
    acc = dpa.pld.PLDAccountant(value_discretization_interval=r.accuracy["discretization"] / 10)
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1)), 2000).compose(dpa.GaussianDpEvent(3.0), 5)
    assert r.lower <= acc.get_epsilon(1e-5) <= r.upper


@pytest.mark.parametrize("sampler", ["shuffle", "balls_and_bins"])
def test_shuffled_and_balls_and_bins_phases(sampler):
    """A shuffled or balls-and-bins phase: its upper end is the deterministic phase's (the same run's upper end with
    it replaced), its own lower end is a floor of the run's, and the run sits between each phase's lower end and
    basic composition."""
    other = phases.Phase(sampler, 3.0, None, 235, 2)
    r = phases.epsilon([P, other], 1e-5)
    det = phases.epsilon([P, phases.Phase("deterministic", 3.0, None, 235, 2)], 1e-5)
    assert r.relation == "zero_out" and r.upper == det.upper
    alone = dpsampling.epsilon(sampler, 1e-5, sigma=3.0, steps=235, epochs=2)
    assert r.accuracy["own_lower_end"] == alone.lower and r.lower >= alone.lower
    poisson_alone = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=2000)
    assert r.upper >= max(alone.lower, poisson_alone.lower) and r.lower >= poisson_alone.lower * (1 - 1e-3)
    basic = [dpsampling.epsilon("poisson", 0.5e-5, sigma=1.1, q=Q, steps=2000),
             dpsampling.epsilon(sampler, 0.5e-5, sigma=3.0, steps=235, epochs=2)]
    assert r.lower <= sum(b.upper for b in basic)


@pytest.mark.parametrize("sampler,kw,options", [
    ("wor", {"q": Q, "steps": 700}, None), ("shuffle", {"steps": 235, "epochs": 3}, None),
    ("balls_and_bins", {"steps": 235, "epochs": 3}, None),
    ("truncated_poisson", {"q": Q, "steps": 50}, {"dataset_size": 60000, "max_batch_size": 290})])
def test_one_phase_of_any_sampler_is_todays_answer(sampler, kw, options):
    one = phases.epsilon([phases.Phase(sampler, 1.5, kw.get("q"), kw["steps"], kw.get("epochs", 1), options)], 1e-5)
    assert one == dpsampling.epsilon(sampler, 1e-5, sigma=1.5, **kw, **(options or {}))


def test_wor_beside_balls_and_bins_is_answered_under_zero_out():
    """No relation covers both with both ends of their own analyses: zero-out (WOR's replace-one upper end holds
    there, zero-out pairs being replace-one pairs), labelled."""
    r = phases.epsilon([W, phases.Phase("balls_and_bins", 3.0, None, 235, 2)], 1e-5)
    assert r.relation == "zero_out" and r.accuracy["phase_pairs"][0].startswith("wor (implied_upper)")
    assert 0 < r.lower <= r.upper


def test_a_run_predicted_beyond_the_limit_is_refused_naming_force():
    from dpsampling.samplers.spec import CostError

    run = [phases.Phase("poisson", 0.6, 0.01, 2_000_000), phases.Phase("poisson", 0.5, 0.01, 2_000_000)]
    with pytest.raises(CostError, match="force"):
        phases.epsilon(run, 1e-5)


TRUNC = {"dataset_size": 60000, "max_batch_size": 290}


def test_poisson_and_truncated_phases_against_dp_accounting():
    """Poisson beside truncated Poisson (add/remove): the upper end at most dp_accounting's PLDAccountant on the same
    events (its TruncatedSubsampledGaussianDpEvent: the sensitivity-2 pair ours sharpens), the lower end at least
    the truncated phase's own lower end alone, below basic composition; with a cap ≥ n the truncated phase is
    Poisson's (the same interval as the Poisson run, to the refinement's stop)."""
    import dp_accounting as dpa

    run = [phases.Phase("poisson", 0.9, Q, 500), phases.Phase("truncated_poisson", 1.1, Q, 500, options=TRUNC)]
    r = phases.epsilon(run, 1e-5)
    assert r.relation == "add_remove" and r.accuracy["phase_pairs"][1].startswith("truncated_poisson (native)")
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(0.9)), 500)
    acc.compose(dpa.TruncatedSubsampledGaussianDpEvent(60000, Q, 290, 1.1), 500)
    assert r.upper <= acc.get_epsilon(1e-5)
    alone = dpsampling.epsilon("truncated_poisson", 1e-5, sigma=1.1, q=Q, steps=500, **TRUNC)
    assert r.lower >= alone.lower and r.upper >= alone.lower
    basic = [dpsampling.epsilon("poisson", 0.5e-5, sigma=0.9, q=Q, steps=500),
             dpsampling.epsilon("truncated_poisson", 0.5e-5, sigma=1.1, q=Q, steps=500, **TRUNC)]
    assert r.lower <= sum(b.upper for b in basic)
    never = phases.epsilon([run[0], dataclasses.replace(run[1], options={"dataset_size": 600,
                                                                         "max_batch_size": 600})], 1e-5)
    both = phases.epsilon([run[0], phases.Phase("poisson", 1.1, Q, 500)], 1e-5)
    assert never.upper == pytest.approx(both.upper, rel=1e-3) and never.lower == pytest.approx(both.lower, rel=1e-3)


def test_truncated_kept_rate_is_the_law_of_the_batch():
    """The rate the record is drawn and kept when the others' gradients are 0, against the binomial sum."""
    from scipy import stats

    from dpsampling.samplers.phases import truncated_kept_rate

    n, q, cap = 2000, 0.05, 90
    k = np.arange(n)
    direct = q * float(np.sum(stats.binom.pmf(k, n - 1, q) * np.minimum(1.0, cap / (k + 1))))
    assert truncated_kept_rate(q, n, cap) == pytest.approx(direct, rel=1e-10)


def test_wor_and_deterministic_under_replace_one():
    """WOR beside a deterministic phase: replace-one, both at σ/2; Lebeda et al.'s §7 datasets realise each direction
    of those pairs, so the interval closes (≤ 1e-3) around dp_accounting's PLDs of the same pairs at 10× finer d; a
    run where the WOR phase dominates keeps the WOR phase's own lower end."""
    import dp_accounting as dpa

    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from dpsampling.engine import replace_one

    r = phases.epsilon([phases.Phase("wor", 2.2, Q, 2000), phases.Phase("deterministic", 6.0, None, 235, 5)], 1e-5)
    assert r.relation == "replace_one"
    assert "fixed-size adversary" in r.lower_method
    fine = r.accuracy["discretization"] / 10
    acc = dpa.pld.PLDAccountant(value_discretization_interval=fine)
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1)), 2000).compose(dpa.GaussianDpEvent(3.0), 5)
    assert r.lower <= acc.get_epsilon(1e-5) * (1 + 1e-3)  # the per-direction run the §7 datasets realise
    gauss = pldlib.from_gaussian_mechanism(3.0, pessimistic_estimate=True, value_discretization_interval=fine,
                                           use_connect_dots=True).self_compose(5)
    both = pldlib.PrivacyLossDistribution(replace_one.max_pair_one_step(1.1, Q, fine)).self_compose(2000)
    up = both.compose(gauss).get_epsilon_for_delta(1e-5)
    assert up * (1 - 1e-3) <= r.upper <= up * (1 + 1e-3) and r.lower >= acc.get_epsilon(1e-5) * (1 - 2e-3)
    heavy = phases.epsilon([phases.Phase("poisson", 3.0, Q, 500), phases.Phase("wor", 1.2, Q, 2000)], 1e-5)
    alone = dpsampling.epsilon("wor", 1e-5, sigma=1.2, q=Q, steps=2000)
    assert heavy.lower >= alone.lower and heavy.upper >= alone.upper
