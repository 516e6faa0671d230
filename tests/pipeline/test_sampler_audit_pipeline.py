"""sampler_audit's verdict "Poisson accounting of a shuffled run is provably wrong": it needs the shuffle's lower
bound above Poisson's certified upper end, which is no proof where Poisson's δ is flagged below the reliable PLD
floor (the flag is the library's constant, dpsampling.engine.result.BELOW_FLOOR_FLAG)."""


import pandas as pd
import pytest

from dpsampling.engine.result import BELOW_FLOOR_FLAG


@pytest.fixture(scope="module")
def script(pipeline_script):
    return pipeline_script("sampler_audit")


def fake_audit(poisson_flags):
    def audit(*args, samplers, **kw):
        rows = {"poisson": (1.1, 0.9, 1.1), "wor": (2.1, 1.9, 2.1), "shuffle": (3.0, 1.5, 3.0),
                "deterministic": (3.0, 3.0, 3.0)}  # value: the safe (upper) end; shuffle's lower end 1.5 > 1.1
        return pd.DataFrame([{"sampler": s, "value": v, "kind": "interval", "method": "m", "lower": lo, "upper": up,
                              "lower_method": "a", "upper_method": "b", "upper_best_known": s == "shuffle",
                              "steps": 4, "total_steps": 8, "q": 0.25, "discretization": 1e-4, "rel_tol": 1e-3,
                              "est_rel_error": 0.0, "flags": poisson_flags if s == "poisson" else ""}
                             for s, (v, lo, up) in rows.items() if s in samplers])
    return audit


@pytest.mark.parametrize("flags,wrong", [("", True), (BELOW_FLOOR_FLAG, False), (f"other;{BELOW_FLOOR_FLAG}", False),
                                         ("other", True)])
def test_provably_wrong_unless_poisson_is_below_the_floor(script, monkeypatch, flags, wrong):
    monkeypatch.setattr(script, "_audit", fake_audit(flags))
    p = {"run": "t", "dataset_size": 100, "batch_size": 25, "sigma": 1.0, "delta": 1e-5, "epochs": 1}
    rows = script.compute_point(p)
    assert {r["poisson_provably_wrong_for_shuffle"] for r in rows} == {wrong}
