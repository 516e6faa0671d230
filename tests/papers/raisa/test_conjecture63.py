"""papers/raisa/conjecture63.py: Räisä et al. 2024 Fig. 2 / Conjecture 6.3 (a − b on the authors' grid and exactly)."""

import numpy as np
import pytest
from dpsampling.papers import raisa as en


DELTA = 1e-5


def test_grid_binary_search_equals_bruteforce_exactly():
    eps, qs = en.paper_grid(n_eps=6, n_q=15)
    fast = en.a_minus_b_grid(eps, DELTA, qs, 1500)
    slow = en.a_minus_b_grid_bruteforce(eps, DELTA, qs, 1500)
    assert fast.keys() == slow.keys()
    for k in fast:
        np.testing.assert_array_equal(fast[k], slow[k], err_msg=k)


@pytest.mark.parametrize("n_sigma", [300, 3000])
def test_grid_agrees_with_exact_to_resolution(n_sigma):
    eps, qs = en.paper_grid(n_eps=25, n_q=20)
    g = en.a_minus_b_grid(eps, DELTA, qs, n_sigma)
    x = en.a_minus_b_exact(eps, DELTA, qs)
    D = en.sigma_grid_log_step(qs[0], n_sigma)
    assert np.all(g["n_at_grid_floor"] == 0) and np.all(g["n_infeasible"] == 0)
    S = en.sigma_one_step(qs[None, :], eps[:, None], DELTA)
    a = 1 / (2 * np.sqrt(2) * S)
    b = a - en.a_minus_b(qs[None, :], S, eps[:, None])
    bound = np.max(a * (1 - np.exp(-D)) + b * np.expm1(D), axis=1)
    diff = x["max_a_minus_b"] - g["max_a_minus_b"]
    assert np.all(diff >= 0) and np.all(diff <= bound * (1 + 1e-9))
    # grid sigma is within one grid step above sigma*
    r = g["argmax_sigma"] / en.sigma_one_step(g["argmax_q"], eps, DELTA)
    assert np.all((r >= 1) & (r <= np.exp(D) * (1 + 1e-12)))


def test_paper_resolution_constant():
    assert en.sigma_grid_log_step(4e-5, 10000) == pytest.approx(np.log(25000) / 9999, rel=1e-15)
    assert en.sigma_grid_log_step(4e-5, 10000) == pytest.approx(1.0128e-3, rel=1e-4)


def test_exact_full_grid_maximum_at_corner():
    eps, qs = en.paper_grid()  # 1000 eps x 100 q calibrations (timed in bench/bench_a_minus_b.py (ii))
    x = en.a_minus_b_exact(eps, DELTA, qs)
    assert np.all(x["argmax_q"] == qs[0])
    assert np.argmax(x["max_a_minus_b"]) == 0
    assert x["max_a_minus_b"][0] == pytest.approx(en.conjecture63_corner(4.0), rel=1e-12)


@pytest.mark.parametrize("method", ["exact", "grid"])
def test_constant_four_reduced_grid(method):
    kw = {"delta": DELTA, "n_eps": 60, "n_q": 30, "method": method, "n_sigma": 2000}
    assert en.conjecture63_holds(4.0, **kw)
    assert en.conjecture63_max_a_minus_b(4.0, **kw) < -0.01
    for c in (1.0, 2.0, 3.0):
        assert en.conjecture63_max_a_minus_b(c, **kw) > 0.1
        assert en.conjecture63_violated(c, **kw)


def test_critical_constant_between_3_and_4():
    c = en.conjecture63_critical_c(DELTA)
    assert 3.0 < c < 4.0
    assert en.conjecture63_corner(c * (1 + 1e-6), DELTA) < 0 < en.conjecture63_corner(c * (1 - 1e-6), DELTA)


def test_theorem62_sufficient_condition():
    qs = np.logspace(np.log10(1.5 * DELTA), 0, 60)
    eps = np.logspace(np.log10(4e-5), np.log10(4), 30)
    assert en.theorem62_sufficient_condition_holds(qs, eps, DELTA)


@pytest.mark.parametrize("name", ["paper_grid", "a_minus_b_grid", "a_minus_b_grid_bruteforce", "a_minus_b_exact",
                                  "conjecture63_max_a_minus_b", "conjecture63_holds", "conjecture63_violated",
                                  "conjecture63_corner", "conjecture63_critical_c", "max_delta_gap",
                                  "max_a_minus_b_decreasing_in_eps", "a_minus_b_table"])
def test_delta_target_is_named_delta(name):
    """One name per concept: the δ target is ``delta`` (the claims' kwargs too)."""
    import inspect
    from dpsampling.papers.raisa import conjecture63
    f = getattr(conjecture63, name)
    assert "delta" in inspect.signature(f).parameters and "delta_target" not in inspect.signature(f).parameters
