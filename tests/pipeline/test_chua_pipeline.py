"""Chua et al. computations of the pipeline (samplers_eps_vs_sigma, samplers_delta_vs_eps, deterministic_vs_poisson):
values of the scripts' compute_point on small points, the Theorem 4.1 / provably-wrong checks, the crossings of
Fig. 2, the figures, and bad C grids rejected before anything runs."""

import sys

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def scripts(repo_root):
    sys.path.insert(0, str(repo_root / "scripts"))
    import deterministic_vs_poisson as fig2
    import samplers_delta_vs_eps as dve
    import samplers_eps_vs_sigma as evs

    yield evs, dve, fig2
    sys.path.remove(str(repo_root / "scripts"))


def point(**kw):
    return {"direction": "add_remove", "point_id": "x", "chunk": 0, **kw}


def curve_rows(module, x, values, fixed, settings):
    """All four curves of one panel through the script's compute_point (what the chunks do)."""
    rows = []
    for v in values:
        for extra in ({"sampler": "deterministic"}, {"sampler": "shuffle"}, {"sampler": "poisson", "method": "pld"},
                      {"sampler": "poisson", "method": "rdp"}):
            p = point(**fixed, **extra, **{x: v})
            rows.append({**p, **module.compute_point(p, **settings)})
    return pd.DataFrame(rows)


@pytest.mark.regression_pin  # values from our own output; twin: mpmath (tests/samplers/test_shuffle.py::test_shuffle_epsilon_vs_mpmath_and_naive_loses_digits), Chua §1.1 printed 10.994 / 10.997
def test_eps_vs_sigma_points_paper_values(scripts):
    evs = scripts[0]
    s = evs.compute_point(point(delta=1e-6, steps=10000, sigma=0.5, sampler="shuffle"),
                          c_grid={"start": 0, "stop": 100, "step": 0.01})
    assert s["kind"] == "interval" and s["lower_method"] == "E_C sets"
    assert s["lower"] == pytest.approx(10.99478, abs=5e-6)  # Chua §1.1: > 10.994
    assert s["value"] == s["upper"] == pytest.approx(10.99715, abs=5e-6)  # the safe end: deterministic (Thm 4.1)
    assert s["argmax_c"] == pytest.approx(4.25) and s["c_grid"] == "0:0.01:100 (10001 values)"
    assert s["thm41_holds"] and s["thm41_deterministic"] == pytest.approx(10.99715, abs=5e-6)
    assert s["thm41_margin"] == pytest.approx(10.99715 - 10.99478, abs=1e-5)
    d = evs.compute_point(point(delta=1e-6, steps=10000, sigma=0.5, sampler="deterministic"))
    assert d["kind"] == "exact" and d["value"] == pytest.approx(10.99715, abs=5e-6)
    # App. Fig. 5: σ=0.7, δ=1e-5, T=1e3: ε_P ≤ 0.61 (PLD), refined to 1% (pipeline settings)
    p = evs.compute_point(point(delta=1e-5, steps=1000, sigma=0.7, sampler="poisson", method="pld"),
                          rel_tol=1e-2, finest_discretization=1e-5)
    assert p["kind"] == "upper" and p["method"] == "pld" and p["q"] == pytest.approx(1e-3)
    assert 0.6089 <= p["value"] <= 0.61 * 1.01 and p["lower"] <= p["value"]
    assert p["discretization"] > 0 and p["finest_discretization"] == 1e-5 and p["est_rel_error"] <= 1e-2
    r = evs.compute_point(point(delta=1e-5, steps=1000, sigma=0.7, sampler="poisson", method="rdp"))
    assert r["kind"] == "upper" and r["method"] == "rdp" and r["value"] == pytest.approx(1.6532, abs=1e-4)


def test_shuffle_c_grid_setting_changes_the_bound(scripts):
    evs = scripts[0]
    coarse = evs.compute_point(point(delta=1e-6, steps=10000, sigma=0.5, sampler="shuffle"),
                               c_grid={"start": 0, "stop": 20, "step": 0.5})
    assert coarse["c_grid"] == "0:0.5:20 (41 values)"
    assert coarse["lower"] < 10.99478  # fewer sets, weaker (still valid) lower bound
    with pytest.raises(ValueError, match="c_grid"):
        evs.compute_point(point(delta=1e-6, steps=100, sigma=0.5, sampler="shuffle"), c_grid=[1.0, 0.5])


def test_delta_vs_eps_checks_and_figure(scripts, tmp_path):
    evs, dve, _ = scripts
    df = curve_rows(dve, "epsilon", [0.0, 1.0, 2.0, 4.0], {"sigma": 0.8, "steps": 100},
                    {"discretization": 1e-3, "c_grid": {"start": 0, "stop": 20, "step": 0.05}})
    chk = evs.checks(df, ["sigma", "steps"], "epsilon")
    assert len(chk) == 4 and chk["thm41_holds"].all() and (chk["thm41_margin"] >= 0).all()
    # the shuffle lower bound is far above the Poisson upper bound: Poisson accounting provably wrong everywhere
    assert chk["provably_wrong"].all()
    assert (chk["region_start"] == 0.0).all() and (chk["region_end"] == 4.0).all()
    best = np.fmin(chk["poisson_pld_upper"], chk["poisson_rdp_upper"])
    np.testing.assert_allclose(chk["poisson_upper"], best)
    paths = [tmp_path / "f.pdf", tmp_path / "f.png"]
    dve.plot(df, paths, tmp_path / "checks.csv")
    assert paths[0].read_bytes()[:5] == b"%PDF-" and paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pd.read_csv(tmp_path / "checks.csv")["provably_wrong"].all()


def test_theorem_4_1_violation_raises_and_writes_nothing(scripts, tmp_path):
    evs = scripts[0]
    df = curve_rows(evs, "sigma", [0.6, 1.0], {"delta": 1e-5, "steps": 30}, {"rel_tol": 0.1})
    bad = df.copy()
    sel = bad["sampler"] == "shuffle"
    bad.loc[sel, "lower"] = bad.loc[sel, "lower"] * 1.5  # a lower bound above the exact deterministic curve
    out = tmp_path / "checks.csv"
    with pytest.raises(RuntimeError, match="Theorem 4.1"):
        evs.plot(bad, [tmp_path / "f.png"], out)
    assert not out.exists() and not (tmp_path / "f.png").exists()
    evs.plot(df, [tmp_path / "f.png"], out)  # the real values pass
    assert out.exists()


def test_fig2_crossings(scripts, tmp_path):
    fig2 = scripts[2]
    rows = []
    for eps in np.arange(0.0, 20.01, 0.5):
        for extra in ({"sampler": "deterministic"}, {"sampler": "poisson", "method": "pld"}):
            p = point(sigma=0.3, steps=10, epsilon=float(eps), **extra)
            rows.append({**p, **fig2.compute_point(p, discretization=1e-3)})
    df = pd.DataFrame(rows)
    cr = fig2.crossings(df).iloc[0]
    # Chua Fig. 2 / Conjecture 4.3: one crossing each, ε0 ≤ ε1, both ≈ 9.54, within the grid step 0.5
    assert cr["n_crossings_upper"] == 1 and cr["n_crossings_lower"] == 1
    assert 9.4 < cr["eps0"] <= cr["eps1"] < 9.7 and cr["resolution"] == pytest.approx(0.5)
    assert bool(cr["equal_within_resolution"]) and cr["discretization"] == 1e-3
    fig2.plot(df, [tmp_path / "f.png"], tmp_path / "crossings.csv")
    assert pd.read_csv(tmp_path / "crossings.csv")["eps0"].iloc[0] == pytest.approx(cr["eps0"])


@pytest.mark.parametrize("comp,key,value,needle", [
    ("samplers_eps_vs_sigma", "c_grid", [], "c_grid"),
    ("samplers_eps_vs_sigma", "c_grid", [0.0, 2.0, 1.0], "c_grid"),
    ("samplers_delta_vs_eps", "c_grid", {"start": 1.0, "stop": 0.0, "step": 0.1}, "c_grid"),
    ("samplers_delta_vs_eps", "c_grid", {"start": 0.0, "stop": 1.0, "step": 0.0}, "step"),
    ("samplers_eps_vs_sigma", "finest_discretization", 1.0e-7, "finest_discretization"),
])
def test_bad_settings_rejected_before_running(rejects_bad_config, comp, key, value, needle):
    # replace: the smoke config merges over config.yaml, so a list would not replace a mapping
    rejects_bad_config((comp, "settings", key), value, needle, replace=True)


def test_unknown_method_rejected(rejects_bad_config):
    rejects_bad_config(("samplers_delta_vs_eps", "grid", 1, "method"), "pdl", "method")
