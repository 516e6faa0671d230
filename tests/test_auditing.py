"""dpsampling.auditing (dpsampling.audit) and `dpsampling audit`: orderings, single-epoch equality, safe inverse
answers, JSON, errors, every printed bound on its side, rows that cannot be computed."""

import json
import math
import re

import pytest
from dp_accounting.pld import privacy_loss_distribution as pldm

import dpsampling
from dpsampling import cli, samplers
from dpsampling.engine import gaussian
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import bound_text
from dpsampling.samplers import account
from dpsampling.papers.chua import shuffle_epsilon_lower

FOUR = ("poisson", "wor", "shuffle", "deterministic")


@pytest.fixture(scope="module")
def mnist():
    """The README example (60000/256, σ = 1.1, 60 epochs, δ = 1e-5) without balls_and_bins (11 s of wall)."""
    return dpsampling.audit(60000, 256, epochs=60, sigma=1.1, delta=1e-5, samplers=FOUR)


def test_mnist_values_and_ordering(mnist):
    by = mnist.set_index("sampler")
    assert list(mnist["sampler"]) == list(FOUR)
    assert set(by.loc[:, "steps"]) == {235} and set(by.loc[:, "total_steps"]) == {235 * 60} and by.loc["poisson", "q"] == pytest.approx(256 / 60000)
    for _, r in mnist.iterrows():
        assert r["lower"] <= r["value"] * (1 + 1e-12) and r["value"] <= r["upper"] * (1 + 1e-12), r["sampler"]
    assert by.loc["shuffle", "kind"] == by.loc["poisson", "kind"] == "interval" and by.loc["shuffle", "upper_best_known"]
    assert (mnist["value"] == mnist["upper"]).all()  # the safe end, every row
    assert by.loc["shuffle", "lower_method"] == "max-statistic PLD"
    assert by.loc["poisson", "lower_method"] == "dominated PLD" and by.loc["poisson", "upper_method"] == "pessimistic PLD"
    assert by.loc["shuffle", "lower"] <= by.loc["deterministic", "value"]
    assert by.loc["shuffle", "upper"] == pytest.approx(by.loc["deterministic", "value"], rel=1e-12)
    assert by.loc["poisson", "value"] <= by.loc["wor", "value"]
    # deterministic over E epochs is the Gaussian at σ/√E (closed form)
    assert by.loc["deterministic", "value"] == pytest.approx(gaussian.epsilon(1e-5, 1.1 / math.sqrt(60)), rel=1e-9)
    # Poisson: T = 60·235 steps at q = 256/60000, the pessimistic dp_accounting PLD
    pld = pldm.from_gaussian_mechanism(1.1, sampling_prob=256 / 60000, value_discretization_interval=1e-4)
    assert by.loc["poisson", "value"] == pytest.approx(pld.self_compose(60 * 235).get_epsilon_for_delta(1e-5), rel=1e-3)
    # the shuffle lower bound exceeds the Poisson upper bound: the verdict says Poisson accounting is wrong
    assert by.loc["shuffle", "lower"] > by.loc["poisson", "value"]
    up = bound_text(by.loc["poisson", "value"], "upper", 3)  # the Poisson upper bound, rounded up
    assert float(up) >= by.loc["poisson", "value"]
    assert any("is provably wrong" in v and f"ε ≤ {up})" in v for v in mnist.attrs["verdicts"])


def test_one_epoch_equals_single_epoch_results():
    df = dpsampling.audit(500, 50, epochs=1, sigma=1.0, delta=1e-5, samplers=FOUR).set_index("sampler")
    assert df.loc["shuffle", "lower"] == pytest.approx(shuffle_epsilon_lower(1e-5, 1.0, 10), rel=1e-9)
    assert df.loc["shuffle", "value"] == df.loc["shuffle", "upper"] == df.loc["deterministic", "value"]
    assert df.loc["deterministic", "value"] == pytest.approx(gaussian.epsilon(1e-5, 1.0), rel=1e-9)
    assert df.loc["poisson", "value"] == account("poisson", "epsilon", 1e-5, sigma=1.0, steps=10, q=0.1).value


def test_no_verdict_of_wrongness_when_shuffle_lower_below_poisson():
    df = dpsampling.audit(1000, 10, epochs=1, sigma=5.0, delta=1e-5, samplers=("poisson", "shuffle"))
    by = df.set_index("sampler")
    assert by.loc["shuffle", "lower"] <= by.loc["poisson", "value"]
    assert not any("is provably wrong" in v for v in df.attrs["verdicts"])


def test_sigma_question_is_safe():
    eps, delta, n, b, epochs = 2.0, 1e-5, 1000, 100, 3
    df = dpsampling.audit(n, b, epochs=epochs, target_epsilon=eps, delta=delta, samplers=FOUR).set_index("sampler")
    assert df.attrs["question"] == "sigma"
    # Poisson σ: the pessimistic dp_accounting PLD (finer grid than the accountant's) gives ε ≤ target
    s = df.loc["poisson", "value"]
    pld = pldm.from_gaussian_mechanism(s, sampling_prob=b / n, value_discretization_interval=1e-5)
    assert pld.self_compose(10 * epochs).get_epsilon_for_delta(delta) <= eps
    s_wor = df.loc["wor", "value"]
    assert account("wor", "epsilon", delta, sigma=s_wor, steps=10, epochs=epochs, q=b / n).value <= eps
    # deterministic: exact, ε(σ) = target
    s_det = df.loc["deterministic", "value"]
    assert gaussian.epsilon(delta, s_det / math.sqrt(epochs)) == pytest.approx(eps, rel=1e-6)
    # shuffle: at σ = lower the lower bound on ε still exceeds the target; its upper end (the value: sufficient) is
    # the deterministic σ
    r = df.loc["shuffle"]
    assert r["kind"] == "interval" and r["value"] == r["upper"] == pytest.approx(s_det, rel=1e-9)
    assert r["lower"] < r["upper"]
    assert account("shuffle", "epsilon", delta, sigma=r["lower"], steps=10, epochs=epochs).lower > eps
    assert account("shuffle", "epsilon", delta, sigma=r["value"], steps=10, epochs=epochs).upper <= eps * (1 + 1e-9)
    assert (df["value"] == df["upper"]).all()  # every row's value: a sufficient σ
    assert df.loc["poisson", "value"] < df.loc["deterministic", "value"]


def test_epochs_question_brackets_the_target():
    eps, delta, sigma, n, b = 4.0, 1e-5, 1.5, 1000, 100
    df = dpsampling.audit(n, b, sigma=sigma, target_epsilon=eps, delta=delta, samplers=FOUR).set_index("sampler")
    assert df.attrs["question"] == "epochs"
    for sampler, q in (("poisson", b / n), ("deterministic", None), ("shuffle", None)):
        e = int(df.loc[sampler, "value"])
        assert e >= 1, sampler

        def eps_at(k):
            return account(sampler, "epsilon", delta, sigma=sigma, steps=10, epochs=k, q=q).value

        assert eps_at(e) <= eps < eps_at(e + 1), sampler
    sh = df.loc["shuffle"]  # value = lower: the epochs its certified upper end (deterministic) allows
    assert sh["value"] == sh["lower"] == df.loc["deterministic", "value"] <= sh["upper"]
    assert (df["value"] == df["lower"]).all()  # every row's value: the epochs certified (the safe end)
    lo = account("shuffle", "epsilon", delta, sigma=sigma, steps=10, epochs=int(sh["upper"]) + 1).lower
    assert lo > eps  # more than `upper` epochs provably exceed the target
    assert df.loc["deterministic", "value"] <= df.loc["poisson", "value"]


def test_balls_and_bins_row_when_asked_and_skipped_by_default(monkeypatch):
    df = dpsampling.audit(40, 10, epochs=2, sigma=1.0, delta=1e-5, samplers=("poisson", "balls_and_bins"))
    r = df.set_index("sampler").loc["balls_and_bins"]
    assert r["kind"] == "interval" and r["lower"] <= r["value"] == r["upper"]
    assert len(df.attrs["verdicts"]) == 1 and "balls-and-bins" in df.attrs["verdicts"][0]
    # computed by default where its cost model predicts at most the time limit (the README's MNIST run) ...
    mnist = dpsampling.audit(60000, 256, epochs=60, sigma=1.1, delta=1e-5, samplers=None).set_index("sampler")
    assert mnist.loc["balls_and_bins", "lower"] <= mnist.loc["balls_and_bins", "value"] < 2.35
    # ... and skipped where it predicts more (the allocation interval stays within the limit up to ~5e5 steps per
    # epoch, where the other rows cost a minute too: the prediction is made expensive here, so 2000 steps in one
    # epoch are enough; the other rows' cost: ~3 CPU-s, ~15 at 10000 steps)
    from dpsampling.samplers import balls_and_bins as bnb

    monkeypatch.setattr(bnb, "ALLOC_SECONDS", 1e3)
    for n, b, e in ((60000, 256, 400), (20000, 10, 1)):
        big = dpsampling.audit(n, b, epochs=e, sigma=1.1, delta=1e-5, samplers=None).set_index("sampler")
        # (400 epochs: its lower end's E-epoch loss grid is also predicted beyond the memory limit: not_computed)
        assert math.isnan(big.loc["balls_and_bins", "value"])
        assert big.loc["balls_and_bins", "flags"] in (("skipped_cost", "not_computed") if e == 400 else ("skipped_cost",))


def run(capsys, *argv):
    try:
        code = cli.main(["audit", *argv])
    except SystemExit as exc:  # argparse's own errors (non-integer counts): exit 2, one line
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_table_and_json(capsys):
    base = ("--dataset-size", "500", "--batch-size", "50", "--epochs", "2", "--sigma", "1.0", "--delta", "1e-5",
            "--samplers", "poisson,shuffle,deterministic")
    code, out, _ = run(capsys, *base)
    assert code == 0
    lines = out.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("sampler"))
    assert [l.split()[0] for l in lines[head + 1:head + 4]] == ["poisson", "shuffle", "deterministic"]
    assert any(l.startswith("- ") for l in lines)
    code, out, _ = run(capsys, *base, "--json")
    assert code == 0
    obj = json.loads(out)
    assert set(obj) >= {"rows", "verdicts"} and len(obj["rows"]) == 3
    for r in obj["rows"]:
        assert {"sampler", "value", "kind", "method", "lower", "upper"} <= set(r)
    df = dpsampling.audit(500, 50, epochs=2, sigma=1.0, delta=1e-5, samplers=("poisson", "shuffle", "deterministic"))
    assert [r["value"] for r in obj["rows"]] == list(df["value"])


OK = {"--dataset-size": "100", "--batch-size": "10", "--epochs": "2", "--sigma": "1", "--delta": "1e-5"}


@pytest.mark.parametrize("change,flag", [
    ({"--batch-size": "200"}, "--batch-size"),
    ({"--dataset-size": "0"}, "--dataset-size"),
    ({"--batch-size": "0"}, "--batch-size"),
    ({"--epochs": "0"}, "--epochs"),
    ({"--epochs": "1.5"}, "--epochs"),
    ({"--dataset-size": "1e3"}, "--dataset-size"),
    ({"--sigma": "-1"}, "--sigma"),
    ({"--sigma": "nan"}, "--sigma"),
    ({"--delta": "1"}, "--delta"),
    ({"--delta": "0"}, "--delta"),
    ({"--sigma": None, "--target-epsilon": "0"}, "--target-epsilon"),
    ({"--sigma": None}, "--sigma"),
    ({"--target-epsilon": "1"}, "--epochs"),
    ({"--epochs": None}, "--epochs"),
    ({"--samplers": "poisson,foo"}, "--samplers"),
])
def test_cli_bad_input_one_line_exit_2(capsys, change, flag):
    args = {**OK, **change}
    argv = [x for k, v in args.items() if v is not None for x in (k, v)]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err


def test_a_row_beyond_the_time_limit_is_listed_and_the_audit_answers(capsys):
    """> 1e6 PLD steps: the Poisson row is refused by its cost model (issue 38: the audit never aborts); it is listed
    not computed, its reason below the table naming --epochs and --force, and the exact row answers."""
    args = {**OK, "--dataset-size": "100000", "--batch-size": "1", "--epochs": "11",
            "--samplers": "poisson,deterministic"}
    code, out, err = run(capsys, *[x for k, v in args.items() for x in (k, v)])
    assert code == 0 and err == ""
    note = next(l for l in out.splitlines() if l.startswith("poisson: not computed:"))
    assert "--epochs" in note and "--force" in note


@pytest.fixture(scope="module")
def sampler_audit_script(pipeline_script):
    return pipeline_script("sampler_audit")


def test_pipeline_point_and_checks(sampler_audit_script):
    p = {"run": "t", "dataset_size": 1000, "batch_size": 250, "sigma": 2.0, "delta": 1e-5, "epochs": 2}
    rows = sampler_audit_script.compute_point(p, optional_max_steps=0)
    by = {r["sampler"]: r for r in rows}
    assert set(by) == {"poisson", "wor", "shuffle", "deterministic"}
    assert by["deterministic"]["value"] == pytest.approx(gaussian.epsilon(1e-5, 2.0 / math.sqrt(2)), rel=1e-9)
    assert by["shuffle"]["lower"] <= by["deterministic"]["value"]
    assert rows[0]["poisson_provably_wrong_for_shuffle"] == (by["shuffle"]["value"] > by["poisson"]["value"])
    bad = [dict(by["shuffle"], lower=by["deterministic"]["value"] * 1.01), by["deterministic"]]
    with pytest.raises(RuntimeError, match="Thm 4.1"):
        sampler_audit_script.check_rows(bad, p)
    with pytest.raises(RuntimeError, match="lower"):
        sampler_audit_script.check_rows([dict(by["poisson"], lower=by["poisson"]["value"] * 2)], p)


def test_interval_text_rounds_outward_with_the_digits_of_the_width():
    """engine.result.interval_text, the one text of a certified interval (CLI, audit table, pipeline tables): the
    printed ends contain the certified ones, and the printed width is at most twice the true one (within 8 digits)."""
    from dpsampling.engine.result import interval_text

    for lo, up in [(2.385073733, 2.385210788), (0.2284579, 0.2285037), (10.82311965, 54.04581807),
                   (2.3851215361, 2.3851215898)]:
        text = interval_text(lo, up)
        a, b = (float(x) for x in text.strip("[]").split(", "))
        assert a <= lo <= up <= b and b - a <= 2 * (up - lo), text


def _printed(cell):
    """The numbers of a table cell: '[a, b]' -> (a, b), a number -> (x,)."""
    return tuple(float(x) for x in cell.strip("[]").split(", "))


@pytest.mark.parametrize("kw", [dict(epochs=5, sigma=1.0), dict(epochs=60, sigma=1.1),
                                dict(epochs=3, target_epsilon=2.0)])
def test_every_printed_bound_is_on_its_side(capsys, kw):
    """The CLI's audit table and the verdicts, parsed back, against the DataFrame's certified values: a printed upper
    end is ≥ the certified one, a printed lower end ≤, an interval contains the certified one."""
    n, b = (60000, 256) if kw.get("epochs") == 60 else (1000, 100)
    df = dpsampling.audit(n, b, delta=1e-5, samplers=FOUR, **kw)
    rows = df.set_index("sampler")
    table = cli._audit_text(df).splitlines()
    head = next(i for i, l in enumerate(table) if l.startswith("sampler"))
    for line in table[head + 1: head + 1 + len(df)]:
        sampler, rest = line.split(None, 1)
        cell = rest[:rest.index("]") + 1] if rest.startswith("[") else rest.split()[0]
        r, got = rows.loc[sampler], _printed(cell)
        if len(got) == 2:
            assert got[0] <= r["lower"] and got[1] >= r["upper"], (sampler, cell)
        elif r["kind"] in ("upper", "interval"):
            assert got[0] >= r["value"], (sampler, cell)
        elif r["kind"] == "lower":
            assert got[0] <= r["lower"], (sampler, cell)
        else:
            assert got[0] == pytest.approx(r["value"], rel=1e-3), (sampler, cell)
    p, s = rows.loc["poisson"], rows.loc["shuffle"]
    sym = "ε" if df.attrs["question"] == "epsilon" else "σ"
    for v in df.attrs["verdicts"]:
        for x in re.findall(rf"with Poisson accounting \({sym} ≤ (\d+(?:\.\d+)?)\)", v):
            assert float(x) >= p["upper"], v
        for x in re.findall(r"at least (\d+(?:\.\d+)?) \(and at most (\d+(?:\.\d+)?)\)", v):
            assert float(x[0]) <= s["lower"] and float(x[1]) >= s["upper"], v
        for x in re.findall(r"the Poisson σ = (\d+(?:\.\d+)?)", v):
            assert float(x) >= p["value"], v
        for x in re.findall(r"needs σ > (\d+(?:\.\d+)?) \(σ = (\d+(?:\.\d+)?) suffices\)", v):
            assert float(x[0]) <= s["lower"] and float(x[1]) >= s["upper"] == s["value"], v


def test_a_row_that_cannot_be_computed_is_listed_and_the_others_answer(capsys):
    """MNIST at σ = 0.05: the Poisson PLD needs more memory than a laptop has; its row says why, the
    deterministic row is exact (the Gaussian at σ/√E) and the command line exits 0."""
    kw = dict(epochs=60, sigma=0.05, delta=1e-5, samplers=("poisson", "deterministic"))
    df = dpsampling.audit(60000, 256, **kw).set_index("sampler")
    assert df.loc["poisson", "flags"] == "not_computed" and math.isnan(df.loc["poisson", "value"])
    assert "poisson" in df.attrs["skipped"] and "memory" in str(df.attrs["skipped"]["poisson"])
    assert df.loc["deterministic", "value"] == pytest.approx(gaussian.epsilon(1e-5, 0.05 / math.sqrt(60)), rel=1e-9)
    assert any("cannot be computed" in v for v in df.attrs["verdicts"])
    code, out, err = run(capsys, "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "0.05",
                         "--delta", "1e-5", "--samplers", "poisson,deterministic")
    assert code == 0 and err == ""
    line = next(l for l in out.splitlines() if l.startswith("poisson"))
    assert "not computed (below)" in line  # the reason goes below the table, not into a column
    note = next(l for l in out.splitlines() if l.startswith("poisson: not computed:"))
    assert "memory" in note and "--sigma" in note
    assert "method" not in note.split("not computed")[1]  # the audit has no --method: the refusal never names one
    code, out, _ = run(capsys, "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "0.05",
                       "--delta", "1e-5", "--samplers", "poisson,deterministic", "--json")
    assert "poisson" in json.loads(out)["not_computed"]


def test_a_sigma_too_small_for_the_shuffle_max_statistic_still_answers_what_is_proven():
    """σ = 0.01 over MNIST: the max-statistic PLD would need too many slices; the shuffle row answers what is proven
    (issue 38): one epoch's E_C lower end (E epochs reveal at least as much as one) and the deterministic upper end,
    flagged, its reason naming σ (the audit's --sigma), not a keyword the audit does not have."""
    from dpsampling.samplers import shuffle

    df = dpsampling.audit(60000, 256, epochs=60, sigma=0.01, delta=1e-5, samplers=("shuffle", "deterministic"))
    assert "shuffle" not in df.attrs.get("skipped", {})
    row = df.set_index("sampler").loc["shuffle"]
    one = shuffle.epsilon(1e-5, sigma=0.01, steps=235, epochs=1)
    assert row["lower"] == one.lower and shuffle.ONE_EPOCH_LOWER_FLAG in row["flags"]
    assert row["upper"] == df.set_index("sampler").loc["deterministic", "value"]
    reason = shuffle.epsilon(1e-5, sigma=0.01, steps=235, epochs=60).accuracy["lower_reason"]
    assert "sigma" in reason and "discretization" not in reason and "grid_step" not in reason


# --------------------------------------------------------------------------- a sampler that caps its batches
def test_capped_row_joins_only_with_a_cap_and_a_cap_at_n_is_poisson():
    """truncated_poisson (batch "capped") is not in a default audit; with a cap at the dataset size its row is
    Poisson's interval (no batch can exceed n; the upper end at most dp_accounting's event value), computed
    independently by the Poisson sampler's own row."""
    plain = dpsampling.audit(1000, 100, epochs=2, sigma=1.0, delta=1e-5, samplers=None)
    assert "truncated_poisson" not in set(plain["sampler"])
    df = dpsampling.audit(1000, 100, epochs=2, sigma=1.0, delta=1e-5, samplers=("poisson", "truncated_poisson"),
                          max_batch_size=1000).set_index("sampler")
    t, p = df.loc["truncated_poisson"], df.loc["poisson"]
    assert t["relation"] == "add_remove" and t["kind"] == "interval"
    assert t["lower"] == pytest.approx(p["lower"], rel=1e-6)
    # the upper end: the smaller of Poisson's and dp_accounting's event value (samplers/truncated_poisson.py)
    assert t["upper"] <= p["upper"] and t["upper"] == pytest.approx(p["upper"], rel=1e-5)
    with pytest.raises(ParameterError) as e:
        dpsampling.audit(1000, 100, epochs=2, sigma=1.0, delta=1e-5, samplers=("truncated_poisson",))
    assert e.value.param == "max_batch_size"


def test_smallest_cap_is_the_rows_cap_and_its_verdict_holds():
    """max_batch_size="smallest": the row is computed at the cap the spec's cap_search finds, whose certified upper
    ε is within 1 % of Poisson's upper end (checked against the Poisson row, not the search's own number); a cap
    below it is not (checked by asking that cap)."""
    kw = dict(epochs=2, sigma=1.0, delta=1e-5, samplers=("poisson", "truncated_poisson"))
    df = dpsampling.audit(2000, 100, max_batch_size="smallest", **kw)
    cap = df.attrs["smallest_cap"]["truncated_poisson"]
    rows = df.set_index("sampler")
    assert rows.loc["truncated_poisson", "upper"] <= 1.01 * rows.loc["poisson", "upper"] * (1 + 1e-3)
    below = dpsampling.audit(2000, 100, max_batch_size=cap.max_batch_size - 1, **kw).set_index("sampler")
    assert below.loc["truncated_poisson", "upper"] > 1.01 * cap.poisson_epsilon
    assert any(f"B = {cap.max_batch_size}" in v for v in df.attrs["verdicts"])


def test_cli_max_batch_size_errors_name_the_flag(capsys):
    code, out, err = run(capsys, "--dataset-size", "1000", "--batch-size", "100", "--epochs", "2", "--sigma", "1",
                         "--delta", "1e-5", "--max-batch-size", "0")
    assert code == 2 and "--max-batch-size" in err and len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "--dataset-size", "1000", "--batch-size", "100", "--target-epsilon", "2",
                         "--epochs", "2", "--delta", "1e-5", "--max-batch-size", "smallest")
    assert code == 2 and "--max-batch-size" in err


@pytest.mark.parametrize("kw", [dict(epochs=2, sigma=1.1), dict(epochs=2, target_epsilon=4.0),
                                dict(sigma=2.0, target_epsilon=3.0)])
def test_value_is_the_safe_end_of_every_row(kw):
    """Every sampler (the capped one too), every question: ``value`` is the safe end — ε: the certified upper end;
    σ: the sufficient σ (the upper end); epochs: the epochs the certified upper end of ε allows (the lower end) —
    and each row names the method of each end and its relation."""
    df = dpsampling.audit(200, 20, delta=1e-5, max_batch_size=30, **kw)
    assert set(df["sampler"]) == set(samplers.SAMPLERS)
    safe = "lower" if df.attrs["question"] == "epochs" else "upper"
    for r in df.to_dict("records"):
        spec = samplers.get_spec(r["sampler"])
        assert r["value"] == r[safe], (r["sampler"], df.attrs["question"])
        assert r["lower"] <= r["value"] <= r["upper"] or r["kind"] == "exact", r["sampler"]
        assert r["kind"] in ("interval", "exact") and r["upper_method"] and r["lower_method"], r["sampler"]
        assert r["relation"] == spec.relation and r["upper_best_known"] == spec.upper_best_known
        method = r["method"] if isinstance(r["method"], str) else None
        assert method == spec.default_method  # the selector (None: no method choice)
