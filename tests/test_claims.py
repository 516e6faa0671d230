"""The claims machinery, and that config/claims.yaml is well formed and able to fail.

The mutation test uses our recorded values from tests/data/claims_values.csv (not recomputed here:
that would take minutes).  That file is the `id`/`ours` columns of results/claims/claims.csv from a
smoke run of the pipeline (claims are evaluated at their own parameters, so the smoke run gives the
paper-grade values); regenerate it with `python3 tests/data/update_claims_values.py results/claims/claims.csv`
after a smoke run when a claim or the library changes.  The live check is the smoke pipeline's claims
table (tests/pipeline/test_pipeline.py::test_claims_table_complete_and_as_expected).
"""

import math

import pandas as pd
import pytest
import snakemake_fork
import yaml

from dpsampling import claims

MUTATION = 0.03  # "a few percent": every reproduced numeric claim must flip at ours × (1 ± 3%)
# Claims whose printed value is 0 (an identity, 'exactly matches'): a relative perturbation of a
# ~1e-10 residual cannot flip them; for these the test moves ours to just above the range's upper end.
ZERO_PRINTED = {"raisa_lemma61", "zhu_exp1_matches_analytic_gaussian"}


def claim(**kw):
    c = {"id": "x", "paper": "p", "where": "w", "quantity": "q", "printed": 0.277, "relation": "≈",
         "accept": [0.2765, 0.2775], "range_reason": "3 decimals",
         "evaluate": {"call": "dpsampling.engine.gaussian.epsilon", "kwargs": {"delta": 0.3, "sigma": 1.0}}}
    c.update(kw)
    return c


@pytest.fixture(scope="module")
def all_claims(repo_root):
    return yaml.safe_load((repo_root / "config" / "claims.yaml").read_text())["claims"]


@pytest.fixture(scope="module")
def recorded(repo_root):
    df = pd.read_csv(repo_root / "tests" / "data" / "claims_values.csv", comment="#")
    return dict(zip(df["id"], df["ours"]))


def as_value(text):
    """The recorded CSV value back into a Python value (bools are written as True/False)."""
    if isinstance(text, str) and text in ("True", "False"):
        return text == "True"
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def test_two_sided_acceptance():
    c = claim()
    assert claims.holds(c, 0.2766) and claims.holds(c, 0.2765) and claims.holds(c, 0.2775)
    for bad in (0.0, 0.2764, 0.2776, math.inf, -math.inf, math.nan, True, "x"):
        assert not claims.holds(c, bad)
    one_sided = claim(relation="≤", printed=1.96, accept=[1.95, 1.96])  # an accountant returning 0 fails
    assert claims.holds(one_sided, 1.953) and not claims.holds(one_sided, 0.0) and not claims.holds(one_sided, 1.97)
    with_expect = claim(relation="≥", printed=0.004, accept=[0.0035, 0.005],
                        expect={"value": 0.0043318, "rel": 1e-6, "source": "ours"})
    assert claims.holds(with_expect, 0.0043318) and not claims.holds(with_expect, 0.0045)
    exact = claim(relation="=", printed=True, accept=None)
    del exact["accept"], exact["range_reason"]
    assert claims.holds(exact, True) and not claims.holds(exact, False)


def test_evaluate_returns_status_and_value():
    row = claims.evaluate(claim())  # φ/closed-form Gaussian ε at δ = 0.3: 0.27662 (Zhu Fig. 1)
    assert row["status"] == "reproduced" and row["ours"] == pytest.approx(0.2766, abs=1e-4)
    assert (row["accept_lo"], row["accept_hi"]) == (0.2765, 0.2775)
    assert claims.evaluate(claim(accept=[0.28, 0.29]))["status"] == "differs"
    assert claims.evaluate(claim(), ours=0.2)["status"] == "differs"


@pytest.mark.parametrize("patch,msg", [
    ({"relation": "<"}, "relation"), ({"accept": None}, "accept"), ({"accept": [2, 1]}, "accept"),
    ({"accept": [0, math.inf]}, "accept"), ({"range_reason": ""}, "range_reason"), ({"tolerance": 0.1}, "tolerance"),
    ({"expect": {"value": 5.0, "rel": 0.1, "source": "s"}}, "expect"), ({"expect": {"value": 0.277}}, "expect"),
    ({"evaluate": {"call": "os.system"}}, "dpsampling"), ({"expected": "maybe"}, "expected"),
    ({"relation": "=", "printed": True}, "accept"),
])
def test_malformed_claims_rejected(patch, msg):
    with pytest.raises(ValueError, match=msg):
        claims.validate(claim(**patch))


def test_claims_file_is_valid_and_ids_unique(repo_root, all_claims):
    from snakemake.utils import validate

    validate(yaml.safe_load((repo_root / "config" / "claims.yaml").read_text()),
             str(repo_root / "workflow" / "schemas" / "claims.schema.yaml"))
    ids = [c["id"] for c in all_claims]
    assert len(ids) == len(set(ids))
    for c in all_claims:
        claims.validate(c)
        claims.resolve(c["evaluate"]["call"])  # importable


def test_every_numeric_claim_is_two_sided(all_claims):
    numeric = [c for c in all_claims if c["relation"] != "="]
    assert numeric
    for c in numeric:
        lo, hi = c["accept"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi and c["range_reason"].strip(), c["id"]
    # one-sided relations (the paper states an inequality) never stand alone: the range is two-sided and,
    # where the paper's digits leave it wider than the mutation step, an expected value pins ours
    for c in numeric:
        lo, hi = c["accept"]
        if c["id"] not in ZERO_PRINTED and c.get("expected", "reproduced") == "reproduced" and "expect" not in c:
            assert hi - lo < 2 * MUTATION * max(abs(lo), abs(hi)), c["id"]


def test_recorded_values_reproduce_the_expected_statuses(all_claims, recorded):
    assert set(recorded) == {c["id"] for c in all_claims}, "tests/data/claims_values.csv is out of date"
    for c in all_claims:
        row = claims.evaluate(c, ours=as_value(recorded[c["id"]]))
        assert row["status"] == c.get("expected", "reproduced"), (c["id"], recorded[c["id"]])


def test_perturbing_our_value_flips_every_reproduced_numeric_claim(all_claims, recorded):
    """No claim passes trivially: ours × (1 ± 3%) must make every reproduced numeric claim differ."""
    checked = 0
    for c in all_claims:
        if c["relation"] == "=" or c.get("expected", "reproduced") != "reproduced":
            continue
        ours = float(recorded[c["id"]])
        if c["id"] in ZERO_PRINTED:
            assert c["printed"] == 0 and c["accept"][0] == 0
            moved = [c["accept"][1] * (1 + MUTATION), -c["accept"][1] * MUTATION]
        else:
            moved = [ours * (1 - MUTATION), ours * (1 + MUTATION)]
        for v in moved:
            assert claims.evaluate(c, ours=v)["status"] == "differs", (c["id"], ours, v)
        checked += 1
    assert checked >= 45


def test_differing_claims_say_why(all_claims):
    for c in all_claims:
        if c.get("expected") == "differs":
            assert c.get("note", "").strip(), c["id"]


@pytest.mark.parametrize("edit,needle", [
    (lambda c: c.pop("accept"), "'accept' is a required property"),
    (lambda c: c.update(accept=[1, "x"]), "'x' is not of type 'number'"),
    (lambda c: c.update(relation="=", printed=True), "should not be valid"),
])
def test_schema_rejects_bad_entries(repo_root, all_claims, edit, needle):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    bad = [dict(c) for c in all_claims]
    edit(next(c for c in bad if c["relation"] == "≈"))
    with pytest.raises(WorkflowError, match=needle):
        validate({"claims": bad}, str(repo_root / "workflow" / "schemas" / "claims.schema.yaml"))


@pytest.mark.parametrize("edit,needle", [(lambda c: c.update(range_reasn="typo"), "range_reasn")])
def test_bad_claims_entry_stops_the_dry_run(repo_root, tmp_path, copy_workflow, edit, needle):
    work = copy_workflow(repo_root, tmp_path)
    data = yaml.safe_load((work / "config" / "claims.yaml").read_text())
    numeric = next(c for c in data["claims"] if c["relation"] == "≈")
    edit(numeric)
    (work / "config" / "claims.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    out = snakemake_fork.run(["-n", "--cores", "1", "--configfile", "config/smoke.yaml"], cwd=work)
    assert out.returncode != 0
    assert needle in out.stdout + out.stderr
    assert not (work / "results").exists()
