"""CLI for Chua et al.'s one-epoch samplers: `--sampler shuffle` (lower bound, E_C sets) and `--sampler deterministic`."""

import json
import subprocess
import sys

import pytest

from dpsampling import cli
from dpsampling.samplers import deterministic

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
    assert d["kind"] == "lower" and d["method"] == "E_C sets"
    assert d["upper"] == pytest.approx(10.99715, abs=5e-6)  # the interval's upper end: deterministic (Chua Thm 4.1)
    assert d["value"] == pytest.approx(10.99478, abs=5e-6) and d["lower"] == d["value"]
    assert d["accuracy"] == {"c_grid": "0:0.01:100 (10001 values)", "argmax_c": 4.25}


def test_shuffle_delta(capsys):
    # Chua §4.3: σ=0.4, T=1e4: δ_S(4) ≥ 0.226 (ours 0.22605)
    code, out, _ = run(capsys, "delta", "--sampler", "shuffle", "--sigma", "0.4", *ONE_EPOCH, "--epsilon", "4")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "lower" and d["value"] == pytest.approx(0.22605, abs=5e-6)


def test_shuffle_zero_bound_prints_valid_json(capsys):
    # far in the tail no C gives a positive difference: value 0, no maximiser (null, not NaN)
    code, out, _ = run(capsys, "delta", "--sampler", "shuffle", "--sigma", "0.5", "--q", "0.1", "--steps", "10",
                       "--epsilon", "500")
    d = strict_json(out)
    assert code == 0 and d["value"] == 0.0 and d["accuracy"]["argmax_c"] is None


def test_deterministic_is_exact(capsys):
    code, out, _ = run(capsys, "epsilon", "--sampler", "deterministic", "--sigma", "0.5", *ONE_EPOCH, "--delta", "1e-6")
    d = strict_json(out)
    assert code == 0 and d["kind"] == "exact" and d["method"] == "analytic"
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
    assert deterministic.deterministic_delta(1.0, d["value"]) == pytest.approx(1e-5, rel=1e-8)


def test_theorem_4_1_and_poisson_gap_through_the_cli(capsys):
    """shuffle lower ≤ deterministic (Thm 4.1), and > the Poisson upper bound at σ=0.5 (Chua Fig. 1)."""
    vals = {}
    for sampler in ("shuffle", "deterministic", "poisson"):
        code, out, _ = run(capsys, "epsilon", "--sampler", sampler, "--sigma", "0.5", *ONE_EPOCH, "--delta", "1e-6",
                           "--rel-tol", "0.1")
        assert code == 0
        vals[sampler] = strict_json(out)
    assert vals["shuffle"]["value"] <= vals["deterministic"]["value"]
    assert vals["poisson"]["kind"] == "upper" and vals["poisson"]["value"] < 2.0 < vals["shuffle"]["value"]


@pytest.mark.parametrize("argv,flag", [
    (["sigma", "--sampler", "shuffle", *ONE_EPOCH, "--epsilon", "1", "--delta", "1e-5"], "--bound"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", "--q", "1e-3", "--steps", "10000", "--delta", "1e-5"], "--q"),
    (["delta", "--sampler", "deterministic", "--sigma", "1", "--q", "0.5", "--steps", "10", "--epsilon", "1"], "--q"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", "--q", "2", "--steps", "10000", "--delta", "1e-5"], "--q"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "1", *ONE_EPOCH, "--delta", "1e-5", "--direction", "remove"],
     "--direction"),
    (["epsilon", "--sampler", "shuffle", "--sigma", "-1", *ONE_EPOCH, "--delta", "1e-5"], "--sigma"),
    (["epsilon", "--sampler", "deterministic", "--sigma", "0", *ONE_EPOCH, "--delta", "1e-5"], "--sigma"),
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
    assert d["kind"] == "lower" and d["value"] == pytest.approx(4.38e-7, rel=1e-3)  # Chua App. A, Fig. 7
