"""Räisä et al. 2024 in the pipeline: the fast PLD builder and warm-started σ(q, T) curves of
Fig. 1 (dpsampling.papers.raisa), the two chunk scripts, and config rejection."""

import logging
import math
import sys

import numpy as np
import pytest

from dpsampling.engine import accountant
from dpsampling.papers import raisa as en

DELTA = 1e-5


@pytest.fixture(scope="module")
def scripts(repo_root):
    sys.path.insert(0, str(repo_root / "scripts"))
    import a_minus_b
    import effective_noise

    yield effective_noise, a_minus_b
    sys.path.remove(str(repo_root / "scripts"))


def _dp_accounting_pld(sigma, q, d):
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    return pldlib.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=d)


# ---------------------------------------------------------------------------
# the one-step hockey-stick curve (Eq. (45)) for every real ε
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("q,s,e", [(0.01, 1.0, -0.3), (0.3, 0.7, -2.0), (0.001, 2.0, -1e-4), (0.5, 3.0, 0.2)])
def test_hockey_stick_negative_eps_matches_dp_accounting(q, s, e):
    from dp_accounting.pld import privacy_loss_mechanism as plm

    for adj, name in ((plm.AdjacencyType.REMOVE, "remove"), (plm.AdjacencyType.ADD, "add")):
        loss = plm.GaussianPrivacyLoss(s, sampling_prob=q, adjacency_type=adj)
        ref = loss.get_delta_for_epsilon(e)
        assert en.hockey_stick_one_step(q, s, [e], name)[0] == pytest.approx(ref, rel=1e-9, abs=1e-15), name


def test_hockey_stick_continuous_at_zero_and_identity():
    q, s = 0.05, 1.3
    lo = en.hockey_stick_one_step(q, s, [-1e-12], "remove")[0]
    hi = en.hockey_stick_one_step(q, s, [0.0], "remove")[0]
    assert lo == pytest.approx(hi, rel=1e-9)
    # H_{e^-e}(P||Q) = 1 - e^-e + e^-e H_{e^e}(Q||P)
    e = 0.7
    lhs = en.hockey_stick_one_step(q, s, [-e], "remove")[0]
    rhs = -math.expm1(-e) + math.exp(-e) * en.delta_one_step(q, s, e, "add")
    assert lhs == pytest.approx(rhs, rel=1e-14)


# ---------------------------------------------------------------------------
# σ(q, T) calibration
# ---------------------------------------------------------------------------


def test_sigma_q1_is_exact_analytic():
    for e, t in ((1.0, 1), (0.125, 100), (4.0, 10000)):
        ref = accountant.calibrate_sigma(e, DELTA, q=1.0, total_steps=t)
        assert ref.kind == "exact"
        assert en.sigma_q1(e, DELTA, t) == pytest.approx(ref.value, rel=1e-10)


@pytest.mark.parametrize("e,q,t", [(1.0, 0.05, 10), (0.25, 0.01, 100)])
def test_calibrate_sigma_pld_agrees_with_accountant_and_is_sufficient(e, q, t):
    logging.getLogger().setLevel(logging.ERROR)
    ours = en.calibrate_sigma_pld(e, DELTA, q=q, steps=t, rel_tol=1e-3)
    ref = accountant.calibrate_sigma(e, DELTA, q=q, total_steps=t, rel_tol=1e-3)
    assert ours.kind == "upper" and ours.method == "pld" and not ours.flags
    assert ours.value == pytest.approx(ref.value, rel=2e-3)
    assert ours.accuracy["est_rel_error"] <= 1e-3
    # sufficient by dp_accounting's own pessimistic PLD at the final discretisation
    d = ours.accuracy["discretization"]
    assert _dp_accounting_pld(ours.value, q, d).self_compose(t).get_delta_for_epsilon(e) <= DELTA * (1 + 1e-6)
    # and not much more than needed: 1 % less noise violates δ
    assert _dp_accounting_pld(ours.value * 0.99, q, d).self_compose(t).get_delta_for_epsilon(e) > DELTA


def test_calibrate_sigma_pld_exact_cases():
    r = en.calibrate_sigma_pld(1.0, DELTA, q=0.01, steps=1)
    assert (r.kind, r.method) == ("exact", "analytic") and r.value == en.sigma_one_step(0.01, 1.0, DELTA)
    r = en.calibrate_sigma_pld(1.0, DELTA, q=1.0, steps=100)
    assert r.kind == "exact" and r.value == pytest.approx(10 * en.sigma_one_step(1.0, 1.0, DELTA), rel=1e-14)


def test_sigma_curve_warm_start_matches_cold_and_decreases():
    qs = np.logspace(-2, 0, 6)
    curve = en.sigma_curve(0.5, DELTA, qs, 10, rel_tol=1e-3)
    assert [r.kind for r in curve] == ["upper"] * 5 + ["exact"]
    for q, r in zip(qs[[1, 3]], [curve[1], curve[3]]):
        cold = en.calibrate_sigma_pld(0.5, DELTA, q=float(q), steps=10, rel_tol=1e-3)
        assert r.value == pytest.approx(cold.value, rel=2e-3)
    # warm starts need fewer PLD evaluations than the first (cold) point
    assert max(r.accuracy["pld_evaluations"] for r in curve[1:5]) < curve[0].accuracy["pld_evaluations"] + 2
    y = np.array([r.value for r in curve]) / qs
    assert np.all(np.diff(y) < 0)  # σ_eff decreasing (Fig. 1)
    ratio = en.corollary54_ratio(y * qs, qs, en.sigma_q1(0.5, DELTA, 10))
    assert ratio[-1] == pytest.approx(1.0, rel=1e-12) and np.all(ratio[:-1] > 1)
    chk = en.sigma_eff_check(qs, y, [r.accuracy.get("est_rel_error", 0.0) for r in curve])
    assert chk["n_increases"] == 0 and chk["max_rel_increase"] < 0


def test_sigma_eff_check_counts_increases():
    chk = en.sigma_eff_check([0.1, 0.2, 0.3, 0.4], [4.0, 3.0, 3.001, 2.0], [1e-3, 1e-3, 1e-3, 1e-3])
    assert chk == {"n_increases": 1, "n_increases_beyond_error": 0, "max_rel_increase": pytest.approx(1 / 3000)}
    assert en.sigma_eff_check([0.1, 0.2], [1.0, 1.1])["n_increases_beyond_error"] == 1


# ---------------------------------------------------------------------------
# the chunk scripts
# ---------------------------------------------------------------------------


def _points(block):
    from dpsampling import grids

    return grids.build(block)


def test_effective_noise_compute_points(scripts):
    mod, _ = scripts
    pts = _points({"fixed": {"delta": DELTA, "sampler": "poisson", "direction": "add_remove"},
                   "grid": [{"epsilon": [1.0], "steps": [1, 10], "q": {"start": 0.01, "stop": 1.0, "num": 3,
                                                                        "spacing": "log"}}],
                   "chunk_by": ["epsilon", "steps"], "n_chunks": 1})
    rows = mod.compute_points(pts, rel_tol=1e-2)
    assert len(rows) == len(pts)
    for p, r in zip(pts, rows):
        assert r["sigma_eff"] == pytest.approx(r["value"] / p["q"], rel=1e-14)
        assert r["ratio"] == pytest.approx(r["value"] / (p["q"] * r["sigma_q1"]), rel=1e-14)
        if p["steps"] == 1:
            assert r["kind"] == "exact" and r["value"] == pytest.approx(en.sigma_one_step(p["q"], 1.0, DELTA), rel=1e-14)
        if p["q"] == 1.0:
            assert r["ratio"] == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="sampler must be poisson"):
        mod.compute_points([{**pts[0], "sampler": "wor"}], rel_tol=1e-2)


def test_a_minus_b_compute_points(scripts):
    _, mod = scripts
    block = {"fixed": {"delta": DELTA, "q_max": 0.9999, "n_q": 15},
             "grid": [{"c": c, "epsilon": {"start": c * DELTA, "stop": 4.0, "num": 6, "spacing": "log"}}
                      for c in (1, 3, 4)], "n_chunks": 1}
    pts = _points(block)
    rows = mod.compute_points(pts, n_sigma=2000)
    by_c = {}
    for p, r in zip(pts, rows):
        by_c.setdefault(p["c"], []).append(r)
        assert r["lower"] == r["grid"] and r["upper"] == r["value"]
        assert r["grid"] <= r["value"]
    assert max(r["value"] for r in by_c[4]) < 0  # Conjecture 6.3
    assert max(r["grid"] for r in by_c[3]) > 0  # fails for c = 3
    assert all(r["within_resolution"] for c in (3, 4) for r in by_c[c])
    assert all(r["value"] == math.inf and "sigma_star_zero" in r["flags"] for r in by_c[1])
    assert all(r["n_q_sigma_eff_increasing"] >= 1 for r in by_c[1])  # q = δ breaks Theorem 6.2's conclusion
    assert all(r["n_q_sigma_eff_increasing"] == 0 for c in (3, 4) for r in by_c[c])
    # identical to the library's direct calls
    eps = np.array([p["epsilon"] for p in pts if p["c"] == 4])
    qs = np.logspace(np.log10(4 * DELTA), np.log10(0.9999), 15)
    direct = en.a_minus_b_exact(eps, DELTA, qs)["max_a_minus_b"]
    np.testing.assert_allclose([r["value"] for p, r in zip(pts, rows) if p["c"] == 4], direct, rtol=1e-12)


# ---------------------------------------------------------------------------
# bad input: library and config
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("call,match", [
    (lambda: en.calibrate_sigma_pld(1.0, DELTA, q=1.5, steps=10), "q must be in"),
    (lambda: en.calibrate_sigma_pld(1.0, DELTA, q=0.1, steps=0), "steps must be"),
    (lambda: en.calibrate_sigma_pld(1.0, 2.0, q=0.1, steps=10), "delta must be in"),
    (lambda: en.sigma_curve(1.0, DELTA, [0.5, 0.1], 10), "q_values must be strictly increasing"),
    (lambda: en.sigma_curve(1.0, DELTA, [0.1, 1.5], 10), "q must be in"),
    (lambda: en.a_minus_b_table([0.1], DELTA, c=1e5, q_max=0.9999), "q bounds inverted"),
    (lambda: en.a_minus_b_table([0.1], DELTA, c=4, q_max=1.5), "q bounds inverted"),
    (lambda: en.hockey_stick_one_step(0.1, 1.0, [0.1], "add_remove"), "direction"),
])
def test_library_rejects_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("path,value,needle", [
    (("effective_noise", "grid", 0, "q"), {"start": 0.01, "stop": 1.5, "num": 3, "spacing": "log"},
     "instance['effective_noise']['grid'][0]['q']"),
    (("effective_noise", "grid", 0, "q"), {"start": 0.5, "stop": 0.01, "num": 3, "spacing": "log"},
     "grid axis 'q': start must be <= stop"),
    (("a_minus_b", "fixed", "q_max"), 1.5, "q_max"),
    (("a_minus_b", "grid", 0, "c"), 1.0e5, "q bounds inverted"),
    (("a_minus_b", "settings", "n_sigma"), 1, "n_sigma"),
])
def test_bad_config_rejected_naming_the_key(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)
