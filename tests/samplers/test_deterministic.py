"""samplers/deterministic.py: the same partition every epoch — the Gaussian at σ/√E (mpmath, closed forms)."""

import mpmath as mp
import numpy as np
import pytest
from dpsampling.papers import chua
from dpsampling.samplers import _checks as sampler_checks


@pytest.fixture(autouse=True)
def _restore_mp_dps():
    old = mp.mp.dps
    yield
    mp.mp.dps = old


@pytest.mark.regression_pin  # values from our own output; twin: Chua §1.1/§4.3 printed 10.997 and 0.244 (claims chua_fig1_eps_d_sigma0p5, chua_fig3_delta_d_eps4) and test_deterministic_is_analytic_gaussian (closed form)
def test_deterministic_reference_values():
    # σ=0.5, δ=1e-6: ε_D = 10.9972 (Chua §1.1 prints ≈ 10.997); σ=0.4: δ_D(4) = 0.24382 (§4.3 prints ≈ 0.244)
    assert chua.deterministic_epsilon(1e-6, 0.5) == pytest.approx(10.99715, abs=5e-5)
    assert chua.deterministic_delta(4.0, 0.4) == pytest.approx(0.24382, abs=5e-6)


def test_deterministic_is_analytic_gaussian():
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    for sigma in (0.3, 0.8, 2.0):
        eps = np.array([0.0, 0.5, 2.0, 5.0])
        ref = [GaussianPrivacyLoss(sigma, sensitivity=1.0).get_delta_for_epsilon(e) for e in eps]
        np.testing.assert_allclose(chua.deterministic_delta(eps, sigma), ref, rtol=1e-9)
    # log space keeps digits where the direct difference is 0
    mp.mp.dps = 50
    s, e = 0.5, 60.0
    a, b = mp.mpf(-e * s + 1 / (2 * s)), mp.mpf(-e * s - 1 / (2 * s))
    ref = mp.ncdf(a) - mp.exp(e) * mp.ncdf(b)
    assert chua.deterministic_delta(e, s) == pytest.approx(float(ref), rel=1e-9)
    d = chua.deterministic_epsilon(1e-9, 0.7)
    assert chua.deterministic_delta(d, 0.7) == pytest.approx(1e-9, rel=1e-9)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, np.nan])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        chua.shuffle_epsilon_lower(delta, 1.0, 100)
    with pytest.raises(ValueError, match="delta"):
        chua.deterministic_epsilon(delta, 1.0)


def test_one_epoch_and_deterministic_sigma():
    sampler_checks.check_one_epoch(1e-4, 10_000, "shuffle")
    sampler_checks.check_one_epoch(1 / 3, 3, "shuffle")
    for q, steps, word in [(1e-3, 10_000, "q must be 1/steps"), (0.0, 10, "q"), (0.1, 0, "steps")]:
        with pytest.raises(ValueError, match=word):
            sampler_checks.check_one_epoch(q, steps, "shuffle")
    r = chua.deterministic_sigma_result(2.0, 1e-6)
    assert r.kind == "exact" and chua.deterministic_delta(2.0, r.value) == pytest.approx(1e-6, rel=1e-8)
    assert chua.deterministic_epsilon(1e-6, r.value) == pytest.approx(2.0, rel=1e-8)
