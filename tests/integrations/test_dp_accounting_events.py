"""dpsampling's dp_accounting accountant (integrations/dp_accounting.py) with the events JAX Privacy's accounting
functions return (``dpsgd_event``, ``fixed_dpsgd_event``, ``truncated_dpsgd_event``), against dp_accounting's own
accountants on the same events, with ``dp_accounting.calibrate_dp_mechanism``, and with dpsampling's events for
shuffled and balls-and-bins loaders (no dp_accounting event exists for either)."""

import dp_accounting as dpa
import pytest
from integration_libs import require

require("jax", "jax")
require("jax_privacy", "jax")

try:  # where JAX Privacy keeps its event builders (experimental in 2.0)
    from jax_privacy.accounting import dpsgd_event, fixed_dpsgd_event, truncated_dpsgd_event
except ImportError:
    from jax_privacy.experimental.accounting import dpsgd_event, fixed_dpsgd_event, truncated_dpsgd_event

import dpsampling
from dpsampling.integrations.dp_accounting import (BallsAndBinsGaussianDpEvent, CertifiedAccountant,
                                                   ShuffledGaussianDpEvent)

DELTA = 1e-5
Q = 256 / 60000
REPLACE, SPECIAL = dpa.NeighboringRelation.REPLACE_ONE, dpa.NeighboringRelation.REPLACE_SPECIAL


def test_jax_privacys_mnist_poisson_event_is_dpsampling_epsilon():
    event = dpsgd_event(1.1, 235 * 60, sampling_prob=Q)
    acc = CertifiedAccountant().compose(event)
    today = dpsampling.epsilon("poisson", DELTA, sigma=1.1, q=Q, steps=235, epochs=60)
    assert acc.get_epsilon(DELTA) == today.upper and acc.get_epsilon_interval(DELTA) == (today.lower, today.upper)
    pld = dpa.pld.PLDAccountant().compose(event).get_epsilon(DELTA)  # pessimistic: at or above the true ε
    assert today.lower <= pld and today.upper <= pld * (1 + 1e-3)


def test_jax_privacys_fixed_size_event_under_replace_one_is_below_rdp():
    """fixed_dpsgd_event at noise 0.55 (JAX Privacy's σ/2 for clipped gradients under replace-one) is our WOR run
    at σ 1.1 under replace-one: [≈ 14.74, ≈ 18.48] (the pair dominating both directions above), below dp_accounting's
    RDP (24.12), the accountant JAX Privacy falls back to."""
    event = fixed_dpsgd_event(0.55, 235 * 60, dataset_size=60000, batch_size=256)
    lo, up = CertifiedAccountant(REPLACE).compose(event).get_epsilon_interval(DELTA)
    rdp = dpa.rdp.RdpAccountant(neighboring_relation=REPLACE).compose(event).get_epsilon(DELTA)
    wor = dpsampling.epsilon("wor", DELTA, sigma=1.1, q=Q, steps=235, epochs=60, relation="replace_one")
    print(f"\nMNIST fixed-size (replace-one): ours [{lo:.5f}, {up:.5f}], dp_accounting RDP {rdp:.4f}")
    assert (lo, up) == (wor.lower, wor.upper) and 14.72 < lo < 14.75 and 18 < up < 19 and 24 < rdp and up < rdp
    with pytest.raises(dpa.UnsupportedEventError):  # fixed-size batches under add-or-remove: not our analysis
        CertifiedAccountant().compose(event)


def test_jax_privacys_truncated_event_is_at_most_dp_accountings():
    """truncated_dpsgd_event: our certified upper end is at most dp_accounting's PLD value on the same event (of two
    upper bounds the smaller is one); our lower end at most both."""
    event = truncated_dpsgd_event(1.5, 10, sampling_prob=0.05, num_examples=1000, truncated_batch_size=55)
    acc = CertifiedAccountant().compose(event)
    lo, up = acc.get_epsilon_interval(DELTA)
    theirs = dpa.pld.PLDAccountant().compose(event).get_epsilon(DELTA)
    r = dpsampling.epsilon("truncated_poisson", DELTA, sigma=1.5, q=0.05, steps=10, dataset_size=1000,
                           max_batch_size=55)
    print(f"\ntruncated (n 1000, q 0.05, cap 55, σ 1.5, 10 steps): ours [{lo:.4g}, {up:.4g}], dp_accounting PLD "
          f"{theirs:.4g}")
    assert (lo, up) == (r.lower, r.upper) and r.relation == "add_remove"
    assert lo <= up <= theirs
    poisson = dpsgd_event(1.5, 5, sampling_prob=0.05)  # a truncated step next to a Poisson one: a run of phases
    lo2, up2 = acc.compose(poisson).get_epsilon_interval(DELTA)
    theirs2 = dpa.pld.PLDAccountant().compose(event).compose(poisson).get_epsilon(DELTA)
    assert lo <= lo2 <= up2 <= theirs2


@pytest.mark.parametrize("relation", ["ADD_OR_REMOVE_ONE", "REPLACE_ONE"])
def test_calibrate_dp_mechanism_with_jax_privacys_events(relation):
    """dp_accounting's calibration through our accountant returns a noise multiplier whose certified ε (asked of
    dpsampling directly, under the accountant's relation) meets the target, and not by a wide margin."""
    rel = dpa.NeighboringRelation[relation]
    if relation == "REPLACE_ONE":
        def make(noise):
            return fixed_dpsgd_event(noise, 1000, dataset_size=10000, batch_size=100)
    else:
        def make(noise):
            return dpsgd_event(noise, 1000, sampling_prob=0.01)
    noise = dpa.calibrate_dp_mechanism(lambda: CertifiedAccountant(rel), make, 2.0, DELTA)
    sampler, sigma = ("wor", 2 * noise) if relation == "REPLACE_ONE" else ("poisson", noise)
    relation = "replace_one" if relation == "REPLACE_ONE" else None  # WOR under replace-one: the max pair (Lebeda §8)
    r = dpsampling.epsilon(sampler, DELTA, sigma=sigma, q=0.01, steps=1000, relation=relation)
    near = r.lower if relation is None else r.upper  # under replace-one WOR's interval is wide (its ends differ)
    assert r.upper <= 2.0 and near >= 2.0 * (1 - 3e-3)  # the σ is not wastefully large


def test_shuffle_and_balls_and_bins_events():
    """Our events for a shuffled and a balls-and-bins loader: one epoch each, composed per epoch, under zero-out
    (REPLACE_SPECIAL); shuffle under replace-one at σ = 2σ' (dp_accounting's convention); what no analysis covers is
    not supported, saying why."""
    acc = CertifiedAccountant(SPECIAL).compose(ShuffledGaussianDpEvent(1.0, 94), 3)
    r = dpsampling.epsilon("shuffle", DELTA, sigma=1.0, steps=94, epochs=3)
    assert acc.get_epsilon_interval(DELTA) == (r.lower, r.upper) and acc.result(DELTA).relation == "zero_out"
    one = acc.get_epsilon(DELTA)
    acc = CertifiedAccountant(REPLACE).compose(ShuffledGaussianDpEvent(0.5, 94), 3)
    r1 = dpsampling.epsilon("shuffle", DELTA, sigma=1.0, steps=94, epochs=3, relation="replace_one")
    assert acc.get_epsilon(DELTA) == r1.value and r1.value >= one and acc.result(DELTA).relation == "replace_one"
    acc = CertifiedAccountant(SPECIAL).compose(dpa.SelfComposedDpEvent(BallsAndBinsGaussianDpEvent(1.0, 94), 2))
    b = dpsampling.epsilon("balls_and_bins", DELTA, sigma=1.0, steps=94, epochs=2)
    assert acc.get_epsilon_interval(DELTA) == (b.lower, b.upper)
    assert not CertifiedAccountant(REPLACE).supports(BallsAndBinsGaussianDpEvent(1.0, 94))
    assert not CertifiedAccountant().supports(ShuffledGaussianDpEvent(1.0, 94))
    mixed = CertifiedAccountant(SPECIAL).compose(ShuffledGaussianDpEvent(1.0, 94))
    assert mixed.supports(ShuffledGaussianDpEvent(1.0, 94))  # the same setting: more epochs
    assert mixed.supports(ShuffledGaussianDpEvent(0.8, 94))  # two shuffle settings: a run of phases
    lo, up = mixed.compose(ShuffledGaussianDpEvent(0.8, 94)).get_epsilon_interval(DELTA)
    det = dpsampling.epsilon("deterministic", DELTA, sigma=(1 + 1 / 0.64) ** -0.5, steps=94)  # its upper end
    alone = dpsampling.epsilon("shuffle", DELTA, sigma=0.8, steps=94)
    assert det.value <= up <= det.value * (1 + 1e-3) and alone.lower <= lo <= up


def test_jax_privacys_training_accountant_with_the_certified_config():
    """The one-line swap inside JAX Privacy: DpsgdTrainingAccountant(CertifiedAccountantConfig()) where
    DpsgdTrainingAccountant(PldAccountantConfig()) stood gives the certified upper end (Poisson: dpsampling epsilon;
    truncated: at most JAX Privacy's own PLD value); its noise calibration meets the target."""
    from jax_privacy.accounting import accountants, analysis, calibrate

    from dpsampling.integrations.jax_privacy import CertifiedAccountantConfig

    params = analysis.DpParams(noise_multipliers=1.1, num_samples=60000, delta=DELTA, batch_size=256,
                               sampling_method=analysis.SamplingMethod.POISSON)
    ours = analysis.DpsgdTrainingAccountant(CertifiedAccountantConfig()).compute_epsilon(14100, params)
    assert ours == dpsampling.epsilon("poisson", DELTA, sigma=1.1, q=Q, steps=14100).upper
    theirs = analysis.DpsgdTrainingAccountant(accountants.PldAccountantConfig()).compute_epsilon(14100, params)
    assert ours <= theirs * (1 + 1e-3)
    truncated = analysis.DpParams(noise_multipliers=1.5, num_samples=1000, delta=DELTA, batch_size=50,
                                  sampling_method=analysis.SamplingMethod.POISSON, truncated_batch_size=55)
    ours = analysis.DpsgdTrainingAccountant(CertifiedAccountantConfig()).compute_epsilon(10, truncated)
    theirs = analysis.DpsgdTrainingAccountant(accountants.PldAccountantConfig()).compute_epsilon(10, truncated)
    assert ours <= theirs
    sigma = calibrate.calibrate_noise_multiplier(
        target_epsilon=2.0, accountant=analysis.DpsgdTrainingAccountant(CertifiedAccountantConfig()),
        batch_sizes=100, num_updates=1000, num_samples=10000, target_delta=DELTA)
    assert dpsampling.epsilon("poisson", DELTA, sigma=sigma, q=0.01, steps=1000).upper <= 2.0
