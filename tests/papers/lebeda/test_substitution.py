"""§7 / Fig. 3: substitution under WOR, three candidate pairs (Lebeda et al. 2024)."""

import itertools
import math

import numpy as np
import pytest

from dpsampling.papers.lebeda import substitution as sub

EPS = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.2])


def _pdf(mu, x, b=2.0):
    return np.exp(-np.abs(x - mu) / b) / (2 * b)


def test_exact_matches_brute_force_2d_integral():
    """Direct 2-D integral of (p(x)p'(y) - e^ε q(x)q'(y))_+ on a fine grid (independent of the 1-D formula)."""
    x = np.linspace(-45.0, 45.0, 3601)
    h = x[1] - x[0]
    P = 0.5 * _pdf(-1, x) + 0.5 * _pdf(1, x)
    Q = _pdf(-1, x)
    pairs = {"PP||QQ": (P, P, Q, Q), "QQ||PP": (Q, Q, P, P), "PQ||QP": (P, Q, Q, P)}
    for name, (a1, a2, b1, b2) in pairs.items():
        for eps in (0.2, 0.6):
            integrand = np.maximum(np.outer(a1, a2) - math.exp(eps) * np.outer(b1, b2), 0.0)
            brute = integrand.sum() * h * h
            assert sub.exact_curve([eps], name)[0] == pytest.approx(brute, abs=2e-4), (name, eps)


@pytest.mark.parametrize("pair", sub.PAIRS)
def test_exact_within_pld_bounds_and_quad_error_small(pair):
    exact, err = sub.exact_curve(EPS, pair, with_error=True)
    up, lo = sub.pld_bounds(EPS, pair, discretization=1e-4)
    assert np.all(err < 1e-10)
    assert np.all(exact <= up + 1e-12) and np.all(exact >= lo - 1e-12)
    assert np.max(up - lo) < 2e-4


@pytest.mark.parametrize("pair", sub.PAIRS)
def test_mc_within_hoeffding_band_of_exact(pair):
    exact = sub.exact_curve(EPS, pair)
    res = sub.mc_curve(EPS, pair, mc_samples=300_000, mc_seed=17)
    assert np.all(np.abs(res.estimate - exact) <= res.mc_half_width)


def test_support_ends_closed_form():
    # the largest 2-fold losses: 2·log((1+e)/2), log((1+e)/(1+1/e)) = 1, -2·log((1+1/e)/2)
    ends = {"PP||QQ": 2 * math.log((1 + math.e) / 2), "PQ||QP": 1.0,
            "QQ||PP": -2 * math.log((1 + math.exp(-1)) / 2)}
    for pair, end in ends.items():
        below, above = sub.exact_curve([end - 1e-4, end + 1e-9], pair)
        assert below > 0 and above == 0.0


def test_fig3_maximum_intervals():
    iv = sub.max_pair_intervals()
    assert [p for (_, _, p) in iv] == ["QQ||PP", "PQ||QP", "PP||QQ"]
    assert iv[0][0] == 0.0
    assert iv[0][1] == pytest.approx(0.304837, abs=2e-6)
    assert iv[1][1] == pytest.approx(0.518994, abs=2e-6)
    assert iv[2][1] == pytest.approx(2 * math.log((1 + math.e) / 2), abs=1e-9)
    assert sub.all_three_are_max_somewhere()
    # at the interval ends the two neighbouring curves are equal
    for (_, e, a), (_, _, b) in itertools.pairwise(iv):
        va, vb = sub.exact_curve([e], a)[0], sub.exact_curve([e], b)[0]
        assert va == pytest.approx(vb, abs=1e-9)


def test_mixed_pair_symmetric_and_printed_typo():
    # H(P×Q‖Q×P) = H(Q×P‖P×Q) (swap coordinates): the "remove, add" order does not matter
    a = sub.laplace_two_fold(EPS, 2.0, 0.5, 2.0, ("remove", "add"))
    b = sub.laplace_two_fold(EPS, 2.0, 0.5, 2.0, ("add", "remove"))
    assert np.allclose(a, b, atol=1e-10)
    assert sub.mixed_pair_as_printed_is_zero()


def test_laplace_two_fold_equals_wor_fig1_direction_curves():
    from dpsampling.papers.lebeda.directions import direction_curves
    eps = [0.0, 0.25, 0.5, 1.5]
    c = direction_curves("laplace", 1.5, 0.7, 2, eps, sampler="wor", discretization=1e-4)
    for d in ("add", "remove"):
        ex = sub.laplace_two_fold(eps, 1.5, 0.7, 2.0, (d, d))
        assert np.all(ex <= getattr(c, f"{d}_upper") + 1e-12)
        assert np.all(ex >= getattr(c, f"{d}_lower") - 1e-12)


@pytest.mark.parametrize("call,name", [
    (lambda: sub.exact_curve([0.1], "PQ||PQ"), "pair"),
    (lambda: sub.laplace_two_fold([0.1], -1.0, 0.5, 2.0, ("add", "add")), "scale"),
    (lambda: sub.laplace_two_fold([0.1], 1.0, 0.0, 2.0, ("add", "add")), "q must be"),
    (lambda: sub.laplace_two_fold([0.1], 1.0, 0.5, 2.0, ("add",)), "directions"),
    (lambda: sub.laplace_two_fold([np.inf], 1.0, 0.5, 2.0, ("add", "add")), "eps"),
    (lambda: sub.mc_curve([0.1], "PP||QQ", mc_samples=0, mc_seed=1), "mc_samples"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_pipeline_helpers():
    leads = sub.max_pair_leads()
    assert [p for (_, _, p, _) in leads] == ["QQ||PP", "PQ||QP", "PP||QQ"]
    assert all(lead > 0.005 for (*_, lead) in leads)
    assert sub.max_loss() == pytest.approx(2 * math.log(0.5 + 0.5 * math.e), rel=1e-15)
    assert sub.distinct_combinations(2) == 3  # k + 1
    assert not sub.printed_pair_is_max_somewhere()
    with pytest.raises(ValueError, match="steps must be 2"):
        sub.distinct_combinations(3)
    # explicit §7 parameters give the defaults; other parameters move the interval ends
    assert np.array_equal(sub.exact_curve(EPS, "PQ||QP", scale=2.0, q=0.5), sub.exact_curve(EPS, "PQ||QP"))
    other = sub.max_pair_intervals(scale=1.5, q=0.5)
    assert [p for (_, _, p) in other] == ["QQ||PP", "PQ||QP", "PP||QQ"] and other[0][1] > 0.33
