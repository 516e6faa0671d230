"""truncation_cost (issue 30): the caps of a run, dp_accounting's value against the numbers the issue prints, the
script's checks (each must reject a row that breaks it, so none is true by construction), and the smoke run's CSV,
figure and table."""

import math

import pandas as pd
import pytest

COLUMNS = {"run", "cap_sd", "max_batch_size", "mean_batch_size", "sd_batch_size", "truncation_probability", "lower",
           "upper", "lower_method", "upper_method", "rel_width", "cpu_seconds", "dp_accounting_epsilon",
           "dp_accounting_cpu_seconds", "poisson_lower", "poisson_upper", "smallest_cap", "smallest_cap_epsilon",
           "smallest_cap_poisson_epsilon", "factor", "code_hash"}
MNIST = {"run": "mnist", "dataset_size": 60000, "batch_size": 256, "sigma": 1.1, "delta": 1e-5, "epochs": 60}


@pytest.fixture(scope="module")
def script(pipeline_script):
    return pipeline_script("truncation_cost")


def test_caps_run_from_the_mean_in_standard_deviations(script):
    """MNIST: mean 256, sd √(256 · (1 − 256/60000)) = 15.96583 (by hand), so 4 sd above the mean is 319.86 → 320."""
    assert script.cap_of(dict(MNIST, cap_sd=0)) == (256, 256.0, pytest.approx(15.96583, abs=1e-5))
    assert script.cap_of(dict(MNIST, cap_sd=2))[0] == 288
    assert script.cap_of(dict(MNIST, cap_sd=4))[0] == 320
    assert script.cap_of(dict(MNIST, batch_size=1, cap_sd=0))[0] == 1


@pytest.mark.parametrize("cap,printed", [(280, 5.96), (300, 3.46)])
def test_dp_accounting_value_is_the_one_the_issue_prints(script, cap, printed):
    """Issue 30's table (dp_accounting's truncated event, MNIST, 235 × 60 steps), printed to two decimals; at a
    discretisation of 1e-3 (pessimistic, a little above the 1e-4 value)."""
    eps = script.dp_accounting_epsilon(60000, 256 / 60000, cap, 1.1, 235 * 60, 1e-5, 1e-3)
    assert printed <= eps < printed + 0.01


def _row(**kw):
    return {"max_batch_size": 300, "lower": 2.4, "upper": 2.5, "dp_accounting_epsilon": 3.0, **kw}


def test_check_rejects_an_inverted_interval_and_an_upper_end_above_dp_accounting(script):
    script.check_rows([_row(), _row(upper=3.0 * 1.0009)], "run t")
    with pytest.raises(RuntimeError, match=r"^run t, cap 300: lower"):
        script.check_rows([_row(lower=2.6)], "run t")
    with pytest.raises(RuntimeError, match=r"^run t, cap 300: our upper end .* exceeds dp_accounting's value"):
        script.check_rows([_row(upper=3.0 * 1.0011)], "run t")


def test_check_rejects_a_largest_cap_interval_that_misses_poisson(script):
    """Only the largest cap of each run must overlap Poisson's interval; a smaller cap may lie above it."""
    df = pd.DataFrame([{"run": "t", "max_batch_size": 256, "lower": 5.0, "upper": 9.0},
                       {"run": "t", "max_batch_size": 320, "lower": 2.384, "upper": 2.386},
                       {"run": "u", "max_batch_size": 320, "lower": 2.384, "upper": 2.386}])
    df["poisson_lower"], df["poisson_upper"] = 2.3850, 2.3852
    script.check_largest_caps(df)
    for lo, up in [(2.3853, 2.39), (2.37, 2.3849)]:
        bad = df.copy()
        bad.loc[1, ["lower", "upper"]] = lo, up
        with pytest.raises(RuntimeError, match=r"^run t, cap 320 \(the largest\): our interval .* does not overlap"):
            script.check_largest_caps(bad)


# ---------------------------------------------------------------- the smoke run


@pytest.fixture(scope="module")
def smoke_csv(smoke_run):
    return pd.read_csv(smoke_run / "results" / "truncation_cost" / "truncation_cost.csv")


@pytest.mark.pipeline
def test_smoke_csv(smoke_csv):
    assert COLUMNS <= set(smoke_csv.columns)
    df = smoke_csv.sort_values("max_batch_size")
    assert list(df["max_batch_size"]) == [100, 119, 138]  # mean 100, sd √90 = 9.487: 0, 2 and 4 sd above
    assert (df["lower"] <= df["upper"]).all()
    assert (df["upper"] <= df["dp_accounting_epsilon"] * (1 + 1e-3)).all()
    assert df["upper"].is_monotonic_decreasing and df["truncation_probability"].is_monotonic_decreasing
    last = df.iloc[-1]
    assert last["lower"] <= last["poisson_upper"] and last["poisson_lower"] <= last["upper"]
    assert df["smallest_cap"].nunique() == 1
    cap = int(df["smallest_cap"].iloc[0])
    assert 100 < cap <= 138 and df["smallest_cap_epsilon"].iloc[0] <= 1.01 * df["smallest_cap_poisson_epsilon"].iloc[0]
    assert math.isclose(df["smallest_cap_poisson_epsilon"].iloc[0], df["poisson_upper"].iloc[0], rel_tol=1e-2)


@pytest.mark.pipeline
def test_smoke_figure_and_table(smoke_run, smoke_csv):
    figures = smoke_run / "figures"
    assert (figures / "truncation_cost.pdf").read_bytes()[:5] == b"%PDF-"
    assert (figures / "truncation_cost.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (figures / "truncation_cost.md").read_text()
    assert ("| run | N | mean batch | σ | δ | epochs | cap B | (B − mean)/sd | P[K > B] | ours | width | "
            "dp_accounting | Poisson |") in md
    assert md.count("| small | 1000 | 100 |") == 3  # three caps
    assert "| small | 100 | 9.49 | 0.01 |" in md  # the smallest-cap line: mean, sd, factor
    assert f"| {int(smoke_csv['smallest_cap'].iloc[0])} |" in md


@pytest.mark.parametrize("path,value,needle", [
    (("truncation_cost", "grid", 0, "cap_sd"), [0, -1], "cap_sd"),
    (("truncation_cost", "settings", "factor"), 0, "factor"),
    (("truncation_cost", "settings", "dp_accounting_discretization"), 0.5, "dp_accounting_discretization"),
])
def test_schema_rejects_a_bad_cap_factor_or_discretisation(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)
