"""dpsampling.engine.cf.pairs: the one-step M(s) of each mechanism (Zhu et al. 2022 Table 2 φ-functions against
mpmath quadrature), Gaussian composition, the exact atomic part (randomized response, Laplace) and heterogeneous
compositions against dp_accounting's PLD bounds."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dpsampling.engine.cf import Gaussian, Laplace, PoissonSubsampled, RandomizedResponse, cf_cdf, cf_delta, phi
from dpsampling.papers.zhu import gaussian_delta


def _phi_numeric(pdf_p, pdf_q, t, lo, hi, points=()):
    """E_P[exp(it log p/q)] by mpmath quadrature (reference)."""
    f = lambda o: pdf_p(o) * mpmath.expj(t * mpmath.log(pdf_p(o) / pdf_q(o)))  # noqa: E731
    return complex(mpmath.quad(f, [lo, *points, hi]))


@pytest.mark.parametrize("t", [0.0, 0.37, 1.9, -2.5])
def test_phi_gaussian_table2(t):
    s = 1.7
    ref = _phi_numeric(lambda o: mpmath.npdf(o, 1, s), lambda o: mpmath.npdf(o, 0, s), t,
                       -mpmath.inf, mpmath.inf)
    closed = np.exp(-(t * t - 1j * t) / (2 * s * s))  # Table 2
    assert abs(phi(t, Gaussian(s))[0] - ref) < 1e-12
    assert abs(closed - ref) < 1e-12
    # dual φ'(t) = E_Q[e^{it log q/p}] equals φ for the Gaussian (Lemma 35)
    assert abs(phi(t, Gaussian(s), dual=True)[0] - closed) < 1e-12


@pytest.mark.parametrize("t", [0.0, 0.8, -3.1])
def test_phi_laplace_table2(t):
    b = 0.8
    lap = lambda m: (lambda o: mpmath.exp(-abs(o - m) / b) / (2 * b))  # noqa: E731
    ref = _phi_numeric(lap(0), lap(1), t, -mpmath.inf, mpmath.inf, points=(0, 1))
    closed = 0.5 * (np.exp(1j * t / b) + np.exp((-1j * t - 1) / b)
                    + (np.exp(1j * t / b) - np.exp((-1j * t - 1) / b)) / (2j * t + 1))
    assert abs(phi(t, Laplace(b))[0] - ref) < 1e-12
    assert abs(closed - ref) < 1e-12
    assert abs(phi(t, Laplace(b), dual=True)[0] - ref) < 1e-12  # symmetric pair


def test_phi_rr_table2_and_subsampled_quadrature():
    p, t = 0.7, np.array([0.0, 0.4, -2.0])
    a = math.log(p / (1 - p))
    assert np.allclose(phi(t, RandomizedResponse(p)),
                       p * np.exp(1j * t * a) + (1 - p) * np.exp(-1j * t * a), atol=1e-14)
    # subsampled Gaussian φ by output-space quadrature vs mpmath, both directions
    s, g = 0.9, 0.2
    mix = lambda o: (1 - g) * mpmath.npdf(o, 0, s) + g * mpmath.npdf(o, 1, s)  # noqa: E731
    q0 = lambda o: mpmath.npdf(o, 0, s)  # noqa: E731
    for tt in (0.3, 2.0):
        rem = _phi_numeric(mix, q0, tt, -mpmath.inf, mpmath.inf)
        add = _phi_numeric(q0, mix, tt, -mpmath.inf, mpmath.inf)
        m = PoissonSubsampled(Gaussian(s), g)
        assert abs(phi(tt, m, "remove")[0] - rem) < 1e-13
        assert abs(phi(tt, m, "add")[0] - add) < 1e-13


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (2.0, 7), (5.0, 100), (50.0, 1000)])
def test_gaussian_composed_equals_sigma_over_sqrt_k(sigma, k):
    t = np.linspace(-3, 3, 13)
    assert np.allclose(phi(t, [(Gaussian(sigma), k)]), phi(t, Gaussian(sigma / math.sqrt(k))),
                       rtol=1e-12, atol=1e-15)
    for eps in (-0.5, 0.0, 0.3, 1.0, 3.0):
        v, er = cf_delta(eps, [(Gaussian(sigma), k)])
        s_eff = sigma / math.sqrt(k)
        if eps >= 0:
            ref = float(gaussian_delta(eps, s_eff))
        else:  # Lemma 46: H_α(P‖Q) = α H_{1/α}(Q‖P) - α + 1, symmetric pair
            a = math.exp(eps)
            ref = a * float(gaussian_delta(-eps, s_eff)) - a + 1
        assert er <= 1e-10
        assert abs(v - ref) <= er + 1e-15, (eps, v, ref, er)
        v2, er2 = cf_delta(eps, Gaussian(s_eff))
        assert abs(v - v2) <= er + er2


def test_heterogeneous_gaussian_rr_vs_pld():
    """Zhu Exp. 2: alternating Gaussian(σ=5) and RR(p=0.52), ε = 2 (and 0.5)."""
    p = 0.52
    lp, l1p = math.log(p), math.log1p(-p)
    for k, eps in ((2, 0.5), (100, 2.0), (400, 2.0)):
        v, er = cf_delta(eps, [(Gaussian(5.0), k // 2), (RandomizedResponse(p), k // 2)])
        b = []
        for pess in (False, True):
            g = pld.from_gaussian_mechanism(5.0, pessimistic_estimate=pess, use_connect_dots=pess)
            r = pld.from_two_probability_mass_functions({0: l1p, 1: lp}, {0: lp, 1: l1p},
                                                        pessimistic_estimate=pess)
            b.append(g.self_compose(k // 2).compose(r.self_compose(k // 2))
                     .get_delta_for_epsilon(eps))
        assert b[0] - er <= v <= b[1] + er, (k, b, v)
    # order of the sequence does not matter; counts are merged
    mix = [(Gaussian(5.0), 10), (RandomizedResponse(p), 10)]
    alt = [(Gaussian(5.0), 1), (RandomizedResponse(p), 1)] * 10
    assert abs(cf_delta(1.0, mix)[0] - cf_delta(1.0, alt)[0]) < 1e-12


def test_randomized_response_exact_binomial():
    p, k, eps = 0.6, 50, 1.0
    a = math.log(p / (1 - p))
    ref = mpmath.mpf(0)
    for j in range(k + 1):  # L = (2j - k) a with Binomial(k, p) weight
        L = (2 * j - k) * a
        if L > eps:
            ref += mpmath.binomial(k, j) * mpmath.mpf(p) ** j * mpmath.mpf(1 - p) ** (k - j) \
                * (1 - mpmath.exp(eps - L))
    v, er = cf_delta(eps, [(RandomizedResponse(p), k)])
    assert abs(v - float(ref)) <= er and er < 1e-12
    # atoms in the CDF are handled exactly (right-continuous)
    assert cf_cdf(a + 1e-12, RandomizedResponse(p))[0] == pytest.approx(1.0, abs=1e-15)
    assert cf_cdf(a - 1e-12, RandomizedResponse(p))[0] == pytest.approx(1 - p, abs=1e-15)
    assert cf_cdf(-a - 1e-12, RandomizedResponse(p))[0] == 0.0


def test_laplace_exact_and_composition():
    b = 1.0
    v, er = cf_delta(0.5, Laplace(b))
    assert abs(v - (1 - math.exp((0.5 - 1 / b) / 2))) <= er + 1e-15  # closed form, ε ≤ 1/b
    for k, eps in ((5, 2.0), (3, -1.0)):
        v, er = cf_delta(eps, [(Laplace(b), k)])
        lo = pld.from_laplace_mechanism(b, pessimistic_estimate=False, use_connect_dots=False)
        hi = pld.from_laplace_mechanism(b)
        assert lo.self_compose(k).get_delta_for_epsilon(eps) - er <= v
        assert v <= hi.self_compose(k).get_delta_for_epsilon(eps) + er
    # CDF with atoms at ±1/b: Pr[L ≤ 1/b] = 1, Pr[L < 1/b] = 1/2
    assert cf_cdf(1.0, Laplace(b))[0] == 1.0
    assert cf_cdf(1.0 - 1e-12, Laplace(b))[0] == pytest.approx(0.5, abs=1e-11)


@pytest.mark.parametrize("direction,c", [("remove", 1.5), ("add", 1.5), ("add", -2.5)])
@pytest.mark.parametrize("slack", [1e-4, 3e-3])
def test_windowed_modulus_bound_is_above_the_full_modulus_by_at_most_its_slack(direction, c, slack):
    """modulus_bound: at least |M(c+iu)|/M(c) from the full output grid (up to its error estimate), and above it by
    at most twice the slack it may spend (the windowed part's modulus and the trivially bounded mass each differ from
    |M| by at most that mass); through the shifted pair (law under Q) too."""
    from dpsampling.engine.cf.pairs import _ShiftedPair, _SubsampledGaussianPair

    pair = _SubsampledGaussianPair(0.5, 2e-4, direction)
    for p, cc in ((pair, c), (_ShiftedPair(pair), c + 1.0)):
        K = p.cumulants(cc)[0]
        for u in (200.0, 3e3, 3e4):
            lm, e = p.log_mgf(cc, np.array([u]))
            full = math.exp(lm[0].real - K)
            bound = p.modulus_bound(cc, u, slack)
            assert full - e[0] - 1e-12 <= bound <= full + e[0] + 2.01 * slack + 1e-12


def test_windowed_march_returns_the_full_march(monkeypatch):
    """The march with windowed probes certifies what the full march does: the same bound and outcome."""
    from dpsampling.engine.cf import inversion
    from dpsampling.engine.cf.pairs import _SubsampledGaussianPair

    pair = _SubsampledGaussianPair(0.5, 2e-4, "remove")
    # the success case at γ = 1e-3: its ~80 windowed probes all use a real window (none falls back to log_mgf),
    # and its full march (the reference) costs a sixth of the one at γ = 2e-4
    success = _SubsampledGaussianPair(0.5, 1e-3, "remove")
    u = np.geomspace(200.0, 1e6, 40)
    for p, U, log_target in ((success, 200.0, math.log(0.996)), (pair, 50.0, math.log(0.996)),
                             (pair, 300.0, math.log(0.5))):
        fast = inversion._march(p, 1.5, U, log_target, [0])
        full = inversion._march_probes(p, 1.5, U, log_target, [0], windowed=False)
        assert fast[0] == full[0]
        if full[0]:
            assert np.array_equal(fast[1](u), full[1](u))
        else:
            assert fast[2] == full[2]
