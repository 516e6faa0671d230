"""Pipeline wiring of Lebeda et al. §5, §7, App. B: the four computations' compute_point on the
smoke grid (values, checks, reproducibility), planted failures, and config-schema bounds."""

import copy
import dataclasses
import io
import math
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from dpsampling.papers.lebeda import directions as D
from dpsampling import grids


@pytest.fixture(scope="module")
def scripts(repo_root):
    sys.path.insert(0, str(repo_root / "scripts"))
    import add_remove_crossing
    import conjecture12
    import laplace_substitution
    import rr_counterexample

    return {"add_remove_crossing": add_remove_crossing, "conjecture12": conjecture12,
            "laplace_substitution": laplace_substitution, "rr_counterexample": rr_counterexample}


@pytest.fixture(scope="module")
def smoke_cfg(repo_root):
    return yaml.safe_load((repo_root / "config" / "smoke.yaml").read_text())


def run(scripts, smoke_cfg, name, points=None):
    """compute_point over the smoke grid (as run_chunk does), one DataFrame; settings as in the config."""
    block = smoke_cfg[name]
    rows = []
    for p in points if points is not None else grids.build(block):
        rows += [{**p, **r} for r in scripts[name].compute_point(p, **block["settings"])]
    return pd.DataFrame(rows)


def csv_bytes(df):
    buf = io.StringIO()
    df.to_csv(buf, index=False, float_format="%.10g")
    return buf.getvalue().encode()


@pytest.fixture(scope="module")
def crossing(scripts, smoke_cfg):
    return run(scripts, smoke_cfg, "add_remove_crossing")


# --------------------------------------------------------------------------- add_remove_crossing
def test_crossing_mc_within_its_band_of_the_pld_bounds_on_the_smoke_grid(crossing):
    mc = crossing[(crossing.quantity == "delta") & (crossing.method == "montecarlo")]
    assert len(mc) > 0 and (mc.mc_check == "ok").all()
    assert ((mc.value >= mc.pld_lower - mc.mc_half_width) & (mc.value <= mc.pld_upper + mc.mc_half_width)).all()
    pld = crossing[crossing.method == "pld"]
    for _, g in pld[pld.quantity == "delta"].groupby(["scale", "steps", "direction", "epsilon"]):
        assert g[g.kind == "lower"].value.iloc[0] <= g[g.kind == "upper"].value.iloc[0] + 1e-15


def test_crossing_interval_k2_and_none_for_k1(crossing):
    iv = crossing[(crossing.quantity == "add_above_remove") & (crossing.scale == 1.5)]
    k2 = iv[(iv.steps == 2) & (iv.method == "pld") & (iv.kind == "lower")]
    assert len(k2) == 1 and k2.eps_start.iloc[0] < 0.01 and 0.6 < k2.eps_end.iloc[0] < 0.7  # (0, 0.647)
    assert k2.value.iloc[0] > 0.025 and k2.confidence.iloc[0] == 1.0
    mc2 = iv[(iv.steps == 2) & (iv.method == "montecarlo") & (iv.kind == "lower")]
    assert len(mc2) == 1 and mc2.eps_end.iloc[0] > 0.4 and mc2.confidence.iloc[0] == pytest.approx(0.98)
    k1 = iv[(iv.steps == 1) & (iv.method == "pld") & (iv.kind == "lower")]
    assert len(k1) == 1 and math.isnan(k1.eps_start.iloc[0]) and k1.value.iloc[0] <= 1e-12  # remove dominates


def test_crossing_reproducible_byte_for_byte(scripts, smoke_cfg, crossing):
    p = [q for q in grids.build(smoke_cfg["add_remove_crossing"]) if q["steps"] == 2]
    again = run(scripts, smoke_cfg, "add_remove_crossing", p)
    assert csv_bytes(again) == csv_bytes(crossing[crossing.steps == 2].reset_index(drop=True))
    s = smoke_cfg["add_remove_crossing"]["settings"]
    a = D.add_remove_comparison("laplace", 1.5, 0.7, 2, mc_half_width=s["mc_half_width"], n_eps=20, mc_seed=3)
    b = D.add_remove_comparison("laplace", 1.5, 0.7, 2, mc_half_width=s["mc_half_width"], n_eps=20, mc_seed=3,
                                chunk_size=1000)
    assert np.array_equal(a.mc["add"].estimate, b.mc["add"].estimate)  # chunking does not change the result


def test_crossing_check_flags_outside_band_and_raises_far_outside(scripts, smoke_cfg, monkeypatch):
    real = D.add_remove_comparison
    p = [q for q in grids.build(smoke_cfg["add_remove_crossing"]) if q["steps"] == 1]

    def planted(shift):
        def f(*a, **kw):
            c = real(*a, **kw)
            return dataclasses.replace(c, mc_excess={d: c.mc_excess[d] + shift for d in c.mc_excess})
        return f

    monkeypatch.setattr(D, "add_remove_comparison", planted(1.5))
    df = run(scripts, smoke_cfg, "add_remove_crossing", p)
    mc = df[df.method == "montecarlo"].dropna(subset=["mc_check"])
    assert (mc.mc_check == "outside_band").all() and mc["flags"].str.contains("mc_outside_band").all()
    monkeypatch.setattr(D, "add_remove_comparison", planted(2.5))
    with pytest.raises(RuntimeError, match="2α"):
        run(scripts, smoke_cfg, "add_remove_crossing", p)


# --------------------------------------------------------------------------- rr_counterexample
def test_rr_exact_values_and_interval(scripts, smoke_cfg):
    df = run(scripts, smoke_cfg, "rr_counterexample")
    hs = df[(df.quantity == "hockey_stick") & (df.steps == 2)].set_index(["direction", "alpha"])["fraction"]
    assert hs.to_dict() == {("add", "4/3"): "11/48", ("remove", "4/3"): "1/6", ("add", "2"): "1/16",
                            ("remove", "2"): "1/8"}
    iv = df[(df.quantity == "add_above_remove") & (df.steps == 2)]
    assert len(iv) == 1 and iv.alpha_start.iloc[0] == "1" and iv.alpha_end.iloc[0] == "5/3"
    assert iv.eps_end.iloc[0] == pytest.approx(math.log(5 / 3), abs=1e-15) and iv.value.iloc[0] > 0
    k1 = df[(df.quantity == "add_above_remove") & (df.steps == 1)]
    assert len(k1) == 1 and k1["flags"].iloc[0] == "no_interval" and k1.value.iloc[0] <= 0
    cur = df[(df.quantity == "delta") & (df.steps == 2)]
    add = cur[cur.direction == "add"].value.to_numpy()
    rem = cur[cur.direction == "remove"].value.to_numpy()
    assert add[0] == rem[0] == pytest.approx(5 / 16)  # ε = 0: TV is symmetric


# --------------------------------------------------------------------------- conjecture12
def test_conjecture12_smoke_rows_and_verdict(scripts, smoke_cfg):
    df = run(scripts, smoke_cfg, "conjecture12")
    for _, g in df.groupby(["sigma", "q", "steps"]):
        v = g.set_index("kind")["value"]
        assert set(v.index) == {"estimate", "lower", "upper"}
        assert v["lower"] <= v["estimate"] + 1e-12 and v["estimate"] <= v["upper"] + 1e-12
    assert set(df.classification) <= {"remove dominates", "within numerical error"}
    vdf, md = scripts["conjecture12"].verdict(df)
    assert vdf.verdict.iloc[0] == "no counterexample" and vdf.n_points.iloc[0] == len(df) // 3
    assert "no counterexample" in md and "| 10 |" in md


def test_conjecture12_planted_counterexample_is_found(scripts, monkeypatch):
    real = D.direction_curves

    def swapped(*a, **kw):  # now "add" dominates: must be classified as a counterexample
        c = real(*a, **kw)
        return D.DirectionCurves(epsilon=c.epsilon, add_upper=c.remove_upper, add_lower=c.remove_lower,
                                 remove_upper=c.add_upper, remove_lower=c.add_lower,
                                 discretization=c.discretization, params=c.params)

    monkeypatch.setattr(D, "direction_curves", swapped)
    rows = scripts["conjecture12"].compute_point({"sigma": 0.5, "q": 0.5, "steps": 2}, n_eps=40, n_bins=2000)
    assert {r["classification"] for r in rows} == {"counterexample"}
    assert D.conjecture12_verdict([{"sigma": 0.5, "q": 0.5, "steps": 2, **rows[0]}])["verdict"] == "counterexample"


# --------------------------------------------------------------------------- laplace_substitution
def test_laplace_substitution_intervals_and_mc(scripts, smoke_cfg):
    df = run(scripts, smoke_cfg, "laplace_substitution")
    mc = df[df.method == "montecarlo"]
    assert len(mc) == 3 * smoke_cfg["laplace_substitution"]["settings"]["n_eps"] and (mc.mc_check == "ok").all()
    iv = df[df.quantity == "max_interval"].sort_values("eps_start")
    assert list(iv.pair) == ["QQ||PP", "PQ||QP", "PP||QQ"]
    ends = iv.eps_end.to_numpy()
    assert ends == pytest.approx([0.3048367588, 0.5189941328, 1.2402290139], abs=1e-8)
    assert iv.eps_start.iloc[0] == 0 and (iv.value > 0).all()
    ex = df[(df.kind == "exact") & (df.quantity == "hockey_stick")]
    assert (ex.quad_error < 1e-9).all()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("path,value,needle", [
    (("add_remove_crossing", "fixed", "mc_seed"), -1, "mc_seed"),
    (("add_remove_crossing", "fixed", "mechanism"), "gauss", "mechanism"),
    (("add_remove_crossing", "grid", 0, "scale"), 0, "scale"),
    (("add_remove_crossing", "grid", 0, "q"), 1.5, "q"),
    (("add_remove_crossing", "grid", 0, "steps"), 0, "steps"),
    (("conjecture12", "grid", 0, "steps"), [1, 2.5], "steps"),
    (("add_remove_crossing", "settings", "mc_half_width"), 1.0, "mc_half_width"),
    (("add_remove_crossing", "settings", "mc_failure_prob"), 0, "mc_failure_prob"),
    (("laplace_substitution", "grid", 0, "pair"), "PQ||PQ", "pair"),
    (("conjecture12", "settings", "n_bins"), 1, "n_bins"),
])
def test_schema_rejects_bad_values_naming_the_key(repo_root, smoke_cfg, path, value, needle):
    from snakemake.utils import validate

    cfg = copy.deepcopy(smoke_cfg)
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(Exception, match=rf"\['{needle}'\]"):
        validate(cfg, str(repo_root / "workflow" / "schemas" / "config.schema.yaml"), set_default=False)


def test_smoke_and_paper_configs_are_valid(repo_root, smoke_cfg):
    from snakemake.utils import validate

    schema = str(repo_root / "workflow" / "schemas" / "config.schema.yaml")
    validate(copy.deepcopy(smoke_cfg), schema, set_default=False)  # as workflow/rules/common.smk
    validate(yaml.safe_load((repo_root / "config" / "config.yaml").read_text()), schema, set_default=False)


@pytest.mark.parametrize("kwargs,needle", [
    ({"mc_samples": 1000, "mc_half_width": 0.01}, "exactly one"),
    ({}, "exactly one"),
    ({"mc_half_width": 1.5}, "mc_half_width"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 0.0}, "mc_failure_prob"),
    ({"mc_half_width": 0.01, "mc_failure_prob": 1.0}, "mc_failure_prob"),
    ({"mc_samples": 0}, "mc_samples must"),
    ({"mc_samples": 1000, "mc_seed": -1}, "mc_seed"),
    ({"mc_samples": 1000, "n_eps": 1}, "n_eps"),
])
def test_add_remove_comparison_bad_input(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        D.add_remove_comparison("laplace", 1.5, 0.7, 2, **kwargs)


def test_conjecture12_point_bad_input():
    with pytest.raises(ValueError, match="n_bins"):
        D.conjecture12_point(1.0, 0.1, 2, n_bins=1)
    with pytest.raises(ValueError, match="steps"):
        D.conjecture12_point(1.0, 0.1, 0)
    with pytest.raises(ValueError, match="q must be"):
        D.conjecture12_point(1.0, 0.0, 2)
