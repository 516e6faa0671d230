import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import snakemake_fork
import yaml

logging.getLogger().setLevel(logging.ERROR)  # dp_accounting warns through the root logger
# One OpenBLAS thread, as in the pipeline's jobs (workflow/rules/common.smk): set before any test module loads numpy,
# so the tests and the Snakemake runs they fork do not pay for OpenBLAS's spinning idle threads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

WORKFLOW_PARTS = ("Snakefile", "workflow", "config", "scripts", "profiles")


@pytest.fixture(scope="session")
def repo_root():
    return Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def pipeline_script(repo_root):
    """Import a pipeline script (scripts/<name>.py) as a module: ``pipeline_script("sampler_audit")``."""
    import importlib

    sys.path.insert(0, str(repo_root / "scripts"))
    yield importlib.import_module
    sys.path.remove(str(repo_root / "scripts"))


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
# needs it), so its Snakemake jobs overlap the unit tests; the tests that use it run last (in their modules' order,
# so module-scoped fixtures are set up once per process) and wait for it, after the other tests of their modules.
# Under pytest-xdist (the README's `-n 2`) every worker collects, the first to claim the session's shared directory
# starts the run and the others attach to it (_start_smoke_run), so there is still one run.
_SMOKE = {}
# --scheduler greedy: the default ILP scheduler solves a PuLP problem at every scheduling round (measured on the smoke
# run: ~8 CPU-s of the run's ~140, on the same cores the tests use); job order does not change any result.
SMOKE_CMD = [sys.executable, "-m", "snakemake", "--cores", "2", "--scheduler", "greedy",
             "--configfile", "config/smoke.yaml"]
# Agreed with the cluster check (tests/cluster/slurm_smoke.sh, .ci/run): with DPSAMPLING_SMOKE_DIR set, the
# smoke run happens in exactly that directory and stays there, and SMOKE_OK is written into it only after a
# complete successful run, so a later step can reuse the run instead of repeating it.  Unset: a temp directory.
SMOKE_DIR_ENV = "DPSAMPLING_SMOKE_DIR"
SMOKE_OK = ".smoke_ok"
#: what a previous run leaves behind; a directory holding any of these is refused (results must not mix)
SMOKE_LEFTOVERS = (*WORKFLOW_PARTS, "results", "figures", "logs", "benchmarks", ".snakemake", SMOKE_OK)


def _smoke_workdir(tmp_path_factory):
    """(workdir, logdir) of the smoke run: $DPSAMPLING_SMOKE_DIR (created if missing; refused with a
    pytest.UsageError naming the variable if it holds a previous run) or fresh temporary directories."""
    env = os.environ.get(SMOKE_DIR_ENV)
    if not env:
        return tmp_path_factory.mktemp("smoke"), tmp_path_factory.mktemp("smoke_logs")
    work = Path(env).resolve()
    if work.exists() and not work.is_dir():
        raise pytest.UsageError(f"{SMOKE_DIR_ENV}={work} is not a directory")
    found = [name for name in SMOKE_LEFTOVERS if (work / name).exists()] if work.exists() else []
    if found:
        raise pytest.UsageError(f"{SMOKE_DIR_ENV}={work} already holds a smoke run or workflow copy "
                                f"({', '.join(found)}); point it at a new or empty directory")
    work.mkdir(parents=True, exist_ok=True)
    return work, work  # logs: smoke.stdout / smoke.stderr next to the run


def _start_smoke_run(config, cmd=SMOKE_CMD, shared=None):
    """Start the smoke run in the background (its exit code is written to smoke.rc in its log directory when it
    ends).  ``shared``: a directory all pytest-xdist workers see; the first worker to claim it starts the run and
    records where it is (smoke.json), every other worker attaches to that run instead of starting a second one."""
    if shared is not None:
        try:
            os.close(os.open(shared / "smoke.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            _SMOKE.update(shared=shared, cmd=cmd)
            return
    root = Path(__file__).resolve().parents[1]
    work, logs = _smoke_workdir(config._tmp_path_factory)
    _copy_workflow(root, work)
    out, err = (logs / "smoke.stdout").open("w"), (logs / "smoke.stderr").open("w")
    proc = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=err, start_new_session=True)

    def record_exit():  # a thread, so that attached workers learn the result as soon as the run ends
        code = proc.wait()
        for f in (out, err):
            f.close()
        _write_atomically(logs / "smoke.rc", str(code))

    waiter = threading.Thread(target=record_exit, daemon=True)
    waiter.start()
    _SMOKE.update(work=work, proc=proc, logs=logs, cmd=cmd, waiter=waiter)
    if shared is not None:
        _write_atomically(shared / "smoke.json", json.dumps({"work": str(work), "logs": str(logs), "pid": os.getpid()}))


def _write_atomically(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _attached_run(shared, poll=0.5):
    """(work, logs) of the run another xdist worker started, once it has ended; AssertionError if that worker
    exited without recording the run's end."""
    info = shared / "smoke.json"
    while True:
        if info.exists():
            run = json.loads(info.read_text())
            work, logs = Path(run["work"]), Path(run["logs"])
            if (logs / "smoke.rc").exists():
                return work, logs
            owner = run["pid"]
        else:
            owner = None
        if owner is not None and not _alive(owner):
            raise AssertionError(f"the pytest-xdist worker (pid {owner}) that ran the smoke run in {work} "
                                 "exited before the run ended")
        time.sleep(poll)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_smoke_run():
    """Wait for the run; raise AssertionError with the tail of its output if it failed; else mark it
    complete (SMOKE_OK, only in $DPSAMPLING_SMOKE_DIR) and return its directory."""
    if "proc" in _SMOKE:
        _SMOKE["waiter"].join()
        work, logs = _SMOKE["work"], _SMOKE["logs"]
    else:
        work, logs = _attached_run(_SMOKE["shared"])
    code = int((logs / "smoke.rc").read_text())
    if code != 0:
        tail = "\n".join((logs / name).read_text()[-3000:] for name in ("smoke.stdout", "smoke.stderr"))
        raise AssertionError(f"{' '.join(map(str, _SMOKE['cmd']))} failed (exit code {code}) in {work}:\n{tail}")
    if os.environ.get(SMOKE_DIR_ENV):
        (work / SMOKE_OK).touch()
    return work


def _xdist_shared_dir(config):
    """The directory every pytest-xdist worker of this session sees (None when not under xdist)."""
    if not hasattr(config, "workerinput"):
        return None
    return config._tmp_path_factory.getbasetemp().parent  # pytest-xdist's documented shared root


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: a run that only deselected smoke tests starts none
def pytest_collection_modifyitems(session, config, items):
    def needs_smoke(item):
        return "smoke_run" in getattr(item, "fixturenames", ())

    smoke_modules = {item.module for item in items if needs_smoke(item)}
    if not smoke_modules:
        return
    # those modules' other tests (bad configs, dry runs) run before the first wait for the run, not after it
    items[:] = ([i for i in items if i.module not in smoke_modules]
                + [i for i in items if i.module in smoke_modules and not needs_smoke(i)]
                + [i for i in items if i.module in smoke_modules and needs_smoke(i)])
    if not config.option.collectonly:
        _start_smoke_run(config, shared=_xdist_shared_dir(config))
        snakemake_fork.start()  # those modules' dry runs need it; its imports overlap the first tests


def pytest_sessionfinish(session, exitstatus):
    snakemake_fork.stop()
    proc = _SMOKE.get("proc")
    if proc is None or proc.poll() is not None:
        return
    stopped = exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop or session.shouldfail
    if _xdist_shared_dir(session.config) is not None and not stopped:
        _SMOKE["waiter"].join()  # another worker may still need the run this one started
    else:  # interrupted session: stop the run this session started
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


@pytest.fixture(scope="session")
def smoke_run(request):
    """One uninterrupted smoke run of the whole pipeline (config/smoke.yaml) in a temporary copy (or in
    $DPSAMPLING_SMOKE_DIR, see SMOKE_DIR_ENV), shared by every test that needs pipeline outputs, figures or
    the report (read it, never write into it: copy it first)."""
    if not _SMOKE:  # not started (nor attached to) at collection (e.g. requested dynamically): run it now
        _start_smoke_run(request.config, shared=_xdist_shared_dir(request.config))
    return _wait_smoke_run()  # a failure is raised once and reported for every test that needs the run


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
        args = ["-n", "--cores", "1", "--configfile", "config/bad.yaml"]
        out = snakemake_fork.run(args + (["--replace-workflow-config"] if replace else []), cwd=work)
        assert out.returncode != 0
        assert needle in out.stdout + out.stderr
        assert not (work / "results").exists()

    return check
