"""engine.epochs: the Poisson interval after each epoch, against poisson_interval and dp_accounting's own PLDs."""

import math

import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib

from dpsampling.engine import epochs, pld, poisson_interval

S, Q, STEPS, DELTA = 1.1, 1 / 200, 40, 1e-5


def test_each_epoch_one_by_one_is_poisson_interval_bit_for_bit():
    rows = epochs.interval_epsilon_epochs(DELTA, sigma=S, q=Q, steps=STEPS, epochs=[1, 3, 4])
    for e, r in zip([1, 3, 4], rows):
        assert r == poisson_interval.epsilon(DELTA, sigma=S, q=Q, total_steps=STEPS * e)


def _dp_accounting_eps(pessimistic, total_steps, d):
    one = pldlib.from_gaussian_mechanism(S, pessimistic_estimate=pessimistic, value_discretization_interval=d,
                                         sampling_prob=Q, use_connect_dots=pessimistic)
    return one.self_compose(total_steps).get_epsilon_for_delta(DELTA)


def test_every_epoch_at_one_discretisation_is_certified():
    d = 1e-3
    rows = epochs.interval_epsilon_each_epoch(DELTA, sigma=S, q=Q, steps=STEPS, epochs=4, discretization=d)
    for e, r in enumerate(rows, 1):
        # dp_accounting's own optimistic PLD lies below the true ε up to its discretisation, its pessimistic one
        # above: a certified interval must reach below the pessimistic reading and above the optimistic one
        assert r.lower <= _dp_accounting_eps(True, STEPS * e, d)
        assert r.upper >= _dp_accounting_eps(False, STEPS * e, d)
        ref = poisson_interval.epsilon(DELTA, sigma=S, q=Q, total_steps=STEPS * e, discretization=d)
        assert max(r.lower, ref.lower) <= min(r.upper, ref.upper)
        assert r.upper == pytest.approx(ref.upper, rel=1e-8) and r.lower == pytest.approx(ref.lower, rel=1e-8)
    assert all(a.upper < b.upper for a, b in zip(rows, rows[1:]))


def test_epochs_not_wanted_are_skipped_and_the_others_unchanged():
    d = 1e-3
    every = epochs.interval_epsilon_each_epoch(DELTA, sigma=S, q=Q, steps=STEPS, epochs=5, discretization=d)
    some = epochs.interval_epsilon_each_epoch(DELTA, sigma=S, q=Q, steps=STEPS, epochs=5, discretization=d,
                                              wanted=[2, 4])
    assert some[1] == every[1] and some[3] == every[3]
    assert [r is None for r in some] == [True, False, True, False, True]


@pytest.mark.parametrize("steps,n_epochs", [(40, 4), (1, 3), (7, 2)])
def test_a_pair_sharing_each_inverse_transform_is_each_alone_within_both_bounds(steps, n_epochs):
    # the upper and lower ends of one direction from one complex inverse transform (real and imaginary parts): each
    # composition is the one composed alone up to the two rounding bounds (each bounds its distance to the exact one)
    import numpy as np

    d = 1e-3
    up = epochs._dense(pld.pessimistic_pld(S, Q, d)._pmf_add)
    lo = epochs._one_step_lower(S, Q, d, "add")
    specs = [(up._probs, up._lower_loss, True, up._infinity_mass), (lo._probs, lo._lower_loss, False, 0.0)]
    pair = epochs._epoch_pmf_pair(*specs, d, steps, n_epochs)
    for spec, rows in zip(specs, pair):
        alone = epochs._epoch_pmfs(spec[0], spec[1], d, steps, n_epochs, spec[2], spec[3])
        for (p, err), (a, err_a) in zip(rows, alone):
            assert (p._lower_loss, len(p._probs), p._infinity_mass) == (a._lower_loss, len(a._probs), a._infinity_mass)
            assert np.linalg.norm(p._probs - a._probs) <= err + err_a
            assert err_a <= err <= 1.5 * err_a + 1e-15  # the shared transform adds little to the bound


@pytest.mark.parametrize("steps,d", [(200, 1e-4), (40, 1e-3), (3, 1e-2)])
def test_geometric_rounding_bound_is_the_summed_one_from_above(steps, d):
    # the closed form of Σ w² bounds the summed weights' norm from above and is as tight, at every ε over the support
    import numpy as np

    comp = pld.composed(S, Q, steps, True, d)
    for pmf in pld.direction_pmfs(comp, "add_remove"):
        losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
        for eps in list(losses[:: max(1, len(losses) // 40)] + d / 3) + [losses[0] - 1.0, losses[-1] + 1.0, -np.inf]:
            summed, closed = pld.rounding_at(pmf, 1e-12, eps), epochs._rounding_at(pmf, 1e-12, eps)
            assert summed <= closed <= summed * (1 + 1e-9) + 1e-25, eps


@pytest.mark.parametrize("first", [None, 0, 20000, 70000, 10**6])  # walks: ~77 000 and ~17 000
def test_reading_does_not_depend_on_the_first_block(first):
    # the first block is a guess of the walk (the previous epoch's): every guess gives the same floats
    comp = pld.composed(S, Q, 200, True, 1e-4)
    for pmf in pld.direction_pmfs(comp, "add_remove"):
        ref, read = epochs._Reader(pmf), epochs._Reader(pmf, first)
        for delta in (0.5, 1e-3, 1e-5, 1e-5 * (1 - 1e-9), 1e-8):
            assert read.epsilon(delta) == ref.epsilon(delta)
        assert read.walked == ref.walked > 0


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8, 0.5])
def test_vectorised_reading_is_dp_accountings(delta):
    comp = pld.composed(S, Q, 200, True, 1e-3)
    for pmf in pld.direction_pmfs(comp, "add_remove"):
        assert epochs.epsilon_for_delta(pmf, delta) == pytest.approx(pmf.get_epsilon_for_delta(delta), rel=1e-12,
                                                                    abs=1e-12)


@pytest.mark.parametrize("delta", [0.05, 0.2, 0.45, 0.7, 0.9])
def test_reading_where_the_top_losses_underflow_is_dp_accountings(delta):
    # masses at losses beyond 745 (e^−ℓ = 0): dp_accounting returns the loss at which the mass reaches δ while no
    # term is positive, and reads on below it otherwise
    import numpy as np
    from dp_accounting.pld import pld_pmf

    probs = np.zeros(20001)
    probs[:10001] = 0.5 / 10001
    probs[-300:] = 0.5 / 300  # losses ~ 800
    pmf = pld_pmf.DensePLDPmf(0.04, 0, probs, 0.0, True)
    for first in (None, 50, 20000):
        assert epochs._Reader(pmf, first).epsilon(delta) == pmf.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("settles", [True, False])
def test_window_is_dp_accountings(settles, monkeypatch):
    # the screen settles nearly every window; unsettled ones take dp_accounting's own log-MGFs: both paths
    from dp_accounting.pld import common

    if not settles:
        monkeypatch.setattr(pld, "_settled_window", lambda *a: None)
    one = pld.pessimistic_pld(S, Q, 1e-3)
    for pmf in (one._pmf_remove, one._pmf_add, epochs._one_step_lower(S, Q, 1e-3, "add")):
        probs = pmf.to_dense_pmf()._probs if hasattr(pmf, "to_dense_pmf") else pmf._probs
        window = epochs._chernoff_window(probs)
        for t in (2, 3, 40, 41, 400, 4000):
            assert window(t) == common.compute_self_convolve_bounds(probs, t, pld.TAIL_MASS_TRUNCATION)
        assert math.isfinite(window(400)[1])
