"""phased_runs (issue 39): a run's rows after each phase, dp_accounting's events against the number the issue prints
and against events built by hand, the script's check (it must reject a certified interval above a reference, so it is
not true by construction), and the smoke run's CSV, figure and table."""

import pandas as pd
import pytest

COLUMNS = {"run", "sampler", "phase", "phase_sigma", "phase_batch_size", "phase_epochs", "epochs", "total_steps",
           "relation", "method", "kind", "value", "lower", "upper", "lower_method", "upper_method", "rel_width",
           "note", "bounds_certified_lower", "cpu_seconds", "code_hash"}
#: a σ schedule on a small dataset (10 steps per epoch, q = 0.1): cheap for every method
POINT = {"run": "t", "dataset_size": 1000, "delta": 1e-5,
         "phases": [{"sigma": 1.5, "batch_size": 100, "epochs": 2}, {"sigma": 1.0, "batch_size": 100, "epochs": 1}]}
SETTINGS = {"rel_tol": 1e-3, "dp_accounting_discretization": 1e-3}
PLD, RDP = "dp_accounting PLD (pessimistic)", "dp_accounting RDP"


@pytest.fixture(scope="module")
def script(pipeline_script):
    return pipeline_script("phased_runs")


@pytest.fixture(scope="module")
def rows(script):
    return {s: script.compute_point(dict(POINT, sampler=s), **SETTINGS) for s in ("poisson", "wor")}


def _by(rows, method):
    return {r["phase"]: r for r in rows if r["method"] == method}


def test_rows_after_each_phase_labelled_with_relation_and_method(rows):
    for sampler, relation in (("poisson", "add_remove"), ("wor", "replace_one")):
        got = rows[sampler]
        assert len(got) == 2 * (3 if sampler == "poisson" else 2) and {r["relation"] for r in got} == {relation}
        cert = _by(got, "certified")
        assert [cert[k]["epochs"] for k in (1, 2)] == [2, 3] and [cert[k]["total_steps"] for k in (1, 2)] == [20, 30]
        for k in (1, 2):
            assert cert[k]["lower_method"] and cert[k]["upper_method"] and cert[k]["kind"] == "interval"
            # WOR under replace-one: the pair dominating both directions above, the add/remove lower end below
            assert 0 < cert[k]["lower"] <= cert[k]["upper"] and cert[k]["rel_width"] <= (1e-3 if sampler == "poisson"
                                                                                          else 0.5)
        assert cert[2]["lower"] > cert[1]["upper"]  # the second phase adds privacy loss
        rdp = _by(got, RDP)
        assert all(rdp[k]["kind"] == "upper" and rdp[k]["bounds_certified_lower"] is True for k in (1, 2))
    pld = _by(rows["poisson"], PLD)
    assert all(pld[k]["kind"] == "upper" and pld[k]["bounds_certified_lower"] is True for k in (1, 2))
    assert _by(rows["poisson"], "certified")[1]["note"] == ""
    assert _by(rows["wor"], PLD) == {}  # not answered: no row, the certified row says why
    assert all(r["note"] == f"{PLD} not answered: PLDAccountant does not support SampledWithoutReplacementDpEvent "
               "under REPLACE_ONE" for r in _by(rows["wor"], "certified").values())


def test_poisson_certified_interval_holds_dp_accounting_pair_on_a_finer_grid(rows):
    """Independent reference: dp_accounting's own PLDs of the two phases at d = 1e-4 (10× finer than the row's
    reference), composed by dp_accounting: pessimistic above our lower end, optimistic below our upper end."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    cert = _by(rows["poisson"], "certified")[2]
    ends = []
    for pessimistic in (True, False):
        one, two = (pld.from_gaussian_mechanism(s, sampling_prob=0.1, value_discretization_interval=1e-4,
                                                pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
                    for s in (1.5, 1.0))
        ends.append(one.self_compose(20).compose(two.self_compose(10)).get_epsilon_for_delta(1e-5))
    up, lo = ends
    assert lo <= cert["upper"] and cert["lower"] <= up
    assert cert["lower"] <= _by(rows["poisson"], PLD)[2]["value"]


def test_events_are_dp_accountings_by_hand_and_the_issue_s_number():
    """The WOR event is the issue's ``SampledWithoutReplacementDpEvent(60000, 256, GaussianDpEvent(0.55))`` at
    σ 1.1 (replace-one: σ/2), whose RDP value the issue prints as 24.12 (60 epochs, 235 steps each); the Poisson
    event is ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``."""
    import dp_accounting
    from dp_accounting import dp_event as ev

    from dpsampling import references

    assert references.event_relation("wor") == "replace_one" and references.event_relation("poisson") == "add_remove"
    wor = references.phase_event("wor", sigma=1.1, dataset_size=60000, batch_size=256, total_steps=235 * 60)
    assert wor == ev.SelfComposedDpEvent(ev.SampledWithoutReplacementDpEvent(60000, 256, ev.GaussianDpEvent(0.55)),
                                         235 * 60)
    (row,) = references.run_upper_bounds("wor", [(1.1, 256, 235 * 60)], 1e-5, dataset_size=60000,
                                         relation="replace_one")
    assert round(row[RDP][0].upper, 2) == 24.12
    poisson = references.phase_event("poisson", sigma=0.9, dataset_size=1000, batch_size=100, total_steps=7)
    assert poisson == ev.SelfComposedDpEvent(ev.PoissonSampledDpEvent(0.1, ev.GaussianDpEvent(0.9)), 7)
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(ev.ComposedDpEvent([poisson, poisson]))
    (row,) = references.run_upper_bounds("poisson", [(0.9, 100, 14)], 1e-5, dataset_size=1000,
                                         relation="add_remove")
    assert row[RDP][0].upper == acc.get_epsilon(1e-5)


def test_a_sampler_without_an_event_is_refused():
    from dpsampling import references
    from dpsampling.engine.errors import ParameterError

    with pytest.raises(ParameterError, match="sampler"):
        references.phase_event("shuffle", sigma=1.0, dataset_size=100, batch_size=10, total_steps=1)


def test_two_equal_phases_are_one_run_of_their_length(script):
    split = script.compute_point(dict(POINT, sampler="poisson", phases=[{"sigma": 1.2, "batch_size": 100,
                                                                         "epochs": 1}] * 2), **SETTINGS)
    whole = script.compute_point(dict(POINT, sampler="poisson", phases=[{"sigma": 1.2, "batch_size": 100,
                                                                         "epochs": 2}]), **SETTINGS)
    a, b = _by(split, "certified")[2], _by(whole, "certified")[1]
    assert (a["lower"], a["upper"]) == (b["lower"], b["upper"])
    assert _by(split, RDP)[2]["value"] == pytest.approx(_by(whole, RDP)[1]["value"], rel=1e-12)


def test_check_rejects_a_reference_below_the_certified_lower_end(script, rows):
    """The certified interval moved up by 1 % lies above dp_accounting's pessimistic PLD (which it contains up to
    its discretisation): rejected, naming the run, the phase and the method; so is an inverted interval."""
    good = rows["poisson"]
    script.check_rows(good, "run t")
    shifted = [dict(r, lower=r["lower"] * 1.01, upper=r["upper"] * 1.01) if r["method"] == "certified" else r
               for r in good]
    with pytest.raises(RuntimeError, match=r"^run t, after phase 1: dp_accounting PLD \(pessimistic\) gives"):
        script.check_rows(shifted, "run t")
    script.check_rows(rows["wor"], "run t")
    wor_rdp = _by(rows["wor"], RDP)[2]["value"]
    above_rdp = [dict(r, lower=wor_rdp * 1.001, upper=wor_rdp * 1.002) if r["method"] == "certified"
                 and r["phase"] == 2 else r for r in rows["wor"]]
    with pytest.raises(RuntimeError, match=r"^run t, after phase 2: dp_accounting RDP gives"):  # WOR: no PLD row
        script.check_rows(above_rdp, "run t")
    inverted = [dict(r, lower=r["upper"] * 1.001) if r["method"] == "certified" else r for r in good]
    with pytest.raises(RuntimeError, match=r"^run t, after phase 1: certified lower"):
        script.check_rows(inverted, "run t")


@pytest.mark.parametrize("path,value,needle", [
    (("phased_runs", "grid", 0, "phases"), [[{"sigma": 0, "batch_size": 100, "epochs": 1}]], "sigma"),
    (("phased_runs", "grid", 0, "phases"), [[{"sigma": 1.0, "batch_size": 100}]], "epochs"),
    (("phased_runs", "grid", 0, "phases"), [[{"sigma": 1.0, "batch_size": 100, "epochs": 1, "q": 0.1}]], "q"),
])
def test_bad_phases_rejected_naming_the_key(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)


# ---------------------------------------------------------------- the smoke run


@pytest.fixture(scope="module")
def smoke_csv(smoke_run):
    return pd.read_csv(smoke_run / "results" / "phased_runs" / "phased_runs.csv")


@pytest.mark.pipeline
def test_smoke_csv_every_reference_bounds_the_certified_lower_end(smoke_csv):
    assert COLUMNS <= set(smoke_csv.columns)
    assert set(smoke_csv["method"]) == {"certified", PLD, RDP}
    refs = smoke_csv[smoke_csv["method"] != "certified"]
    assert refs["kind"].eq("upper").all()
    assert len(refs) >= 8 and refs["bounds_certified_lower"].astype(str).eq("True").all()
    cert = smoke_csv[smoke_csv["method"] == "certified"]
    assert (cert["lower"] <= cert["upper"]).all() and cert["relation"].isin(["add_remove", "replace_one"]).all()
    for (run, sampler, phase), g in refs.groupby(["run", "sampler", "phase"]):
        c = cert[(cert["run"] == run) & (cert["sampler"] == sampler) & (cert["phase"] == phase)]
        assert len(c) == 1 and (g["value"] >= c["lower"].iloc[0]).all()


@pytest.mark.pipeline
def test_smoke_figure_and_table(smoke_run):
    figures = smoke_run / "figures"
    assert (figures / "phased_runs.pdf").read_bytes()[:5] == b"%PDF-"
    assert (figures / "phased_runs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (figures / "phased_runs.md").read_text()
    assert "| run | sampler (relation) | N | δ | after phase |" in md
    assert "poisson (add_remove)" in md and "wor (replace_one)" in md
    assert "not answered*" in md
    assert f"*{PLD} not answered: PLDAccountant does not support SampledWithoutReplacementDpEvent" in md
    assert md.count("✓") >= 6 and "✗" not in md
