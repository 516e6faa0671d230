import json
import subprocess
import sys

import pytest

from dpsampling import cli


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_epsilon_json(capsys):
    code, out, _ = run(capsys, "epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "10000", "--delta", "1e-6")
    d = json.loads(out)
    assert code == 0 and d["kind"] == "upper" and d["method"] == "pld"
    assert 0.9472 <= d["value"] <= 0.9472 * 1.005
    assert d["accuracy"]["discretization"] > 0


def test_delta_and_sigma(capsys):
    code, out, _ = run(capsys, "delta", "--sampler", "wor", "--sigma", "2", "--q", "0.01", "--steps", "100",
                       "--epsilon", "1", "--rel-tol", "0.01")
    assert code == 0 and 0 < json.loads(out)["value"] < 1e-3
    code, out, _ = run(capsys, "sigma", "--epsilon", "1", "--delta", "1e-5", "--q", "1", "--steps", "100")
    d = json.loads(out)
    assert code == 0 and d["kind"] == "exact" and d["value"] == pytest.approx(10 * 3.7305, rel=1e-3)


@pytest.mark.parametrize("argv,flag", [
    (["epsilon", "--sigma", "-1", "--q", "0.1", "--steps", "10", "--delta", "1e-5"], "--sigma"),
    (["epsilon", "--sigma", "1", "--q", "1.5", "--steps", "10", "--delta", "1e-5"], "--q"),
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "0", "--delta", "1e-5"], "--steps"),
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "2"], "--delta"),
    (["delta", "--sigma", "1", "--q", "0.1", "--steps", "10", "--epsilon", "-1"], "--epsilon"),
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "1e-5", "--sampler", "foo"], "--sampler"),
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "1e-5", "--rel-tol", "0.5"], "--rel-tol"),
    (["epsilon", "--sigma", "1", "--q", "0.1", "--steps", "10"], "--delta"),
])
def test_bad_input_exit_2_one_line(capsys, argv, flag):
    with pytest.raises(SystemExit) as e:
        code = cli.main(argv)
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert flag in err and err.count("\n") == 1


def test_console_script_installed():
    out = subprocess.run([sys.executable, "-m", "dpsampling.cli", "sigma", "--epsilon", "1", "--delta", "1e-5",
                          "--q", "1", "--steps", "1"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["value"] == pytest.approx(3.7305, rel=1e-3)
