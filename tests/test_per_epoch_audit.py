"""audit(per_epoch=True) / --per-epoch: each sampler's interval after every epoch; epoch E is the plain row."""

import json

import pytest

import dpsampling
from dpsampling import cli
from dpsampling.engine.errors import ParameterError

RUN = dict(delta=1e-5, epochs=3, sigma=1.1)


def test_last_epoch_is_the_plain_row_and_first_is_one_epoch():
    df = dpsampling.audit(600, 20, per_epoch=True, **RUN)
    per = df.attrs["per_epoch"]
    assert set(per["sampler"]) == set(df["sampler"])
    for row in df.to_dict("records"):
        rows = per[per["sampler"] == row["sampler"]].sort_values("epoch")
        assert list(rows["epoch"]) == [1, 2, 3]
        last = rows.iloc[-1]
        for k in ("lower", "upper", "kind", "value", "lower_method", "upper_method", "relation"):
            assert last[k] == row[k], (row["sampler"], k)
        # every epoch's value is the safe end: the certified upper end, never the lower end
        assert (rows["value"] == rows["upper"]).all() and (rows["value"] >= rows["lower"]).all(), row["sampler"]
        one = dpsampling.audit(600, 20, delta=1e-5, epochs=1, sigma=1.1, samplers=[row["sampler"]]).iloc[0]
        first = rows.iloc[0]
        for k in ("lower", "upper", "kind", "value"):  # epoch 1 is the one-epoch audit's row
            assert first[k] == one[k] or (first[k] != first[k] and one[k] != one[k]), (row["sampler"], k)


def _cli(capsys, argv):
    """The command line in-process (cli.main: what `python -m dpsampling.cli` runs; the process itself is tested in
    tests/test_cli.py): its stdout, after a zero exit code."""
    code = cli.main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.mark.parametrize("sampler", ["deterministic", "poisson"])
def test_epoch_one_matches_the_epsilon_command(capsys, sampler):
    rate = ["--q", repr(20 / 600)] if sampler == "poisson" else []
    out = json.loads(_cli(capsys, ["epsilon", "--sampler", sampler, "--sigma", "1.1", "--steps", "30", "--epochs", "1",
                                   "--delta", "1e-5", *rate]))
    first = dpsampling.audit(600, 20, per_epoch=True, samplers=[sampler], **RUN).attrs["per_epoch"].iloc[0]
    assert first["value"] == out["value"]
    if sampler == "poisson":
        assert (first["lower"], first["upper"]) == (out["lower"], out["upper"])


def test_json_has_per_epoch_rows(capsys):
    out = _cli(capsys, ["audit", "--dataset-size", "600", "--batch-size", "20", "--epochs", "2", "--sigma", "1.1",
                        "--delta", "1e-5", "--samplers", "poisson,deterministic", "--per-epoch", "--json"])
    rows = json.loads(out)["per_epoch"]
    assert [(r["sampler"], r["epoch"]) for r in rows] == [("poisson", 1), ("poisson", 2), ("deterministic", 1),
                                                           ("deterministic", 2)]
    assert all({"sampler", "epoch", "lower", "upper", "kind"} <= set(r) for r in rows)
    assert all(r["lower"] <= r["upper"] for r in rows)


def test_per_epoch_only_for_an_epsilon_question():
    with pytest.raises(ParameterError) as err:
        dpsampling.audit(600, 20, delta=1e-5, epochs=3, target_epsilon=2.0, per_epoch=True)
    assert err.value.param == "per_epoch"
