"""The package installs as a package: the wheel built from the repository holds every module, and a
non-editable install of it in a fresh virtual environment runs the README's audit example (console script and
``python -m dpsampling``) and the Python API from a directory outside the repository.

The fresh environment gets the wheel only (``--no-deps``); its dependencies are read from this test's own
environment through a ``.pth`` line (which adds that site-packages directory to ``sys.path`` but does not run its
``.pth`` files, so an editable install of the repository there stays invisible: the test checks where
``dpsampling`` is imported from).  So it runs in seconds wherever the tests run, and checks the wheel's contents and
its numbers against independent references.  Installing the wheel for real, its declared dependencies resolved from
the package index, is ``tests/install/run.sh``, a step of ``.ci/run`` (skipped, saying why, without an index).
"""

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

AUDIT = ["audit", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "1.1",
         "--delta", "1e-5", "--samplers", "poisson,deterministic", "--json"]

API = """
import json, dpsampling
df = dpsampling.audit(60000, 256, delta=1e-5, epochs=60, sigma=1.1, samplers=["deterministic"])
r = dpsampling.account("deterministic", "epsilon", 1e-5, sigma=1.1, steps=235, epochs=60)
print(json.dumps({"file": dpsampling.__file__, "audit": float(df["value"][0]), "account": r.value}))
"""


def _clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(repo_root, tmp_path_factory):
    """(venv, cwd, wheel): the wheel built from the repository, installed non-editable in a fresh venv."""
    tmp = tmp_path_factory.mktemp("install")
    # a clean copy of the sources: a build/ directory left in the checkout by an earlier build would fill the wheel
    src = tmp / "src"
    shutil.copytree(repo_root / "dpsampling", src / "dpsampling", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo_root / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
                   check=True, env=_clean_env(), cwd=tmp)
    wheel = next((tmp / "dist").glob("dpsampling-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)],
                   check=True, env=_clean_env(), cwd=tmp)
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_deps_from_test_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    return venv, cwd, wheel


def test_wheel_holds_every_module(repo_root, installed):
    _, _, wheel = installed
    in_wheel = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("dpsampling/") and n.endswith(".py")}
    in_repo = {p.relative_to(repo_root).as_posix() for p in (repo_root / "dpsampling").rglob("*.py")}
    assert in_repo - in_wheel == set()


def test_installed_console_script_runs_the_readme_audit(installed):
    venv, cwd, _ = installed
    out = subprocess.run([venv / "bin" / "dpsampling", *AUDIT], capture_output=True, text=True, cwd=cwd,
                         env=_clean_env(), check=True).stdout
    rows = {r["sampler"]: r for r in json.loads(out)["rows"]}
    assert set(rows) == {"poisson", "deterministic"}
    # the deterministic row is closed form: the Gaussian mechanism at σ/√E = 1.1/√60 (Balle & Wang 2018),
    # computed here independently with mpmath's bisection of the analytic δ(ε)
    assert rows["deterministic"]["value"] == pytest.approx(_gaussian_eps(1.1 / 60**0.5, 1e-5), rel=1e-6)
    assert rows["poisson"]["kind"] == "interval" and rows["poisson"]["value"] < rows["deterministic"]["value"]


def test_python_m_dpsampling_is_the_cli(installed):
    venv, cwd, _ = installed
    argv = ["sigma", "--epsilon", "1", "--delta", "1e-5", "--q", "1", "--steps", "1"]
    a = subprocess.run([venv / "bin" / "python", "-m", "dpsampling", *argv], capture_output=True, text=True,
                       cwd=cwd, env=_clean_env(), check=True).stdout
    b = subprocess.run([venv / "bin" / "dpsampling", *argv], capture_output=True, text=True, cwd=cwd,
                       env=_clean_env(), check=True).stdout
    assert json.loads(a) == json.loads(b)


def test_installed_python_api(installed):
    venv, cwd, _ = installed
    out = json.loads(subprocess.run([venv / "bin" / "python", "-c", API], capture_output=True, text=True, cwd=cwd,
                                    env=_clean_env(), check=True).stdout)
    assert Path(out["file"]).is_relative_to(venv)  # the installed copy, not the repository's
    ref = _gaussian_eps(1.1 / 60**0.5, 1e-5)
    assert out["audit"] == pytest.approx(ref, rel=1e-6) and out["account"] == pytest.approx(ref, rel=1e-6)


def _gaussian_eps(mu_inv, delta):
    """ε of the Gaussian mechanism with sensitivity 1 and noise ``mu_inv`` at δ (mpmath, 40 digits)."""
    import mpmath as mp

    mp.mp.dps = 40
    s = mp.mpf(mu_inv)

    def d(e):
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s) - delta

    return float(mp.findroot(d, (mp.mpf(0), mp.mpf(100)), solver="bisect", tol=1e-30))


#: the modules of the `pipeline` extra, kept out of the core install (pyproject.toml)
PIPELINE_MODULES = ("snakemake", "matplotlib", "numba", "llvmlite", "PLD_accounting", "pygments", "yaml")

CORE = """
import importlib.abc, io, json, sys, contextlib
BLOCKED = %r
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("not installed: " + name)
sys.meta_path.insert(0, Block())
from dpsampling import cli
out = {}
for name, argv in [
        ("epsilon", ["epsilon", "--sampler", "balls_and_bins", "--sigma", "1.1", "--steps", "50", "--epochs", "2",
                     "--delta", "1e-5"]),
        ("sigma", ["sigma", "--sampler", "poisson", "--epsilon", "2", "--delta", "1e-5", "--q", "0.01", "--steps", "100"]),
        ("audit", ["audit", "--dataset-size", "6000", "--batch-size", "120", "--epochs", "2", "--sigma", "1.1",
                   "--delta", "1e-5", "--json"]),
        ("statement", ["statement", "--dataset-size", "6000", "--batch-size", "120", "--epochs", "2", "--sigma", "1.1",
                       "--delta", "1e-5", "--sampler", "poisson"]),
        ("pld", ["epsilon", "--sampler", "balls_and_bins", "--method", "pld", "--sigma", "1.1", "--steps", "50",
                 "--delta", "1e-5"]),
        ("plot", ["audit", "--dataset-size", "6000", "--batch-size", "120", "--epochs", "2", "--sigma", "1.1",
                  "--delta", "1e-5", "--plot", "eps.png"])]:
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        rc = cli.main(argv)
    out[name] = {"rc": rc, "out": o.getvalue(), "err": e.getvalue()}
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps(out))
"""


def test_the_core_path_needs_no_pipeline_extra(tmp_path):
    # the CLI (epsilon, sigma, audit, statement) runs with every module of the `pipeline` extra unimportable; the
    # two features that need it (balls_and_bins' pld method, --plot) exit with one line naming the extra
    code = CORE % (PIPELINE_MODULES,)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["loaded"] == []
    for name in ("epsilon", "sigma", "audit", "statement"):
        assert res[name]["rc"] == 0, (name, res[name]["err"])
    rows = {r["sampler"]: r for r in json.loads(res["audit"]["out"])["rows"]}
    assert rows["balls_and_bins"]["lower"] <= rows["balls_and_bins"]["upper"] <= rows["deterministic"]["value"]
    for name in ("pld", "plot"):
        assert res[name]["rc"] != 0 and res[name]["out"] == ""
        assert res[name]["err"].count("\n") == 1 and "pip install 'dpsampling[pipeline]'" in res[name]["err"]
    assert not (tmp_path / "eps.png").exists()
