"""Run Snakemake's command line in a process forked from one that has imported Snakemake already.

Starting Snakemake costs ~2.5 CPU-s per process before it does anything (importing Snakemake ~1.4 CPU-s, and the
workflow's parse-time checks import dp_accounting and scipy), more than a dry run (`-n`) costs itself, and the
tests run dozens of them.  ``run(args, cwd)`` behaves like ``subprocess.run([python, "-m", "snakemake", *args], cwd=cwd,
capture_output=True, text=True)`` (same return object, same streams), but the process is forked from a
multiprocessing forkserver that imported ``snakemake.cli`` once.  Each run is still its own process: the working
directory, ``sys.path``, ``os.environ``, logging set-up and modules the workflow imports die with it, so runs
cannot leak into each other or into pytest.  The environment is the forkserver's (pytest's when the first run
starts) unless ``env`` is given; a PYTHONPATH in ``env`` is put in front of ``sys.path`` (that is enough for a
package the forkserver has not imported, e.g. dpsampling, not for Snakemake or the preloaded libraries).
Stdlib only, so that the forkserver and its children stay cheap.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile

_CONTEXT = {}


#: imported once by the forkserver: Snakemake, the modules Snakemake imports only once a run starts (report, storage,
#: profiles, schema validation, YAML templating: ~0.1 CPU-s of each run, measured), and the third-party libraries the
#: workflow imports when it is parsed (its parse-time checks call dpsampling, which imports dp_accounting and scipy).
#: dpsampling itself is not preloaded: every run imports it afresh, as a real subprocess would, so it sees the
#: package's current files.
PRELOAD = ("snakemake.cli", "snakemake.report.html_reporter", "snakemake.storage", "snakemake.profiles", "jsonschema",
           "yte", "requests", "smart_open", "dpath", "dp_accounting", "scipy.optimize", "scipy.special", "scipy.stats")


def _context():
    if "ctx" not in _CONTEXT:
        ctx = multiprocessing.get_context("forkserver")
        # "__main__": pytest's entry script (when started as `pytest`, not `python -m pytest`) is imported once by the
        # server, so that each forked run does not import it again (multiprocessing's "safe importing of main module")
        ctx.set_forkserver_preload(["__main__", *PRELOAD, __name__])
        _CONTEXT["ctx"] = ctx
    return _CONTEXT["ctx"]


def _child(args, cwd, out_path, err_path, env):
    """In the forked process: Snakemake's ``main(args)`` in ``cwd``, stdout/stderr into the two files; ``env``
    (if given) replaces the environment, and its PYTHONPATH goes to the front of ``sys.path`` after ``cwd``, as
    ``python -m`` would set them up at start (only modules not imported yet follow it: dpsampling is not)."""
    os.chdir(cwd)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
        sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path.insert(0, os.getcwd())
    for fd, path in ((1, out_path), (2, err_path)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    from snakemake import cli

    try:
        cli.main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def run(args, cwd, env=None) -> subprocess.CompletedProcess:
    """``python -m snakemake *args`` in ``cwd`` (forked, see the module doc), optionally with environment ``env``;
    stdout and stderr as text."""
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        proc = _context().Process(target=_child, args=(list(map(str, args)), str(cwd), out, err, env))
        proc.start()
        proc.join()
        with open(out) as f_out, open(err) as f_err:
            return subprocess.CompletedProcess([sys.executable, "-m", "snakemake", *map(str, args)], proc.exitcode,
                                               f_out.read(), f_err.read())


def start():
    """Start the forkserver now, without waiting: its imports (~3 CPU-s) then run beside the tests that come before
    the first Snakemake run instead of in front of it (the first ``run`` connects and waits until it is ready)."""
    from multiprocessing import forkserver

    _context()
    forkserver.ensure_running()


def stop():
    """Stop the forkserver (if one was started) and wait for it, so that it does not outlive pytest and the CPU time
    of the runs (its reaped children) is accounted to pytest like that of ordinary subprocesses (/usr/bin/time)."""
    if "ctx" in _CONTEXT:
        from multiprocessing import forkserver

        stop_server = getattr(forkserver._forkserver, "_stop", None)  # CPython 3.8+; private, hence the guard
        if stop_server is not None:
            stop_server()
