"""Deterministic and shuffle batching over several epochs (dpsampling.samplers.deterministic / .shuffle)."""

import math

import mpmath
import pytest

from dpsampling.papers import chua as batching
from dpsampling.samplers import deterministic as det
from dpsampling.samplers import shuffle


def _mp_gauss_delta(eps, s):
    mpmath.mp.dps = 50
    eps, s = mpmath.mpf(eps), mpmath.mpf(s)
    return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)


@pytest.mark.parametrize("sigma,epochs,eps", [(1.1, 60, 2.0), (0.8, 1, 1.0), (3.0, 20, 0.5), (1.0, 200, 8.0),
                                              (0.5, 3, 30.0)])
def test_deterministic_is_gaussian_at_sigma_over_sqrt_epochs(sigma, epochs, eps):
    exact = _mp_gauss_delta(eps, sigma / math.sqrt(epochs))
    r = det.delta(eps, sigma=sigma, steps=235, epochs=epochs)
    assert r.kind == "exact" and r.value == pytest.approx(float(exact), rel=1e-9)
    # ε(δ) at that δ returns ε where ε(δ) is well conditioned (δ not ≈ 1: at σ=1, E=200, ε=8,
    # 1 − δ ≈ 4e-11 and a δ rounding of 1e-16 moves ε by ~1e-6)
    if exact < 0.5:
        e = det.epsilon(float(exact), sigma=sigma, steps=235, epochs=epochs).value
        assert e == pytest.approx(eps, rel=1e-9)


def test_deterministic_sigma_inverts_epsilon():
    s = det.sigma(2.0, 1e-5, steps=235, epochs=60).value
    assert float(_mp_gauss_delta(2.0, s / math.sqrt(60))) == pytest.approx(1e-5, rel=1e-6)
    assert s == pytest.approx(math.sqrt(60) * det.sigma(2.0, 1e-5, steps=10).value, rel=1e-12)


@pytest.mark.parametrize("mode", ["dynamic", "persistent"])
@pytest.mark.parametrize("sigma,steps", [(0.5, 10_000), (1.0, 100)])
def test_one_epoch_equals_todays_e_c_value(mode, sigma, steps):
    r = shuffle.epsilon(1e-6, sigma=sigma, steps=steps, mode=mode)
    assert r.value == batching.shuffle_epsilon_lower(1e-6, sigma, steps)
    d = shuffle.delta(1.0, sigma=sigma, steps=steps, mode=mode)
    assert d.value == pytest.approx(batching.shuffle_delta_lower(1.0, sigma, steps), rel=1e-12)
    assert r.method == batching.EC_METHOD and r.kind == "lower"


def test_persistent_is_one_epoch_at_sigma_over_sqrt_epochs():
    r = shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=9, mode="persistent")
    assert r.value == batching.shuffle_epsilon_lower(1e-5, 1.1 / 3.0, 235)


def test_lower_below_deterministic_on_a_grid():
    for sigma in (0.5, 1.0, 2.0):
        for steps in (10, 1000):
            for epochs in (1, 4):
                for mode in shuffle.SHUFFLE_MODES:
                    r = shuffle.epsilon(1e-6, sigma=sigma, steps=steps, epochs=epochs, mode=mode)
                    assert r.lower == r.value and r.upper == det.epsilon(
                        1e-6, sigma=sigma, steps=steps, epochs=epochs).value
                    assert 0 < r.value <= r.upper * (1 + 1e-12), (sigma, steps, epochs, mode)
    for sigma, epochs in ((0.5, 3), (1.5, 10)):
        for mode in shuffle.SHUFFLE_MODES:
            d = shuffle.delta(1.0, sigma=sigma, steps=100, epochs=epochs, mode=mode)
            assert 0 < d.value <= d.upper * (1 + 1e-12)


def test_dynamic_grows_with_epochs_and_stays_below_persistent_here():
    vals = [shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=e).value for e in (1, 2, 5, 20)]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    # MNIST-like: persistent shuffling is (nearly) deterministic batching, dynamic much better
    pers = shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=20, mode="persistent")
    assert vals[-1] < 0.5 * pers.value and pers.value == pytest.approx(pers.upper, rel=1e-3)


def test_shuffle_sigma_bracket():
    r = shuffle.sigma(2.0, 1e-5, steps=235, epochs=5, bound="lower")
    assert r.kind == "lower" and r.value < r.upper
    assert shuffle.epsilon(1e-5, sigma=r.value, steps=235, epochs=5).value > 2.0
    assert shuffle.epsilon(1e-5, sigma=r.value * 1.002, steps=235, epochs=5).value <= 2.0


def test_bad_input():
    with pytest.raises(ValueError, match="epochs"):
        shuffle.epsilon(1e-5, sigma=1.0, steps=10, epochs=0)
    with pytest.raises(ValueError, match="mode"):
        shuffle.epsilon(1e-5, sigma=1.0, steps=10, epochs=2, mode="sometimes")
    with pytest.raises(ValueError, match="bound"):
        shuffle.delta(1.0, sigma=1.0, steps=10, bound="upper")
    with pytest.raises(ValueError, match="sigma"):
        det.delta(1.0, sigma=0.0, steps=10)
