"""Zhu et al. 2022 (Figs 1, 3, 4) and Lebeda et al. 2024 §8 (Fig. 4) in the pipeline, and the φ-vs-PLD
cross-validation table: the chunk scripts on smoke parameters (values, not just shapes) and config
rejection."""

import math
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

P_FIG1 = math.e / (1 + math.e)


@pytest.fixture(scope="module")
def scripts(repo_root):
    sys.path.insert(0, str(repo_root / "scripts"))
    import cf_accountant_checks
    import cf_crossval
    import one_step_profiles
    import rdp_vs_profile
    import wor_substitution_bound

    yield dict(rdp_vs_profile=rdp_vs_profile, cf_accountant_checks=cf_accountant_checks,
               one_step_profiles=one_step_profiles, wor_substitution_bound=wor_substitution_bound,
               cf_crossval=cf_crossval)
    sys.path.remove(str(repo_root / "scripts"))


@pytest.fixture(scope="module")
def smoke(repo_root):
    return yaml.safe_load((repo_root / "config" / "smoke.yaml").read_text())


def _curves(rows):
    df = pd.DataFrame(rows)
    return {k: g.set_index("x")["value"] for k, g in df.groupby("method")}, df


def test_rdp_vs_profile_fig1(scripts, smoke):
    mod, st = scripts["rdp_vs_profile"], smoke["rdp_vs_profile"]["settings"]
    base = dict(sigma=1.0, p=P_FIG1)
    c, df = _curves(mod.compute_point(dict(base, panel="rdp", mechanism="gaussian"), **st))
    assert np.allclose(c["closed_form"].values, c["closed_form"].index / 2)  # α/(2σ²)
    c, df = _curves(mod.compute_point(dict(base, panel="profile", mechanism="gaussian"), **st))
    # φ accountant = Balle–Wang closed form; the RDP-implied profiles are (loose) upper bounds
    assert np.allclose(c["cf"], c["closed_form"], atol=1e-11)
    assert (c["rdp_conversion"] >= c["closed_form"] - 1e-6).all() and (c["rdp"] >= c["closed_form"]).all()
    assert {"value", "kind", "method", "discretization", "rel_tol", "est_rel_error", "flags"} <= set(df.columns)
    # the printed statements on the grid (both curves decrease): δ_GM(0.3) < 0.3 < δ_RR(0.4)
    rr, _ = _curves(mod.compute_point(dict(base, panel="profile", mechanism="randomized_response"), **st))
    gm = c["closed_form"]
    assert gm[np.isclose(gm.index, 0.3)].iloc[0] < 0.3 < rr["closed_form"][np.isclose(gm.index, 0.4)].iloc[0]
    assert np.allclose(rr["closed_form"], np.maximum(P_FIG1 - np.exp(rr["closed_form"].index) * (1 - P_FIG1), 0))
    t, _ = _curves(mod.compute_point(dict(base, panel="tradeoff", mechanism="gaussian"), **st))
    assert (t["rdp_conversion"] <= t["closed_form"] + 1e-9).all()
    assert (t["rdp_via_dp"] <= t["rdp_conversion"] + 1e-8).all()


def test_cf_accountant_checks_fig3(scripts, smoke):
    mod, st = scripts["cf_accountant_checks"], smoke["cf_accountant_checks"]["settings"]
    rows = pd.DataFrame(mod.compute_point(dict(panel="a", sigma=50.0, delta=1e-4, steps=100), **st)).set_index("method")
    err = json_err(rows.loc["cf"])
    assert abs(rows.loc["cf", "value"] - rows.loc["analytic", "value"]) <= err + 1e-12  # Exp. 1: exact match
    assert rows.loc["rdp", "value"] > rows.loc["cf", "value"]
    b = pd.DataFrame(mod.compute_point(dict(panel="b", sigma=5.0, p=0.52, epsilon=2.0, steps=20), **st))
    cf = b[b.method == "cf"].iloc[0]
    lo = b[(b.method == "pld") & (b.kind == "lower")]["value"].iloc[0]
    up = b[(b.method == "pld") & (b.kind == "upper")]["value"].iloc[0]
    assert lo - 1e-12 <= cf["value"] <= up + 1e-12 and b[b.method == "rdp"]["value"].iloc[0] > cf["value"]
    c = pd.DataFrame(mod.compute_point(dict(panel="c", sigma=2.0, q=0.01, delta=1e-5, steps=300,
                                            direction="add_remove"), **st))
    v = c[c.method == "cf"]["value"].iloc[0]
    lo = c[(c.method == "pld") & (c.kind == "lower")]["value"].iloc[0]
    up = c[(c.method == "pld") & (c.kind == "upper")]["value"].iloc[0]
    assert lo <= v <= up and (up - v) / up < 2e-2 and c[c.method == "rdp"]["value"].iloc[0] > up


def json_err(row):
    import json

    return json.loads(row["accuracy_other"])["err"]


def test_one_step_profiles_fig4(scripts, smoke):
    mod, st = scripts["one_step_profiles"], smoke["one_step_profiles"]["settings"]
    cur = {d: pd.DataFrame(mod.compute_point(dict(sigma=1.0, q=0.5, direction=d), **st)).set_index("x")["value"]
           for d in ("remove", "add", "add_remove")}
    e = cur["remove"].index.values
    assert (cur["remove"][e >= 0] >= cur["add"][e >= 0] - 1e-14).all()  # α ≥ 1: remove dominates
    assert (cur["add"][e < 0] >= cur["remove"][e < 0] - 1e-14).all()    # α < 1: add dominates
    assert np.allclose(cur["add_remove"], np.maximum(cur["remove"], cur["add"]))
    assert (cur["remove"][e > 0.05] > cur["add"][e > 0.05]).any()
    assert (cur["add"][e < -0.05] > cur["remove"][e < -0.05]).any()


def test_wor_substitution_bound_lebeda_fig4(scripts, smoke):
    mod, st = scripts["wor_substitution_bound"], smoke["wor_substitution_bound"]["settings"]
    base = dict(sigma=4.0, q=0.05, sensitivity=2.0)
    df = pd.DataFrame(mod.compute_point(dict(base, panel="composed", steps=100, dataset_size=20000), **st))
    v = {m: g.set_index("x")["value"] for m, g in df.groupby("method")}
    lo = df[df.method == "cf"].set_index("x")
    assert (v["pld_connect_dots"] >= lo["upper"]).all() and (v["pld_connect_dots"] > 1.2 * v["cf"]).all()
    assert (v["rdp"] >= v["pld_connect_dots"]).all()  # RDP for WOR + substitution is valid but loose
    one = {d: pd.DataFrame(mod.compute_point(dict(base, panel="one_step", direction=d), **st)).set_index("x")["value"]
           for d in ("remove", "add", "add_remove")}
    e = one["remove"].index.values
    split = np.where(e >= 0, one["remove"], one["add"])  # Theorem 14: the split at ε = 0 is the maximum
    assert np.allclose(one["add_remove"], split, atol=1e-14)


def test_cf_crossval_rows_and_markdown(scripts):
    mod = scripts["cf_crossval"]
    p = dict(source="Zhu Fig. 3(c)", sampler="poisson", sigma=2.0, q=0.01, steps=300, delta=1e-5,
             direction="add_remove")
    r = mod.compute_point(p, rel_tol=1e-2)
    assert r["cf_status"] == "ok" and r["agrees"] is True and r["within_bounds"] and r["within_reference"]
    assert r["pld_lower"] - r["err"] <= r["value"] <= r["pld_upper"] + r["err"] and r["err"] < 1e-6
    failed = {**p, **r, "sigma": 0.4, "value": math.nan, "cf_status": "failed_error_budget", "agrees": None}
    floor = {**p, **r, "agrees": None, "within_bounds": None}
    md = mod.markdown(pd.DataFrame([{**p, **r}, failed, floor]))
    assert "agrees with it at **1 of 1** (all agree)" in md and "failed: error budget" in md
    assert "at 1 settings" in md and "not compared: 1" in md


@pytest.mark.parametrize("path,value,needle", [
    (("rdp_vs_profile", "fixed", "p"), 1.5, "1.5"),
    (("cf_accountant_checks", "grid", 0, "panel"), "z", "'z'"),
    (("cf_crossval", "grid", 0, "sensitivity"), -2.0, "-2.0"),
])
def test_bad_config_rejected(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)
