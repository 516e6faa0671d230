import logging
import shutil
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


@pytest.fixture(scope="session")
def copy_workflow():
    """copy(root, dest): the workflow files (not results/) into a fresh directory; returns dest."""

    def copy(root, dest):
        for name in WORKFLOW_PARTS:
            src = root / name
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
        return dest

    return copy


@pytest.fixture(scope="session")
def smoke_run(repo_root, tmp_path_factory, copy_workflow):
    """One uninterrupted smoke run of the whole pipeline (config/smoke.yaml) in a temporary copy, shared
    by every test that needs pipeline outputs, figures or the report (read it, never write into it: copy
    it first)."""
    work = copy_workflow(repo_root, tmp_path_factory.mktemp("smoke"))
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "config/smoke.yaml"]
    out = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return work


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
