"""Per-direction curves, crossings and Conjecture 12 (Lebeda et al. 2024, §4-§5)."""


import numpy as np

from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
import pytest

from dpsampling.papers.lebeda import directions as D
from dpsampling.engine.montecarlo import mc_privacy_curve
from dpsampling.papers.lebeda.substitution import laplace_two_fold

EPS = np.linspace(0.0, 3.0, 31)


@pytest.mark.parametrize("mechanism,scale,sampler,d", [
    ("laplace", 1.5, "wor", 1e-4), ("laplace", 1.0, "poisson", 1e-4), ("gaussian", 1.0, "poisson", 1e-3),
    ("gaussian", 2.0, "wor", 1e-3)])
@pytest.mark.parametrize("pessimistic", [True, False])
def test_max_of_directions_equals_public_delta(mechanism, scale, sampler, d, pessimistic):
    """The private per-direction pmfs must recombine to dp_accounting's public value."""
    c = D.direction_curves(mechanism, scale, 0.4, 3, EPS, sampler=sampler, discretization=d)
    tag = "upper" if pessimistic else "lower"
    mx = np.maximum(getattr(c, f"add_{tag}"), getattr(c, f"remove_{tag}"))
    pub = D.public_delta(mechanism, scale, 0.4, 3, EPS, sampler=sampler, pessimistic=pessimistic,
                         discretization=d)
    assert np.array_equal(mx, pub)
    assert np.all(c.add_lower <= c.add_upper + 1e-15) and np.all(c.remove_lower <= c.remove_upper + 1e-15)


def test_wor_is_poisson_with_sensitivity_two():
    """Prop. 9: the WOR pair N(-b)/N(-b+2) is the Poisson pair with shift 2 (= σ/2 at shift 1)."""
    a = D.direction_curves("gaussian", 2.0, 0.3, 2, EPS, sampler="wor", discretization=1e-3)
    b = D.direction_curves("gaussian", 1.0, 0.3, 2, EPS, sampler="poisson", discretization=1e-3)
    for f in ("add_upper", "remove_upper"):
        assert np.allclose(getattr(a, f), getattr(b, f), atol=2e-3)


def test_directions_match_exact_two_fold_laplace():
    eps = np.array([0.0, 0.2, 0.4, 0.8, 1.5])
    c = D.direction_curves("laplace", 2.0, 0.5, 2, eps, sampler="wor")
    for d in ("add", "remove"):
        ex = laplace_two_fold(eps, 2.0, 0.5, 2.0, (d, d))
        assert np.all(ex <= getattr(c, f"{d}_upper") + 1e-12)
        assert np.all(ex >= getattr(c, f"{d}_lower") - 1e-12)


def test_crossing_intervals_interpolation():
    eps = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    add = np.array([0.0, 1.0, 1.0, -1.0, -1.0])
    rem = np.zeros(5)
    assert D.crossing_intervals(eps, add, rem) == [(0.0, 2.5)]
    assert D.crossing_intervals(eps, -add, rem) == [(2.5, 4.0)]
    assert D.crossing_intervals(eps, rem, rem) == []
    conf = D.crossing_intervals_with_confidence(eps, add - 0.5, add + 0.5, rem, rem)
    assert conf["certain"] == [(0.5, 2.25)] and conf["possible"] == [(0.0, 2.75)]
    with pytest.raises(ValueError, match="increasing"):
        D.crossing_intervals(eps[::-1], add, rem)
    with pytest.raises(ValueError, match="shape"):
        D.crossing_intervals(eps, add[:3], rem)


def test_fig1_crossing_k2_present_k1_absent():
    out = D.fig1_crossing()
    (lo, hi), = out["certain"]  # one interval where add_lower > remove_upper
    assert 0.0 <= lo < 0.01 and hi == pytest.approx(0.6474, abs=2e-3)
    c = out["curves"]
    gap = c.add_lower - c.remove_upper
    assert gap.max() > 0.03  # ≈ 0.0313 at ε ≈ 0.36, far above MC's α ≈ 0.0012
    # and the other way round at ε = 1.5 (the App. B.1 check point)
    i = int(np.argmin(np.abs(c.epsilon - 1.5)))
    assert c.remove_lower[i] > 0.1
    assert c.add_upper[i] < 1e-9
    # without composition the remove curve dominates (Prop. 30 of [ZDW22], §5)
    assert D.remove_dominates_uncomposed()
    s = D.FIG1_SETTINGS
    k1 = D.direction_curves("laplace", s["scale"], s["q"], 1, EPS, sampler="wor")
    assert D.crossing_intervals_with_confidence(EPS, k1.add_lower, k1.add_upper, k1.remove_lower,
                                                k1.remove_upper)["certain"] == []


def test_fig1_crossing_seen_by_monte_carlo_at_paper_n():
    s = D.FIG1_SETTINGS
    eps = np.linspace(0.0, 3.0, 40)
    add = mc_privacy_curve("laplace", s["scale"], s["q"], 2, eps, 3_342_306, mc_seed=1, shift=2.0,
                           direction="add")
    rem = mc_privacy_curve("laplace", s["scale"], s["q"], 2, eps, 3_342_306, mc_seed=2, shift=2.0,
                           direction="remove")
    out = D.mc_crossing_intervals(add, rem, eps_min=0.0)
    assert len(out["certain"]) == 1
    lo, hi = out["certain"][0]
    assert lo < 0.1 and 0.55 < hi < 0.7
    i = int(np.argmin(np.abs(eps - 1.5)))  # App. B.1's second check point: remove above add
    assert rem.estimate[i] > add.estimate[i] + add.mc_half_width + rem.mc_half_width


@pytest.mark.parametrize("sigma,q,steps", [(0.5, 0.1, 2), (1.0, 0.5, 10), (2.0, 0.01, 3), (0.3, 1.0, 3)])
def test_conjecture12_points(sigma, q, steps):
    r = D.conjecture12_margin(sigma, q, steps, np.linspace(0.0, 4.0, 41))  # timed in bench/bench_conjecture12.py
    assert not r.counterexample
    assert set(r.classification) <= {"within numerical error", "unreliable"}
    # remove dominates up to the PLD bracket: add can exceed remove only by the bracket width
    width = np.max(r.add_upper - r.add_lower) + np.max(r.remove_upper - r.remove_lower)
    assert np.max(r.margin_possible) <= width + 1e-12


def test_conjecture12_classifier_flags_a_planted_counterexample(monkeypatch):
    """Swap the two directions: now 'add' dominates and must be classified as a counterexample."""
    real = D.direction_curves

    def swapped(*a, **kw):
        c = real(*a, **kw)
        return D.DirectionCurves(epsilon=c.epsilon, add_upper=c.remove_upper, add_lower=c.remove_lower,
                                 remove_upper=c.add_upper, remove_lower=c.add_lower,
                                 discretization=c.discretization, params=c.params)

    monkeypatch.setattr(D, "direction_curves", swapped)
    r = D.conjecture12_margin(0.5, 0.5, 2, np.linspace(0.0, 4.0, 41))
    assert r.counterexample
    assert r.classification[0] != "counterexample"  # at ε = 0 both directions are equal


def test_choose_discretization():
    hi, lo = np.log(0.9 + 0.1 * np.exp(11.0)), np.log(0.9 + 0.1 * np.exp(-11.0))  # log((1-γ)+γe^{±L})
    assert D.choose_discretization(1.0, 0.1) == pytest.approx((hi - lo) / 5000)
    assert D.choose_discretization(3.0, 0.01) > 4e-5  # narrow loss range: few bins, not d_min
    assert 1e-5 <= D.choose_discretization(100.0, 1e-6) <= D.choose_discretization(0.2, 0.9) <= 0.05


@pytest.mark.parametrize("call,name", [
    (lambda: D.direction_curves("laplace", 1.0, 0.0, 2, [0.0]), "q must be"),
    (lambda: D.direction_curves("laplace", 0.0, 0.5, 2, [0.0]), "scale"),
    (lambda: D.direction_curves("laplace", 1.0, 0.5, 0, [0.0]), "steps"),
    (lambda: D.direction_curves("laplace", 1.0, 0.5, 2, [0.0], sampler="shuffle"), "sampler"),
    (lambda: D.direction_curves("gauss", 1.0, 0.5, 2, [0.0]), "mechanism"),
    (lambda: D.direction_curves("laplace", 1.0, 0.5, 2, []), "eps"),
    (lambda: D.conjecture12_margin(-1.0, 0.5, 2, [0.0]), "sigma"),
    (lambda: D.conjecture12_margin(1.0, 1.5, 2, [0.0]), "q must be"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- pipeline helpers
@pytest.mark.parametrize("args", [("gaussian", 1.0, 0.1, 100), ("gaussian", 0.3, 1.0, 10), ("laplace", 1.5, 0.7, 2)])
def test_pmf_delta_equals_dp_accounting_bitwise(args):
    pld = D.composed_pld(*args, discretization=1e-3)
    e = np.linspace(0.0, 30.0, 120)
    for pmf in (pld._pmf_add, pld._pmf_remove):
        assert np.array_equal(D.pmf_delta(pmf, e), np.asarray(pmf.get_delta_for_epsilon(e)))
    with pytest.raises(ValueError, match="sorted"):
        D.pmf_delta(pld._pmf_add, [1.0, 0.5])


def test_curve_eps_max():
    e = D.curve_eps_max("laplace", 1.5, 0.7, 1, 1e-3, sampler="wor")
    # k = 1: the largest loss is log(0.3 + 0.7 e^{2/1.5}) = 1.0834, so δ ≤ 1e-3 from just below it
    assert e == 1.25
    assert D.curve_eps_max("laplace", 1.5, 0.7, 16, 1e-3, sampler="wor") > D.curve_eps_max(
        "laplace", 1.5, 0.7, 2, 1e-3, sampler="wor")


def test_conjecture12_point_and_verdict():
    r = D.conjecture12_point(1.0, 0.1, 10, n_eps=60, n_bins=2000)
    assert r["classification"] in ("remove dominates", "within numerical error")
    assert r["max_margin_certain"] <= r["max_margin_estimate"] + 1e-12 <= r["max_margin_possible"] + 2e-12
    assert r["max_margin_estimate"] < 1e-9 and r["min_margin_estimate"] < -1e-3  # remove clearly dominates
    e, capped = D.conjecture12_eps_grid(1.0, 0.1, 10, n_eps=60)
    assert e[0] == 0 and not capped and np.all(np.diff(e) > 0)
    assert D.public_delta("gaussian", 1.0, 0.1, 10, [e[-1]], discretization=D.choose_discretization(1.0, 0.1))[0] \
        == pytest.approx(RELIABLE_DELTA_FLOOR, rel=0.2)  # the grid ends where PLD δ reaches the floor
    _, capped = D.conjecture12_eps_grid(0.3, 1.0, 10000, n_eps=10)  # δ ≈ 1 far beyond ε = 700
    assert capped
    v = D.conjecture12_verdict([r, {**r, "classification": "counterexample", "max_margin_estimate": 1.0}])
    assert v["verdict"] == "counterexample" and v["n_counterexample"] == 1 and v["argmax"]["steps"] == 10


def test_fig1_crossing_vanishes_for_large_k_only():
    assert D.fig1_crossing_vanishes(steps_values=(4, 16))
    assert not D.fig1_crossing_vanishes(steps_values=(2,))
