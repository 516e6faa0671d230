"""samplers/relations.py: a sampler under another neighbouring relation, each end labelled with its method."""

import mpmath
import pytest

from dpsampling.samplers import account


def _gaussian_epsilon(mu, delta):
    """ε(δ) of the Gaussian mechanism of μ = Δ/σ (Balle & Wang 2018's exact curve, decreasing in ε), by bisection
    in mpmath at 40 digits."""
    mpmath.mp.dps = 40
    mu = mpmath.mpf(mu)

    def dlt(e):
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)

    lo, hi = mpmath.mpf(0), mpmath.mpf(1000)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return float(hi)


def test_deterministic_under_replace_one_is_the_gaussian_at_sensitivity_2():
    # 60 epochs, the record in one batch each: one Gaussian of μ = √60 · 2 / σ
    r = account("deterministic", "epsilon", 1e-5, sigma=1.1, steps=235, epochs=60, relation="replace_one")
    assert r.kind == "exact" and r.relation == "replace_one"
    assert r.value == pytest.approx(_gaussian_epsilon(60 ** 0.5 * 2 / 1.1, 1e-5), rel=1e-9)


@pytest.mark.parametrize("quantity, target", [("epsilon", 1e-5), ("sigma", (3.0, 1e-5))])
def test_every_end_names_its_method(quantity, target):
    """No end of an answer under another relation is labelled with a missing method (it printed 'None at
    sensitivity 2 (σ/2)' for the deterministic row)."""
    kw = {} if quantity == "sigma" else {"sigma": 1.1}
    for sampler, relation in (("deterministic", "replace_one"), ("shuffle", "replace_one"),
                              ("poisson", "zero_out"), ("deterministic", "zero_out")):
        r = account(sampler, quantity, target, steps=235, epochs=2, q=1 / 235, relation=relation, **kw) \
            if sampler == "poisson" else account(sampler, quantity, target, steps=235, epochs=2, relation=relation, **kw)
        for m in r.end_methods():
            assert m is None or "None" not in m, (sampler, relation, r.end_methods())
