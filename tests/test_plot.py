"""--plot: the per-epoch picture, written whole or not at all, and one line naming --plot when it cannot be."""

import os
import sys

import pandas as pd
import pytest

from dpsampling import plot

TABLE = pd.DataFrame([
    {"sampler": s, "epoch": e, "lower": lo * e**0.5, "upper": up * e**0.5, "kind": k, "method": "m",
     "value": up * e**0.5, "flags": ""}
    for s, lo, up, k in (("poisson", 0.3, 0.31, "upper"), ("deterministic", 3.9, 3.9, "exact"))
    for e in range(1, 5)])


@pytest.mark.parametrize("ext, magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF")])
def test_writes_png_and_pdf(tmp_path, ext, magic):
    pytest.importorskip("matplotlib")
    path = tmp_path / f"eps{ext}"
    plot.plot_per_epoch(TABLE, path)
    assert path.read_bytes()[:4] == magic
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left


@pytest.mark.parametrize("name", ["missing/eps.png", "eps.svg"])
def test_bad_path_names_plot(tmp_path, name):
    with pytest.raises(plot.PlotError, match="--plot"):
        plot.plot_per_epoch(TABLE, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder_leaves_nothing(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(plot.PlotError, match="--plot"):
            plot.plot_per_epoch(TABLE, folder / "eps.png")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_cli_unwritable_plot_is_one_line(tmp_path, capsys):
    # in-process (cli.main, what `python -m dpsampling.cli` runs: its exit code and streams)
    from dpsampling import cli

    code = cli.main(["audit", "--dataset-size", "600", "--batch-size", "60", "--epochs", "2", "--sigma", "1.1",
                     "--delta", "1e-5", "--samplers", "deterministic", "--plot", str(tmp_path / "no" / "eps.png")])
    out = capsys.readouterr()
    assert code == 2
    assert out.err.count("\n") == 1 and "--plot" in out.err and out.out == ""


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with pytest.raises(plot.PlotError, match=r"pip install 'dpsampling\[pipeline\]'"):
        plot.plot_per_epoch(TABLE, tmp_path / "eps.png")
    assert list(tmp_path.iterdir()) == []


def test_bands_are_drawn_for_intervals_and_lines_for_exact_rows():
    pytest.importorskip("matplotlib")
    fig = plot.per_epoch_figure(TABLE)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["poisson: certified interval", "deterministic: exact"]
    assert len(ax.collections) == 1  # one band: poisson's interval; the exact row is a line
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.parametrize("relations, axis", [(("add_remove", "zero_out"), "each band under its relation"),
                                             (("replace_one", "replace_one"), "ε under replace-one")])
def test_legend_and_axis_say_each_bands_relation(relations, axis):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    table = TABLE.assign(relation=TABLE["sampler"].map(dict(zip(("poisson", "deterministic"), relations))))
    fig = plot.per_epoch_figure(table)
    try:
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert labels == [f"poisson ({relations[0].replace('_', '-').replace('add-remove', 'add/remove')}): "
                          "certified interval", f"deterministic ({relations[1].replace('_', '-')}): exact"]
        assert axis in fig.axes[0].get_ylabel()
    finally:
        plt.close(fig)
