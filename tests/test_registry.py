"""The sampler registry: a sampler is one module that describes itself (``SPEC``), one registration line, and
every entry point (account, the command line, audit, the pipeline) reads the description."""

import dataclasses
import json
import math

import pytest

import dpsampling
from dpsampling import cli, samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import KINDS
from dpsampling.samplers import poisson
from dpsampling.samplers.spec import TIME_LIMIT, Cost, CostError, Question, check_cost, in_words


def _registered(original, name, summary):
    """``original`` under another ``name``, registered at run time (no other module edited), then removed."""
    spec = dataclasses.replace(original, name=name, summary=summary)
    samplers.register(spec)
    try:
        yield spec
    finally:
        samplers.unregister(name)


@pytest.fixture
def toy():
    """Poisson under another name."""
    yield from _registered(poisson.SPEC, "toy_poisson", "Poisson under another name (test)")


def _main(capsys, argv):
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_toy_sampler_joins_every_entry_point(toy, capsys):
    assert "toy_poisson" in samplers.SAMPLERS
    for argv in (["--help"], ["epsilon", "--help"]):
        code, out, _ = _main(capsys, argv)
        assert code == 0 and "toy_poisson" in out
    kw = dict(sigma=1.0, steps=100, epochs=2, q=0.01)
    mine = samplers.account("toy_poisson", "epsilon", 1e-5, **kw)
    assert mine == samplers.account("poisson", "epsilon", 1e-5, **kw)
    code, out, _ = _main(capsys, ["epsilon", "--sampler", "toy_poisson", "--sigma", "1", "--q", "0.01", "--steps", "100",
                                  "--epochs", "2", "--delta", "1e-5"])
    assert code == 0 and json.loads(out)["value"] == mine.value
    df = dpsampling.audit(1000, 10, epochs=2, sigma=1.0, delta=1e-5).set_index("sampler")
    assert df.loc["toy_poisson", "value"] == df.loc["poisson", "value"]
    assert df.loc["toy_poisson", "kind"] == "interval"
    code, out, _ = _main(capsys, ["audit", "--dataset-size", "1000", "--batch-size", "10", "--epochs", "2", "--sigma",
                                  "1", "--delta", "1e-5"])
    assert code == 0 and "toy_poisson" in out


@pytest.fixture
def toy_bnb():
    """balls_and_bins (one batch per step) under another name, registered at run time (no other module edited), then
    removed.  The integrations' tests use it too: an Opacus accountant for it must give its original's values."""
    from dpsampling.samplers import balls_and_bins

    yield from _registered(balls_and_bins.SPEC, "toy_bnb", "balls-and-bins under another name (test)")


def test_toy_one_batch_per_step_sampler_joins_every_entry_point(toy_bnb, capsys):
    """A clone of a one-batch-per-step sampler answers in --help, account, the CLI, audit and statement with its
    original's values (no layer above samplers/ names a sampler, so none needs an edit)."""
    for argv in (["--help"], ["epsilon", "--help"], ["statement", "--help"]):
        code, out, _ = _main(capsys, argv)
        assert code == 0 and "toy_bnb" in out, argv
    kw = dict(sigma=1.0, steps=4, epochs=2)
    mine = samplers.account("toy_bnb", "epsilon", 1e-5, **kw)
    assert mine == samplers.account("balls_and_bins", "epsilon", 1e-5, **kw) and mine.relation == "zero_out"
    code, out, _ = _main(capsys, ["epsilon", "--sampler", "toy_bnb", "--sigma", "1", "--steps", "4", "--epochs", "2",
                                  "--delta", "1e-5"])
    assert code == 0 and json.loads(out)["value"] == mine.value and json.loads(out)["relation"] == "zero_out"
    df = dpsampling.audit(40, 10, epochs=2, sigma=1.0, delta=1e-5).set_index("sampler")
    cols = ["value", "kind", "method", "lower", "upper", "relation"]
    assert list(df.loc["toy_bnb", cols]) == list(df.loc["balls_and_bins", cols])
    assert sum("balls-and-bins" in v for v in df.attrs["verdicts"]) == 2  # its verdict, worded by its spec
    run = dict(dataset_size=40, batch_size=10, epochs=2, sigma=1.0, delta=1e-5)
    text, original = (dpsampling.statement(**run, sampler=s) for s in ("toy_bnb", "balls_and_bins"))
    assert "(toy_bnb)" in text and " ".join(text.split()) == " ".join(original.split()).replace("(balls_and_bins)",
                                                                                                "(toy_bnb)")
    # its Opacus accountant, dpsampling_toy_bnb, gives balls_and_bins' ε: tests/integrations/test_opacus.py


def test_registry_after_unregister():
    assert "toy_poisson" not in samplers.SAMPLERS
    with pytest.raises(ValueError, match="sampler must be one of poisson"):
        samplers.account("toy_poisson", "epsilon", 1e-5, sigma=1.0, steps=10, q=0.1)
    with pytest.raises(ValueError, match="already registered"):
        samplers.register(poisson.SPEC)


def test_the_registry_loads_without_an_accountant(repo_root):
    import subprocess
    import sys

    probe = ("import sys; import dpsampling.samplers as s; s.get_spec('balls_and_bins').options; "
             "print(sorted({'scipy', 'dp_accounting', 'numba', 'PLD_accounting'} & {m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo_root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_parameter_error_carries_the_parameter():
    with pytest.raises(ParameterError) as e:
        samplers.account("poisson", "epsilon", 2.0, sigma=1.0, steps=10, q=0.1)
    assert (e.value.param, e.value.allowed, e.value.got) == ("delta", "in (0, 1)", 2.0)
    with pytest.raises(ParameterError) as e:
        samplers.account("shuffle", "epsilon", 1e-5, sigma=1.0, steps=10, mode="sideways")
    assert e.value.param == "mode" and "dynamic" in e.value.allowed


def test_cost_limit_refuses_in_words_and_force_runs():
    spec = samplers.get_spec("balls_and_bins")
    big = Question("epsilon", sigma=1.0, steps=5000, epochs=3, method="pld")
    assert spec.predict_seconds(big) > TIME_LIMIT
    with pytest.raises(CostError) as e:
        check_cost(spec, big)
    assert "minutes" in str(e.value) and "force=True" in str(e.value) and e.value.param == "force"
    with pytest.raises(CostError):
        samplers.account("balls_and_bins", "epsilon", 1e-5, sigma=1.0, steps=5000, epochs=3, method="pld")
    small = Question("epsilon", sigma=1.1, steps=235, epochs=60, method="pld")
    assert spec.predict_seconds(small) <= TIME_LIMIT  # the README's MNIST question is answered
    assert in_words(240) == "about 4 minutes" and in_words(20) == "about 20 s"


def test_cost_refusal_names_each_flag_once():
    """Two parameters set by one flag (the audit's --batch-size sets q and the steps per epoch) are named once; the
    others keep their order, and different names that share a first word stay apart."""
    e = CostError("poisson epsilon", Cost(1.0, "too large", ("sigma", "q", "steps", "method")), TIME_LIMIT)
    text = e.text("--force", {"steps": "--batch-size (B)", "q": "--batch-size (B)", "sigma": "--sigma"})
    assert text.endswith("change --sigma or --batch-size (B) or method")
    e = CostError("poisson epsilon", Cost(1.0, "too large", ("steps", "epochs")), TIME_LIMIT)
    assert e.text("x", {"steps": "the steps", "epochs": "the epochs"}).endswith("change the steps or the epochs")


def test_mc_retired_names_stop_naming_the_new_one(capsys):
    code, _, err = _main(capsys, ["delta", "--sampler", "balls_and_bins", "--sigma", "1", "--steps", "10", "--epsilon",
                                  "1", "--method", "montecarlo", "--failure-prob", "0.1"])
    assert code == 2 and "--failure-prob" in err  # the command line has no rename table: an unknown flag


ONE_BATCH = ("shuffle", "deterministic", "balls_and_bins")


def _kinds_of(res):
    return {res.kind}


@pytest.mark.parametrize("sampler", ["poisson", "wor", "shuffle", "deterministic", "balls_and_bins"])
def test_every_result_kind_is_in_kinds(sampler):
    q = None if sampler in ONE_BATCH else 0.05
    for quantity, target in (("epsilon", 1e-5), ("delta", 1.0)):
        r = samplers.account(sampler, quantity, target, sigma=1.0, steps=20, q=q)
        assert r.kind in KINDS, (sampler, r.kind)
    bound = "lower" if sampler == "shuffle" else None
    r = samplers.account(sampler, "sigma", (2.0, 1e-5), steps=20, q=q, bound=bound)
    assert r.kind in KINDS
    assert samplers.get_spec(sampler).audit_kind in KINDS


def test_every_audit_row_kind_is_in_kinds():
    for kw in (dict(epochs=2, sigma=1.0), dict(epochs=2, target_epsilon=2.0), dict(sigma=1.0, target_epsilon=2.0)):
        df = dpsampling.audit(200, 20, delta=1e-5, **kw)
        assert set(df["kind"]) <= set(KINDS), (kw, set(df["kind"]))


# --------------------------------------------------------------------------- one question, one answer

N, B, E, SIGMA, DELTA = 400, 20, 2, 1.0, 1e-5  # 20 steps per epoch, q = 0.05


@pytest.mark.parametrize("sampler", ["poisson", "wor", "shuffle", "deterministic", "balls_and_bins"])
def test_same_question_same_answer_everywhere(sampler, capsys):
    """ε of one run through the API (account), the command line, audit and the pipeline's audit script."""
    import importlib.util
    from pathlib import Path

    steps = math.ceil(N / B)
    q = B / N if samplers.get_spec(sampler).batch == "rate" else None
    api = samplers.account(sampler, "epsilon", DELTA, sigma=SIGMA, steps=steps, epochs=E, q=q).value
    argv = ["epsilon", "--sampler", sampler, "--sigma", str(SIGMA), "--steps", str(steps), "--epochs", str(E),
            "--delta", str(DELTA)] + (["--q", str(q)] if q is not None else [])
    code, out, err = _main(capsys, argv)
    assert code == 0, err
    assert json.loads(out)["value"] == api
    row = dpsampling.audit(N, B, epochs=E, sigma=SIGMA, delta=DELTA, samplers=[sampler]).iloc[0]
    assert row["value"] == api
    scripts = Path(__file__).resolve().parents[1] / "scripts"
    import sys

    sys.path.insert(0, str(scripts))
    try:
        spec = importlib.util.spec_from_file_location("sampler_audit_script", scripts / "sampler_audit.py")
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
        rows = script.compute_point({"dataset_size": N, "batch_size": B, "epochs": E, "sigma": SIGMA, "delta": DELTA},
                                    optional_max_steps=10**6)
    finally:
        sys.path.remove(str(scripts))
    assert {r["sampler"]: r["value"] for r in rows}[sampler] == api


def test_generic_pipeline_computations_read_the_registry(toy, pipeline_script):
    """A sampler registered at run time gets a row in sampler_audit and in certified_intervals, with its
    original's values and (certified_intervals) the reference its spec names, checked (no script edited)."""
    p = {"run": "t", "dataset_size": 200, "batch_size": 50, "sigma": 1.5, "delta": 1e-5, "epochs": 1}
    audit = {r["sampler"]: r for r in pipeline_script("sampler_audit").compute_point(p)}
    assert "toy_poisson" in audit and audit["toy_poisson"]["value"] == audit["poisson"]["value"]
    rows = {r["sampler"]: r for r in pipeline_script("certified_intervals").compute_point(
        p, reference_max_pld_points=300_000, allocation_reference_max_steps=0)}
    keys = ["lower", "upper", "reference_method", "reference_lower", "reference_upper", "contains_reference"]
    assert [rows["toy_poisson"][k] for k in keys] == [rows["poisson"][k] for k in keys]
    assert rows["toy_poisson"]["contains_reference"] is True


def test_config_sampler_names_come_from_the_registry(toy):
    from dpsampling import grids

    grids.check_samplers({"c": {"fixed": {"sampler": "toy_poisson"}, "grid": [{"sampler": ["poisson", "wor"]}]}})
    with pytest.raises(ValueError, match=r"c\.grid\[0\]\.sampler must be one of poisson.*toy_poisson.*'bogus'"):
        grids.check_samplers({"c": {"grid": [{"sampler": ["poisson", "bogus"]}]}})


def test_smoke_csv_kinds_are_in_kinds(smoke_run):
    """Every ``kind`` any pipeline row carries is one of engine.result.KINDS."""
    import pandas as pd

    seen = set()
    for path in sorted(smoke_run.glob("results/*/*.csv")):
        df = pd.read_csv(path)
        if "kind" in df:
            seen |= set(df["kind"].dropna().astype(str))
    assert seen and seen <= set(KINDS), seen - set(KINDS)
