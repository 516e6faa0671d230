"""bench/pipeline_costs.py: the per-computation sums of Snakemake benchmark files, checked on hand-made files."""

import importlib.util
import os
from pathlib import Path

HEAD = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def load():
    path = Path(__file__).resolve().parents[2] / "bench" / "pipeline_costs.py"
    spec = importlib.util.spec_from_file_location("pipeline_costs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(folder, rel, s, rss, cpu, end):
    p = folder / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(HEAD + f"{s}\t0:00:01\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")
    os.utime(p, (end, end))


def test_sums_per_computation_and_critical_path(tmp_path, capsys):
    write(tmp_path, "a/grid.tsv", 1.0, 50, 0.5, 1001)
    write(tmp_path, "a/chunk_0.tsv", 10.0, 200, 9.0, 1011)
    write(tmp_path, "a/chunk_1.tsv", 4.0, 300, 3.5, 1005)
    write(tmp_path, "a/aggregate.tsv", 1.0, 60, 0.8, 1012)
    write(tmp_path, "a/plot.tsv", 2.0, 120, 1.7, 1014)
    write(tmp_path, "b/chunk_0.tsv", 3.0, 90, 2.0, 1003)
    write(tmp_path, "gallery.tsv", 5.0, 80, 4.0, 1020)
    mod = load()
    rows, total, span = mod.summary(mod.read(tmp_path))
    by = {r[0]: r for r in rows}
    assert by["a"] == ("a", 5, 18.0, 15.5, 300, 1.0 + 10.0 + 1.0 + 2.0)  # the chunks side by side: the longest
    assert by["b"] == ("b", 1, 3.0, 2.0, 90, 3.0)
    assert by["gallery"][1:] == (1, 5.0, 4.0, 80, 5.0)
    assert [r[0] for r in rows] == ["a", "gallery", "b"]  # most CPU first
    assert total == ("all", 7, 26.0, 21.5, 300, 14.0)
    assert span == 1020 - 1000  # first start (grid: 1001 - 1) to last end
    mod.main([str(tmp_path), "--markdown"])
    out = capsys.readouterr().out
    assert "| a | 5 | 18.0 | 15.5 | 300 | 14.0 |" in out and "| all | 7 | 26.0 | 21.5 | 300 | 14.0 |" in out
