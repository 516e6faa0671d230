"""Monte Carlo privacy curves (Lebeda et al. 2024, App. B.2)."""

import math

import numpy as np
import pytest

from dpsampling.engine import montecarlo as mc
from dpsampling.papers.lebeda.directions import SHIFT, direction_curves
from dpsampling.engine.montecarlo import (
    BLOCK_SIZE,
    Step,
    hoeffding_half_width,
    hoeffding_samples,
    make_step,
    mc_hockey_stick,
    mc_privacy_curve,
)
from dpsampling.papers.lebeda.substitution import laplace_two_fold

EPS = np.array([0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
N = 200_000


def _pld(mechanism, scale, q, k, sampler, direction):
    # d = 1e-3 keeps the Gaussian PLD fast; its bracket (≤ 1e-3 wide) is part of the check
    c = direction_curves(mechanism, scale, q, k, EPS, sampler=sampler, discretization=1e-3)
    return getattr(c, f"{direction}_lower"), getattr(c, f"{direction}_upper")


def _inside_band(res, lower, upper):
    """The App. B.2 guarantee: truth ∈ [estimate - α, estimate + α] at every ε."""
    return bool(np.all(res.estimate >= lower - res.mc_half_width) and np.all(res.estimate <= upper + res.mc_half_width))


# ---------------------------------------------------------------- Hoeffding
def test_hoeffding_n_formula_and_paper_value():
    # ⌈ln(2·40/0.01)/(2·0.001²)⌉ = ⌈ln(8000)·5e5⌉
    assert hoeffding_samples(0.001, 0.01, 40) == math.ceil(math.log(8000) / 2e-6) == 4_493_599
    # the paper prints N = 3,342,306: that is the formula with β = 0.1 (ln 800), not β = 0.01
    assert hoeffding_samples(0.001, 0.01, 40) != 3_342_306
    assert hoeffding_samples(0.001, 0.1, 40) == 3_342_306
    # with the printed N and β = 0.01 the simultaneous band is α ≈ 0.00116, not 0.001
    assert hoeffding_half_width(3_342_306, 0.01, 40) == pytest.approx(0.0011595, abs=1e-7)
    assert hoeffding_half_width(hoeffding_samples(0.002, 0.05, 7), 0.05, 7) <= 0.002


@pytest.mark.parametrize("kw,name", [
    ({"mc_half_width": 0.0, "mc_failure_prob": 0.01, "n_eps": 40}, "mc_half_width"),
    ({"mc_half_width": 1.0, "mc_failure_prob": 0.01, "n_eps": 40}, "mc_half_width"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 0.0, "n_eps": 40}, "mc_failure_prob"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 1.5, "n_eps": 40}, "mc_failure_prob"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 0.1, "n_eps": 0}, "n_eps"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 0.1, "n_eps": 2.5}, "n_eps"),
])
def test_hoeffding_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        hoeffding_samples(**kw)


# ---------------------------------------------------------------- accuracy vs PLD
@pytest.mark.parametrize("mechanism,scale", [("laplace", 1.0), ("gaussian", 1.0)])
@pytest.mark.parametrize("sampler", ["poisson", "wor"])
@pytest.mark.parametrize("direction", ["add", "remove"])
def test_mc_within_hoeffding_band_of_pld(mechanism, scale, sampler, direction):
    lo, up = _pld(mechanism, scale, 0.3, 2, sampler, direction)
    res = mc_privacy_curve(mechanism, scale, 0.3, 2, EPS, N, mc_seed=11, shift=SHIFT[sampler], direction=direction)
    assert res.mc_half_width == pytest.approx(hoeffding_half_width(N, 0.01, EPS.size))
    assert _inside_band(res, lo, up)
    # and not trivially: the curve is far from 0 at ε = 0 for these settings
    assert up[0] > 20 * res.mc_half_width


def test_mc_matches_exact_two_fold_laplace_at_b1_points():
    """App. B.1: check the Laplace plots against the exact divergence at ε = 0.25 and 1.5."""
    eps = [0.25, 1.5]
    for direction in ("add", "remove"):
        exact = laplace_two_fold(eps, 1.5, 0.7, 2.0, (direction, direction))
        res = mc_privacy_curve("laplace", 1.5, 0.7, 2, eps, N, mc_seed=5, shift=2.0, direction=direction)
        assert np.all(np.abs(res.estimate - exact) <= res.mc_half_width)


def test_k1_and_gamma1_edge_cases():
    # k = 1, γ = 1 Gaussian: δ = analytic Gaussian (both directions coincide)
    from dpsampling.engine.gaussian import delta as analytic
    eps = np.array([0.0, 0.5, 1.0])
    for d in ("add", "remove"):
        res = mc_privacy_curve("gaussian", 1.0, 1.0, 1, eps, N, mc_seed=3, direction=d)
        assert np.all(np.abs(res.estimate - analytic(eps, 1.0)) <= res.mc_half_width)
    # Laplace with γ = 1 (Poisson, Δ = 1): the loss is clipped at ±Δ/s = ±0.5, so
    # δ(ε) = 0 for ε ≥ k·Δ/s = 1.5, while δ(1.4) ≥ P(all 3 at the top)(1 - e^-0.1) ≈ 0.012
    res = mc_privacy_curve("laplace", 2.0, 1.0, 3, [1.4, 1.5, 1.6], 10_000, mc_seed=1, direction="remove")
    assert res.estimate[0] > 0.01 and res.estimate[1] < 1e-12 and res.estimate[2] == 0.0


# ---------------------------------------------------------------- the check can fail
def _biased_log_mix(ell, q, out, ell_max=None):
    # a plausible bug: mixture weight off by 10% in the density of Q
    return np.log((1 - 0.9 * q) + 0.9 * q * np.exp(np.minimum(ell, 700)), out=out)


@pytest.mark.parametrize("mechanism,sampler,direction", [
    ("laplace", "wor", "remove"), ("gaussian", "poisson", "add")])
def test_band_check_detects_biased_estimator(monkeypatch, mechanism, sampler, direction):
    scale = 1.0
    lo, up = _pld(mechanism, scale, 0.3, 2, sampler, direction)
    good = mc_privacy_curve(mechanism, scale, 0.3, 2, EPS, N, mc_seed=11, shift=SHIFT[sampler], direction=direction)
    assert _inside_band(good, lo, up)
    monkeypatch.setattr(mc, "_log_mix", _biased_log_mix)
    bad = mc_privacy_curve(mechanism, scale, 0.3, 2, EPS, N, mc_seed=11, shift=SHIFT[sampler], direction=direction)
    assert not _inside_band(bad, lo, up)


def test_band_check_detects_wrong_shift_and_wrong_laplace_scale():
    lo, up = _pld("laplace", 1.0, 0.3, 2, "wor", "add")
    # WOR analysed with the Poisson pair (shift 1 instead of 2)
    wrong_shift = mc_privacy_curve("laplace", 1.0, 0.3, 2, EPS, N, mc_seed=2, shift=1.0, direction="add")
    assert not _inside_band(wrong_shift, lo, up)
    # Laplace "scale" read as a standard deviation (b = s/√2)
    wrong_scale = mc_privacy_curve("laplace", 1.0 / math.sqrt(2), 0.3, 2, EPS, N, mc_seed=2, shift=2.0,
                                   direction="add")
    assert not _inside_band(wrong_scale, lo, up)


# ---------------------------------------------------------------- reproducibility
def test_same_seed_same_bytes_and_seed_matters():
    a = mc_privacy_curve("laplace", 1.0, 0.3, 2, EPS, 70_001, mc_seed=7, shift=2.0, direction="remove")
    b = mc_privacy_curve("laplace", 1.0, 0.3, 2, EPS, 70_001, mc_seed=7, shift=2.0, direction="remove")
    c = mc_privacy_curve("laplace", 1.0, 0.3, 2, EPS, 70_001, mc_seed=8, shift=2.0, direction="remove")
    assert a.estimate.tobytes() == b.estimate.tobytes()
    assert a.estimate.tobytes() != c.estimate.tobytes()


@pytest.mark.parametrize("mechanism,direction", [("laplace", "remove"), ("gaussian", "add"),
                                                 ("gaussian", "remove")])
def test_result_independent_of_chunk_size(mechanism, direction):
    n = 2 * BLOCK_SIZE + 1234  # three blocks, the last one partial
    ref = mc_privacy_curve(mechanism, 0.9, 0.4, 3, EPS, n, mc_seed=5, direction=direction, chunk_size=2**17)
    for cs in (3 * 1000, 3 * 7777, 10**7):
        r = mc_privacy_curve(mechanism, 0.9, 0.4, 3, EPS, n, mc_seed=5, direction=direction, chunk_size=cs)
        assert r.estimate.tobytes() == ref.estimate.tobytes(), cs


def test_chunk_size_one_and_heterogeneous_steps():
    steps = [Step("laplace", 2.0, 0.5, 2.0, "remove"), Step("laplace", 2.0, 0.5, 2.0, "add")]
    ref = mc_hockey_stick(steps, [0.0, 0.3, 0.6], 3000, mc_seed=9)
    one = mc_hockey_stick(steps, [0.0, 0.3, 0.6], 3000, mc_seed=9, chunk_size=1)
    assert one.estimate.tobytes() == ref.estimate.tobytes()


def test_eps_grid_order_does_not_matter():
    a = mc_privacy_curve("gaussian", 1.0, 0.2, 2, EPS, 50_000, mc_seed=4)
    b = mc_privacy_curve("gaussian", 1.0, 0.2, 2, EPS[::-1], 50_000, mc_seed=4)
    assert a.estimate.tobytes() == b.estimate[::-1].tobytes()


# ---------------------------------------------------------------- the paper's N (timed in bench/bench_montecarlo.py)
def test_paper_n_runs():
    eps = np.linspace(0.0, 3.0, 40)
    res = mc_privacy_curve("laplace", 1.5, 0.7, 2, eps, 3_342_306, mc_seed=1, shift=2.0, direction="remove")
    assert res.mc_samples == 3_342_306


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,name", [
    ({"q": 0.0}, "q must be"), ({"q": 1.2}, "q must be"), ({"scale": 0.0}, "scale"),
    ({"scale": -1.0}, "scale"), ({"mc_samples": 0}, "mc_samples"), ({"total_steps": 0}, "total_steps"), ({"shift": 0.0}, "shift"),
    ({"direction": "add_remove"}, "direction"), ({"mechanism": "cauchy"}, "mechanism"),
    ({"mc_failure_prob": 1.0}, "mc_failure_prob"), ({"chunk_size": 0}, "chunk_size"), ({"eps_grid": []}, "eps_grid"),
    ({"eps_grid": [0.0, np.nan]}, "eps_grid"), ({"mc_seed": -1}, "mc_seed"),
])
def test_bad_input(kw, name):
    args = {"mechanism": "laplace", "scale": 1.0, "q": 0.5, "total_steps": 2, "eps_grid": [0.0, 1.0],
            "mc_samples": 100, "mc_seed": 0}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        mc_privacy_curve(**args)


def test_steps_must_share_mechanism():
    with pytest.raises(ValueError, match="mechanism"):
        mc_hockey_stick([make_step("laplace", 1, 0.5), make_step("gaussian", 1, 0.5)], [0.0], 10, 0)


# ---------------------------------------------------------------- one name per concept
@pytest.mark.parametrize("old,new", [("hoeffding_n", "hoeffding_samples"), ("hoeffding_alpha", "hoeffding_half_width")])
def test_hoeffding_helpers_have_one_name(old, new):
    assert old not in mc.__all__ and new in mc.__all__ and not hasattr(mc, old)


@pytest.mark.parametrize("new", ["mc_half_width", "mc_samples", "mc_failure_prob", "mc_seed"])
def test_curve_fields_carry_the_mc_names(new):
    res = mc_privacy_curve("laplace", 1.0, 0.5, 1, [0.0], 10, 0)
    assert getattr(res, new) is not None
