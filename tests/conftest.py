import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

logging.getLogger().setLevel(logging.ERROR)  # dp_accounting warns through the root logger

WORKFLOW_PARTS = ("Snakefile", "workflow", "config", "scripts", "profiles")


@pytest.fixture(scope="session")
def repo_root():
    return Path(__file__).resolve().parents[1]


def _copy_workflow(root, dest):
    for name in WORKFLOW_PARTS:
        src = root / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    return dest


@pytest.fixture(scope="session")
def copy_workflow():
    """copy(root, dest): the workflow files (not results/) into a fresh directory; returns dest."""
    return _copy_workflow


# The shared smoke run starts in the background as soon as the tests are collected (when any selected test
# needs it), so its ~2 cores of Snakemake jobs overlap the single-threaded unit tests; the modules that use
# it run last (whole modules, in their own order, so module-scoped fixtures are set up once) and wait for it.
_SMOKE = {}
SMOKE_CMD = [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "config/smoke.yaml"]


def _start_smoke_run(config):
    root = Path(__file__).resolve().parents[1]
    work = _copy_workflow(root, config._tmp_path_factory.mktemp("smoke"))
    logs = config._tmp_path_factory.mktemp("smoke_logs")
    out, err = (logs / "stdout").open("w"), (logs / "stderr").open("w")
    proc = subprocess.Popen(SMOKE_CMD, cwd=work, stdout=out, stderr=err, start_new_session=True)
    _SMOKE.update(work=work, proc=proc, logs=logs, files=(out, err))


def pytest_collection_modifyitems(session, config, items):
    smoke_modules = {item.module for item in items if "smoke_run" in getattr(item, "fixturenames", ())}
    if not smoke_modules:
        return
    items[:] = [i for i in items if i.module not in smoke_modules] + [i for i in items if i.module in smoke_modules]
    if not config.option.collectonly:
        _start_smoke_run(config)


def pytest_sessionfinish(session, exitstatus):
    proc = _SMOKE.get("proc")
    if proc is not None and proc.poll() is None:  # interrupted session: stop the run this session started
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


@pytest.fixture(scope="session")
def smoke_run(request):
    """One uninterrupted smoke run of the whole pipeline (config/smoke.yaml) in a temporary copy, shared
    by every test that needs pipeline outputs, figures or the report (read it, never write into it: copy
    it first)."""
    if "proc" not in _SMOKE:  # not started at collection (e.g. requested dynamically): run it now
        _start_smoke_run(request.config)
    proc = _SMOKE["proc"]
    code = proc.wait()
    for f in _SMOKE["files"]:
        f.close()
    if code != 0:
        tail = "\n".join((_SMOKE["logs"] / name).read_text()[-3000:] for name in ("stdout", "stderr"))
        raise AssertionError(f"{' '.join(SMOKE_CMD)} failed:\n{tail}")
    return _SMOKE["work"]


@pytest.fixture
def rejects_bad_config(repo_root, tmp_path, copy_workflow):
    """check(path, value, needle): set one smoke-config entry (a path of keys) to ``value`` and dry-run
    Snakemake on a copy; it must fail, the message must contain ``needle`` and no results/ may exist.
    ``replace=True`` replaces config.yaml instead of merging over it (needed to replace a mapping by a list)."""

    def check(path, value, needle, replace=False):
        work = copy_workflow(repo_root, tmp_path)
        cfg = yaml.safe_load((work / "config" / "smoke.yaml").read_text())
        node = cfg
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        (work / "config" / "bad.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
        cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", "config/bad.yaml"]
        out = subprocess.run(cmd + (["--replace-workflow-config"] if replace else []), cwd=work,
                             capture_output=True, text=True, check=False)
        assert out.returncode != 0
        assert needle in out.stdout + out.stderr
        assert not (work / "results").exists()

    return check
