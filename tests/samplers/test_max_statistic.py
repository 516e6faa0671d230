"""Lower bounds from the max-coordinate statistic (dpsampling.samplers._max_statistic): values, not 'it ran'."""

import math

import mpmath
import numpy as np
import pytest

from dpsampling.engine import gaussian
from dpsampling.samplers import _max_statistic as ms
from dpsampling.papers import chua as batching


def _mp_sf_max(c, mean, sigma, steps):
    """Pr_{MoG(mean)}[max_t x_t > c] at 50 digits."""
    mpmath.mp.dps = 50
    phi = lambda x: mpmath.ncdf(x)  # noqa: E731
    return 1 - phi((mpmath.mpf(c) - mean) / sigma) * phi(mpmath.mpf(c) / sigma) ** (steps - 1)


@pytest.mark.parametrize("sigma,steps", [(0.5, 10_000), (1.0, 100), (2.0, 7)])
def test_generic_sf_is_batching_bit_for_bit(sigma, steps):
    c, lp, lq = batching.shuffle_log_pq(sigma, steps)
    assert np.array_equal(ms.log_sf_max(c, 2.0, sigma, steps), lp)
    assert np.array_equal(ms.log_sf_max(c, 1.0, sigma, steps), lq)
    eps = np.array([0.0, 0.3, 1.0, 3.0, 8.0])
    ours, _, _ = ms.events_log_delta_lower(eps, 2.0, 1.0, sigma, steps, direction="remove")
    assert np.array_equal(ours, batching.shuffle_log_delta_lower(eps, sigma, steps))
    deltas = np.array([1e-12, 1e-6, 1e-3, 0.3])
    ours_eps, _, _ = ms.events_epsilon_lower(deltas, 2.0, 1.0, sigma, steps, direction="remove")
    assert np.array_equal(ours_eps, batching.shuffle_epsilon_lower(deltas, sigma, steps))


@pytest.mark.parametrize("c,mean,sigma,steps", [(4.25, 2.0, 0.5, 10_000), (4.25, 1.0, 0.5, 10_000),
                                                (9.0, 0.0, 1.0, 1000), (0.5, 1.0, 0.3, 50)])
def test_sf_and_cdf_against_mpmath(c, mean, sigma, steps):
    exact = _mp_sf_max(c, mean, sigma, steps)
    assert float(ms.log_sf_max(c, mean, sigma, steps)) == pytest.approx(float(mpmath.log(exact)), rel=1e-12)
    log_cdf = float(mpmath.log(1 - exact))
    assert float(ms.log_cdf_max(c, mean, sigma, steps)) == pytest.approx(log_cdf, rel=1e-12, abs=1e-15)


def test_add_remove_events_equal_single_epoch_shuffle_value():
    # Both directions and both event families: for the shuffle pair the remove/upper-set value wins
    # (Chua §4.3), so the single-epoch bound is today's E_C value.
    for sigma, steps in [(0.5, 10_000), (0.8, 100), (1.5, 1000)]:
        eps = np.array([0.5, 1.0, 2.0, 5.0])
        ours = np.exp(ms.events_log_delta_lower(eps, 2.0, 1.0, sigma, steps)[0])
        np.testing.assert_allclose(ours, batching.shuffle_delta_lower(eps, sigma, steps), rtol=1e-12)
        assert ms.events_epsilon_lower(1e-6, 2.0, 1.0, sigma, steps)[0] == pytest.approx(
            batching.shuffle_epsilon_lower(1e-6, sigma, steps), rel=1e-12)


def test_one_coordinate_is_the_gaussian_mechanism():
    # T = 1: MoG(μ) = N(μ, σ²); the balls-and-bins pair is the Gaussian with sensitivity 1, whose
    # optimal events are thresholds: the grid-0.01 event bound is within 1e-4 of the exact curve, below it.
    for sigma in (0.7, 1.3):
        for eps in (0.5, 2.0):
            exact = float(gaussian.delta(eps, sigma))
            low = ms.balls_and_bins_delta_lower(eps, sigma, 1).value
            assert low <= exact * (1 + 1e-12)
            assert low == pytest.approx(exact, rel=1e-4)


@pytest.mark.parametrize("epochs", [1, 4, 16])
def test_pld_route_at_one_coordinate_is_composed_gaussian(epochs):
    # T = 1: E epochs of (N(2,σ²), N(1,σ²)) is the Gaussian at σ/√E exactly.  The optimistic PLD of M
    # must stay below it, and rounding each epoch's loss down by < Δ costs at most E·Δ in ε.
    sigma, delta, disc = 1.0, 1e-5, 1e-3
    exact = gaussian.epsilon(delta, sigma / math.sqrt(epochs))
    low, _ = ms.pld_epsilon_lower(delta, 2.0, 1.0, sigma, 1, epochs=epochs, discretization=disc)
    assert low <= exact + 1e-9
    assert exact - low <= epochs * disc + 2e-3


def test_pld_single_epoch_agrees_with_cube_and_converges():
    sigma, steps, eps = 1.0, 100, np.array([0.5, 1.0, 2.0])
    cube = batching.shuffle_delta_lower(eps, sigma, steps)
    vals = [ms.pld_delta_lower(eps, 2.0, 1.0, sigma, steps, discretization=d)[0] for d in (1e-2, 1e-3, 1e-4)]
    # refining Δ (and the slices with it) increases the optimistic value, by shrinking steps
    assert np.all(vals[1] >= vals[0]) and np.all(vals[2] >= vals[1] - 1e-15)
    assert np.all(np.abs(vals[2] - vals[1]) < 0.2 * np.abs(vals[1] - vals[0]))
    np.testing.assert_allclose(vals[2], cube, rtol=3e-4)
    e_cube = batching.shuffle_epsilon_lower(1e-6, sigma, steps)
    e_pld = ms.pld_epsilon_lower(1e-6, 2.0, 1.0, sigma, steps, discretization=1e-4)[0]
    assert abs(e_pld - e_cube) < 1e-3


def test_epsilon_is_consistent_with_delta():
    sigma, steps, epochs, delta = 0.9, 50, 5, 1e-5
    pmfs = ms.optimistic_pmfs(2.0, 1.0, sigma, steps, epochs=epochs)
    e, _ = ms.pld_epsilon_lower(delta, 2.0, 1.0, sigma, steps, epochs=epochs, pmfs=pmfs)
    d_below, _ = ms.pld_delta_lower(e - 1e-6, 2.0, 1.0, sigma, steps, epochs=epochs, pmfs=pmfs)
    d_above, _ = ms.pld_delta_lower(e + 1e-3, 2.0, 1.0, sigma, steps, epochs=epochs, pmfs=pmfs)
    assert d_below > delta > d_above


def test_balls_and_bins_multi_epoch_monotone_and_flags():
    r1 = ms.balls_and_bins_epsilon_lower(1e-5, 1.0, 100)
    r5 = ms.balls_and_bins_epsilon_lower(1e-5, 1.0, 100, epochs=5)
    assert r1.kind == r5.kind == "lower" and r1.method == "E_C sets" and r5.method == "max-statistic PLD"
    assert r5.value > r1.value > 0
    # composing 5 epochs can at most multiply ε by 5 (basic composition of the same lower-bound pair is not
    # a theorem, but 5 epochs of a Gaussian-like pair grow like √5): sanity of scale
    assert r5.value < 5 * r1.value
    tiny = ms.balls_and_bins_delta_lower(30.0, 2.0, 100, epochs=3)
    assert "delta_below_1e-10" in tiny.flags and math.isnan(tiny.value)


def test_bad_input():
    with pytest.raises(ValueError, match="epochs"):
        ms.pld_delta_lower(1.0, 2.0, 1.0, 1.0, 10, epochs=0)
    with pytest.raises(ValueError, match="direction"):
        ms.events_epsilon_lower(1e-5, 2.0, 1.0, 1.0, 10, direction="both")


def test_slice_masses_against_mpmath_in_both_tails():
    sigma, steps = 0.5, 10_000
    edges = ms.slice_edges(2.0, 1.0, sigma, steps, discretization=1e-2)
    lm = ms.slice_log_masses(edges, 2.0, sigma, steps)
    assert np.logaddexp.reduce(lm) == pytest.approx(0.0, abs=1e-12)  # a partition: masses sum to 1
    mpmath.mp.dps = 50
    cdf = lambda c: 1 - _mp_sf_max(c, 2.0, sigma, steps)  # noqa: E731
    for i in (1, len(edges) // 2, len(edges) - 3):  # cells [c_{i-1}, c_i) near the bottom, middle, top
        exact = cdf(edges[i]) - cdf(edges[i - 1])
        assert lm[i] == pytest.approx(float(mpmath.log(exact)), rel=1e-9)
    assert lm[-1] == pytest.approx(float(mpmath.log(_mp_sf_max(edges[-1], 2.0, sigma, steps))), rel=1e-12)


def test_multi_epoch_pld_converges_within_the_rounding_slack():
    # E = 5 epochs of the shuffle pair (MNIST-like T): ε_low increases as Δ is refined, the changes shrink
    # ~10× per decade of Δ, and each coarse value is within its guaranteed slack E·Δ of the finest one.
    epochs = 5
    vals = {d: ms.pld_epsilon_lower(1e-5, 2.0, 1.0, 1.1, 235, epochs=epochs, discretization=d)[0]
            for d in (1e-2, 1e-3, 1e-4)}
    assert vals[1e-2] < vals[1e-3] < vals[1e-4]
    assert vals[1e-4] - vals[1e-3] < 0.2 * (vals[1e-3] - vals[1e-2])
    for d in (1e-2, 1e-3):
        assert vals[1e-4] - vals[d] <= epochs * d


def test_composed_lower_end_subtracts_the_proven_fft_rounding_bound():
    """Issue 38: the E-epoch lower end took 1e-15 off δ for the FFT where the project's own bound on that
    composition's rounding (numerics.fft_error via pld.composition_error, ‖w_ε‖₂ times it) is ~3.7e-12.  Now δ is at
    most the pmf's δ less that bound (computed here from the one-epoch pmf), and ε is read at δ plus it."""
    import math

    from dpsampling.engine import pld, reading

    sigma, steps, epochs, eps = 1.1, 1000, 60, 1.0
    one = ms.optimistic_pmfs(2.0, 1.0, sigma, steps, epochs=1)
    pmfs = ms.optimistic_pmfs(2.0, 1.0, sigma, steps, epochs=epochs)
    for name, pmf in pmfs.items():
        err2 = pld.composition_error(one[name]._probs, epochs, pmf._probs)
        bound = pld.rounding_at(pmf, err2, eps)
        assert bound > 1e-13 and pld.rounding_at(pmf, err2, -math.inf) > 1e-12
        d, per = ms.pld_delta_lower(eps, 2.0, 1.0, sigma, steps, epochs=epochs, pmfs=pmfs)
        assert per[name] <= reading.delta_lower(pmf, eps) - bound - ms.TAIL_MASS_TRUNCATION
    delta = 1e-5
    e, per = ms.pld_epsilon_lower(delta, 2.0, 1.0, sigma, steps, epochs=epochs, pmfs=pmfs)
    for name, pmf in pmfs.items():  # at the reading, the pmf's δ exceeds δ by at least the bound there
        err2 = pld.composition_error(one[name]._probs, epochs, pmf._probs)
        if per[name] > 0:
            assert reading.delta_lower(pmf, per[name]) >= delta + pld.rounding_at(pmf, err2, per[name]) * (1 - 1e-9)
