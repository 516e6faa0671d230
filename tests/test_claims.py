"""The claims machinery, and that config/claims.yaml is well formed."""

import pytest
import yaml

from dpsampling import claims


def test_relations():
    assert claims.holds(1.17, 1.19, "≤", 0.02)
    assert not claims.holds(1.22, 1.19, "≤", 0.02)
    assert claims.holds(10.995, 10.994, "≥", 0)
    assert not claims.holds(10.99, 10.994, "≥", 0.001)
    assert claims.holds(0.2771, 0.277, "≈", 5e-4)
    assert not claims.holds(0.28, 0.277, "≈", 1e-3, "rel")
    assert claims.holds(True, True, "=", 0) and not claims.holds(False, True, "=", 0)


def test_evaluate_returns_status_and_value():
    c = {"id": "x", "paper": "p", "where": "w", "quantity": "q", "printed": 0.277, "relation": "≈",
         "tolerance": 5e-4, "evaluate": {"call": "dpsampling.engine.gaussian.epsilon", "kwargs": {"delta_target": 0.3, "sigma": 1.0}}}
    row = claims.evaluate(c)
    assert row["status"] == "reproduced" and row["ours"] == pytest.approx(0.2766, abs=1e-4)
    bad = {**c, "printed": 0.3}
    assert claims.evaluate(bad)["status"] == "differs"


@pytest.mark.parametrize("patch,msg", [
    ({"relation": "<"}, "relation"), ({"tolerance": -1}, "tolerance"), ({"evaluate": {"call": "os.system"}}, "dpsampling"),
    ({"expected": "maybe"}, "expected"),
])
def test_malformed_claims_rejected(patch, msg):
    c = {"id": "x", "paper": "p", "where": "w", "quantity": "q", "printed": 1, "relation": "≈", "tolerance": 0,
         "evaluate": {"call": "dpsampling.engine.gaussian.epsilon"}}
    with pytest.raises(ValueError, match=msg):
        claims.validate({**c, **patch})


def test_claims_file_is_valid_and_ids_unique(repo_root):
    data = yaml.safe_load((repo_root / "config" / "claims.yaml").read_text())["claims"]
    ids = [c["id"] for c in data]
    assert len(ids) == len(set(ids))
    for c in data:
        claims.validate(c)
        claims.resolve(c["evaluate"]["call"])  # importable
