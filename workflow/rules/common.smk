# Shared by every rule module: config validation, the grid/chunk helpers and the
# generic grid and aggregate rules of the pattern every computation follows:
#   results/<c>/grid.csv -> results/<c>/chunks/<i>.csv -> results/<c>/<c>.csv -> figures/<c>.{pdf,png}
import os
import sys

import yaml

from snakemake.utils import min_version, validate

min_version("9.0")

from dpsampling import grids

# The schema gives every key its `default` (the value used when the key is absent).  Snakemake's validate would write
# each of them into the config, into every computation's `settings` and grid blocks, where a computation that does not
# read a key would be handed it; so validation sets none, and the defaults the workflow reads from the config are
# applied here, by name, from the schema: `settings.rel_tol` (every computation), `claims.n_chunks`, `gallery.*`.
validate(config, "../schemas/config.schema.yaml", set_default=False)
with open(os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml")) as _f:
    grids.apply_workflow_defaults(config, yaml.safe_load(_f))
grids.check_samplers(config)  # sampler names: the registry (dpsampling.samplers.SAMPLERS), not a schema enum

# `shell:` rules (none yet) would run the `python` on PATH; put ours first.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

# One OpenBLAS thread in every job (inherited from this process; a value the user set wins).  dp_accounting reads δ(ε)
# off with np.dot, and after each call OpenBLAS's idle worker threads spin: with the default thread count a
# calibration job used ~1.8x the CPU for the same result (issue 15), and jobs already fill the cores side by side.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Likewise one numba thread: the balls-and-bins geometric convolutions (dpsampling/engine/geometric_kernel.py)
# run their two parts on numba's threads when a process has the cores to itself (the CLI); a job has one core.
# Their result does not depend on the thread count (tested).
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

# Library code as a rerun trigger: every rule that runs scripts/<name>.py gets
# `code_hash=code_hash("<name>")` in its params, a hash of the dpsampling modules (and script helpers)
# the script imports, transitively (scripts/_codehash.py walks the import graph with ast at parse time,
# once per script).  Editing a library function thus reruns exactly the jobs whose scripts import it;
# the chunk scripts also write the hash as the `code_hash` column of every row.
sys.path.insert(0, os.path.join(workflow.basedir, "scripts"))
import _codehash

_CODE_HASHES = {}


def code_hash(name, extra=()):
    key = (name, tuple(sorted(set(extra))))
    if key not in _CODE_HASHES:
        _CODE_HASHES[key] = _codehash.code_hash(os.path.join(workflow.basedir, "scripts", f"{name}.py"), key[1])
    return _CODE_HASHES[key]


# Computations that follow the grid -> chunks -> aggregate pattern: config blocks with a `grid`.
GRID_COMPUTATIONS = [k for k, v in config.items() if isinstance(v, dict) and "grid" in v]

# Each computation's figure outputs (registered by its rule module).
FIGURES = {}


def points(name):
    """Every grid point of a computation (parameters, point_id, chunk)."""
    return grids.build(config[name])


def chunk_points(name, chunk):
    """The grid points of one chunk: a params value, so only changed chunks rerun."""
    return grids.chunk(points(name), int(chunk))


def chunk_files(name):
    return expand("results/{name}/chunks/{i}.csv", name=name, i=range(int(config[name]["n_chunks"])))


def settings(name):
    """Accuracy settings of a computation (also a params value)."""
    return dict(config[name].get("settings", {}))


def all_targets():
    targets = []
    for c in GRID_COMPUTATIONS:
        targets += [f"results/{c}/grid.csv", f"results/{c}/{c}.csv"]
    for files in FIGURES.values():
        targets += files
    return targets


onstart:
    # A job killed mid-write (SIGKILL, power loss) leaves its temporary file (scripts/_pipeline._atomic
    # writes `.tmp-*` next to the target, then renames); nothing else writes such names, and no job of
    # this run has started yet (the run holds the directory lock), so remove them before any job runs.
    _pipeline_tmp = [os.path.join(d, f) for d, _, fs in os.walk("results") for f in fs if f.startswith(".tmp-")]
    _pipeline_tmp += [os.path.join(d, f) for d, _, fs in os.walk("figures") for f in fs if f.startswith(".tmp-")]
    for _f in _pipeline_tmp:
        os.remove(_f)
    if _pipeline_tmp:
        print(f"removed {len(_pipeline_tmp)} temporary file(s) left by an interrupted run", file=sys.stderr)


wildcard_constraints:
    computation="|".join(GRID_COMPUTATIONS) or "NONE",
    chunk=r"\d+",


rule grids:
    # Every computation's grid in one job: writing a grid is a few ms of work after a Python start-up of ~0.5 CPU-s,
    # and nothing depends on grid.csv, so one job for all of them instead of one per computation.  A changed grid
    # rewrites every grid.csv (the same content for the others); `snakemake results/<c>/grid.csv` still works.
    output:
        expand("results/{computation}/grid.csv", computation=GRID_COMPUTATIONS),
    params:
        code_hash=code_hash("write_grid"),
        points={c: points(c) for c in GRID_COMPUTATIONS},
    log:
        "logs/grids.log",
    message:
        "writing the parameter grids of {} computations".format(len(GRID_COMPUTATIONS))
    script:
        "../../scripts/write_grid.py"


rule aggregate:
    input:
        lambda wc: chunk_files(wc.computation),
    output:
        "results/{computation}/{computation}.csv",
    params:
        code_hash=code_hash("aggregate"),
        points=lambda wc: points(wc.computation),
    log:
        "logs/{computation}/aggregate.log",
    message:
        "{wildcards.computation}: collecting {input} into one tidy CSV"
    script:
        "../../scripts/aggregate.py"
