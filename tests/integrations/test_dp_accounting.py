"""dpsampling's dp_accounting accountant (integrations/dp_accounting.py) against dp_accounting's own accountants:
the MNIST runs (Poisson: today's certified ε; fixed-size batches under replace-one: the pair dominating both
directions, below dp_accounting's RDP),
calibrate_dp_mechanism, phases, and every event it must refuse."""

import math

import dp_accounting as dpa
import pytest

import dpsampling
from dpsampling import phases
from dpsampling.integrations.dp_accounting import (BallsAndBinsGaussianDpEvent, CertifiedAccountant,
                                                   ShuffledGaussianDpEvent)

Q = 256 / 60000
REPLACE = dpa.NeighboringRelation.REPLACE_ONE


def _poisson(sigma, steps, q=Q):
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)


def test_mnist_poisson_is_todays_certified_epsilon():
    acc = CertifiedAccountant().compose(_poisson(1.1, 235 * 60))
    today = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=235, epochs=60)
    assert acc.get_epsilon(1e-5) == today.upper
    assert acc.get_epsilon_interval(1e-5) == (today.lower, today.upper)
    assert acc.result(1e-5).relation == "add_remove"
    pld = dpa.pld.PLDAccountant().compose(_poisson(1.1, 235 * 60))
    assert today.lower <= pld.get_epsilon(1e-5) <= today.upper


def test_mnist_fixed_size_below_rdp_and_is_our_wor_run():
    """SampledWithoutReplacementDpEvent(60000, 256, GaussianDpEvent(0.55)) under REPLACE_ONE (σ/2: JAX Privacy's
    convention for clipped gradients) is our WOR run at σ 1.1 under replace-one: the upper end the composed pair
    dominating both directions (≈ 18.48, Lebeda et al. §8), below RDP's 24.12 and above WOR's add/remove upper end
    (14.741, not proven under replace-one); the lower end at least WOR's add/remove lower end (Lebeda §7)."""
    event = dpa.SampledWithoutReplacementDpEvent(60000, 256, dpa.GaussianDpEvent(0.55))
    acc = CertifiedAccountant(REPLACE).compose(event, 14100)
    rdp = dpa.rdp.RdpAccountant(neighboring_relation=REPLACE).compose(event, 14100).get_epsilon(1e-5)
    lo, up = acc.get_epsilon_interval(1e-5)
    wor = dpsampling.epsilon("wor", 1e-5, sigma=1.1, q=Q, steps=235, epochs=60, relation="replace_one")
    own = dpsampling.epsilon("wor", 1e-5, sigma=1.1, q=Q, steps=235, epochs=60)
    assert (lo, up) == (wor.lower, wor.upper)
    assert own.lower <= lo <= own.upper < up < rdp and 18 < up < 19
    assert acc.result(1e-5).relation == "replace_one"
    d_lo, d_up = acc.get_delta_interval(up)
    assert d_lo <= 1e-5 and acc.get_delta(up) == d_up


def test_calibrate_dp_mechanism_meets_the_target():
    """dp_accounting's calibration with our accountant returns a σ whose certified ε is ≤ the target (and whose
    lower end is within the interval's width of it: the σ is not wastefully large)."""
    def make(sigma):
        return _poisson(sigma, 1000, q=0.01)

    sigma = dpa.calibrate_dp_mechanism(CertifiedAccountant, make, 2.0, 1e-5)
    r = dpsampling.epsilon("poisson", 1e-5, sigma=sigma, q=0.01, steps=1000)
    assert r.upper <= 2.0
    assert r.lower >= 2.0 * (1 - 2e-3)


def test_composed_phases_and_ledger():
    """A ComposedDpEvent of two Poisson settings is dpsampling.phases' run, and at most dp_accounting's pessimistic
    PLD composition's ε plus the interval's width (it contains the finer one in tests/engine/test_phases.py)."""
    event = dpa.ComposedDpEvent([_poisson(1.1, 700), _poisson(0.9, 700)])
    acc = CertifiedAccountant()
    assert acc.supports(event)
    acc.compose(event)
    run = phases.epsilon([phases.Phase("poisson", 1.1, Q, 700), phases.Phase("poisson", 0.9, Q, 700)], 1e-5)
    assert acc.get_epsilon_interval(1e-5) == (run.lower, run.upper)
    assert acc.ledger == event  # dp_accounting's ledger of what was composed
    pld = dpa.pld.PLDAccountant().compose(event).get_epsilon(1e-5)
    assert run.lower <= pld * (1 + 1e-3)


def test_gaussians_compose_exactly():
    acc = CertifiedAccountant().compose(dpa.GaussianDpEvent(2.0), 4).compose(dpa.GaussianDpEvent(1.0))
    exact = dpsampling.epsilon("poisson", 1e-5, sigma=0.5**0.5, q=1.0, steps=1)
    assert exact.kind == "exact" and acc.get_epsilon(1e-5) == exact.value
    pld = dpa.pld.PLDAccountant().compose(dpa.GaussianDpEvent(2.0), 4).compose(dpa.GaussianDpEvent(1.0))
    assert pld.get_epsilon(1e-5) == pytest.approx(exact.value, rel=1e-3)


def test_empty_and_non_private():
    assert CertifiedAccountant().get_epsilon(1e-5) == 0.0
    assert CertifiedAccountant().compose(dpa.NoOpDpEvent()).get_epsilon(1e-5) == 0.0
    assert CertifiedAccountant().compose(dpa.NonPrivateDpEvent()).get_epsilon(1e-5) == math.inf
    assert CertifiedAccountant().compose(_poisson(0.0, 10)).get_epsilon(1e-5) == math.inf


@pytest.mark.parametrize("relation,event", [
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.SampledWithoutReplacementDpEvent(60000, 256,
                                                                                      dpa.GaussianDpEvent(1.1))),
    (REPLACE, dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(1.1))),
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.LaplaceDpEvent(1.0)),
    (REPLACE, dpa.TruncatedSubsampledGaussianDpEvent(60000, Q, 300, 1.1)),
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, ShuffledGaussianDpEvent(1.0, 10)),
    (REPLACE, BallsAndBinsGaussianDpEvent(1.0, 10)),
    (dpa.NeighboringRelation.REPLACE_SPECIAL, dpa.SampledWithoutReplacementDpEvent(60000, 256,
                                                                                   dpa.GaussianDpEvent(1.1))),
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.PoissonSampledDpEvent(Q, dpa.LaplaceDpEvent(1.0))),
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1.0), 3)),
])
def test_unsupported_events_are_refused(relation, event):
    acc = CertifiedAccountant(relation)
    assert not acc.supports(event)
    with pytest.raises(dpa.UnsupportedEventError):
        acc.compose(event)
    assert acc.get_epsilon(1e-5) == 0.0  # nothing was composed


def test_replace_special_is_add_or_remove_for_poisson():
    """REPLACE_SPECIAL (zero-out) gives a Poisson event the same privacy curves as ADD_OR_REMOVE_ONE (dp_accounting
    says the same: its PLD under REPLACE_SPECIAL is add-or-remove's), answered under zero-out."""
    special = CertifiedAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL).compose(_poisson(1.1, 1000))
    add = CertifiedAccountant().compose(_poisson(1.1, 1000))
    assert special.get_epsilon_interval(1e-5) == add.get_epsilon_interval(1e-5)
    assert special.result(1e-5).relation == "zero_out"
    pld = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL).compose(_poisson(1.1, 1000))
    lo, up = special.get_epsilon_interval(1e-5)
    assert lo <= pld.get_epsilon(1e-5) and up <= pld.get_epsilon(1e-5) * (1 + 1e-3)


def test_a_gaussian_next_to_sampled_events():
    """A full-batch Gaussian in the same ledger as Poisson events: the interval contains dp_accounting's
    PLDAccountant at 10× finer discretisation."""
    event = dpa.ComposedDpEvent([_poisson(1.1, 2000), dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(3.0), 5)])
    acc = CertifiedAccountant()
    assert acc.supports(event)
    r = acc.compose(event).result(1e-5)
    assert (r.upper - r.lower) / r.upper <= 1e-3
    fine = dpa.pld.PLDAccountant(value_discretization_interval=r.accuracy["discretization"] / 10).compose(event)
    assert r.lower <= fine.get_epsilon(1e-5) <= r.upper
