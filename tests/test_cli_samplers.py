"""CLI for Chua et al.'s one-epoch samplers: `--sampler shuffle` (lower bound, E_C sets) and `--sampler deterministic`."""

import json
import math
import subprocess
import sys

import pytest

from dpsampling import cli
from dpsampling.papers import chua

ONE_EPOCH = ["--q", "1e-4", "--steps", "10000"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def strict_json(text):
    """json.loads that refuses NaN/Infinity (not valid JSON)."""
    def bad(c):
        raise ValueError(f"non-JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def test_shuffle_epsilon_is_a_lower_bound_from_ec_sets(capsys):
    # Chua §1.1: σ=0.5, δ=1e-6, T=1e4: ε_S > 10.994 (ours 10.99478 at C = 4.25)
    code, out, _ = run(capsys, "epsilon", "--sampler", "shuffle", "--sigma", "0.5", *ONE_EPOCH, "--delta", "1e-6")
    d = strict_json(out)
    assert code == 0 and d["sampler"] == "shuffle"
    assert d["kind"] == "interval" and d["method"] is None and d["lower_method"] == "E_C sets"
    assert d["upper"] == pytest.approx(10.99715, abs=5e-6)  # the interval's upper end: deterministic (Chua Thm 4.1)
    assert d["upper_best_known"] and d["upper_method"] == "deterministic (Chua Thm 4.1)"
    assert d["lower"] == pytest.approx(10.99478, abs=5e-6) and d["value"] == d["upper"]  # the safe end
    assert d["accuracy"] == {"c_grid": "0:0.01:100 (10001 values)", "argmax_c": 4.25}


def test_shuffle_delta(capsys):
    # Chua §4.3: σ=0.4, T=1e4: δ_S(4) ≥ 0.226 (ours 0.22605)
    code, out, _ = run(capsys, "delta", "--sampler", "shuffle", "--sigma", "0.4", *ONE_EPOCH, "--epsilon", "4")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "interval" and d["lower"] == pytest.approx(0.22605, abs=5e-6)
    assert d["value"] == d["upper"] == pytest.approx(chua.deterministic_delta(4.0, 0.4), rel=1e-12)


def test_shuffle_zero_bound_prints_valid_json(capsys):
    # far in the tail no C gives a positive difference: value 0, no maximiser (null, not NaN)
    code, out, _ = run(capsys, "delta", "--sampler", "shuffle", "--sigma", "0.5", "--q", "0.1", "--steps", "10",
                       "--epsilon", "500")
    d = strict_json(out)
    assert code == 0 and d["lower"] == 0.0 and d["accuracy"]["argmax_c"] is None and d["value"] == d["upper"]


def test_deterministic_is_exact(capsys):
    code, out, _ = run(capsys, "epsilon", "--sampler", "deterministic", "--sigma", "0.5", *ONE_EPOCH, "--delta", "1e-6")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "exact" and d["upper_method"] == d["lower_method"] == "analytic"
    assert d["value"] == pytest.approx(10.99715, abs=5e-6)  # Chua §1.1: ε_D ≈ 10.997
    code, out, _ = run(capsys, "delta", "--sampler", "deterministic", "--sigma", "0.4", *ONE_EPOCH, "--epsilon", "4")
    assert strict_json(out)["value"] == pytest.approx(0.24382, abs=5e-6)  # Chua §4.3: δ_D(4) ≈ 0.244
    # every direction gives the same (symmetric Gaussian pair)
    code, out, _ = run(capsys, "delta", "--sampler", "deterministic", "--sigma", "0.4", *ONE_EPOCH, "--epsilon", "4",
                       "--direction", "add")
    assert code == 0 and strict_json(out)["value"] == pytest.approx(0.24382, abs=5e-6)


def test_deterministic_sigma_exact_and_consistent(capsys):
    code, out, _ = run(capsys, "sigma", "--sampler", "deterministic", *ONE_EPOCH, "--epsilon", "1", "--delta", "1e-5")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "exact"
    assert d["value"] == pytest.approx(3.7306, rel=1e-4)
    assert chua.deterministic_delta(1.0, d["value"]) == pytest.approx(1e-5, rel=1e-8)


def test_theorem_4_1_and_poisson_gap_through_the_cli(capsys):
    """shuffle lower ≤ deterministic (Thm 4.1), and > the Poisson upper bound at σ=0.5 (Chua Fig. 1)."""
    vals = {}
    for sampler in ("shuffle", "deterministic", "poisson"):
        code, out, _ = run(capsys, "epsilon", "--sampler", sampler, "--sigma", "0.5", *ONE_EPOCH, "--delta", "1e-6",
                           "--rel-tol", "0.1")
        assert code == 0
        vals[sampler] = strict_json(out)
    assert vals["shuffle"]["lower"] <= vals["deterministic"]["value"] == vals["shuffle"]["value"]
    assert vals["poisson"]["kind"] == "interval" and vals["poisson"]["value"] < 2.0 < vals["shuffle"]["lower"]


@pytest.mark.parametrize("argv,flag", [
    (["sigma", "--sampler", "shuffle", *ONE_EPOCH, "--epsilon", "1", "--delta", "1e-5", "--bound", "exact"],
     "--bound"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", "--q", "1e-3", "--steps", "10000", "--delta", "1e-5"], "--q"),
    (["delta", "--sampler", "deterministic", "--sigma", "1", "--q", "0.5", "--steps", "10", "--epsilon", "1"], "--q"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", "--q", "2", "--steps", "10000", "--delta", "1e-5"], "--q"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", *ONE_EPOCH, "--delta", "1e-5", "--direction", "remove"],
     "--direction"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "-1", *ONE_EPOCH, "--delta", "1e-5"], "--sigma"),
    (["epsilon", "--sampler", "deterministic", "--sigma", "-1", *ONE_EPOCH, "--delta", "1e-5"], "--sigma"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", *ONE_EPOCH, "--delta", "1.5"], "--delta"),
    (["delta", "--sampler", "deterministic", "--sigma", "1", *ONE_EPOCH, "--epsilon", "-2"], "--epsilon"),
    (["sigma", "--sampler", "deterministic", *ONE_EPOCH, "--epsilon", "1", "--delta", "0"], "--delta"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", "--q", "0.1", "--steps", "0", "--delta", "1e-5"], "--steps"),
])
def test_bad_input_exit_2_one_line(capsys, argv, flag):
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert flag in err and err.count("\n") == 1 and err.startswith("dpsampling: error: ")


def test_console_module_shuffle():
    out = subprocess.run([sys.executable, "-m", "dpsampling.cli", "delta", "--sampler", "shuffle", "--sigma", "1.0",
                          "--q", "1e-3", "--steps", "1000", "--epsilon", "4"], capture_output=True, text=True,
                         check=True)
    d = strict_json(out.stdout)
    assert d["kind"] == "interval" and d["lower"] == pytest.approx(4.38e-7, rel=1e-3)  # Chua App. A, Fig. 7
    assert d["value"] == d["upper"] > d["lower"]


# ----------------------------------------------------------------------------- several epochs, balls_and_bins (issues 10, 11)

from dpsampling.samplers import _max_statistic as ms  # noqa: E402
from dpsampling.samplers import balls_and_bins as bnb  # noqa: E402


def test_epochs_default_one_prints_what_it_printed(capsys):
    """--epochs 1 is the default: same line with and without it, and --q optional for one-batch-per-step samplers."""
    for sampler in ("shuffle", "deterministic"):
        base = ["epsilon", "--sampler", sampler, "--sigma", "0.5", "--steps", "10000", "--delta", "1e-6"]
        outs = []
        for extra in ([], ["--epochs", "1"], ["--q", "1e-4"]):
            code, out, _ = run(capsys, *base, *extra)
            assert code == 0
            outs.append(out)
        assert outs[0] == outs[1] == outs[2]


def test_deterministic_and_poisson_epochs(capsys):
    code, out, _ = run(capsys, "delta", "--sampler", "deterministic", "--sigma", "1.1", "--steps", "235",
                       "--epochs", "60", "--epsilon", "2")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "exact"
    assert d["value"] == chua.deterministic_delta(2.0, 1.1 / 60 ** 0.5)  # the Gaussian at σ/√E
    code, a, _ = run(capsys, "epsilon", "--sigma", "1", "--q", "0.02", "--steps", "50", "--epochs", "4",
                     "--delta", "1e-6", "--rel-tol", "0.01")
    code2, b, _ = run(capsys, "epsilon", "--sigma", "1", "--q", "0.02", "--steps", "200", "--delta", "1e-6",
                      "--rel-tol", "0.01")
    assert code == code2 == 0 and a == b


def test_shuffle_epochs_interval_and_persistent(capsys):
    args = ["epsilon", "--sampler", "shuffle", "--sigma", "1.1", "--steps", "235", "--epochs", "4", "--delta", "1e-5"]
    code, out, _ = run(capsys, *args)
    dyn = strict_json(out)
    code2, out, _ = run(capsys, *args, "--shuffle-mode", "persistent")
    pers = strict_json(out)
    det = chua.deterministic_epsilon(1e-5, 1.1 / 2.0)
    assert code == code2 == 0 and dyn["kind"] == pers["kind"] == "interval"
    assert dyn["upper"] == pers["upper"] == dyn["value"] == pers["value"] == pytest.approx(det, rel=1e-12)
    assert pers["lower"] == chua.shuffle_epsilon_lower(1e-5, 1.1 / 2.0, 235)
    assert dyn["lower_method"] == ms.PLD_METHOD and 0 < dyn["lower"] < pers["lower"] <= pers["upper"]
    for bound in ("lower", "upper"):  # either bound: the interval, its value the sufficient (deterministic) σ
        code, out, _ = run(capsys, "sigma", "--sampler", "shuffle", "--steps", "235", "--epochs", "2", "--epsilon",
                           "2", "--delta", "1e-5", "--bound", bound)
        s = strict_json(out)
        assert code == 0 and s["kind"] == "interval" and s["lower"] < s["upper"] == s["value"]
        assert s["value"] == pytest.approx(chua.deterministic_sigma_result(2.0, 1e-5).value * 2 ** 0.5, rel=1e-9)


BNB = ["--sampler", "balls_and_bins", "--sigma", "1", "--steps", "10", "--epochs", "2"]


def test_balls_and_bins_certified_mc_and_max_statistic(capsys):
    code, out, _ = run(capsys, "epsilon", *BNB, "--delta", "1e-6", "--method", "pld")
    up = strict_json(out)
    assert code == 0 and up["kind"] == "interval" and up["method"] == "pld" and up["upper_method"] == "pld_accounting"
    assert up["value"] == bnb.epsilon(1e-6, sigma=1.0, steps=10, epochs=2, bound="upper", method="pld").value
    assert up["lower"] == bnb.epsilon(1e-6, sigma=1.0, steps=10, epochs=2, bound="lower", method="pld").value < up[
        "value"]
    code, out, _ = run(capsys, "epsilon", *BNB, "--delta", "1e-6", "--method", "max_statistic")
    mx = strict_json(out)
    assert code == 0 and mx["kind"] == "lower" and mx["value"] is None and mx["lower"] <= up["upper"]
    assert mx["lower"] == ms.balls_and_bins_epsilon_lower(1e-6, 1.0, 10, 2).value
    code, out, _ = run(capsys, "delta", *BNB, "--epsilon", "1", "--method", "montecarlo", "--mc-samples", "20000",
                       "--mc-seed", "4", "--mc-failure-prob", "0.05")
    mc = strict_json(out)
    ref = bnb.delta(1.0, sigma=1.0, steps=10, epochs=2, method="montecarlo", mc_samples=20_000, mc_seed=4, mc_failure_prob=0.05)
    assert code == 0 and mc["kind"] == "estimate" and (mc["value"], mc["lower"], mc["upper"]) == (
        ref.value, ref.lower, ref.upper)
    code, out, _ = run(capsys, "delta", *BNB, "--epsilon", "1")
    cert = strict_json(out)
    assert mc["lower"] <= cert["upper"] and cert["lower"] <= mc["upper"]
    code, out, _ = run(capsys, "epsilon", *BNB, "--delta", "1e-2", "--method", "montecarlo", "--mc-samples", "20000",
                       "--mc-seed", "4")
    me = strict_json(out)
    ref = bnb.epsilon(1e-2, sigma=1.0, steps=10, epochs=2, method="montecarlo", mc_samples=20_000, mc_seed=4)
    assert code == 0 and me["kind"] == "estimate" and (me["value"], me["lower"], me["upper"]) == (
        ref.value, ref.lower, ref.upper)
    code, out, _ = run(capsys, "epsilon", *BNB, "--delta", "1e-2")
    cert = strict_json(out)
    assert me["lower"] <= me["value"] <= me["upper"] and me["lower"] <= cert["upper"] and cert["lower"] <= me["upper"]


def test_monte_carlo_epsilon_with_too_few_samples_exits_1(capsys):
    code, out, err = run(capsys, "epsilon", *BNB, "--delta", "1e-6", "--method", "montecarlo", "--mc-samples", "1000")
    assert code == 1 and not out and err.count("\n") == 1
    assert "--mc-samples" in err and "n=" in err


def test_monte_carlo_that_cannot_reach_its_accuracy_exits_1(capsys):
    code, out, err = run(capsys, "delta", *BNB, "--epsilon", "0.5", "--method", "montecarlo", "--mc-half-width",
                         "1e-7", "--mc-samples", "1000")
    assert code == 1 and not out and err.count("\n") == 1
    assert "--mc-half-width" in err and "--mc-samples" in err


@pytest.mark.parametrize("argv,flag", [
    (["epsilon", *BNB[:-2], "--epochs", "0", "--delta", "1e-5"], "--epochs"),
    (["epsilon", *BNB[:-2], "--epochs", "1.5", "--delta", "1e-5"], "--epochs"),
    (["epsilon", "--sampler", "deterministic", "--sigma", "1", "--steps", "10", "--epochs", "-3", "--delta", "1e-5"],
     "--epochs"),
    (["delta", *BNB, "--epsilon", "1", "--method", "montecarlo", "--mc-samples", "0"], "--mc-samples"),
    (["delta", *BNB, "--epsilon", "1", "--method", "montecarlo", "--mc-failure-prob", "0"], "--mc-failure-prob"),
    (["delta", *BNB, "--epsilon", "1", "--method", "montecarlo", "--mc-failure-prob", "1"], "--mc-failure-prob"),
    (["delta", *BNB, "--epsilon", "1", "--mc-samples", "100"], "--mc-samples"),
    (["sigma", "--sampler", "balls_and_bins", "--steps", "10", "--epsilon", "1", "--delta", "1e-5", "--method",
      "montecarlo"], "--method"),
    (["epsilon", *BNB, "--delta", "1e-2", "--method", "montecarlo", "--mc-half-width", "0.01"], "--mc-half-width"),
    (["sigma", "--sampler", "balls_and_bins", "--steps", "10", "--epsilon", "1", "--delta", "1e-5", "--method",
      "max_statistic"], "--method"),
    (["delta", "--sampler", "poisson", "--sigma", "1", "--q", "0.1", "--steps", "10", "--epsilon", "1", "--method",
      "montecarlo"], "--method"),
    (["epsilon", *BNB, "--delta", "1e-5", "--method", "rdp"], "--method"),
    (["epsilon", "--sampler", "poisson", "--sigma", "1", "--steps", "10", "--delta", "1e-5"], "--q"),
    (["epsilon", *BNB, "--q", "0.5", "--delta", "1e-5"], "--q"),
    (["epsilon", *BNB, "--delta", "1e-5", "--method", "max_statistic", "--bound", "upper"], "--bound"),
    (["epsilon", "--sampler", "poisson", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "1e-5",
      "--accuracy", "fine"], "--accuracy"),
    (["epsilon", "--sampler", "deterministic", "--sigma", "1", "--steps", "10", "--delta", "1e-5", "--shuffle-mode",
      "persistent"], "--shuffle-mode"),
    (["epsilon", "--sampler", "balls_and_bins", "--sigma", "1", "--steps", "5000", "--epochs", "3", "--delta", "1e-5",
      "--method", "pld"], "--epochs"),
    (["sigma", "--sampler", "balls_and_bins", "--steps", "10", "--epsilon", "1", "--delta", "1e-5", "--bound", "lower"],
     "--bound"),
])
def test_new_flags_bad_input_exit_2_one_line(capsys, argv, flag):
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse: bad type (one line, exit 2)
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert flag in err and err.count("\n") == 1 and err.startswith("dpsampling: error: ")


def test_balls_and_bins_default_is_the_allocation_interval(capsys):
    code, out, _ = run(capsys, "epsilon", *BNB, "--delta", "1e-6")
    r = strict_json(out)
    ref = bnb.epsilon(1e-6, sigma=1.0, steps=10, epochs=2)
    assert code == 0 and r["kind"] == "interval" and r["method"] == "allocation"
    assert (r["lower_method"], r["upper_method"]) == ("allocation-merge", "allocation-spread")
    assert (r["value"], r["lower"], r["upper"]) == (ref.value, ref.lower, ref.upper)
    assert (r["upper"] - r["lower"]) / r["upper"] <= 1e-2


def test_a_certified_interval_that_misses_its_width_is_printed_with_its_flag(capsys, monkeypatch):
    """A certified interval wider than its accuracy setting asks is still an answer (issue 38): printed, exit 0,
    flagged, its width said; its ends still bracket PLD_accounting's certified range and the lower end is at most
    the exact deterministic value (mpmath)."""
    from dpsampling.references import allocation_range, gaussian_epsilon

    real = bnb._allocation_interval.__wrapped__

    def missed(*args):  # an interval twice as wide as its target allows (as if the refinement had run out)
        lo, up, info = real(*args)
        return lo - 2e-2 * up, up, {**info, "width_met": False}

    monkeypatch.setattr(bnb, "_allocation_interval", missed)
    code, out, err = run(capsys, "epsilon", *BNB, "--delta", "1e-6")
    r = strict_json(out)
    assert code == 0 and not err and r["kind"] == "interval" and "rel_width_not_reached" in r["flags"]
    assert r["accuracy"]["rel_width"] > 1e-2 and r["value"] == r["upper"]
    ref = allocation_range(1e-6, sigma=1.0, steps=10, epochs=2, abs_tol=0.01)
    assert r["lower"] <= ref.upper and ref.lower <= r["upper"]
    assert r["lower"] <= gaussian_epsilon(1e-6, 1.0, 2).lower


@pytest.mark.parametrize("sampler,extra", [("deterministic", []), ("poisson", ["--q", "0.01"]),
                                           ("shuffle", [])])
def test_sigma_zero_is_a_non_private_run_with_infinite_epsilon(capsys, sampler, extra):
    """σ = 0: the sums are released without noise, so a record in a batch is revealed and ε(δ) = ∞ for δ below the
    probability of that (1 for one batch per step; 1 − (1 − q)^T = 0.095 for Poisson here)."""
    code, out, _ = run(capsys, "epsilon", "--sampler", sampler, "--sigma", "0", "--steps", "10", *extra,
                       "--delta", "1e-5")
    res = json.loads(out)
    assert code == 0 and res["value"] == math.inf and res["kind"] == "exact"


# ----------------------------------------------------------------------------- the one result model in the JSON

from dpsampling import samplers as _samplers  # noqa: E402


def _flags(sampler, steps=10):
    batch = _samplers.get_spec(sampler).batch
    return (["--q", str(1 / steps)] if batch == "rate"
            else ["--q", "0.1", "--dataset-size", "100", "--max-batch-size", "12"] if batch == "capped" else [])


@pytest.mark.parametrize("sampler", _samplers.SAMPLERS)
def test_json_value_is_the_safe_end(capsys, sampler):
    """epsilon, delta and sigma of every sampler: the JSON carries value, kind, lower, upper, lower_method,
    upper_method, upper_best_known and relation, and value is the upper end (ε, δ: never below a lower end; σ: the
    sufficient one), the same as the library's answer."""
    spec = _samplers.get_spec(sampler)
    for command, target in (("epsilon", ["--delta", "1e-5"]), ("delta", ["--epsilon", "1"]),
                            ("sigma", ["--epsilon", "2", "--delta", "1e-5"])):
        sigma = [] if command == "sigma" else ["--sigma", "1"]
        code, out, err = run(capsys, command, "--sampler", sampler, *sigma, "--steps", "10", "--epochs", "2",
                             *_flags(sampler), *target)
        assert code == 0, err
        d = strict_json(out)
        for k in ("value", "kind", "lower", "upper", "lower_method", "upper_method", "upper_best_known", "relation",
                  "method"):
            assert k in d, (sampler, command, k)
        assert d["value"] == d["upper"] and d["upper_method"], (sampler, command)
        assert d["lower"] is None or d["lower"] <= d["value"], (sampler, command)
        assert d["kind"] in ("interval", "exact", "upper") and d["relation"] == spec.relation
        assert d["method"] == spec.default_method and d["upper_best_known"] == spec.upper_best_known
