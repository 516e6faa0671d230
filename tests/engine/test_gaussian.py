"""Analytic Gaussian (Balle–Wang) in log space vs a 60-digit mpmath reference."""

import mpmath as mp
import numpy as np
import pytest

from dpsampling.engine import gaussian


def mp_delta(eps, sigma):
    mp.mp.dps = 60
    eps, sigma = mp.mpf(eps), mp.mpf(sigma)
    return mp.ncdf(-eps * sigma + 1 / (2 * sigma)) - mp.e**eps * mp.ncdf(-eps * sigma - 1 / (2 * sigma))


@pytest.mark.parametrize("eps,sigma", [(0.0, 1.0), (1.0, 1.0), (4.0, 0.4), (30.0, 2.0), (200.0, 1.5), (1e-6, 1e3), (12.0, 0.3)])
def test_log_delta_matches_mpmath(eps, sigma):
    ref = mp_delta(eps, sigma)
    ours = gaussian.log_delta(eps, sigma)
    assert abs(ours - float(mp.log(ref))) <= 1e-10 * max(1.0, abs(float(mp.log(ref))))


def test_naive_formula_loses_what_log_space_keeps():
    eps, sigma = 30.0, 2.0  # δ ≈ 1e-200: the naive difference underflows to 0
    from scipy.stats import norm

    naive = norm.cdf(-eps * sigma + 0.5 / sigma) - np.exp(eps) * norm.cdf(-eps * sigma - 0.5 / sigma)
    assert naive <= 0  # catastrophic cancellation
    assert gaussian.log_delta(eps, sigma) == pytest.approx(float(mp.log(mp_delta(eps, sigma))), rel=1e-12)


@pytest.mark.parametrize("delta,sigma", [(1e-6, 1.0), (1e-5, 0.5), (1e-10, 3.0), (0.3, 1.0)])
def test_epsilon_inverts_delta(delta, sigma):
    eps = gaussian.epsilon(delta, sigma)
    assert gaussian.delta(eps, sigma) == pytest.approx(delta, rel=1e-9)


def test_zhu_gaussian_is_0277_03_dp():
    # Zhu et al. §3: the Gaussian mechanism with σ=1 is (0.277, 0.3)-DP (printed to 3 digits).
    assert gaussian.epsilon(0.3, 1.0) == pytest.approx(0.277, abs=5e-4)


def test_bad_input_names_parameter():
    with pytest.raises(ValueError, match="sigma"):
        gaussian.delta(1.0, -1.0)
    with pytest.raises(ValueError, match="delta"):
        gaussian.epsilon(1.5, 1.0)
