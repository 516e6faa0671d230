"""A run of phases (samplers/phases.py, public as dpsampling.phases): today's answer for one setting, the engine's
interval for several, refusals naming the phase.  Named apart from tests/engine/test_phases.py (pytest's rootdir
imports need unique basenames)."""

import pytest

import dpsampling
from dpsampling import phases
from dpsampling.engine import phases as engine_phases
from dpsampling.engine.errors import ParameterError

Q = 256 / 60000


def test_one_setting_is_todays_answer():
    """One phase, or equal phases, give dpsampling.epsilon's answer (the same floats and relation)."""
    today = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=235, epochs=60)
    one = phases.epsilon([phases.Phase("poisson", 1.1, Q, 235, 60)], 1e-5)
    two = phases.epsilon([dpsampling.Phase("poisson", 1.1, Q, 235, 20),
                          {"sampler": "poisson", "sigma": 1.1, "q": Q, "steps": 235, "epochs": 40}], 1e-5)
    for r in (one, two):
        assert (r.value, r.lower, r.upper, r.kind, r.relation) == (today.value, today.lower, today.upper, today.kind,
                                                                    today.relation)
    wor_today = dpsampling.delta("wor", 10.0, sigma=1.1, q=Q, steps=235, epochs=60)
    assert phases.delta([phases.Phase("wor", 1.1, Q, 235, 60)], 10.0) == wor_today


def test_wor_phases_are_poisson_at_half_sigma_under_replace_one():
    """WOR phases: the engine's run at σ/2 (Lebeda et al. Prop. 9, samplers/wor.py), relation replace_one."""
    r = phases.epsilon([phases.Phase("wor", 2.2, Q, 7050), phases.Phase("wor", 1.8, Q, 7050)], 1e-5)
    e = engine_phases.epsilon(1e-5, [(1.1, Q, 7050), (0.9, Q, 7050)])
    assert (r.lower, r.upper) == (e.lower, e.upper) and r.relation == "replace_one"
    p = phases.epsilon([phases.Phase("poisson", 1.1, Q, 7050), phases.Phase("poisson", 0.9, Q, 7050)], 1e-5)
    assert p.relation == "add_remove" and (p.lower, p.upper) == (e.lower, e.upper)
    today = dpsampling.epsilon("poisson", 1e-5, sigma=1.1, q=Q, steps=7050)  # the one result model, as account's
    assert (p.kind, p.method, p.value) == (today.kind, today.method, p.upper) == ("interval", "certified", p.upper)
    assert (p.lower_method, p.upper_method) == (today.lower_method, today.upper_method)
    assert (p.upper - p.lower) / p.upper <= 1e-3


@pytest.mark.parametrize("bad,words", [
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("truncated_poisson", 1.1, Q, 10)],
     "phase 1 (truncated_poisson)"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("shuffle", 1.1, 0.5, 10)], "phase 1 (shuffle): q"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("poisson", 0.0, Q, 10)], "phase 1 (poisson): sigma"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("poisson", 1.1, 1.5, 10)], "phase 1 (poisson): q"),
    ([phases.Phase("poisson", 1.1, Q, 10), {"sampler": "poisson", "sigma": 1.0}], "phase 1"),
    ([], "phases"),
])
def test_refused_naming_the_phase(bad, words):
    with pytest.raises(ParameterError) as exc:
        phases.epsilon(bad, 1e-5)
    assert words in str(exc.value)


@pytest.mark.parametrize("run,relation,words", [
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("wor", 1.1, Q, 10)], "add_remove",
     "phase 1 (wor): sampler 'wor' is not covered under add_remove"),
    ([phases.Phase("poisson", 1.1, Q, 10), phases.Phase("balls_and_bins", 3.0, None, 10)], "replace_one",
     "phase 1 (balls_and_bins): sampler 'balls_and_bins' is not covered under replace_one"),
    ([phases.Phase("wor", 1.1, Q, 10), phases.Phase("deterministic", 3.0, None, 10)], "add_remove",
     "phase 0 (wor)"),
])
def test_relation_not_covering_a_phase_is_refused_naming_it(run, relation, words):
    with pytest.raises(ParameterError) as exc:
        phases.epsilon(run, 1e-5, relation=relation)
    assert words in str(exc.value)
