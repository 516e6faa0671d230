"""Degenerate runs answered exactly by every sampler, against 50-digit mpmath: one step per epoch (shuffle and
balls_and_bins are then the Gaussian at σ/√epochs), q = 1 (Poisson/WOR: the Gaussian at σ/√(steps·epochs),
WOR at σ/2), one epoch of one step, and σ → ∞ (ε → 0)."""

import mpmath
import pytest

from dpsampling.samplers import account


def _gauss_delta(eps, s):
    mpmath.mp.dps = 50
    s, eps = mpmath.mpf(s), mpmath.mpf(eps)
    return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)


def _bisect(f, lo, hi, n=200):
    """Root of a decreasing f on [lo, hi] by bisection in mpmath."""
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(n):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return float((lo + hi) / 2)


def _gauss_epsilon(delta, s):
    if _gauss_delta(0, s) <= delta:
        return 0.0
    hi = 1
    while _gauss_delta(hi, s) > delta:
        hi *= 2
    return _bisect(lambda e: _gauss_delta(e, s) - delta, 0, hi)


def _gauss_sigma(eps, delta):
    return float(mpmath.exp(_bisect(lambda x: _gauss_delta(eps, mpmath.exp(x)) - delta, -5, 8)))


#: (sampler, steps, epochs, q, effective σ / σ)
CASES = [("balls_and_bins", 1, 3, None, 3 ** -0.5), ("shuffle", 1, 3, None, 3 ** -0.5),
         ("balls_and_bins", 1, 1, None, 1.0), ("shuffle", 1, 1, None, 1.0), ("deterministic", 1, 1, None, 1.0),
         ("poisson", 1, 1, 1.0, 1.0), ("wor", 1, 1, 1.0, 0.5), ("poisson", 7, 3, 1.0, 21 ** -0.5),
         ("wor", 5, 2, 1.0, 0.5 * 10 ** -0.5)]


@pytest.mark.parametrize("sampler,steps,epochs,q,scale", CASES)
@pytest.mark.parametrize("sigma", [0.8, 2.5])
def test_gaussian_cases_exact(sampler, steps, epochs, q, scale, sigma):
    kw = dict(steps=steps, epochs=epochs, q=q)
    r = account(sampler, "epsilon", 1e-6, sigma=sigma, **kw)
    assert r.kind == "exact" and r.lower == r.upper == r.value
    assert r.value == pytest.approx(_gauss_epsilon(1e-6, sigma * scale), rel=1e-9)
    r = account(sampler, "delta", 1.0, sigma=sigma, **kw)
    assert r.kind == "exact" and r.value == pytest.approx(float(_gauss_delta(1.0, sigma * scale)), rel=1e-9)
    if sampler != "wor":  # the WOR σ question is the Poisson one at 2σ (tests/test_account.py)
        bound = "lower" if sampler == "shuffle" else None
        r = account(sampler, "sigma", (1.0, 1e-6), bound=bound, **kw)
        assert r.kind == "exact" and r.value * scale == pytest.approx(_gauss_sigma(1.0, 1e-6), rel=1e-9)


def test_issue_example_balls_and_bins_one_step_per_epoch():
    """σ = 0.8, 3 epochs of one step: the Gaussian at 0.8/√3, ε(1e-6) = 12.10844 (was an upper bound 12.67)."""
    r = account("balls_and_bins", "epsilon", 1e-6, sigma=0.8, steps=1, epochs=3)
    assert r.kind == "exact" and r.value == pytest.approx(12.10844, abs=5e-6)


@pytest.mark.parametrize("sampler", ["poisson", "wor", "deterministic"])
def test_sigma_to_infinity_epsilon_is_zero(sampler):
    """σ → ∞: δ(0) falls below the target, so ε = 0 exactly (both ends)."""
    r = account(sampler, "epsilon", 1e-5, sigma=1e6, steps=10, epochs=2, q=0.1 if sampler != "deterministic" else None)
    assert r.value == 0.0 and r.lower == 0.0 and r.upper == 0.0


# ---------------------------------------------------------------- σ = 0: a non-private baseline, exactly
def _p_drawn(q, total_steps):
    """P(the record is in at least one of total_steps Poisson batches of rate q), 50 digits."""
    mpmath.mp.dps = 50
    return 1 - (1 - mpmath.mpf(q)) ** total_steps


#: (sampler, steps, epochs, q, P(the record is in some batch))
SIGMA_ZERO = [("deterministic", 10, 2, None, 1), ("shuffle", 10, 2, None, 1), ("balls_and_bins", 10, 2, None, 1),
              ("shuffle", 4, 1, 0.25, 1), ("poisson", 10, 3, 0.01, _p_drawn(0.01, 30)),
              ("wor", 10, 3, 0.01, _p_drawn(0.01, 30)), ("poisson", 7, 1, 1.0, 1),
              ("poisson", 1000, 1, 1e-12, _p_drawn(1e-12, 1000))]


@pytest.mark.parametrize("sampler,steps,epochs,q,drawn", SIGMA_ZERO)
def test_sigma_zero_is_exact(sampler, steps, epochs, q, drawn):
    """Noiseless sums: δ(ε) = P(record drawn) for every ε (disjoint outputs when it is), so ε(δ) = ∞ below it."""
    kw = dict(sigma=0, steps=steps, epochs=epochs, q=q)
    for eps in (0.0, 1.0, 1e3):
        r = account(sampler, "delta", eps, **kw)
        assert r.kind == "exact" and r.lower == r.upper == r.value
        assert r.value == pytest.approx(float(drawn), rel=1e-12)
    if float(drawn) > 1e-5:
        r = account(sampler, "epsilon", 1e-5, **kw)
        assert r.kind == "exact" and r.value == r.lower == r.upper == float("inf")
    else:  # the record is drawn with probability below δ: (0, δ)-DP
        assert account(sampler, "epsilon", 1e-5, **kw).value == 0.0


def test_sigma_zero_poisson_add_direction():
    """Add: the all-zero output has mass 1 without the record and (1-q)^T with it, so δ(ε) = max(0, 1 - e^ε(1-q)^T)
    and ε(δ) = log(1-δ) - T log(1-q)."""
    q, steps = 0.01, 100
    mpmath.mp.dps = 50
    miss = (1 - mpmath.mpf(q)) ** steps
    for eps in (0.0, 0.5, 1.0, 5.0):
        r = account("poisson", "delta", eps, sigma=0, steps=steps, q=q, direction="add")
        assert r.kind == "exact" and r.value == pytest.approx(float(max(0, 1 - mpmath.exp(eps) * miss)), abs=1e-15)
    for delta in (1e-5, 0.1, 0.5):
        r = account("poisson", "epsilon", delta, sigma=0, steps=steps, q=q, direction="add")
        assert r.kind == "exact" and r.value == pytest.approx(float(mpmath.log(1 - mpmath.mpf(delta)) - mpmath.log(miss)),
                                                              rel=1e-12)


@pytest.mark.parametrize("make", [float, int, lambda v: __import__("numpy").float32(v),
                                  lambda v: __import__("numpy").array(v)])
def test_sigma_zero_of_any_number_type(make):
    assert account("deterministic", "epsilon", 1e-5, sigma=make(0), steps=10).value == float("inf")


def test_sigma_zero_refusals_name_the_parameter():
    """What σ = 0 does not answer is refused naming the parameter: single directions under replace-one (a symmetric
    relation: both ways), a capped rate (truncation may drop the record), and the usual bad input."""
    import dataclasses

    from dpsampling import samplers
    from dpsampling.engine.errors import ParameterError

    with pytest.raises(ParameterError) as e:
        account("wor", "epsilon", 1e-5, sigma=0, steps=10, q=0.1, direction="add", relation="replace_one")
    assert e.value.param == "direction"
    for kw, param in ((dict(q=None), "q"), (dict(q=1.5), "q"), (dict(steps=0), "steps"), (dict(epochs=2.5), "epochs")):
        with pytest.raises(ParameterError) as e:
            account("poisson", "epsilon", 1e-5, **{"sigma": 0, "steps": 10, "q": 0.1, **kw})
        assert e.value.param == param
    with pytest.raises(ParameterError) as e:
        account("poisson", "epsilon", 1.5, sigma=0, steps=10, q=0.1)
    assert e.value.param == "delta"
    spec = samplers.register(dataclasses.replace(samplers.poisson.SPEC, name="toy_capped", batch="capped"))
    try:
        with pytest.raises(ParameterError) as e:
            account(spec.name, "epsilon", 1e-5, sigma=0, steps=10, q=0.1)
        assert e.value.param == "sigma"
    finally:
        samplers.unregister(spec.name)


def test_sigma_zero_leaves_sigma_calibration_alone():
    r = account("deterministic", "sigma", (1.0, 1e-6), steps=1)
    assert r.value == pytest.approx(_gauss_sigma(1.0, 1e-6), rel=1e-9)


# ---------------------------------------------------------------- extreme inputs: an answer or one ParameterError
#: (parameter, value) moved from the base question σ = 1, steps = 100, q = 0.01, δ = 1e-5, ε = 1
EXTREMES = [("sigma", 1e-3), ("sigma", 1e-6), ("sigma", 1e6), ("sigma", 0.0), ("steps", 10 ** 8), ("q", 1e-12),
            ("q", 1 - 1e-12), ("delta", 1e-300), ("epsilon", 1e3)]


#: the quantity whose target each target parameter is
_TARGET_OF = {"delta": "epsilon", "epsilon": "delta"}


def _extreme_cases():
    for sampler in ("poisson", "wor", "shuffle", "deterministic"):
        for name, value in EXTREMES:
            if name == "q" and sampler not in ("poisson", "wor"):
                continue  # one batch per step: q = 1/steps
            if (sampler, name) == ("wor", "epsilon"):
                continue  # Poisson's path at σ/2 (asked above), about 30 s
            for quantity in ("epsilon", "delta"):
                if _TARGET_OF.get(name, quantity) == quantity:
                    yield sampler, name, value, quantity


@pytest.mark.parametrize("sampler,name,value,quantity", list(_extreme_cases()))
def test_extreme_inputs_answer_or_name_the_parameter(sampler, name, value, quantity):
    """Each extreme question gets a valid result (ends ordered, ε ≥ 0 or ∞, δ in [0, 1]) or one ParameterError
    naming a parameter of the question, never an OverflowError, ZeroDivisionError or 'math range error'."""
    from dpsampling.engine.errors import ParameterError

    kw = dict(sigma=1.0, steps=100, q=0.01 if sampler in ("poisson", "wor") else None)
    target = {"epsilon": 1e-5, "delta": 1.0}[quantity]
    if name in kw:
        kw[name] = value
    else:
        target = value
    try:
        r = account(sampler, quantity, target, **kw)
    except ParameterError as e:
        assert e.param in ("sigma", "steps", "q", "delta", "epsilon", "force"), e
        assert str(e)
        return
    assert r.value == r.value and r.value >= 0  # not NaN
    lo = r.value if r.lower is None else r.lower
    up = r.value if r.upper is None else r.upper
    assert 0 <= lo <= up
    if quantity == "delta":
        assert lo <= 1.0
