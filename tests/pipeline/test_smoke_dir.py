"""The smoke fixture's directory contract with the cluster check (tests/cluster/slurm_smoke.sh, .ci/run):
with DPSAMPLING_SMOKE_DIR set the run happens in exactly that directory, which must not hold a previous run,
stays there, and gets the empty file .smoke_ok only after a complete successful run.  A stand-in command
replaces Snakemake here (the real run is what tests/pipeline/test_pipeline.py checks)."""

import json
import subprocess
import sys

import conftest
import pytest


@pytest.fixture
def fresh_state(monkeypatch):
    """A private _SMOKE record, so the session's own (real) smoke run is left alone."""
    monkeypatch.setattr(conftest, "_SMOKE", {})
    return conftest._SMOKE


def fake_run(code):
    """A stand-in for Snakemake: checks it runs in a workflow copy, writes results/, exits with ``code``."""
    script = ("import pathlib, sys; assert pathlib.Path('Snakefile').is_file(); pathlib.Path('results').mkdir(); "
              f"print('fake smoke output'); sys.exit({code})")
    return [sys.executable, "-c", script]


def test_unset_uses_fresh_temporary_directories(monkeypatch, tmp_path_factory):
    monkeypatch.delenv(conftest.SMOKE_DIR_ENV, raising=False)
    work, logs = conftest._smoke_workdir(tmp_path_factory)
    again, _ = conftest._smoke_workdir(tmp_path_factory)
    assert work.is_dir() and logs.is_dir() and again != work and not any(work.iterdir())


def test_run_happens_in_the_directory_stays_there_and_is_marked_ok(monkeypatch, tmp_path, fresh_state, request):
    target = tmp_path / "new" / "smoke"  # need not exist yet
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(target))
    conftest._start_smoke_run(request.config, cmd=fake_run(0))
    assert fresh_state["work"] == target
    assert not (target / conftest.SMOKE_OK).exists()  # not before the run is complete
    assert conftest._wait_smoke_run() == target
    assert (target / "results").is_dir() and (target / "Snakefile").is_file()
    assert (target / conftest.SMOKE_OK).read_bytes() == b""
    assert "fake smoke output" in (target / "smoke.stdout").read_text()


def test_failed_run_is_not_marked_ok_and_reports_its_output(monkeypatch, tmp_path, fresh_state, request):
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(tmp_path))
    conftest._start_smoke_run(request.config, cmd=fake_run(3))
    with pytest.raises(AssertionError, match=r"(?s)exit code 3.*fake smoke output"):
        conftest._wait_smoke_run()
    assert (tmp_path / "results").is_dir()
    assert not (tmp_path / conftest.SMOKE_OK).exists()


@pytest.mark.parametrize("leftover", ["results", "Snakefile", ".snakemake", conftest.SMOKE_OK])
def test_directory_with_a_previous_run_is_refused(monkeypatch, tmp_path, fresh_state, request, leftover):
    (tmp_path / leftover).mkdir()
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(tmp_path))
    with pytest.raises(pytest.UsageError, match=rf"DPSAMPLING_SMOKE_DIR=.*already holds .*\({leftover}\)"):
        conftest._start_smoke_run(request.config, cmd=fake_run(0))
    assert "proc" not in fresh_state
    assert sorted(p.name for p in tmp_path.iterdir()) == [leftover]  # nothing copied, nothing run


def test_a_file_is_refused(monkeypatch, tmp_path, fresh_state, request):
    (tmp_path / "f").write_text("")
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(tmp_path / "f"))
    with pytest.raises(pytest.UsageError, match="is not a directory"):
        conftest._start_smoke_run(request.config, cmd=fake_run(0))


def test_xdist_workers_share_one_run(monkeypatch, tmp_path, fresh_state, request):
    """Under pytest-xdist every worker asks for the run at collection: the first to claim the shared directory
    starts it, the others attach to it and get the same directory once it has ended, from its recorded exit code."""
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(tmp_path / "smoke"))
    shared = tmp_path / "shared"
    shared.mkdir()
    conftest._start_smoke_run(request.config, cmd=fake_run(0), shared=shared)
    owner = dict(fresh_state)
    fresh_state.clear()  # a second worker: its own module state, the same shared directory
    conftest._start_smoke_run(request.config, cmd=fake_run(0), shared=shared)
    assert "proc" not in fresh_state  # attached, nothing started
    assert conftest._wait_smoke_run() == tmp_path / "smoke"
    assert (tmp_path / "smoke" / "smoke.rc").read_text() == "0"
    fresh_state.clear()
    fresh_state.update(owner)
    assert conftest._wait_smoke_run() == tmp_path / "smoke"
    assert (tmp_path / "smoke" / conftest.SMOKE_OK).exists()


def test_an_attached_worker_reports_a_failed_run(monkeypatch, tmp_path, fresh_state, request):
    monkeypatch.setenv(conftest.SMOKE_DIR_ENV, str(tmp_path / "smoke"))
    conftest._start_smoke_run(request.config, cmd=fake_run(3), shared=tmp_path)
    fresh_state.clear()
    conftest._start_smoke_run(request.config, cmd=fake_run(3), shared=tmp_path)
    with pytest.raises(AssertionError, match=r"(?s)exit code 3.*fake smoke output"):
        conftest._wait_smoke_run()
    assert not (tmp_path / "smoke" / conftest.SMOKE_OK).exists()


def test_an_attached_worker_does_not_wait_for_a_dead_owner(tmp_path, fresh_state):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "smoke.json").write_text(json.dumps({"work": str(tmp_path), "logs": str(tmp_path), "pid": dead.pid}))
    fresh_state.update(shared=tmp_path, cmd=["snakemake"])
    with pytest.raises(AssertionError, match="exited before the run ended"):
        conftest._wait_smoke_run()
