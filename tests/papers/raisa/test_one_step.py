"""papers/raisa/one_step.py: Räisä et al. 2024 §5-§6 at T = 1 (Lemma 6.1, Theorem 6.2, σ_eff, Corollary 5.4)."""

import numpy as np
import pytest
from dpsampling.papers import raisa as en


DELTA = 1e-5


@pytest.mark.parametrize("q,e", [(0.01, 1.0), (0.3, 0.1), (1e-4, 4.0), (0.9, 4e-5), (5e-5, 1e-3), (0.5, 8.0)])
def test_sigma_prime_matches_central_difference(q, e):
    h = q * 1e-5
    fd = (en.sigma_one_step(q + h, e, DELTA) - en.sigma_one_step(q - h, e, DELTA)) / (2 * h)
    assert en.sigma_prime(q, e, DELTA) == pytest.approx(fd, rel=1e-7)


def test_lemma61_grid_check():
    assert en.lemma61_max_rel_error() < 1e-7


@pytest.mark.parametrize("q,e", [(0.01, 1.0), (0.3, 0.1), (1e-4, 4.0), (0.05, 2.0)])
def test_lemma61_printed_erf_form_agrees(q, e):
    s = en.sigma_one_step(q, e, DELTA)
    assert en.lemma61_sigma_prime_erf(q, s, e) == pytest.approx(en.sigma_prime_at(q, s, e), rel=1e-10)


def test_theorem62_margin_sign_matches_sigma_eff_slope():
    qs = DELTA * np.array([1.02, 1.05, 1.3, 2.0, 10.0, 1e3, 1e4])
    e = 1.0
    S = en.sigma_one_step(qs, e, DELTA)
    margin = en.theorem62_log_margin(qs, S, e)
    slope = en.sigma_eff_slope(qs, e, DELTA)
    assert np.array_equal(margin > 0, slope > 0)
    h = qs * 1e-6
    fd = (en.sigma_eff_one_step(qs + h, e, DELTA) - en.sigma_eff_one_step(qs - h, e, DELTA)) / (2 * h)
    assert np.array_equal(np.sign(fd), np.sign(slope))


def test_theorem62_conclusion_fails_near_q_equal_delta():
    assert en.theorem62_fails_near_delta(DELTA)
    # sigma_eff increases from q = 1.02 delta to 1.05 delta at eps = 1 ...
    y = en.sigma_eff_one_step(DELTA * np.array([1.02, 1.05]), 1.0, DELTA)
    assert y[1] > y[0]
    # ... but not once q >= 4 delta
    qs = np.logspace(np.log10(4 * DELTA), 0, 80)
    assert en.is_monotone(en.sigma_eff_one_step(qs[None, :], np.array([[1e-3], [0.1], [1.0], [4.0]]), DELTA))


def test_effective_noise_and_ratio():
    assert en.effective_noise(2.0, 0.5) == 4.0
    np.testing.assert_allclose(en.corollary54_ratio([1.0, 2.0], [0.1, 0.5], 5.0), [2.0, 0.8])


def test_sigma_eff_monotone_small_grid_T1():
    assert en.sigma_eff_decreasing_one_step((0.5, 1.0, 2.0, 4.0, 8.0), DELTA, 1e-3, 100)
    r = en.corollary54_ratio_one_step(np.logspace(-3, 0, 30), 1.0, DELTA)
    assert r[-1] == pytest.approx(1.0, rel=1e-14)
    assert np.all(r[:-1] > 1) and en.is_monotone(r)
    assert en.sigma_eff_above_sigma1_one_step() == pytest.approx(1.0, rel=1e-14)


def test_monotonicity_helpers():
    assert en.is_monotone([3, 2, 2, 1]) and not en.is_monotone([3, 2, 2.5])
    assert en.is_monotone([1, 2, 3], decreasing=False)
    assert en.is_monotone([3, 2, 2.0000001], rtol=1e-6)
    np.testing.assert_array_equal(en.monotonicity_violations([3, 4, 2, 5])[0], [0, 2])
