import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpsampling import cli


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_epsilon_json(capsys):
    code, out, _ = run(capsys, "epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "10000", "--delta", "1e-6")
    d = json.loads(out)
    # default method: the certified interval (issue 23); the value is its upper end, the pessimistic PLD
    assert code == 0 and d["kind"] == "interval" and d["method"] == "certified"  # the selector; per end:
    assert (d["lower_method"], d["upper_method"]) == ("dominated PLD", "pessimistic PLD")
    assert 0.9472 <= d["value"] <= 0.9472 * 1.005
    assert d["accuracy"]["discretization"] > 0
    assert d["value"] == d["upper"] and d["lower"] <= d["value"] <= d["lower"] * (1 + 1e-3)
    code, out, _ = run(capsys, "epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "10000", "--delta", "1e-6",
                       "--method", "pld")
    d = json.loads(out)
    assert code == 0 and d["kind"] == "upper" and d["method"] == "pld"
    assert 0.9472 <= d["value"] <= 0.9472 * 1.005


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
    """The ``dpsampling`` script that installing the package put beside this interpreter (the README's
    ``pip install -e .``) runs; tests/test_install.py checks the same of a non-editable install."""
    script = Path(sys.executable).parent / "dpsampling"
    if not script.exists():
        pytest.skip(f"no dpsampling console script beside {sys.executable}: the package is not installed in this "
                    f"environment (pip install -e .)")
    out = subprocess.run([script, "sigma", "--epsilon", "1", "--delta", "1e-5",
                          "--q", "1", "--steps", "1"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["value"] == pytest.approx(3.7305, rel=1e-3)


def test_parser_literals_are_the_librarys():
    """The parser's choices and defaults are the library's own: the sampler descriptions (SPEC, read without
    importing the engine) must agree with the engine."""
    from dpsampling import samplers
    from dpsampling.engine import accountant, validation

    sub = next(a for a in cli._parser()._actions if a.dest == "command")
    for command in ("epsilon", "delta", "sigma", "statement"):
        choices = next(a.choices for a in sub.choices[command]._actions if a.dest == "sampler")
        assert tuple(choices) == samplers.SAMPLERS, command
    poisson = samplers.get_spec("poisson")
    # the sampler's methods: its certified interval (the default) and the engine's accountants
    assert (cli.DIRECTIONS, poisson.methods) == (validation.DIRECTIONS, (samplers.poisson.INTERVAL, *validation.METHODS))
    assert poisson.default_method == samplers.poisson.INTERVAL
    assert poisson.option("rel_tol").default == accountant.DEFAULT_REL_TOL


LAZY_PROBE = """
import sys
from dpsampling import cli
try:
    code = cli.main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'dp_accounting', 'pandas'})
print(code, ' '.join(heavy) or '-')
"""


@pytest.mark.parametrize("argv,code", [
    (["--help"], 0), (["epsilon", "--help"], 0), (["nonsense"], 2),
    (["epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "100"], 2),  # --delta missing
    (["epsilon", "--sigma", "-1", "--q", "1e-3", "--steps", "100", "--delta", "1e-6"], 2),
    (["epsilon", "--sigma", "0.8", "--q", "1e-3", "--steps", "100", "--delta", "1e-6", "--rel-tol", "0.5"], 2),
    (["epsilon", "--sigma", "0.01", "--q", "0.5", "--steps", "1000", "--delta", "1e-6"], 2),  # infeasible PLD
    (["epsilon", "--sigma", "0.8", "--q", "2", "--steps", "100", "--delta", "1e-6"], 2),
    (["delta", "--sampler", "wor", "--sigma", "0.8", "--q", "0.1", "--steps", "0", "--epsilon", "1"], 2),
    (["sigma", "--q", "0.1", "--steps", "10", "--epsilon", "1", "--delta", "1.5"], 2),
])
def test_help_and_bad_input_do_not_import_the_engine(repo_root, argv, code):
    """Start-up: --help and bad input answer before scipy/dp_accounting are imported (~1 s of CPU; range checks
    may import numpy, ~0.1 s)."""
    out = subprocess.run([sys.executable, "-c", LAZY_PROBE, *argv], cwd=repo_root, capture_output=True, text=True,
                         check=True)
    got_code, heavy = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert (int(got_code), heavy) == (code, "-")


def test_a_question_imports_the_engine(repo_root):
    """The probe above can fail: a real question does import the engine."""
    out = subprocess.run([sys.executable, "-c", LAZY_PROBE, "epsilon", "--sigma", "1", "--q", "1", "--steps", "1",
                          "--delta", "1e-5"], cwd=repo_root, capture_output=True, text=True, check=True)
    got_code, heavy = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert got_code == "0" and {"dp_accounting", "scipy"} <= set(heavy.split())


def test_readme_method_list_is_the_registrys(repo_root):
    """The README's and docs/cli.md's `--method {...}` is the parser's: every registered sampler's methods, in order."""
    import re

    from dpsampling import samplers

    methods = tuple(dict.fromkeys(m for s in samplers.specs() for m in s.methods))
    for page in ("README.md", "docs/cli.md"):
        listed = re.findall(r"`--method \{([^}]*)\}`", (repo_root / page).read_text())
        assert listed and all(tuple(x.split(",")) == methods for x in listed), (page, listed, methods)
    assert len((repo_root / "README.md").read_text().splitlines()) <= 200
