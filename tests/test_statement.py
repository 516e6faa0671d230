"""dpsampling.statement / `dpsampling statement`: TF Privacy's layout, the audit's numbers, a footnote that is true."""

import re

import pytest

from dpsampling import cli, samplers
from dpsampling import statement as st

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
        out[key] = [float(x) for x in re.findall(r"\d+\.\d{3}", line.split(":")[-1])]
    return out


def test_sampler_literal_is_the_librarys():
    assert st.SAMPLERS == samplers.SAMPLERS


def test_text_statement_layout_and_numbers():
    text = st.statement(**RUN, sampler="shuffle")
    assert text.startswith("DP-SGD performed over 1000 examples with 100 examples per iteration")
    assert all(len(ln) <= 80 for ln in text.splitlines())
    n = _numbers(text)
    ref = _gaussian_eps(1.0 / 5**0.5, 1e-5)  # once per epoch: the Gaussian at σ/√E, independent of our engine
    assert n["once"] == [pytest.approx(ref, abs=5e-4)]
    assert n["used"][1] == pytest.approx(ref, abs=5e-4)  # the shuffle interval's upper end is the deterministic value
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
