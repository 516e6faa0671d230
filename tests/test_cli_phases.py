"""`dpsampling epsilon|delta|sigma --phases FILE` / `--phase` (dpsampling/cli_phases.py): the Python API's answer,
printed as JSON with the phases listed or as text (parsed back here: every end on its side, every phase as given);
flags of a single run refused; a phase's error names its row."""

import json
import re

import pytest

from dpsampling import cli, phases

Q = 256 / 60000
CSV = f"sampler,sigma,q,steps,epochs\npoisson,1.1,{Q!r},1000,1\npoisson,0.9,{Q!r},500,2\n"
RUN = [phases.Phase("poisson", 1.1, Q, 1000, 1), phases.Phase("poisson", 0.9, Q, 500, 2)]


def run(capsys, *argv):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:  # argparse
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def csv_file(tmp_path):
    f = tmp_path / "run.csv"
    f.write_text(CSV)
    return f


def _parse_text(out):
    """(symbol, lower, upper, relation, [(sampler, σ text, q, steps, epochs)]) read back from --text."""
    lines = out.strip().splitlines()
    relation = re.search(r"under (\S+):$", lines[0]).group(1)
    m = re.match(r"\s+(\S+) = \[(\S+), (\S+)\]", lines[1])
    rows = []
    for line in lines[3:]:
        i, sampler, sigma, q, steps, _, epochs = line.split()
        rows.append((int(i), sampler, sigma, float(q), int(steps), int(epochs)))
    return m.group(1), float(m.group(2)), float(m.group(3)), relation, rows


def test_epsilon_file_is_the_apis_answer_in_json_and_text(capsys, csv_file):
    api = phases.epsilon(RUN, 1e-5)
    code, out, err = run(capsys, "epsilon", "--phases", csv_file, "--delta", "1e-5")
    d = json.loads(out)
    assert code == 0 and not err
    assert (d["value"], d["lower"], d["upper"], d["kind"], d["relation"]) == (api.value, api.lower, api.upper,
                                                                               api.kind, "add_remove")
    assert [phases.Phase(**p) for p in d["phases"]] == RUN
    code, out, _ = run(capsys, "epsilon", "--phases", csv_file, "--delta", "1e-5", "--text")
    symbol, lo, up, relation, rows = _parse_text(out)
    assert code == 0 and symbol == "ε" and relation == "add/remove"
    assert lo <= api.lower and up >= api.upper and (up - lo) <= 2 * (api.upper - api.lower) + 1e-3 * api.upper
    assert [(s, float(sig), q, st, e) for _, s, sig, q, st, e in rows] == [(p.sampler, p.sigma, p.q, p.steps, p.epochs)
                                                                           for p in RUN]


def test_repeated_phase_flags_are_the_file(capsys, csv_file):
    flags = ["--phase", f"sampler=poisson,sigma=1.1,q={Q!r},steps=1000",
             "--phase", f"sampler=poisson,sigma=0.9,q={Q!r},steps=500,epochs=2"]
    a = json.loads(run(capsys, "delta", *flags, "--epsilon", "2")[1])
    b = json.loads(run(capsys, "delta", "--phases", csv_file, "--epsilon", "2")[1])
    assert a == b and a["value"] == phases.delta(RUN, 2.0).value


def test_sigma_text_lists_each_phases_sufficient_sigma(capsys, csv_file):
    api = phases.sigma(RUN, 2.0, 1e-5)
    code, out, _ = run(capsys, "sigma", "--phases", csv_file, "--epsilon", "2", "--delta", "1e-5", "--text")
    symbol, lo, up, relation, rows = _parse_text(out)
    assert code == 0 and symbol == "c" and "multiplier" in out.splitlines()[0]
    assert lo <= api.lower < api.upper <= up
    for (_, _, sigma, *_), s in zip(rows, api.accuracy["sigmas"]):
        assert s <= float(sigma) <= s * (1 + 1e-3)  # rounded up: still sufficient
    d = json.loads(run(capsys, "sigma", "--phases", csv_file, "--epsilon", "2", "--delta", "1e-5", "--scale", "all")[1])
    assert d["scale"] == "all" and d["value"] == api.value and d["accuracy"]["sigmas"] == api.accuracy["sigmas"]


def test_single_run_text_is_its_json(capsys):
    argv = ["epsilon", "--sampler", "wor", "--sigma", "1.1", "--q", Q, "--steps", 235, "--epochs", 2, "--delta", 1e-5]
    d = json.loads(run(capsys, *argv)[1])
    symbol, lo, up, relation, rows = _parse_text(run(capsys, *argv, "--text")[1])
    assert relation == "add/remove" and d["relation"] == "add_remove"  # WOR's own relation (Lebeda et al. Prop. 9)
    assert lo <= d["lower"] and up >= d["upper"] and rows == [(0, "wor", "1.1", Q, 235, 2)]


@pytest.mark.parametrize("extra,flag", [
    (["--sigma", "1.1"], "--sigma"), (["--q", "0.1"], "--q"), (["--steps", "10"], "--steps"),
    (["--epochs", "1"], "--epochs"), (["--sampler", "poisson"], "--sampler"), (["--method", "pld"], "--method"),
    (["--relation", "replace_one"], "--relation"), (["--bound", "upper"], "--bound"),
    (["--shuffle-mode", "dynamic"], "--shuffle-mode"),
])
def test_single_run_flags_refused_with_phases(capsys, csv_file, extra, flag):
    code, out, err = run(capsys, "epsilon", "--phases", csv_file, "--delta", "1e-5", *extra)
    assert code == 2 and not out and err.count("\n") == 1
    assert err.startswith(f"dpsampling: error: {flag} does not apply with --phases")


def test_refusals_of_the_combination(capsys, csv_file):
    code, _, err = run(capsys, "epsilon", "--phases", csv_file, "--phase", "sampler=poisson", "--delta", "1e-5")
    assert code == 2 and "--phases and --phase together" in err
    code, _, err = run(capsys, "sigma", "--epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10",
                       "--scale", "all")
    assert code == 2 and "--scale applies only to a run of phases" in err
    code, _, err = run(capsys, "epsilon", "--q", "0.1", "--steps", "10", "--delta", "1e-5")
    assert code == 2 and "the following arguments are required: --sigma" in err
    code, _, err = run(capsys, "sigma", "--phases", csv_file, "--epsilon", "1", "--delta", "1e-5", "--scale", "2")
    assert code == 2 and err.startswith("dpsampling: error: --scale must be 'all'")


def test_a_phases_error_names_its_row(capsys, tmp_path):
    f = tmp_path / "mixed.csv"
    f.write_text(f"sampler,sigma,q,steps\npoisson,1.1,{Q!r},10\n\nwor,1.1,1.5,10\n")
    code, _, err = run(capsys, "epsilon", "--phases", f, "--delta", "1e-5")
    assert code == 2 and err.strip() == f"dpsampling: error: --phases {f}: phase 1 at line 4 (wor): q must be in " \
                                        f"(0, 1] (got 1.5)"
    code, _, err = run(capsys, "epsilon", "--phase", f"sampler=poisson,sigma=1.1,q={Q!r},steps=10",
                       "--phase", f"sampler=wor,sigma=-1,q={Q!r},steps=10", "--delta", "1e-5")
    assert code == 2 and "phase 1 at --phase #2" in err and "sigma" in err
    code, _, err = run(capsys, "epsilon", "--phases", tmp_path / "none.csv", "--delta", "1e-5")
    assert code == 2 and err.startswith(f"dpsampling: error: --phases file {tmp_path / 'none.csv'}: cannot be read")


def test_a_phase_beyond_the_limits_is_refused_naming_it(capsys):
    """σ = 0.01 in one phase: its sampler's cost model refuses it (memory), as a single run's question is refused,
    naming the phase and its flag, before any work."""
    code, out, err = run(capsys, "epsilon", "--phase", f"sampler=poisson,sigma=0.01,q={Q!r},steps=100",
                         "--phase", f"sampler=poisson,sigma=1.1,q={Q!r},steps=7050", "--delta", "1e-5")
    assert code == 2 and not out
    assert err.startswith("dpsampling: error: phase 0 at --phase #1") and "memory" in err and "the phase's sigma" in err
    with pytest.raises(ValueError, match="phase 0 \\(poisson\\) at σ = 0.01"):
        phases.epsilon([phases.Phase("poisson", 0.01, Q, 100), phases.Phase("poisson", 1.1, Q, 7050)], 1e-5)
    code, _, err = run(capsys, "audit", "--phase", f"sampler=poisson,sigma=0.01,q={Q!r},steps=100",
                       "--phase", f"sampler=poisson,sigma=1.1,q={Q!r},steps=7050", "--delta", "1e-5",
                       "--samplers", "poisson,wor")
    assert code == 2 and err.startswith("dpsampling: error: no sampler answers this run of phases: poisson: phase 0")
