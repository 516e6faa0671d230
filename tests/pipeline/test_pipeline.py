"""One smoke run of the whole pipeline (config/smoke.yaml) in a temporary directory,
plus the config schema, rerun granularity and the cluster profile (dry runs)."""

import subprocess
import sys

import pandas as pd
import pytest
import snakemake_fork
import yaml

pytestmark = pytest.mark.pipeline

RESULT_COLUMNS = {"point_id", "chunk", "value", "kind", "method", "discretization", "rel_tol", "est_rel_error",
                  "flags", "version_dpsampling", "version_dp_accounting", "code_hash"}


def snakemake(cwd, *args, check=True):
    """`python -m snakemake --cores 2 *args` in cwd (forked from a process that imported Snakemake once: conftest)."""
    out = snakemake_fork.run(["--cores", "2", *args], cwd)
    if check and out.returncode != 0:
        raise AssertionError(f"{' '.join(out.args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


@pytest.fixture(scope="module")
def smoke(smoke_run):
    return smoke_run  # the session's one smoke run (conftest.py)


def expected_outputs(work):
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    grid = [k for k, v in cfg.items() if isinstance(v, dict) and "grid" in v]
    return grid


def test_every_computation_has_grid_csv_and_figure(smoke):
    for comp in expected_outputs(smoke):
        grid = pd.read_csv(smoke / "results" / comp / "grid.csv")
        df = pd.read_csv(smoke / "results" / comp / f"{comp}.csv")
        assert len(df) >= len(grid) > 0
        # every grid point has its row(s) (a curve may give several), in grid order
        assert list(dict.fromkeys(df["point_id"])) == list(grid["point_id"])
        assert RESULT_COLUMNS <= set(df.columns)
        assert df["kind"].isin(["upper", "lower", "estimate", "exact", "interval"]).all()
        interval = df[df["kind"] == "interval"]  # [lower, upper], both finite
        if len(interval):
            assert (interval["lower"] <= interval["upper"]).all()
        assert df["value"].notna().all()
        figs = list((smoke / "figures").glob(f"{comp}.*"))
        assert figs, f"no figure for {comp}"
        for f in figs:
            assert f.stat().st_size > (200 if f.suffix == ".md" else 2000)


def test_figures_are_valid_files(smoke):
    pdf = smoke / "figures" / "poisson_vs_wor_sigma.pdf"
    png = smoke / "figures" / "poisson_vs_wor_sigma.png"
    assert pdf.read_bytes()[:5] == b"%PDF-" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_smoke_values_are_consistent(smoke):
    df = pd.read_csv(smoke / "results" / "poisson_vs_wor_sigma" / "poisson_vs_wor_sigma.csv")
    p = df[(df.sampler == "poisson") & (df.epsilon == 10)].set_index("q")["value"]
    assert p.is_monotonic_increasing  # (σ_WOR = 2σ_Poisson holds by construction; tested against dp_accounting)
    t = pd.read_csv(smoke / "results" / "poisson_vs_wor_table" / "poisson_vs_wor_table.csv")
    for _, g in t.groupby("sampler"):
        assert g.sort_values("delta")["value"].is_monotonic_decreasing


def test_claims_table_complete_and_as_expected(smoke, repo_root):
    claims = yaml.safe_load((repo_root / "config" / "claims.yaml").read_text())["claims"]
    table = pd.read_csv(smoke / "results" / "claims" / "claims.csv")
    assert list(table["id"]) == [c["id"] for c in claims]  # complete, under the smoke config too
    wrong = table[table["status"] != table["expected"]]
    assert wrong.empty, wrong[["id", "printed", "ours", "status", "expected"]].to_string()
    md = (smoke / "figures" / "claims.md").read_text()
    assert all(c["id"] in table["id"].values for c in claims) and "| paper |" in md
    assert table.loc[table.status == "differs", "note"].notna().all()


def test_nothing_left_to_do_and_one_grid_change_reruns_only_its_chunks(smoke, tmp_path):
    from dpsampling import grids

    out = snakemake(smoke, "--configfile", "config/smoke.yaml", "-n")
    assert "Nothing to be done" in out.stdout + out.stderr
    cfg = yaml.safe_load((smoke / "config" / "smoke.yaml").read_text())
    block = cfg["poisson_vs_wor_table"]
    block["grid"][0]["delta"] = [1.0e-6, 3.0e-4]  # change one grid value (δ=1e-4 -> 3e-4)
    changed = tmp_path / "changed.yaml"  # outside the shared smoke run, which tests only read
    changed.write_text(yaml.safe_dump(cfg, allow_unicode=True))  # also reorders keys
    before = {p["point_id"]: p["chunk"] for p in grids.build(yaml.safe_load(
        (smoke / "config" / "smoke.yaml").read_text())["poisson_vs_wor_table"])}
    after = {p["point_id"]: p["chunk"] for p in grids.build(block)}
    touched = {c for pid, c in {**before, **after}.items() if (pid in before) != (pid in after)}
    out = snakemake(smoke, "--configfile", str(changed), "-n", "--quiet", "rules")
    text = out.stdout + out.stderr
    counts = {ln.split()[0]: int(ln.split()[1]) for ln in text.splitlines()
              if ln.strip() and ln.split()[0].endswith("_chunk") and ln.split()[-1].isdigit()}
    assert counts.get("poisson_vs_wor_table_chunk") == len(touched), text  # only the chunks holding changed points
    assert "poisson_vs_wor_sigma_chunk" not in counts  # nothing of the other computations


@pytest.mark.parametrize("path,value,needle", [
    (("poisson_vs_wor_table", "fixed", "q"), 1.5, "q"),
    (("poisson_vs_wor_table", "fixed", "sigma"), 0, "sigma"),
    (("poisson_vs_wor_table", "grid"), [], "grid"),
    (("poisson_vs_wor_table", "n_chunks"), 0, "n_chunks"),
    (("poisson_vs_wor_sigma", "grid", 0, "sampler"), "shufle", "sampler"),
    (("poisson_vs_wor_sigma", "fixed", "steps"), 0, "steps"),
    (("poisson_vs_wor_sigma", "fixed", "delta"), 1.0, "delta"),
    (("poisson_vs_wor_sigma", "fixed", "epsilon"), -1, "epsilon"),
    (("poisson_vs_wor_sigma", "typo_key"), 1, "typo_key"),
    (("add_remove_crossing", "grid", 0, "gamma"), 0.7, "gamma"),  # keys outside the schema: refused, named
    (("balls_and_bins", "settings", "mc_n"), 1000, "mc_n"),
])
def test_bad_config_rejected_naming_the_key(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)


def test_slurm_profile_dry_run(repo_root, tmp_path, copy_workflow):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    work = copy_workflow(repo_root, tmp_path)
    out = snakemake(work, "--profile", "profiles/slurm", "--configfile", "config/smoke.yaml", "-n")
    text = out.stdout + out.stderr
    assert "poisson_vs_wor_sigma_chunk" in text
    # workflow/rules/groups.smk: one SLURM job per computation and one for the claims (issue 14: <= 40 jobs);
    # the grids job runs locally
    assert text.count("Group job pipeline") == len(expected_outputs(work)) + 1 <= 40, text[-3000:]
    assert "Group job" not in text.replace("Group job pipeline", "")


# ---------------------------------------------------------------- results never go stale
# Computations whose scripts import dpsampling's Monte Carlo module (directly or through another module),
# read off the scripts by hand (independent of scripts/_codehash.py), and the claims evaluated through it.
MONTECARLO_IMPORTERS = ("add_remove_crossing", "conjecture12", "laplace_substitution")


def job_rules(dry_run_output):
    """The rules of the jobs a dry run lists (its 'Job stats' table)."""
    lines = dry_run_output.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith("Job stats")) + 3
    except StopIteration:
        return set()
    rules = set()
    for ln in lines[start:]:
        parts = ln.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        rules.add(parts[0])
    return rules


def test_library_edit_reruns_exactly_its_importers(smoke, repo_root, tmp_path):
    """Editing one library module makes `snakemake -n` list exactly the computations that import it."""
    import os
    import shutil

    work = tmp_path / "w"
    shutil.copytree(smoke, work, symlinks=True)  # outputs and .snakemake metadata, mtimes kept
    shutil.copytree(repo_root / "dpsampling", work / "dpsampling", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(work)}
    dry = ["-n", "--cores", "1", "--configfile", "config/smoke.yaml"]
    before = snakemake_fork.run(dry, work, env=env)
    assert before.returncode == 0 and job_rules(before.stdout) == set(), before.stdout[-2000:]  # nothing to do
    # the module defining the Monte Carlo privacy curve, wherever it lives in the package
    target = next(f for f in (work / "dpsampling").rglob("*.py") if "def mc_privacy_curve(" in f.read_text())
    src = target.read_text().replace("def mc_privacy_curve(", "def mc_privacy_curve(  # edited\n    ", 1)
    target.write_text(src)
    after = snakemake_fork.run(dry, work, env=env)
    assert after.returncode == 0, after.stderr[-2000:]
    expected = {f"{c}_{k}" for c in MONTECARLO_IMPORTERS for k in ("chunk", "plot")}
    expected |= {"aggregate", "claims_chunk", "claims_table", "all"}  # lebeda_b2_* claims call the MC module
    assert job_rules(after.stdout) == expected


# ---------------------------------------------------------------- interrupted runs
TIMING_COLUMNS = ("seconds", "cpu_seconds", "reference_cpu_seconds", "dp_accounting_cpu_seconds",
                  "smallest_cap_cpu_seconds", "wall_seconds", "elapsed", "runtime")  # by name
REDO = ("poisson_vs_wor_sigma", "rr_counterexample")  # a two-chunk and a one-chunk computation (each job ~2-3 s)


def read_results(root):
    out = {}
    for f in sorted((root / "results").rglob("*.csv")):
        df = pd.read_csv(f)
        out[str(f.relative_to(root))] = df.drop(columns=[c for c in df.columns if c in TIMING_COLUMNS])
    return out


def test_killed_run_resumes_to_identical_results(smoke, tmp_path):
    """SIGKILL a running smoke pipeline after its first chunk files appear, rerun it as a user would
    (README: `snakemake --unlock`, then the same command with `--rerun-incomplete`): every results CSV
    equals the uninterrupted run's and no temporary file is left.  To stay cheap the interrupted run
    starts from a copy of the uninterrupted one with the outputs of a few computations removed."""
    import os
    import shutil
    import signal
    import time

    work = tmp_path / "w"
    shutil.copytree(smoke, work, symlinks=True)
    for c in REDO:
        shutil.rmtree(work / "results" / c)
        for f in (work / "figures").glob(f"{c}*"):
            f.unlink()
    stale = work / "results" / "poisson_vs_wor_table" / ".tmp-left-by-a-killed-job.csv"
    stale.write_text("partial")
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "config/smoke.yaml"]
    proc = subprocess.Popen(cmd, cwd=work, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if any((work / "results" / c / "chunks").glob("*.csv") for c in REDO):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not all((work / "results" / c / f"{c}.csv").exists() for c in REDO)  # really interrupted midway
    snakemake(work, "--unlock", "--configfile", "config/smoke.yaml")
    snakemake(work, "--configfile", "config/smoke.yaml", "--rerun-incomplete")
    assert not list(work.rglob(".tmp-*")), list(work.rglob(".tmp-*"))
    ours, ref = read_results(work), read_results(smoke)
    assert ours.keys() == ref.keys()
    for name in ref:
        pd.testing.assert_frame_equal(ours[name], ref[name], check_exact=True, obj=name)


def test_every_job_wrote_its_benchmark_file(smoke):
    """Every rule has a benchmark file (workflow/rules/benchmarks.smk), one per job, next to its log."""
    logs = {p.relative_to(smoke / "logs").with_suffix("") for p in (smoke / "logs").rglob("*.log")}
    bench = {p.relative_to(smoke / "benchmarks").with_suffix("") for p in (smoke / "benchmarks").rglob("*.tsv")}
    assert logs and bench == logs
    for p in (smoke / "benchmarks").rglob("*.tsv"):
        head, row = p.read_text().splitlines()[:2]
        cols = dict(zip(head.split("\t"), row.split("\t")))
        assert float(cols["s"]) >= 0 and {"max_rss", "cpu_time"} <= set(cols), p
