"""dpsampling.statements (dpsampling.statement) / `dpsampling statement`: TF Privacy's layout, the audit's numbers,
a footnote that is true, every printed bound on its side."""

import re

import pytest

import dpsampling
from dpsampling import cli, samplers
from dpsampling.engine.errors import ParameterError
from dpsampling import statements as st

RUN = dict(dataset_size=1000, batch_size=100, epochs=5, sigma=1.0, delta=1e-5)


def _gaussian_eps(s, delta):
    """ε(δ) of the Gaussian mechanism with sensitivity 1 and noise s (mpmath bisection, Balle & Wang 2018)."""
    import mpmath as mp

    mp.mp.dps = 40

    def d(e):
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s) - delta

    return float(mp.findroot(d, (mp.mpf(0), mp.mpf(200)), solver="bisect", tol=1e-30))


def _numbers(text):
    out = {}
    for label, key in (("once per epoch", "once"), ("Poisson sampling", "poisson"), ("sampler used", "used")):
        line = next(ln for ln in text.splitlines() if label in ln and "Epsilon" in ln)
        out[key] = [float(x) for x in re.findall(r"\d+\.\d+", line.split(":")[-1])]
    return out


def test_sampler_choices_are_the_librarys():
    sub = next(a for a in cli._parser()._actions if a.dest == "command")
    choices = next(a.choices for a in sub.choices["statement"]._actions if a.dest == "sampler")
    assert tuple(choices) == samplers.SAMPLERS


def test_text_statement_layout_and_numbers():
    text = st.statement(**RUN, sampler="shuffle")
    assert text.startswith("DP-SGD performed over 1000 examples with 100 examples per iteration")
    assert all(len(ln) <= 80 for ln in text.splitlines())
    n = _numbers(text)
    ref = _gaussian_eps(1.0 / 5**0.5, 1e-5)  # once per epoch: the Gaussian at σ/√E, independent of our engine
    assert len(n["once"]) == 1 and ref <= n["once"][0] <= ref * (1 + 1e-3)  # printed as an upper end: rounded up
    assert ref <= n["used"][1] <= ref * (1 + 1e-3)  # the shuffle interval's upper end is the deterministic value
    assert n["used"][0] < n["used"][1]
    assert "it is believed" not in text


def test_footnote_follows_the_audit():
    """Poisson: the Poisson line is the run's guarantee; shuffle: 'provably wrong' exactly when the shuffle lower
    bound exceeds the Poisson upper bound."""
    assert "This run used Poisson sampling: this is its guarantee." in st.statement(**RUN, sampler="poisson")
    text = st.statement(**RUN, sampler="shuffle")
    n = _numbers(text)
    flat = " ".join(text.split())
    assert ("provably wrong" in flat) == (n["used"][0] > n["poisson"][0])
    assert "not its guarantee" in flat


def test_package_attribute_is_the_function():
    import dpsampling

    assert dpsampling.statement(**RUN, sampler="deterministic") == st.statement(**RUN, sampler="deterministic")


def test_markdown():
    md = st.statement(**RUN, sampler="deterministic", format="markdown")
    assert "| Epsilon assuming Poisson sampling (*) |" in md and "|---|---|" in md


def test_cli_statement(capsys):
    argv = ["statement", "--dataset-size", "1000", "--batch-size", "100", "--epochs", "5", "--sigma", "1.0",
            "--delta", "1e-5", "--sampler", "deterministic"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == st.statement(**RUN, sampler="deterministic")
    assert cli.main(argv[:4] + ["1001"] + argv[5:]) == 2
    err = capsys.readouterr().err
    assert "--batch-size" in err and err.count("\n") == 1


def _cells(text):
    """label -> printed numbers of the three ε lines (text or Markdown)."""
    out = {}
    for label, key in (("once per epoch", "once"), ("Poisson sampling", "poisson"), ("sampler used", "used")):
        line = next(ln for ln in text.splitlines() if label in ln and "Epsilon" in ln)
        out[key] = [float(x) for x in re.findall(r"\d+\.\d+|\d+(?=\D*$)", line.split(")")[-1].split(":")[-1])]
    return out


@pytest.mark.parametrize("sampler", ["shuffle", "wor", "deterministic"])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_every_printed_bound_is_on_its_side(sampler, fmt):
    """Each number of the statement, parsed back, against the audit's certified value: the once-per-epoch and
    Poisson numbers and every upper end are ≥ the certified upper end, every lower end ≤ the certified lower end
    (rounded to nearest, 2.385217 printed as 2.385 would fail)."""
    import dpsampling

    df = dpsampling.audit(**{k: RUN[k] for k in ("dataset_size", "batch_size")}, epochs=RUN["epochs"],
                          sigma=RUN["sigma"], delta=RUN["delta"], samplers=("deterministic", "poisson", sampler))
    rows = df.set_index("sampler")
    n = _cells(st.statement(**RUN, sampler=sampler, format=fmt))
    assert n["once"][0] >= rows.loc["deterministic", "upper"]
    assert n["poisson"][0] >= rows.loc["poisson", "upper"]
    used = rows.loc[sampler]
    if len(n["used"]) == 2:
        assert n["used"][0] <= used["lower"] and n["used"][1] >= used["upper"]
    else:
        assert n["used"][0] >= used["upper"]
    text = " ".join(st.statement(**RUN, sampler=sampler, format=fmt).split())
    for x in re.findall(r"at least (\d+\.\d+)", text):
        assert float(x) <= used["lower"]


def test_a_capped_sampler_states_its_cap_s_interval():
    """truncated_poisson with a cap at the dataset size is Poisson exactly: its line prints the Poisson row's interval
    (computed by the Poisson sampler, independently), under add-or-remove adjacency; without a cap it is refused,
    naming max_batch_size."""
    run = dict(dataset_size=1000, batch_size=100, epochs=2, sigma=1.0, delta=1e-5)
    text = dpsampling.statement(**run, sampler="truncated_poisson", max_batch_size=1000)
    p = dpsampling.audit(1000, 100, epochs=2, sigma=1.0, delta=1e-5, samplers=("poisson",)).iloc[0]
    assert "add-or-remove-one adjacency" in text
    lo, up = map(float, re.search(r"\(truncated_poisson\):\s+\[([\d.]+), ([\d.]+)\]", text).groups())
    # Poisson's interval, rounded outward, except that the upper end may be dp_accounting's truncated event where it
    # is the smaller (a second valid upper end, samplers/truncated_poisson.py)
    assert lo <= p["lower"] <= up and up - lo <= 2e-3
    with pytest.raises(ParameterError) as e:
        dpsampling.statement(**run, sampler="truncated_poisson")
    assert e.value.param == "max_batch_size"


@pytest.mark.parametrize("sampler", ["shuffle", "poisson"])
def test_a_cap_that_does_not_apply_is_refused_naming_it(sampler, capsys):
    """--max-batch-size with a sampler that does not cap its batches is an error naming it, never silently ignored
    (the audit adds the capped row with it; a statement is about one sampler)."""
    with pytest.raises(ParameterError) as e:
        dpsampling.statement(**RUN, sampler=sampler, max_batch_size=300)
    assert e.value.param == "max_batch_size" and "truncated_poisson" in str(e.value)
    argv = ["statement", "--dataset-size", "1000", "--batch-size", "100", "--epochs", "5", "--sigma", "1.0",
            "--delta", "1e-5", "--sampler", sampler, "--max-batch-size", "300"]
    assert cli.main(argv) == 2
    assert "--max-batch-size must be unset" in capsys.readouterr().err


# --------------------------------------------------------------------------- a run of phases

def _phase_numbers(text):
    out = {}
    for label, key in (("Epsilon of the run", "run"), ("Poisson sampling (*)", "poisson")):
        line = next((ln for ln in text.splitlines() if label in ln), None)
        if line is not None:
            out[key] = [float(x) for x in re.findall(r"\d+\.\d+", line.split(":")[-1])]
    return out


def test_one_phase_statement_is_the_single_runs_line():
    """One Poisson phase: the run's interval is the single statement's line of the sampler used (one answer)."""
    single = _numbers(st.statement(**RUN, sampler="poisson"))["used"]
    text = st.phases_statement([dpsampling.Phase("poisson", 1.0, 0.1, 10, 5)], delta=1e-5)
    assert _phase_numbers(text) == {"run": single}
    assert "This run used Poisson sampling in every phase" in text and all(len(ln) <= 80 for ln in text.splitlines())


def test_phases_statement_lists_every_phase_and_the_runs_interval():
    from dpsampling import phases

    run = [phases.Phase("wor", 1.1, 0.01, 300), phases.Phase("wor", 0.9, 0.01, 200, 2)]
    text = st.phases_statement(run, delta=1e-5, dataset_size=10000)
    flat = " ".join(text.split())
    assert "phase 0: WOR (add/remove), noise multiplier 1.1, sampling rate 0.01 (batches of 100 of 10000 examples), " \
           "300 steps × 1 epoch" in flat
    assert "phase 1: WOR (add/remove), noise multiplier 0.9, sampling rate 0.01 (batches of 100 of 10000 examples), " \
           "200 steps × 2 epochs" in flat
    n = _phase_numbers(text)
    used = phases.epsilon(run, 1e-5)
    poisson = phases.epsilon([phases.Phase("poisson", p.sigma, p.q, p.steps, p.epochs) for p in run], 1e-5)
    (lo, up), (p_up,) = n["run"], n["poisson"]
    assert lo <= used.lower and up >= used.upper and up - lo <= 2 * (used.upper - used.lower) + 1e-3 * up
    assert poisson.upper <= p_up <= poisson.upper * (1 + 1e-3)  # an upper end, rounded up
    # WOR and Poisson both under add/remove (WOR's own relation, Lebeda et al. Prop. 9): like for like, not named
    assert used.relation == poisson.relation == "add_remove"
    assert "replace-one" not in text and "(add/remove):" not in text
    assert "did not use Poisson sampling in phases 0, 1 (WOR)" in flat and "not its guarantee" in flat
    assert all(len(ln) <= 80 for ln in text.splitlines())
    md = st.phases_statement(run, delta=1e-5, format="markdown")
    assert "| Epsilon of the run (samplers used) |" in md and "| add/remove |" in md and "| replace-one |" not in md


def test_phases_statement_on_the_command_line(capsys, tmp_path):
    f = tmp_path / "run.csv"
    f.write_text("sampler,sigma,q,steps,epochs\npoisson,1.0,0.1,10,5\n")
    assert cli.main(["statement", "--phases", str(f), "--delta", "1e-5"]) == 0
    assert capsys.readouterr().out == st.phases_statement([dpsampling.Phase("poisson", 1.0, 0.1, 10, 5)], delta=1e-5)
    assert cli.main(["statement", "--phases", str(f), "--delta", "1e-5", "--sigma", "1"]) == 2
    assert capsys.readouterr().err.startswith("dpsampling: error: --sigma does not apply with --phases")
    assert cli.main(["statement", "--dataset-size", "100", "--delta", "1e-5"]) == 2
    assert "required: --batch-size, --epochs, --sigma, --sampler" in capsys.readouterr().err
