"""Tests for dpsampling.papers.zhu (Zhu et al. 2022 §3/App. C.4/Fig. 1/Fig. 4;
Lebeda et al. 2024 §8 / Theorem 14 / Fig. 4)."""

import logging
import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dpsampling.papers import zhu as dp
from dpsampling.papers.lebeda import wor_substitution as ws


@pytest.fixture(autouse=True, scope="module")
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


# ------------------------------------------------------------------ (a) one-step profiles
def _hs_mpmath(eps, s, g, direction):
    """H_{e^ε} by direct quadrature of (p - αq)_+ (reference)."""
    a = mpmath.e ** eps
    mix = lambda o: (1 - g) * mpmath.npdf(o, 0, s) + g * mpmath.npdf(o, 1, s)  # noqa: E731
    q0 = lambda o: mpmath.npdf(o, 0, s)  # noqa: E731
    up, lo = (mix, q0) if direction == "remove" else (q0, mix)
    pts = [-30 * s, 0, 1, 30 * s + 1]
    d = lambda o: up(o) - a * lo(o)  # noqa: E731  (one sign change: monotone likelihood ratio)
    grid = [mpmath.mpf(-30 * s) + k * (60 * s + 1) / 97 for k in range(98)]
    for u, v in zip(grid, grid[1:]):
        du, dv = d(u), d(v)
        if du == 0:
            pts.append(u)
        elif du * dv < 0:
            pts.append(mpmath.findroot(d, (u, v), solver="illinois"))
    return float(mpmath.quad(lambda o: max(d(o), 0), sorted(pts)))


@pytest.mark.parametrize("sigma,q", [(1.0, 0.5), (2.0, 0.05)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_hs_closed_form(sigma, q, direction):
    for eps in (-1.0, -0.02, 0.0, 0.3, 1.0):
        v = float(dp.hs_subsampled_gaussian(eps, sigma, q, direction))
        assert v == pytest.approx(_hs_mpmath(eps, sigma, q, direction), abs=1e-10, rel=1e-8)
    # against dp_accounting's pessimistic/optimistic one-step PLDs
    hi = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4)
    lo = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4,
                                     pessimistic_estimate=False, use_connect_dots=False)
    attr = "_pmf_remove" if direction == "remove" else "_pmf_add"
    for eps in (0.0, 0.2, 0.7):
        v = float(dp.hs_subsampled_gaussian(eps, sigma, q, direction))
        assert getattr(lo, attr).get_delta_for_epsilon(eps) - 1e-12 <= v
        assert v <= getattr(hi, attr).get_delta_for_epsilon(eps) + 1e-12


def test_lemma46_relates_directions():
    # add = H_α(Q‖M), remove = H_α(M‖Q): H_α(Q‖M) = α H_{1/α}(M‖Q) - α + 1 (Zhu Lemma 46)
    e = np.linspace(-3, 3, 61)
    for s, g in ((1.0, 0.5), (0.8, 1e-3), (4.0, 0.05)):
        add = dp.hs_subsampled_gaussian(e, s, g, "add")
        rem = dp.hs_subsampled_gaussian(-e, s, g, "remove")
        assert np.allclose(add, np.exp(e) * rem - np.exp(e) + 1, atol=1e-14)


def test_zhu_fig4_split():
    """Zhu Fig. 4 (σ=1, γ=0.5): remove curve dominates for α ≥ 1, add curve for α < 1,
    and neither dominates everywhere."""
    assert dp.zhu_fig4_split_holds(1.0, 0.5)
    e = np.linspace(-3, 3, 601)
    r = dp.hs_subsampled_gaussian(e, 1.0, 0.5, "remove")
    a = dp.hs_subsampled_gaussian(e, 1.0, 0.5, "add")
    assert np.any(r > a + 1e-3) and np.any(a > r + 1e-3)
    assert np.all(r[e > 0.01] > a[e > 0.01]) and np.all(a[e < -0.01] > r[e < -0.01])


# ----------------------------------------------------------- (b) Lebeda §8 / Theorem 14
def test_theorem14_split_and_valid_profile():
    assert ws.lebeda_fig4_split_holds(4.0, 0.05, 2.0)
    e = np.linspace(-4, 3, 1401)
    H = ws.wor_substitution_profile(e)
    r = dp.hs_subsampled_gaussian(e, 4.0, 0.05, "remove", 2.0)
    a = dp.hs_subsampled_gaussian(e, 4.0, 0.05, "add", 2.0)
    # the pointwise maximum is the split of Theorem 14 at ε = 0
    assert np.array_equal(H, np.where(e >= 0, np.maximum(r, a), np.maximum(a, r)))
    assert np.allclose(H[e >= 0], r[e >= 0]) and np.allclose(H[e < 0], a[e < 0])
    # Zhu Lemma 9: convex & decreasing in α, H → 1 as α → 0, H ≥ (1-α)_+
    alpha = np.exp(e)
    assert np.all(np.diff(H) <= 1e-15)
    slopes = np.diff(H) / np.diff(alpha)
    assert np.all(np.diff(slopes) >= -1e-9)
    assert np.all(H >= np.maximum(1 - alpha, 0) - 1e-15)
    assert float(ws.wor_substitution_profile(-40.0)) == pytest.approx(1.0, abs=1e-15)


def test_connect_dots_pair_dominates_profile():
    lo, hi = ws._wor_eps_range(4.0, 0.05, 2.0)
    pmf = ws.connect_dots_pmf(ws.wor_substitution_profile, lo, hi, 1e-4)
    g = np.concatenate([np.linspace(-8, 3, 1501), np.random.default_rng(0).uniform(-1, 2, 200)])
    Hc = ws.pmf_hockey_stick(pmf, g)
    H = ws.wor_substitution_profile(g)
    assert np.all(Hc >= H - 1e-15)
    assert np.max(Hc - H) < 2e-4  # tight up to the chord gap of the 1e-4 grid
    # equality at the grid nodes
    nodes = np.array([-0.05, 0.0, 0.1234, 0.5]) // 1e-4 * 1e-4
    assert np.allclose(ws.pmf_hockey_stick(pmf, nodes), ws.wor_substitution_profile(nodes),
                       atol=1e-12)


def test_lebeda_fig4_composed_curves():
    eps = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    c = ws.wor_substitution_curves(eps, sigma=4.0, q=0.05, steps=1000)
    assert np.all(c["lower_err"] <= 1e-10)
    # upper (dominating pair) ≥ lower (remove direction) with a visible gap, RDP above both
    assert np.all(c["upper"] >= c["lower"] + c["lower_err"])
    assert np.all(c["upper"][:4] > 1.25 * c["lower"][:4])
    assert np.all(c["rdp"] >= c["upper"])
    assert np.all(np.diff(c["upper"]) < 0) and np.all(np.diff(c["lower"]) < 0)
    # lower bound = Poisson-subsampled Gaussian (σ/Δ = 2, γ = 0.05), remove only; check vs PLD
    p = pld.from_gaussian_mechanism(4.0, sensitivity=2.0, sampling_prob=0.05)
    pr = p._pmf_remove.self_compose(1000)
    for e, v, er in zip(eps, c["lower"], c["lower_err"]):
        assert v <= pr.get_delta_for_epsilon(float(e)) + er
        assert v >= pr.get_delta_for_epsilon(float(e)) * (1 - 2e-3)


# ------------------------------------------------------------------ (c) Zhu Fig. 1
P_FIG1 = math.e / (1 + math.e)


def test_zhu_fig1_printed_numbers():
    # "GM obeys (0.277, 0.3)-DP"
    e_gm = dp.zhu_fig1_gm_epsilon(0.3)
    assert round(e_gm, 3) == 0.277
    assert float(dp.gaussian_delta(0.277, 1.0)) <= 0.3
    # "RR does not satisfy (ε, 0.3)-DP with ε < 0.471"
    e_rr = dp.zhu_fig1_rr_epsilon(0.3)
    assert e_rr == pytest.approx(0.4717504, abs=1e-6) and e_rr >= 0.471
    assert float(dp.randomized_response_delta(0.471, P_FIG1)) > 0.3
    # the RDP -> f-DP -> (ε, δ) route from α/2 cannot certify anything below RR's ε
    assert dp.zhu_fig1_rdp_converted_epsilon(0.3) >= e_rr


def test_zhu_fig1_rdp_and_tradeoff_curves():
    assert dp.zhu_fig1_rr_rdp_below_gaussian()
    a = np.array([0.5, 2.0, 7.0])
    # closed form: D_α(RR) = log(cosh(α - 1/2)/cosh(1/2))/(α - 1) for p = e/(1+e)
    ref = np.log(np.cosh(a - 0.5) / math.cosh(0.5)) / (a - 1)
    assert np.allclose(dp.rdp_randomized_response(a, P_FIG1), ref, atol=1e-14)
    assert float(dp.rdp_randomized_response(1.0, P_FIG1)) == pytest.approx(
        (2 * P_FIG1 - 1), abs=1e-14)  # KL = (2p-1) log(p/(1-p)), log-ratio = 1
    x = np.linspace(0.001, 0.999, 300)
    f_gm, f_rr = dp.tradeoff_gaussian(x), dp.tradeoff_randomized_response(x, P_FIG1)
    f_conv_gm = dp.tradeoff_from_rdp(x, lambda al: float(dp.rdp_gaussian(al)))
    f_conv_rr = dp.tradeoff_from_rdp(x, lambda al: float(dp.rdp_randomized_response(al, P_FIG1)))
    # validity: the RDP-implied f lies below both exact curves (RR satisfies the GM's RDP)
    assert np.all(f_conv_gm <= f_gm + 1e-9) and np.all(f_conv_gm <= f_rr + 1e-9)
    # the route RDP -> family of (ε, δ) -> f-DP is valid but never better than App. F.1
    f_via_dp = dp.tradeoff_from_rdp_via_dp(x, lambda al: float(dp.rdp_gaussian(al)))
    assert np.all(f_via_dp <= f_gm + 1e-9) and np.all(f_via_dp <= f_rr + 1e-9)
    assert np.all(f_via_dp <= f_conv_gm + 1e-8) and np.max(f_conv_gm - f_via_dp) > 0.05
    # App. F.3: the conversion is (up to the order grid) exact for RR
    assert np.max(np.abs(f_conv_rr - f_rr)) < 2e-3
    # profiles from trade-off functions (Lemma 20/21): upper bounds on the exact ones (cell-wise bound
    # on the sup), within the grid cell width 5e-6 times the slope |f'| + e^ε ≤ 4
    e = np.array([0.0, 0.277, 1.0])
    for prof, exact in ((dp.profile_from_tradeoff(e, dp.tradeoff_gaussian), dp.gaussian_delta(e)),
                        (dp.profile_from_tradeoff(e, lambda z: dp.tradeoff_randomized_response(z, P_FIG1)),
                         dp.randomized_response_delta(e, P_FIG1))):
        assert np.all(exact - 1e-12 <= prof) and np.all(prof <= exact + 2e-5)


def test_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        dp.hs_subsampled_gaussian(0.0, -1.0, 0.1, "add")
    with pytest.raises(ValueError, match="q must be"):
        dp.hs_subsampled_gaussian(0.0, 1.0, 1.5, "add")
    with pytest.raises(ValueError, match="direction"):
        dp.hs_subsampled_gaussian(0.0, 1.0, 0.1, "both")
    with pytest.raises(ValueError, match="eps_hi"):
        ws.connect_dots_pmf(ws.wor_substitution_profile, 1.0, 0.0)
