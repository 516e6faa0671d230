"""The audit of a run of phases (dpsampling/phases_audit.py, `dpsampling audit --phases`): one row per sampler, each
the run's answer with that sampler in every phase (the Python API's, not recomputed another way); a sampler the run
cannot be asked under listed with the library's reason; the printed table read back."""

import json
import re

from dpsampling import cli, phases
from dpsampling.phases_audit import audit_phases

Q = 0.01
RUN = [phases.Phase("poisson", 1.1, Q, 300), phases.Phase("wor", 0.9, Q, 200, 2)]


def test_rows_are_the_runs_answer_under_each_sampler():
    rows = {r.sampler: r for r in audit_phases(RUN, 1e-5)}
    for name in ("poisson", "wor"):
        same = phases.epsilon([phases.Phase(name, p.sigma, p.q, p.steps, p.epochs) for p in RUN], 1e-5)
        assert rows[name].result == same and rows[name].result.relation == same.relation
    assert rows["poisson"].result.relation == "add_remove" and rows["wor"].result.relation == "add_remove"
    # WOR at σ is Poisson at σ/2 (Lebeda et al. Prop. 9): its row is far above Poisson's
    assert rows["wor"].result.lower > rows["poisson"].result.upper
    shuffle = rows["shuffle"]
    assert shuffle.result is None and "phase 0 (shuffle)" in shuffle.why


def test_audit_phases_on_the_command_line(capsys, tmp_path):
    f = tmp_path / "run.csv"
    f.write_text("sampler,sigma,q,steps,epochs\n" + "".join(f"{p.sampler},{p.sigma},{p.q},{p.steps},{p.epochs}\n"
                                                            for p in RUN))
    assert cli.main(["audit", "--phases", str(f), "--delta", "1e-5", "--samplers", "poisson,wor,shuffle"]) == 0
    out = capsys.readouterr().out
    rows = {r.sampler: r.result for r in audit_phases(RUN, 1e-5, samplers="poisson,wor,shuffle")}
    for name in ("poisson", "wor"):
        line = next(ln for ln in out.splitlines() if ln.startswith(name + " "))
        lo, up = map(float, re.search(r"\[(\S+), (\S+)\]", line).groups())
        assert lo <= rows[name].lower and up >= rows[name].upper  # rounded outward
        assert "add/remove" in line  # both samplers' own relation (WOR: Lebeda et al. Prop. 9)
    assert "- shuffle: not computed: phase 0 (shuffle)" in out
    assert cli.main(["audit", "--phases", str(f), "--delta", "1e-5", "--samplers", "poisson,shuffle", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["sampler"] for r in d["rows"]] == ["poisson"] and list(d["not_computed"]) == ["shuffle"]
    assert d["rows"][0]["upper"] == rows["poisson"].upper and len(d["phases"]) == 2
    assert cli.main(["audit", "--phases", str(f), "--delta", "1e-5", "--epochs", "3"]) == 2
    assert capsys.readouterr().err.startswith("dpsampling: error: --epochs does not apply with --phases")
