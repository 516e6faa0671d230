"""The φ (characteristic-function) accountant behind the common interface and the CLI:
dpsampling.engine.accountant.{delta,epsilon}(method="cf") and `dpsampling epsilon|delta --method cf`."""

import json

import pytest

from dpsampling.engine import accountant as A
from dpsampling import cli
from dpsampling.engine.cf import CFAccuracyError


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_epsilon_cf_matches_converged_pld(capsys):
    # σ=0.8, q=1e-3, T=1e4, δ=1e-6 (Lebeda Table 1): converged PLD ε = 0.94720 (pessimistic
    # 0.947324 at discretisation 1e-4, 0.94720 at 1e-5)
    code, out, _ = run(capsys, "epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "10000",
                       "--delta", "1e-6", "--method", "cf")
    d = json.loads(out)
    assert code == 0 and d["kind"] == "estimate" and d["method"] == "cf"
    assert d["accuracy"]["err"] < 1e-6
    assert d["lower"] == pytest.approx(d["value"] - d["accuracy"]["err"], abs=1e-15)
    assert d["upper"] == pytest.approx(d["value"] + d["accuracy"]["err"], abs=1e-15)
    assert abs(d["value"] - 0.94720) < 1.5e-4 and d["value"] < 0.9473238639737555


def test_cli_delta_cf_wor_is_poisson_at_half_sigma(capsys):
    code, out, _ = run(capsys, "delta", "--sampler", "wor", "--sigma", "2", "--q", "0.01", "--steps", "100",
                       "--epsilon", "1", "--method", "cf")
    wor = json.loads(out)
    code2, out2, _ = run(capsys, "delta", "--sigma", "1", "--q", "0.01", "--steps", "100",
                         "--epsilon", "1", "--method", "cf")
    poi = json.loads(out2)
    assert code == code2 == 0 and wor["kind"] == "estimate"
    assert wor["value"] == pytest.approx(poi["value"], rel=1e-12)
    # relative accuracy: the budget is tightened to 1e-3·rel_tol·δ once δ is known
    assert wor["accuracy"]["err"] <= 1e-6 * wor["value"]
    # inside the PLD bracket (pessimistic upper, optimistic lower) plus the φ error
    pld = A.delta(1.0, sigma=1.0, q=0.01, total_steps=100, rel_tol=1e-2)
    assert pld.lower - wor["accuracy"]["err"] <= wor["value"] <= pld.upper + wor["accuracy"]["err"]


def test_cli_cf_budget_failure_exit_1_one_line(capsys):
    # WOR at σ=0.8 (= Poisson σ=0.4), q=1e-3: near-lattice privacy loss, φ cannot meet its error budget
    # (at T=100 the inversion would need ~1.6e8 nodes; at T=1e4, Lebeda Table 1, the tail cannot be certified:
    # the same CFAccuracyError after ~10 s of CPU, which tests/engine/cf/test_inversion.py::test_near_lattice_fails checks
    # in the library): an error saying so, never a number
    code, out, err = run(capsys, "epsilon", "--sampler", "wor", "--sigma", "0.8", "--q", "1e-3",
                         "--steps", "100", "--delta", "1e-6", "--method", "cf")
    assert code == 1 and out == ""
    assert "error budget" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv,flag,code", [
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "1e-5", "--method", "phi"], "--method", 2),
    (["sigma", "--epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--method", "cf"], "--method", 2),
    (["epsilon", "--sigma", "-1", "--q", "0.1", "--steps", "10", "--delta", "1e-5", "--method", "cf"], "--sigma", 2),
])
def test_cli_cf_bad_input(capsys, argv, flag, code):
    with pytest.raises(SystemExit) as e:
        raise SystemExit(cli.main(argv))
    err = capsys.readouterr().err
    assert e.value.code == code and flag in err and err.count("\n") == 1


def test_accountant_cf_result_and_directions():
    kw = dict(sigma=1.0, q=0.05, total_steps=200)
    both = A.delta(1.0, method="cf", **kw)
    add = A.delta(1.0, method="cf", direction="add", **kw)
    rem = A.delta(1.0, method="cf", direction="remove", **kw)
    assert both.kind == "estimate" and both.method == "cf" and both.flags == ()
    assert both.value == max(add.value, rem.value) and rem.value > add.value  # remove dominates, ε > 0
    assert both.lower <= both.value <= both.upper
    assert both.upper - both.value == pytest.approx(both.accuracy["err"], rel=1e-6)
    # ε(δ) inverts δ(ε)
    e = A.epsilon(both.value, method="cf", **kw)
    assert abs(e.value - 1.0) <= e.accuracy["err"] + 1e-9
    # q = 1: T Gaussians = one Gaussian with σ/√T, exactly (Balle–Wang closed form)
    ex = A.delta(0.5, sigma=10.0, q=1.0, total_steps=25, method="analytic")
    cf = A.delta(0.5, sigma=10.0, q=1.0, total_steps=25, method="cf")
    assert abs(cf.value - ex.value) <= cf.accuracy["err"] + 1e-15 and cf.accuracy["err"] <= 1e-6 * ex.value
    ee = A.epsilon(1e-5, sigma=10.0, q=1.0, total_steps=25, method="analytic")
    ec = A.epsilon(1e-5, sigma=10.0, q=1.0, total_steps=25, method="cf")
    assert abs(ec.value - ee.value) <= ec.accuracy["err"] + 1e-12


def test_accountant_cf_error_is_raised_not_returned():
    with pytest.raises(CFAccuracyError, match="failed its error budget"):
        A.delta(15.0, sigma=0.4, q=1e-3, total_steps=10_000, method="cf", direction="remove")


def test_accountant_cf_tiny_delta_relative_accuracy():
    # δ far below the PLD floor of ~1e-12 is fine for φ (contour through the saddle point)
    kw = dict(sigma=1.0, q=0.01, total_steps=100, method="cf")
    r3, r5 = A.delta(3.0, **kw), A.delta(5.0, **kw)
    assert r3.flags == r5.flags == ()
    assert 1e-13 < r3.value < 1e-12 and r3.accuracy["err"] <= 1e-5 * r3.value
    assert 1e-20 < r5.value < 1e-19 and r5.accuracy["err"] <= 1e-3 * r5.value and r5.lower > 0
    # the PLD cannot see this (δ < 1e-12 is flagged, not a bound); φ can, down to the rounding
    # floor of the output quadrature (~1e-25 absolute): at δ ≈ 2.7e-24 the relative accuracy
    # is ~6%, which is reported, with a flag, not hidden
    r6 = A.delta(6.0, **kw)
    assert r6.flags == ("rel_tol_not_met",) and r6.lower <= 2.66e-24 <= r6.upper
    assert r6.accuracy["est_rel_error"] < 0.1
