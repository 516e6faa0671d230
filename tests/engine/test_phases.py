"""A run of phases (engine/phases.py): the certified interval of Poisson-subsampled Gaussians at different (σ, q),
against dp_accounting's own composition at a 10× finer discretisation, direct convolution, single phases and
basic composition."""

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf

from dpsampling.engine import phases, poisson_interval
from dpsampling.engine.errors import ParameterError

Q = 256 / 60000
#: the issue's two phases: σ 1.1 then 0.9, 7050 steps each, δ 1e-5
RUN = [(1.1, Q, 7050), (0.9, Q, 7050)]


@pytest.fixture(scope="module")
def run_result():
    return phases.epsilon(1e-5, RUN)


def test_convolve_equals_direct_convolution_within_its_bound():
    """The one-transform convolution of three parts (offsets, rounding bounds and folded masses included) is numpy's
    direct convolution, to within its rounding bound; +∞ masses composed (pessimistic) or 0."""
    rng = np.random.default_rng(3)
    parts, arrays = [], []
    for lower, size, inf in ((-3, 7, 0.1), (5, 11, 0.01), (0, 4000, 0.0)):
        a = rng.random(size)
        a = (1 - inf) * a / a.sum()
        arrays.append(a)
        parts.append(phases.Composed(pld_pmf.DensePLDPmf(0.1, lower, a, inf, True), 1e-14, 1e-15))
    c = phases.convolve(parts, True)
    direct = np.convolve(np.convolve(arrays[0], arrays[1]), arrays[2])
    assert c.pmf._lower_loss == -3 + 5 + 0
    assert len(c.pmf._probs) == len(direct)
    assert 3e-14 <= c.err2 < 1e-13  # the parts' errors propagated, plus the transform's
    assert np.linalg.norm(c.pmf._probs - direct) <= c.err2 - 3e-14 * 0.999
    assert c.fold == pytest.approx(3e-15, rel=1e-3)
    assert c.pmf._infinity_mass == pytest.approx(1 - 0.9 * 0.99, rel=1e-12)
    assert phases.convolve(parts, False).pmf._infinity_mass == 0.0


def test_one_phase_and_equal_phases_are_todays_answer():
    """One phase is poisson_interval's answer (the same object's floats); two equal phases, one run of their total
    length (merged before composing: composition is commutative)."""
    one = poisson_interval.epsilon(1e-5, sigma=1.1, q=Q, total_steps=14100)
    assert phases.epsilon(1e-5, [(1.1, Q, 14100)]) == one
    two = phases.epsilon(1e-5, [(1.1, Q, 7050), (1.1, Q, 7050)])
    assert (two.lower, two.upper, two.value) == (one.lower, one.upper, one.value)
    d_one = poisson_interval.delta(2.0, sigma=1.1, q=Q, total_steps=14100)
    assert phases.delta(2.0, [(1.1, Q, 4000), (1.1, Q, 10100)]) == d_one


def test_two_phases_contain_dp_accountings_finer_answer(run_result):
    """The issue's number: relative width ≤ 1e-3, containing dp_accounting's PLDAccountant (pessimistic) at a 10×
    finer discretisation; its optimistic (privacy-buckets) PLD there lies below the upper end."""
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    r = run_result
    assert r.kind == "upper" and r.value == r.upper and r.lower <= r.upper
    assert (r.upper - r.lower) / r.upper <= 1e-3 and "not_converged" not in r.flags
    fine = r.accuracy["discretization"] / 10
    acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=fine)
    for sigma, q, steps in RUN:
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    pessimistic = acc.get_epsilon(1e-5)
    assert r.lower <= pessimistic <= r.upper
    opt = None
    for sigma, q, steps in RUN:
        p = pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=False, value_discretization_interval=fine,
                                           sampling_prob=q, use_connect_dots=False).self_compose(steps)
        opt = p if opt is None else opt.compose(p)
    assert opt.get_epsilon_for_delta(1e-5) <= r.upper


def test_between_each_phase_and_basic_composition(run_result):
    """ε of the run ≥ ε of each phase alone, ≤ the sum of the phases' ε each at δ/2 (basic composition)."""
    r = run_result
    alone = [poisson_interval.epsilon(1e-5, sigma=s, q=q, total_steps=t) for s, q, t in RUN]
    for a in alone:
        assert r.lower >= a.upper
    basic = [poisson_interval.epsilon(0.5e-5, sigma=s, q=q, total_steps=t) for s, q, t in RUN]
    assert r.upper <= sum(b.lower for b in basic)


def test_delta_and_epsilon_agree(run_result):
    """δ at the run's upper end of ε is ≤ δ (its lower end), and at the lower end ≥ δ (its upper end)."""
    r = run_result
    assert phases.delta(r.upper, RUN).lower <= 1e-5
    assert phases.delta(r.lower, RUN).upper >= 1e-5
    d = phases.delta(3.0, RUN)
    assert d.lower <= d.upper and (d.upper - d.lower) / d.upper <= 1e-3


def test_order_and_direction():
    """The run is the same in any order; one direction's ε is at most add_remove's."""
    a = phases.epsilon(1e-5, RUN, discretization=1e-3)
    b = phases.epsilon(1e-5, RUN[::-1], discretization=1e-3)
    assert b.lower == pytest.approx(a.lower, rel=1e-9) and b.upper == pytest.approx(a.upper, rel=1e-9)
    for direction in ("add", "remove"):
        one = phases.epsilon(1e-5, RUN, direction=direction, discretization=1e-3)
        assert one.upper <= a.upper and one.lower <= a.upper


def test_full_batch_gaussians_merge_exactly():
    """Gaussian phases are one Gaussian at (Σ T/σ²)^{-1/2} (exact, in closed form); next to subsampled phases that
    Gaussian is one step of the run, whose interval contains dp_accounting's PLDAccountant at 10× finer d."""
    import dp_accounting as dpa

    alone = phases.epsilon(1e-5, [(3.0, 1.0, 5), (5.0, 1.0, 3)])
    exact = poisson_interval.epsilon(1e-5, sigma=(5 / 9 + 3 / 25) ** -0.5, q=1.0, total_steps=1)
    assert alone.kind == "exact" and alone.value == pytest.approx(exact.value, rel=1e-14)
    run = [(1.1, Q, 2000), (3.0, 1.0, 5), (5.0, 1.0, 3)]
    r = phases.epsilon(1e-5, run)
    assert r.accuracy["groups"][-1][1:3] == (1.0, 1)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=r.accuracy["discretization"] / 10)
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1)), 2000)
    acc.compose(dpa.GaussianDpEvent(3.0), 5).compose(dpa.GaussianDpEvent(5.0), 3)
    assert r.lower <= acc.get_epsilon(1e-5) <= r.upper and (r.upper - r.lower) / r.upper <= 1e-3
    assert phases.delta(r.upper, run).lower <= 1e-5 <= phases.delta(r.lower, run).upper


@pytest.mark.parametrize("bad", [[(1.1, 1.5, 10), (0.9, Q, 10)], [(0.0, Q, 10), (0.9, Q, 10)]])
def test_refused_phases_are_named(bad):
    """The engine takes checked phases (samplers.phases checks a user's): a bad one is a broken invariant, named."""
    from dpsampling.engine.errors import InternalError

    with pytest.raises(InternalError, match="phase group 0"):
        phases.epsilon(1e-5, bad)


def test_delta_below_the_floor_is_refused():
    with pytest.raises(ParameterError, match="reliability floor"):
        phases.epsilon(1e-12, RUN)
    assert math.isfinite(phases.epsilon(1e-5, RUN, discretization=1e-3).upper)


def _dpa_pld(sigma, q, steps, d, relation=None, pessimistic=True):
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    kw = {} if relation is None else {"neighboring_relation": getattr(dpa.NeighboringRelation, relation)}
    return pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=pessimistic, value_discretization_interval=d,
                                          sampling_prob=q, use_connect_dots=pessimistic, **kw).self_compose(steps)


def test_replace_one_groups_compose_with_add_remove_groups():
    """A replace-one group next to an add/remove group (a Poisson phase under replace-one beside a WOR phase at
    σ/2): the upper end is above dp_accounting's composition of the same pessimistic PLDs at 10× finer d; the lower
    end, from the lower run asked (both phases' replace-one pairs at σ, the ±C adversary), below dp_accounting's
    pessimistic PLD of that run there, and above its optimistic (privacy-buckets) one less 1e-2 relative."""
    run = [(1.1, Q, 2000, "replace_one"), (0.9, Q, 2000)]
    lower = [[(1.1, Q, 2000, "replace_one"), (1.8, Q, 2000, "replace_one")]]
    r = phases.epsilon(1e-5, run, lower=lower, labels=("lo", "up"), discretization=1e-3)
    assert (r.accuracy["lower_method"], r.accuracy["upper_method"]) == ("lo", "up") and r.accuracy["lower_groups"][0][0][3] == "replace_one"
    up_ref = _dpa_pld(1.1, Q, 2000, 1e-4, "REPLACE_ONE").compose(_dpa_pld(0.9, Q, 2000, 1e-4))
    assert up_ref.get_epsilon_for_delta(1e-5) <= r.upper <= up_ref.get_epsilon_for_delta(1e-5) * (1 + 1e-2)
    lo_ref = _dpa_pld(1.1, Q, 2000, 1e-4, "REPLACE_ONE").compose(_dpa_pld(1.8, Q, 2000, 1e-4, "REPLACE_ONE"))
    assert r.lower <= lo_ref.get_epsilon_for_delta(1e-5)
    assert r.lower >= lo_ref.get_epsilon_for_delta(1e-5) * (1 - 1e-2)
    floor = phases.epsilon(1e-5, run, lower=lower, lower_floor=r.upper * 0.999, discretization=1e-3)
    assert floor.lower == r.upper * 0.999  # a floor proven elsewhere is max'd in
    d = phases.delta(1.0, run, lower=lower, discretization=1e-3)
    assert d.lower <= d.upper


def test_one_replace_one_group_is_replace_ones_certified_upper_end():
    """One replace-one group: its upper end is engine.replace_one's certified ε at the same d (the same pmf and
    rounding bound), its lower end the group's own dominated pmf (a certified replace-one interval)."""
    from dpsampling.engine import replace_one

    r = phases.epsilon(1e-5, [(1.1, Q, 2000, "replace_one")], discretization=1e-3)
    assert r.upper == replace_one.certified_epsilon(1e-5, sigma=1.1, q=Q, total_steps=2000, discretization=1e-3)
    assert 0 < r.lower <= r.upper and (r.upper - r.lower) / r.upper <= 1e-2
    full = phases.groups([(2.0, 1.0, 3, "replace_one")])  # a full-batch replace-one phase: the Gaussian at σ/2
    assert full == (phases.Group(1.0, 1.0, 3, "add_remove"),)


def test_a_truncated_group_is_truncateds_certified_upper_end():
    """A truncated Poisson group: its upper end is engine.truncated's certified ε at the same d (the same combined
    pair's composition and rounding bound); no dominated pmf of it is built here (a lower run is asked)."""
    from dpsampling.engine import truncated
    from dpsampling.engine.errors import InternalError

    group = (1.1, Q, 300, "truncated", 60000, 290)
    r = phases.epsilon(1e-5, [group], lower=[[(1.1, Q * 0.99, 300)]], discretization=1e-3)
    assert r.upper == truncated.upper_epsilon(1e-5, sigma=1.1, q=Q, dataset_size=60000, max_batch_size=290,
                                              total_steps=300, discretization=1e-3)
    with pytest.raises(InternalError, match="no dominated pmf"):
        phases.epsilon(1e-5, [group, (0.9, Q, 10)], discretization=1e-3)
