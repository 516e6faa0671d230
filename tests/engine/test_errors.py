"""dpsampling.engine.errors: ParameterError's text (a missing parameter says so), its copy, and its renaming for an
entry point whose keywords differ from the library's."""

import copy
import pickle

from dpsampling.engine.errors import ParameterError


def test_a_missing_parameter_says_missing_never_got_none():
    e = ParameterError("q", "in (0, 1]", None)
    assert str(e) == "q is missing: it must be in (0, 1]" and e.missing
    f = ParameterError("q", "in (0, 1]", 0.0)
    assert str(f) == "q must be in (0, 1] (got 0.0)" and not f.missing


def test_copyable_with_its_fields():
    e = ParameterError("sigma", "> 0", -1.0, message="sigma must be > 0 (got -1.0); raise it")
    for c in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert (c.param, c.allowed, c.got, str(c)) == (e.param, e.allowed, e.got, str(e))


def test_renamed_names_the_callers_keyword():
    e = ParameterError("sigma", "in [0, 1e+06]", 2e6)
    r = e.renamed({"sigma": "noise_multiplier"})
    assert r.param == "noise_multiplier" and str(r) == "noise_multiplier must be in [0, 1e+06] (got 2000000.0)"
    assert e.renamed({"q": "sample_rate"}) is e
