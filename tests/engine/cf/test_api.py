"""dpsampling.engine.cf.api: cf_delta, cf_epsilon, cf_cdf and the accountant interface against dp_accounting's PLD
bounds, mpmath (Lemma 19) and each other (round trips, add_remove = max of the directions), and bad input."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dpsampling.engine.cf import Gaussian, PoissonSubsampled, cf_cdf, cf_delta, cf_epsilon
from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
from dpsampling.papers.zhu import hs_subsampled_gaussian


def _pld_bounds(sigma, q, steps, disc=1e-4):
    """dp_accounting optimistic (privacy buckets) and pessimistic (connect-dots) PLDs."""
    opt = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=disc,
                                      pessimistic_estimate=False, use_connect_dots=False)
    pes = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=disc)
    return opt.self_compose(steps), pes.self_compose(steps)


@pytest.mark.parametrize("sigma,q,steps,eps_list", [
    (0.8, 1e-3, 10_000, (0.5, 0.947, 2.0)),
    (2.0, 0.01, 1000, (0.3, 1.0)),
    (1.0, 0.1, 100, (1.0, 3.0)),
])
def test_subsampled_within_pld_bounds(sigma, q, steps, eps_list):
    opt, pes = _pld_bounds(sigma, q, steps)
    m = [(PoissonSubsampled(Gaussian(sigma), q), steps)]
    for eps in eps_list:
        for d, attr in (("remove", "_pmf_remove"), ("add", "_pmf_add")):
            v, er = cf_delta(eps, m, d)
            lo = getattr(opt, attr).get_delta_for_epsilon(eps)
            hi = getattr(pes, attr).get_delta_for_epsilon(eps)
            assert er <= 1e-10
            if max(abs(lo), abs(hi)) < RELIABLE_DELTA_FLOOR:
                # below the floor dp_accounting's FFT rounding (~1e-13 in δ: here its optimistic δ is +3e-13 and its
                # pessimistic one −4e-13 where the true δ is ~1e-36) is all the reference says: φ must be below too
                assert 0 <= v - er and v + er < RELIABLE_DELTA_FLOOR, (sigma, q, steps, eps, d, lo, v, hi)
                continue
            assert lo - er <= v <= hi + er, (sigma, q, steps, eps, d, lo, v, hi)
        va, _ = cf_delta(eps, m, "add_remove")
        assert va == max(cf_delta(eps, m, "add")[0], cf_delta(eps, m, "remove")[0])


def test_brief_case_epsilon_0947():
    """σ=0.8, q=1e-3, T=1e4, δ=1e-6: ε ≈ 0.947 (converged PLD: 0.94732 @1e-4, 0.94720 @1e-5)."""
    m = [(PoissonSubsampled(Gaussian(0.8), 1e-3), 10_000)]
    e, ee = cf_epsilon(1e-6, m)
    assert ee < 1e-6
    assert abs(e - 0.94720) < 1.5e-4
    assert e < 0.9473238639737555  # below the pessimistic PLD at discretisation 1e-4
    ea, _ = cf_epsilon(1e-6, m, "add")
    assert ea < e  # remove dominates for ε > 0 (Zhu Fig. 4)
    # ε(δ) inverts δ(ε)
    v, er = cf_delta(e, m)
    assert abs(v - 1e-6) <= er + 1e-12


def test_few_steps_large_gamma():
    # T = 5, γ = 0.5: vs dp_accounting at fine discretisation, both directions
    m = PoissonSubsampled(Gaussian(1.0), 0.5)
    opt, pes = _pld_bounds(1.0, 0.5, 5, disc=1e-4)
    for d, attr in (("remove", "_pmf_remove"), ("add", "_pmf_add")):
        v, er = cf_delta(0.5, [(m, 5)], d)
        assert getattr(opt, attr).get_delta_for_epsilon(0.5) - er <= v
        assert v <= getattr(pes, attr).get_delta_for_epsilon(0.5) + er
    # add side: L ≤ -log(1-γ), so δ(ε) = 0 exactly beyond T·(-log(1-γ))
    assert cf_delta(5 * math.log(2) + 1e-9, [(m, 5)], "add") == (0.0, 0.0)
    assert float(hs_subsampled_gaussian(math.log(2) + 1e-9, 1.0, 0.5, "add")) == 0.0


def test_cdf_gaussian_and_lemma19():
    s, k = 1.3, 3
    mu = k / (2 * s * s)  # L ~ N(±μ, 2μ) under P / Q
    for x in (-3.0, 0.0, 1.0, 5.0):
        F, eF = cf_cdf(x, [(Gaussian(s), k)])
        G, eG = cf_cdf(x, [(Gaussian(s), k)], under="Q")
        assert abs(F - float(mpmath.ncdf(x, mu, mpmath.sqrt(2 * mu)))) <= eF + 1e-15
        assert abs(G - float(mpmath.ncdf(x, -mu, mpmath.sqrt(2 * mu)))) <= eG + 1e-15
    m = [(PoissonSubsampled(Gaussian(1.0), 0.05), 100)]
    for d in ("remove", "add"):
        for eps in (0.3, 2.0):
            v, er = cf_delta(eps, m, d)
            F, eF = cf_cdf(eps, m, d)
            G, eG = cf_cdf(eps, m, d, under="Q")
            lemma19 = (1 - F) - math.exp(eps) * (1 - G)  # δ = P[L>ε] - e^ε Q[L>ε]
            assert abs(v - lemma19) <= er + eF + math.exp(eps) * eG


def test_epsilon_delta_roundtrip_and_monotone():
    m = [(PoissonSubsampled(Gaussian(1.0), 0.02), 500), (Gaussian(20.0), 3)]
    e, ee = cf_epsilon(1e-5, m)
    v, er = cf_delta(e, m)
    assert abs(v - 1e-5) <= er + 1e-12
    grid = np.linspace(-1, 4, 11)
    vals = [cf_delta(x, m, "remove")[0] for x in grid]
    assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))


@pytest.mark.parametrize("call,match", [
    (lambda: cf_delta(1.0, Gaussian(1.0), direction="both"), "direction"),
    (lambda: cf_delta(1.0, Gaussian(1.0), abs_tol=-1), "abs_tol"),
    (lambda: cf_delta(float("nan"), Gaussian(1.0)), "epsilon"),
    (lambda: cf_epsilon(0.0, Gaussian(1.0)), "delta"),
    (lambda: cf_delta(1.0, [(Gaussian(1.0), 0)]), "count"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_epsilon_add_remove_is_max_of_directions():
    # add_remove takes the max; the shortcut (one δ_add evaluation at ε_remove) must agree with it
    m = [(PoissonSubsampled(Gaussian(1.0), 0.05), 100)]
    ea, eea = cf_epsilon(1e-5, m, "add")
    er, eer = cf_epsilon(1e-5, m, "remove")
    e, ee = cf_epsilon(1e-5, m, "add_remove")
    assert ea < er and abs(e - max(ea, er)) <= ee + eer + 1e-12
