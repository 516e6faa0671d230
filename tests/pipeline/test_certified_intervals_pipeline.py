"""certified_intervals (issue 23): the smoke CSV's columns, every checked row agreeing with its independent reference,
the figure and table; and the script's check, which must reject an interval shifted by 1 % (so it is not true by
construction)."""


import pandas as pd
import pytest

COLUMNS = {"run", "epochs", "sampler", "value", "kind", "method", "lower", "upper", "lower_method", "upper_method",
           "rel_width", "cpu_seconds", "reference_method", "reference_check", "reference_lower", "reference_upper",
           "contains_reference", "reference_note", "reference_cpu_seconds", "code_hash"}
#: a point where every kind of reference is cheap (the smoke grid's first point) and the settings that use them all
POINT = {"run": "t", "dataset_size": 200, "batch_size": 50, "sigma": 1.5, "delta": 1e-5, "epochs": 1}
SETTINGS = {"reference_max_pld_points": 300_000, "allocation_reference_max_steps": 4}


@pytest.fixture(scope="module")
def script(pipeline_script):
    return pipeline_script("certified_intervals")


@pytest.fixture(scope="module")
def rows(script):
    return script.compute_point(dict(POINT), **SETTINGS)


@pytest.fixture(scope="module")
def rows_two_epochs(script):
    """The same run over two epochs: no cheap shuffle reference, balls-and-bins beyond PLD_accounting's reach."""
    return {r["sampler"]: r for r in script.compute_point(dict(POINT, epochs=2), **SETTINGS)}


def test_point_has_every_reference_kind_and_passes(script, rows):
    by = {r["sampler"]: r for r in rows}
    assert set(by) == {"poisson", "wor", "balls_and_bins", "shuffle", "deterministic"}
    assert by["deterministic"]["reference_check"] == "contains" and "mpmath" in by["deterministic"]["reference_method"]
    assert by["poisson"]["reference_method"].startswith("dp_accounting PLD pair")
    assert by["wor"]["reference_method"] == "φ accountant" and "reference_max_pld_points" in by["wor"]["reference_note"]
    assert by["balls_and_bins"]["reference_method"].startswith("PLD_accounting")
    assert by["shuffle"]["reference_check"] == "equals lower end"
    assert all(r["contains_reference"] is True for r in rows)
    for r in rows:
        assert r["lower_method"] and r["upper_method"] and r["cpu_seconds"] >= 0
        assert r["rel_width"] == pytest.approx((r["upper"] - r["lower"]) / r["upper"])
    script.check_rows(rows, "test")


@pytest.mark.parametrize("factor", [1.01, 0.99])
@pytest.mark.parametrize("sampler", ["poisson", "wor", "balls_and_bins", "shuffle", "deterministic"])
def test_check_rejects_an_interval_shifted_by_one_percent(script, rows, sampler, factor):
    shifted = [dict(r, lower=r["lower"] * factor, upper=r["upper"] * factor) if r["sampler"] == sampler else r
               for r in rows]
    with pytest.raises(RuntimeError, match=rf"^{sampler} at test: the interval .* does not"):
        script.check_rows(shifted, "test")


def test_check_rejects_an_inverted_bracket_and_a_shuffle_lower_end_above_deterministic(script, rows):
    by = {r["sampler"]: r for r in rows}
    with pytest.raises(RuntimeError, match="poisson at test: lower"):
        script.check_rows([dict(by["poisson"], lower=by["poisson"]["upper"] * 1.001)], "test")
    bad = [dict(by["shuffle"], lower=by["deterministic"]["value"] * 1.01), by["deterministic"]]
    with pytest.raises(RuntimeError, match="Thm 4.1"):
        script.check_rows(bad, "test")


def test_a_row_without_reference_says_why(rows_two_epochs):
    r = rows_two_epochs["shuffle"]
    assert r["reference_check"] == "none" and r["contains_reference"] is None
    assert "no cheap independent" in r["reference_note"]


def test_balls_and_bins_beyond_peer_reach_is_checked_on_a_finer_grid(rows_two_epochs):
    """Beyond allocation_reference_max_steps PLD_accounting does not finish: the reference is the allocation
    accountant at accuracy "fine", the note says why, and it is a real check (agrees is recomputed)."""
    r = rows_two_epochs["balls_and_bins"]
    assert r["reference_method"].startswith("allocation accountant, accuracy fine")
    assert r["reference_check"] == "overlaps" and r["contains_reference"] is True
    assert "Monte Carlo needs" in r["reference_note"] and "finer grid" in r["reference_note"]
    assert r["reference_upper"] - r["reference_lower"] < 0.5 * (r["upper"] - r["lower"])


def test_value_text_rounds_outward_as_the_audit_prints(script):
    """The table's intervals are the audit's text (dpsampling.engine.result.interval_text): rounded outward, so the printed
    interval contains the certified one, with the digits that show its width."""
    cases = [((2.385073733, 2.385210788), "[2.38507, 2.38522]"),  # width 5.7e-5: 6 digits
             ((2.3851215361, 2.3851215898), "[2.3851215, 2.3851216]"),
             ((10.82311965, 54.04581807), "[10.82, 54.05]")]
    for (lo, up), text in cases:
        assert script.value_text(lo, up) == text
        a, b = (float(x) for x in text.strip("[]").split(", "))
        assert a <= lo and up <= b
    assert script.value_text(4.25, 4.25) == "4.25000 (exact)"


# ---------------------------------------------------------------- the smoke run


@pytest.fixture(scope="module")
def smoke_csv(smoke_run):
    return pd.read_csv(smoke_run / "results" / "certified_intervals" / "certified_intervals.csv")


@pytest.mark.pipeline
def test_smoke_csv_columns_and_every_checked_row_agrees(smoke_csv):
    assert COLUMNS <= set(smoke_csv.columns)
    assert set(smoke_csv["sampler"]) == {"poisson", "wor", "balls_and_bins", "shuffle", "deterministic"}
    checked = smoke_csv[smoke_csv["reference_check"] != "none"]
    assert len(checked) >= 8 and checked["contains_reference"].astype(str).eq("True").all()
    unchecked = smoke_csv[smoke_csv["reference_check"] == "none"]
    assert unchecked["contains_reference"].isna().all() and unchecked["reference_note"].str.len().gt(0).all()
    assert (smoke_csv["lower"] <= smoke_csv["upper"]).all()


@pytest.mark.pipeline
def test_smoke_figure_and_table(smoke_run):
    figures = smoke_run / "figures"
    assert (figures / "certified_intervals.pdf").read_bytes()[:5] == b"%PDF-"
    assert (figures / "certified_intervals.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (figures / "certified_intervals.md").read_text()
    assert "| run | N | B | σ | δ | epochs | poisson | wor | shuffle | deterministic | balls_and_bins |" in md
    assert md.count("✓") >= 8 and "none" in md and "✗" not in md
