"""samplers/shuffle.py (and the deterministic upper end it is compared with): the E_C lower bound of one epoch (Chua §4.3,
against mpmath) and the dynamic / persistent lower bounds over several epochs."""

import math

import mpmath
import pytest
from dpsampling.samplers import _ec_sets
from dpsampling.papers import chua

from dpsampling.papers import chua as batching
from dpsampling.samplers import deterministic as det
from dpsampling.samplers import shuffle
import mpmath as mp
import numpy as np


def _mp_gauss_delta(eps, s):
    mpmath.mp.dps = 50
    eps, s = mpmath.mpf(eps), mpmath.mpf(s)
    return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)


@pytest.mark.parametrize("sigma,epochs,eps", [(1.1, 60, 2.0), (0.8, 1, 1.0), (3.0, 20, 0.5), (1.0, 200, 8.0),
                                              (0.5, 3, 30.0)])
def test_deterministic_is_gaussian_at_sigma_over_sqrt_epochs(sigma, epochs, eps):
    exact = _mp_gauss_delta(eps, sigma / math.sqrt(epochs))
    r = det.delta(eps, sigma=sigma, steps=235, epochs=epochs)
    assert r.kind == "exact" and r.value == pytest.approx(float(exact), rel=1e-9)
    # ε(δ) at that δ returns ε where ε(δ) is well conditioned (δ not ≈ 1: at σ=1, E=200, ε=8,
    # 1 − δ ≈ 4e-11 and a δ rounding of 1e-16 moves ε by ~1e-6)
    if exact < 0.5:
        e = det.epsilon(float(exact), sigma=sigma, steps=235, epochs=epochs).value
        assert e == pytest.approx(eps, rel=1e-9)


def test_deterministic_sigma_inverts_epsilon():
    s = det.sigma(2.0, 1e-5, steps=235, epochs=60).value
    assert float(_mp_gauss_delta(2.0, s / math.sqrt(60))) == pytest.approx(1e-5, rel=1e-6)
    assert s == pytest.approx(math.sqrt(60) * det.sigma(2.0, 1e-5, steps=10).value, rel=1e-12)


@pytest.mark.parametrize("mode", ["dynamic", "persistent"])
@pytest.mark.parametrize("sigma,steps", [(0.5, 10_000), (1.0, 100)])
def test_one_epoch_equals_todays_e_c_value(mode, sigma, steps):
    r = shuffle.epsilon(1e-6, sigma=sigma, steps=steps, mode=mode)
    assert r.lower == batching.shuffle_epsilon_lower(1e-6, sigma, steps)
    d = shuffle.delta(1.0, sigma=sigma, steps=steps, mode=mode)
    assert d.lower == pytest.approx(batching.shuffle_delta_lower(1.0, sigma, steps), rel=1e-12)
    assert r.lower_method == batching.EC_METHOD and r.kind == "interval" and r.upper_best_known
    # the safe end: the certified upper end, the deterministic value (Chua Thm 4.1), never the lower end
    assert r.value == r.upper == det.epsilon(1e-6, sigma=sigma, steps=steps).value
    assert d.value == d.upper == det.delta(1.0, sigma=sigma, steps=steps).value


def test_persistent_is_one_epoch_at_sigma_over_sqrt_epochs():
    r = shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=9, mode="persistent")
    assert r.lower == batching.shuffle_epsilon_lower(1e-5, 1.1 / 3.0, 235)


def test_lower_below_deterministic_on_a_grid():
    for sigma in (0.5, 1.0, 2.0):
        for steps in (10, 1000):
            for epochs in (1, 4):
                for mode in shuffle.SHUFFLE_MODES:
                    r = shuffle.epsilon(1e-6, sigma=sigma, steps=steps, epochs=epochs, mode=mode)
                    assert r.upper == r.value == det.epsilon(1e-6, sigma=sigma, steps=steps, epochs=epochs).value
                    assert 0 < r.lower <= r.upper * (1 + 1e-12), (sigma, steps, epochs, mode)
    for sigma, epochs in ((0.5, 3), (1.5, 10)):
        for mode in shuffle.SHUFFLE_MODES:
            d = shuffle.delta(1.0, sigma=sigma, steps=100, epochs=epochs, mode=mode)
            assert 0 < d.lower <= d.upper * (1 + 1e-12) and d.value == d.upper


def test_dynamic_grows_with_epochs_and_stays_below_persistent_here():
    vals = [shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=e).lower for e in (1, 2, 5, 20)]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    # MNIST-like: persistent shuffling is (nearly) deterministic batching, dynamic much better
    pers = shuffle.epsilon(1e-5, sigma=1.1, steps=235, epochs=20, mode="persistent")
    assert vals[-1] < 0.5 * pers.lower and pers.lower == pytest.approx(pers.upper, rel=1e-3)


def test_shuffle_sigma_bracket():
    r = shuffle.sigma(2.0, 1e-5, steps=235, epochs=5, bound="lower")
    assert r.kind == "interval" and r.lower < r.upper and r.upper_best_known
    assert shuffle.epsilon(1e-5, sigma=r.lower, steps=235, epochs=5).lower > 2.0
    assert shuffle.epsilon(1e-5, sigma=r.lower * 1.002, steps=235, epochs=5).lower <= 2.0
    # the answer is a sufficient σ: the deterministic one (Chua Thm 4.1), never the insufficient lower end
    assert r.value == r.upper == pytest.approx(det.sigma(2.0, 1e-5, steps=235, epochs=5).value, rel=1e-12)
    assert shuffle.epsilon(1e-5, sigma=r.value, steps=235, epochs=5).upper <= 2.0 * (1 + 1e-9)
    assert shuffle.sigma(2.0, 1e-5, steps=235, epochs=5, bound="upper") == r


def test_bad_input():
    """Checked once, by samplers.account (the sampler modules take checked input)."""
    from dpsampling.samplers import account

    with pytest.raises(ValueError, match="epochs"):
        account("shuffle", "epsilon", 1e-5, sigma=1.0, steps=10, epochs=0)
    with pytest.raises(ValueError, match="mode"):
        account("shuffle", "epsilon", 1e-5, sigma=1.0, steps=10, epochs=2, mode="sometimes")
    with pytest.raises(ValueError, match="bound"):
        account("shuffle", "delta", 1.0, sigma=1.0, steps=10, bound="exact")
    with pytest.raises(ValueError, match="sigma"):
        account("deterministic", "delta", 1.0, sigma=-1.0, steps=10)


# ----------------------------------------------------------------------------- one epoch: the E_C lower bound (Chua §4.3)


@pytest.fixture(autouse=True)
def _restore_mp_dps():
    old = mp.mp.dps
    yield
    mp.mp.dps = old


def _mp_pq(c, sigma, steps):
    c, s = mp.mpf(c), mp.mpf(sigma)
    pw = mp.ncdf(c / s) ** (steps - 1)
    return 1 - mp.ncdf((c - 2) / s) * pw, 1 - mp.ncdf((c - 1) / s) * pw


@pytest.mark.regression_pin  # values from our own output; twin: mpmath at 60 digits (test_shuffle_delta_vs_mpmath, test_shuffle_epsilon_vs_mpmath_and_naive_loses_digits) and Chua's printed 10.994 / 0.226 / 7.5e-5
def test_shuffle_reference_values():
    eps_s, c = chua.shuffle_epsilon_lower(1e-6, 0.5, 10_000, return_argmax=True)
    assert eps_s == pytest.approx(10.99478, abs=5e-6)  # not the naive 10.99714
    assert c == pytest.approx(4.25)
    d, cs = chua.shuffle_delta_lower([4.0, 12.0], 0.4, 10_000, return_argmax=True)
    assert d[0] == pytest.approx(0.22605, abs=5e-6)
    assert d[1] == pytest.approx(7.473e-5, rel=1e-4)
    np.testing.assert_allclose(cs, [2.18, 3.42])


@pytest.mark.parametrize("sigma,steps,eps", [(0.3, 100_000, 40.0), (0.5, 100_000, 20.0), (0.25, 100_000, 30.0)])
def test_shuffle_delta_vs_mpmath(sigma, steps, eps):
    """Hard points: T = 1e5, small σ, large ε; direct formula at 50 digits around our argmax."""
    mp.mp.dps = 50
    ours, c_star = chua.shuffle_delta_lower(eps, sigma, steps, return_argmax=True)
    assert 1e-30 < ours < 1e-3
    grid = np.round(c_star + 0.01 * np.arange(-20, 21), 2)
    vals = []
    for c in grid:
        p, q = _mp_pq(c, sigma, steps)
        vals.append(p - mp.exp(eps) * q)
    k = int(np.argmax([float(v) for v in vals]))
    assert grid[k] == pytest.approx(c_star)
    assert ours == pytest.approx(float(vals[k]), rel=1e-9)
    # the same window on our grid gives the same values
    ours_w = np.exp(chua.shuffle_log_delta_lower(eps, sigma, steps, c_grid=grid[k : k + 1]))
    assert ours_w == pytest.approx(float(vals[k]), rel=1e-9)


def test_shuffle_epsilon_vs_mpmath_and_naive_loses_digits():
    mp.mp.dps = 50
    sigma, steps, delta = 0.5, 10_000, 1e-6
    ours, c_star = chua.shuffle_epsilon_lower(delta, sigma, steps, return_argmax=True)
    p, q = _mp_pq(c_star, sigma, steps)
    assert ours == pytest.approx(float(mp.log((p - delta) / q)), abs=1e-11)
    # the naive product in double precision is off in the 3rd decimal (the lead measured 10.99714)
    from scipy.stats import norm

    c = shuffle.DEFAULT_C_GRID
    pw = norm.cdf(c / sigma) ** (steps - 1)
    pn, qn = 1 - norm.cdf((c - 2) / sigma) * pw, 1 - norm.cdf((c - 1) / sigma) * pw
    with np.errstate(all="ignore"):
        naive = np.nanmax(np.where(pn > delta, np.log((pn - delta) / qn), -np.inf))
    assert naive == pytest.approx(10.99714, abs=5e-6)
    assert abs(naive - ours) > 2e-3


def test_log_pq_vs_mpmath_on_grid():
    mp.mp.dps = 50
    sigma, steps = 0.4, 100_000
    grid = np.array([0.0, 0.5, 1.0, 1.7, 2.5, 3.3, 4.0, 5.0])
    _, lp, lq = chua.shuffle_log_pq(sigma, steps, grid)
    for c, a, b in zip(grid, lp, lq):
        p, q = _mp_pq(c, sigma, steps)
        assert a == pytest.approx(float(mp.log(p)), rel=1e-12, abs=1e-14)
        assert b == pytest.approx(float(mp.log(q)), rel=1e-12, abs=1e-14)


def test_shuffle_lower_below_deterministic_random_draws():
    """Theorem 4.1: δ_S ≤ δ_D, so the E_C lower bound must stay below δ_D (200 seeded draws)."""
    rng = np.random.default_rng(20240501)
    for _ in range(200):
        sigma = float(np.exp(rng.uniform(np.log(0.15), np.log(5.0))))
        steps = int(np.exp(rng.uniform(0.0, np.log(1e5))))
        eps = float(rng.uniform(0.0, 30.0))
        lo = chua.shuffle_log_delta_lower(eps, sigma, steps)
        hi = chua.deterministic_log_delta(eps, sigma)
        assert lo <= hi + 1e-9, (sigma, steps, eps)


def test_T1_equals_deterministic():
    # T = 1: E_C is a halfspace and (P_S, Q_S) = (N(2,σ²), N(1,σ²)); optimum at C* = 1.5 + εσ².
    for sigma, eps in [(0.5, 1.0), (1.0, 3.0), (2.0, 0.2)]:
        c_star = 1.5 + eps * sigma**2
        val = chua.shuffle_delta_lower(eps, sigma, 1, c_grid=[c_star - 0.1, c_star, c_star + 0.1])
        assert val == pytest.approx(chua.deterministic_delta(eps, sigma), rel=1e-10)


def test_monotone_and_epsilon_delta_consistent():
    eps = np.linspace(0, 15, 61)
    d = chua.shuffle_delta_lower(eps, 0.6, 3000)
    assert np.all(np.diff(d) <= 0)
    # ε_S(δ) lower bound is consistent with δ_S(ε): δ_S_lower(ε_S_lower(δ)) ≥ δ·(1 − tiny)
    for delta in (1e-3, 1e-6, 1e-9):
        e = chua.shuffle_epsilon_lower(delta, 0.6, 3000)
        assert chua.shuffle_delta_lower(e, 0.6, 3000) == pytest.approx(delta, rel=1e-8)


def test_reverse_direction_not_larger():
    rng = np.random.default_rng(7)
    for _ in range(50):
        sigma = float(np.exp(rng.uniform(np.log(0.15), np.log(5.0))))
        steps = int(np.exp(rng.uniform(0.0, np.log(1e5))))
        eps = rng.uniform(0.0, 20.0, 4)
        fwd = chua.shuffle_log_delta_lower(eps, sigma, steps)
        rev = _ec_sets._shuffle_log_delta_reverse_complement(eps, sigma, steps)
        assert np.all(rev <= fwd + 1e-7)
    # equal at ε = 0 (total variation is symmetric)
    assert _ec_sets._shuffle_log_delta_reverse_complement([0.0], 1.0, 1000)[0] == pytest.approx(
        chua.shuffle_log_delta_lower(0.0, 1.0, 1000), abs=1e-9
    )


def test_vectorised_equals_scalar():
    eps = np.array([0.0, 0.3, 2.0, 7.5, 25.0])
    vec, cv = chua.shuffle_delta_lower(eps, 0.7, 5000, return_argmax=True)
    for e, v, c in zip(eps, vec, cv):
        s, cs = chua.shuffle_delta_lower(float(e), 0.7, 5000, return_argmax=True)
        assert s == v and (c == cs or (np.isnan(c) and np.isnan(cs)))
    deltas = np.array([[1e-2, 1e-5], [1e-8, 1e-12]])
    ev = chua.shuffle_epsilon_lower(deltas, 0.7, 5000)
    assert ev.shape == (2, 2)
    for dd, v in zip(deltas.ravel(), ev.ravel()):
        assert chua.shuffle_epsilon_lower(float(dd), 0.7, 5000) == v
    np.testing.assert_array_equal(chua.deterministic_delta(eps, 0.7), [chua.deterministic_delta(float(e), 0.7) for e in eps])
    assert isinstance(chua.shuffle_delta_lower(1.0, 0.7, 10), float)
    # blocks of ε give the same answer as one block
    many = np.linspace(0, 20, 1000)
    from dpsampling.samplers import _max_statistic as ms

    old = ms._BLOCK_ENTRIES
    try:
        ms._BLOCK_ENTRIES = 10_001 * 7
        blocked = chua.shuffle_delta_lower(many, 0.7, 5000)
    finally:
        ms._BLOCK_ENTRIES = old
    np.testing.assert_array_equal(blocked, chua.shuffle_delta_lower(many, 0.7, 5000))


@pytest.mark.parametrize(
    "kwargs,word",
    [
        ({"c_grid": []}, "c_grid"),
        ({"c_grid": [0.0, 1.0, 1.0]}, "c_grid"),
        ({"c_grid": [2.0, 1.0]}, "c_grid"),
        ({"c_grid": [0.0, np.nan]}, "c_grid"),
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"steps": 0}, "steps"),
        ({"steps": 2.5}, "steps"),
        ({"steps": True}, "steps"),
        ({"epsilon": -0.1}, "epsilon"),
    ],
)
def test_bad_input_delta(kwargs, word):
    args = {"epsilon": 1.0, "sigma": 1.0, "steps": 100}
    args.update(kwargs)
    with pytest.raises(ValueError, match=word):
        chua.shuffle_delta_lower(**args)


def test_log_pq_far_tail_vs_mpmath():
    """Thresholds where Φ(C/σ) = 1 − 1e-442 (log Φ underflows in double): still exact in log space."""
    sigma, steps = 0.2, 100_000
    grid = np.array([8.0, 9.0, 12.0])
    _, lp, lq = chua.shuffle_log_pq(sigma, steps, grid)
    with mp.workdps(1200):
        for c, a, b in zip(grid, lp, lq):
            p, q = _mp_pq(c, sigma, steps)
            assert a == pytest.approx(float(mp.log(p)), rel=1e-12)
            assert b == pytest.approx(float(mp.log(q)), rel=1e-12)
    # and a δ far below double range is still a finite log
    ld = chua.shuffle_log_delta_lower(150.0, 0.3, 100_000)
    assert np.isfinite(ld) and ld < -700


def test_c_grid_from_spec():
    assert np.array_equal(shuffle.c_grid_from_spec({"start": 0, "stop": 100, "step": 0.01}), shuffle.DEFAULT_C_GRID)
    assert shuffle.c_grid_from_spec(None) is shuffle.DEFAULT_C_GRID
    np.testing.assert_array_equal(shuffle.c_grid_from_spec({"start": 1, "stop": 2, "step": 0.25}), [1, 1.25, 1.5, 1.75, 2])
    np.testing.assert_array_equal(shuffle.c_grid_from_spec([0.5, 1.0]), [0.5, 1.0])
    assert shuffle.describe_c_grid() == "0:0.01:100 (10001 values)"
    assert shuffle.describe_c_grid([0.0, 1.0, 3.0]) == "3 values in [0, 3]"
    for bad in ([], [1.0, 1.0], [2.0, 1.0], "0:1", {"start": 0, "stop": 1}, {"start": 0, "stop": 1, "step": 0},
                {"start": 1, "stop": 0, "step": 0.1}, {"start": 0, "stop": 1, "step": 0.1, "num": 3},
                {"start": 0, "stop": 1e9, "step": 1e-3}, [[0.0, 1.0]]):
        with pytest.raises(ValueError, match="c_grid"):
            shuffle.c_grid_from_spec(bad)


def test_a_lower_end_above_the_exact_deterministic_value_is_never_returned():
    """σ = 0.2 over 60 epochs (MNIST steps): the deterministic value 914.230002880… (mpmath, 60 digits) bounds shuffle's
    ε from above (Chua et al. Thm 4.1); the max-statistic PLD lower end comes out at 915.17 there, which cannot be a
    lower bound, so account refuses (InternalError) rather than print a crossed interval."""
    from dpsampling.engine.errors import InternalError
    from dpsampling.samplers import account

    try:
        r = account("shuffle", "epsilon", 1e-5, sigma=0.2, steps=235, epochs=60)
    except InternalError as exc:
        assert "exceeds the exact deterministic value" in str(exc)
    else:
        assert r.lower <= r.upper <= 914.2300028805


@pytest.mark.parametrize("eps", [700.0, 710.0, 800.0])
def test_delta_lower_end_where_e_to_the_epsilon_overflows(eps):
    """Issue 38: at ε ≥ 709.78 e^ε overflows; the max-statistic lower end read nan at 800 (exit 1) and was flagged
    below 1e-10 at 710 where δ ≈ 0.84.  Now a number, at most the exact deterministic δ (mpmath, Chua Thm 4.1) and
    within 1% of it (the max statistic is nearly the whole story at σ 0.2, 60 epochs)."""
    from dpsampling.samplers import account

    sigma, epochs = 0.2, 60
    exact = _mp_gauss_delta(eps, sigma / math.sqrt(epochs))
    r = account("shuffle", "delta", eps, sigma=sigma, steps=235, epochs=epochs)
    assert 0.99 * exact < r.lower <= exact and not r.flags


def test_fence_is_an_internal_error_that_fires_on_an_injected_lower_end_above_the_deterministic_value(monkeypatch):
    """Mutation: a lower end above the exact deterministic value (Chua Thm 4.1) is a broken invariant.  Injected
    (the computed lower end replaced by the deterministic value plus 1), it raises InternalError; unmutated, the same
    question answers with lower ≤ upper."""
    import dataclasses

    from dpsampling.engine.errors import InternalError

    kw = dict(sigma=1.1, steps=10, epochs=3)
    honest = shuffle.epsilon(1e-5, **kw)
    assert honest.lower <= honest.upper
    injected = honest.upper + 1.0
    real = shuffle._lower
    monkeypatch.setattr(shuffle, "_lower", lambda *a, **k: dataclasses.replace(real(*a, **k), value=injected,
                                                                              lower=injected))
    with pytest.raises(InternalError, match="exceeds the exact deterministic value"):
        shuffle.epsilon(1e-5, **kw)


def test_answers_what_is_proven_where_the_max_statistic_pld_cannot_be_built():
    """Issue 38: σ 0.01 (20.9M slices, beyond the limit) stopped with "grid_step too small"; σ 1.1 over 100 000
    epochs stopped at the fence.  Now: [a proven lower end, deterministic], the first with a flag and a reason."""
    r = shuffle.epsilon(1e-5, sigma=0.01, steps=235, epochs=60)
    one = shuffle.epsilon(1e-5, sigma=0.01, steps=235, epochs=1)
    assert r.lower == one.lower and shuffle.ONE_EPOCH_LOWER_FLAG in r.flags
    assert "not computed" in r.accuracy["lower_reason"]
    assert 0 < r.lower <= r.upper == det.epsilon(1e-5, sigma=0.01, steps=235, epochs=60).value
    far = shuffle.epsilon(1e-5, sigma=1.1, steps=1000, epochs=100_000)
    assert 0 < far.lower <= far.upper and math.isfinite(far.lower)
