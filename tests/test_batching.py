"""Tests for dpsampling.samplers (Chua et al. 2024: deterministic, shuffle, Poisson one epoch)."""

import mpmath as mp
import numpy as np
import pytest
from dpsampling.samplers import shuffle
from dpsampling.samplers import poisson
from dpsampling.samplers import deterministic
from dpsampling.samplers import _checks as sampler_checks
from dpsampling.samplers import _ec_sets
from dpsampling.papers import chua



@pytest.fixture(autouse=True)
def _restore_mp_dps():
    old = mp.mp.dps
    yield
    mp.mp.dps = old


# ----------------------------------------------------------------------------- reference values


@pytest.mark.regression_pin  # values from our own output; twin: Chua §1.1/§4.3 printed 10.997 and 0.244 (claims chua_fig1_eps_d_sigma0p5, chua_fig3_delta_d_eps4) and test_deterministic_is_analytic_gaussian (closed form)
def test_deterministic_reference_values():
    # σ=0.5, δ=1e-6: ε_D = 10.9972 (Chua §1.1 prints ≈ 10.997); σ=0.4: δ_D(4) = 0.24382 (§4.3 prints ≈ 0.244)
    assert chua.deterministic_epsilon(1e-6, 0.5) == pytest.approx(10.99715, abs=5e-5)
    assert chua.deterministic_delta(4.0, 0.4) == pytest.approx(0.24382, abs=5e-6)


@pytest.mark.regression_pin  # values from our own output; twin: mpmath at 60 digits (test_shuffle_delta_vs_mpmath, test_shuffle_epsilon_vs_mpmath_and_naive_loses_digits) and Chua's printed 10.994 / 0.226 / 7.5e-5
def test_shuffle_reference_values():
    eps_s, c = chua.shuffle_epsilon_lower(1e-6, 0.5, 10_000, return_argmax=True)
    assert eps_s == pytest.approx(10.99478, abs=5e-6)  # not the naive 10.99714
    assert c == pytest.approx(4.25)
    d, cs = chua.shuffle_delta_lower([4.0, 12.0], 0.4, 10_000, return_argmax=True)
    assert d[0] == pytest.approx(0.22605, abs=5e-6)
    assert d[1] == pytest.approx(7.473e-5, rel=1e-4)
    np.testing.assert_allclose(cs, [2.18, 3.42])


@pytest.mark.regression_pin  # values from our own output; twin: Chua's printed upper bounds < 1.96, < 3.43, ≤ 1.18e-5 (claims) and dp_accounting at d=1e-4 (claims table)
def test_poisson_reference_values():
    # Reference values of the lead's colleagues were at PLD discretisation 1e-3.
    assert chua.poisson_epoch_epsilon(1e-6, 0.5, 10_000, discretization=1e-3) == pytest.approx(1.95478, abs=5e-5)
    assert chua.poisson_epoch_epsilon(1e-6, 0.5, 10_000, method="rdp") == pytest.approx(3.4217, abs=5e-5)
    assert chua.poisson_epoch_delta(4.0, 0.4, 10_000, discretization=1e-3) == pytest.approx(1.1706e-5, rel=1e-4)


@pytest.mark.regression_pin  # values from our own output; twin: Chua App. A printed 8.45e-5, 2.06e-10, 0.004 (claims chua_fig7_*_eps0p5)
def test_fig7_text_numbers_are_at_eps_half():
    # Chua App. A, Fig. 7 (σ=1, T=1000): the text's "δ(1)" numbers all match ε = 0.5, not ε = 1.
    assert chua.poisson_epoch_delta(0.5, 1.0, 1000, method="rdp") == pytest.approx(8.45e-5, rel=1e-3)
    assert chua.poisson_epoch_delta(0.5, 1.0, 1000, discretization=1e-3) == pytest.approx(2.06e-10, rel=0.03)
    assert chua.shuffle_delta_lower(0.5, 1.0, 1000) == pytest.approx(4.33e-3, rel=1e-3)  # printed "≥ 0.004"
    assert chua.shuffle_delta_lower(1.0, 1.0, 1000) == pytest.approx(9.987e-4, rel=1e-3)  # what ε = 1 gives
    assert chua.poisson_epoch_delta(1.0, 1.0, 1000, method="rdp") < 1e-6  # ≪ printed 8.45e-5


@pytest.mark.regression_pin  # values from our own output; twin: Chua App. A printed ε_S ≥ 0.029 / 0.26 (claims chua_fig4_eps_s_sigma1p3, chua_fig1_eps_s_sigma1p3)
def test_fig4_is_T_1e5_not_1e4():
    # App. A, Fig. 4: the text says T = 100,000, the caption 10,000; σ = 1.3 decides it (printed ε_S > 0.029).
    assert chua.shuffle_epsilon_lower(1e-6, 1.3, 100_000) == pytest.approx(0.02978, abs=5e-5)
    assert chua.shuffle_epsilon_lower(1e-6, 1.3, 10_000) == pytest.approx(0.26236, abs=5e-5)


# ----------------------------------------------------------------------------- closed forms and mpmath


def test_deterministic_is_analytic_gaussian():
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    for sigma in (0.3, 0.8, 2.0):
        eps = np.array([0.0, 0.5, 2.0, 5.0])
        ref = [GaussianPrivacyLoss(sigma, sensitivity=1.0).get_delta_for_epsilon(e) for e in eps]
        np.testing.assert_allclose(chua.deterministic_delta(eps, sigma), ref, rtol=1e-9)
    # log space keeps digits where the direct difference is 0
    mp.mp.dps = 50
    s, e = 0.5, 60.0
    a, b = mp.mpf(-e * s + 1 / (2 * s)), mp.mpf(-e * s - 1 / (2 * s))
    ref = mp.ncdf(a) - mp.exp(e) * mp.ncdf(b)
    assert chua.deterministic_delta(e, s) == pytest.approx(float(ref), rel=1e-9)
    d = chua.deterministic_epsilon(1e-9, 0.7)
    assert chua.deterministic_delta(d, 0.7) == pytest.approx(1e-9, rel=1e-9)


def _mp_pq(c, sigma, steps):
    c, s = mp.mpf(c), mp.mpf(sigma)
    pw = mp.ncdf(c / s) ** (steps - 1)
    return 1 - mp.ncdf((c - 2) / s) * pw, 1 - mp.ncdf((c - 1) / s) * pw


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


# ----------------------------------------------------------------------------- invariants


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


def test_shuffle_lower_vs_poisson_gap_paper_example():
    # Chua Fig. 3: σ = 0.4, T = 1e4: the shuffle lower bound exceeds the Poisson PLD upper bound at ε = 4 and 12
    dp4 = chua.poisson_epoch_delta(4.0, 0.4, 10_000, discretization=1e-3)
    assert chua.shuffle_delta_lower(12.0, 0.4, 10_000) > dp4


# ----------------------------------------------------------------------------- vectorisation


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


# ----------------------------------------------------------------------------- bad input


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


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, np.nan])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        chua.shuffle_epsilon_lower(delta, 1.0, 100)
    with pytest.raises(ValueError, match="delta"):
        chua.deterministic_epsilon(delta, 1.0)


def test_bad_input_deterministic_and_helpers():
    with pytest.raises(ValueError, match="sigma"):
        chua.deterministic_delta(1.0, -2.0)
    with pytest.raises(ValueError, match="epsilon"):
        chua.deterministic_delta(-1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        chua.crossover_points([0.0, 0.0], [1, 2], [2, 1])


# ----------------------------------------------------------------------------- figure helpers


def test_crossover_points_and_wrong_region():
    x = np.linspace(0, 10, 101)
    a = np.exp(-x)  # crosses b = e^{-5} at exactly x = 5 (log-linear interpolation is exact)
    b = np.full_like(x, np.exp(-5.0))
    np.testing.assert_allclose(chua.crossover_points(x, a, b), [5.0], atol=1e-12)
    assert chua.crossover_points(x, a, a).size == 0
    regions = chua.provably_wrong_region(x, a, b)
    assert len(regions) == 1 and regions[0][0] == 0.0 and regions[0][1] == pytest.approx(5.0)
    # a curve above on two separate intervals
    s = np.where((x < 2) | (x > 7), 1.0, 1e-3)
    r2 = chua.provably_wrong_region(x, s, np.full_like(x, 1e-2))
    assert len(r2) == 2 and r2[0][0] == 0.0 and r2[1][1] == 10.0
    assert 1.9 < r2[0][1] < 2.0 and 7.0 < r2[1][0] < 7.1


def test_fig2_single_crossing():
    # Chua Fig. 2, σ = 0.3, T = 10: δ_D − δ_P changes sign once (evidence for Conjecture 4.3), at ε ≈ 9.54
    assert chua.conjecture_4_3_single_crossing(sigma=0.3, steps=10, eps_max=20.0, n_eps=81)


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


# ----------------------------------------------------------------------------- pipeline / CLI interface


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


def test_account_dispatch_kinds_and_values():
    s = chua.one_epoch("epsilon", 1e-6, sampler="shuffle", sigma=0.5, steps=10_000)
    assert (s.kind, s.method, s.upper) == ("lower", "E_C sets", None) and s.value == pytest.approx(10.99478, abs=5e-6)
    assert s.accuracy["argmax_c"] == pytest.approx(4.25) and s.flags == ()
    d = chua.one_epoch("delta", 4.0, sampler="deterministic", sigma=0.4, steps=10_000)
    assert d.kind == "exact" and d.value == pytest.approx(0.24382, abs=5e-6)
    p = chua.one_epoch("delta", 4.0, sampler="poisson", sigma=0.4, steps=10_000, discretization=1e-3)
    assert p.kind == "upper" and p.method == "pld" and p.value == pytest.approx(1.1706e-5, rel=1e-4)
    assert p.lower <= p.value and p.accuracy["discretization"] == 1e-3
    # a C grid whose best set is its last value is flagged
    e = chua.one_epoch("delta", 4.0, sampler="shuffle", sigma=0.4, steps=10_000, c_grid=[1.0, 1.5, 2.0])
    assert e.flags == ("argmax_c_at_grid_end",) and 0 < e.value < 0.22605 and e.accuracy["argmax_c"] == 2.0
    for kw, word in [({"sampler": "wor"}, "sampler"), ({"sampler": "shuffle", "sigma": 0.0}, "sigma")]:
        with pytest.raises(ValueError, match=word):
            chua.one_epoch("delta", 1.0, **{"sampler": "shuffle", "sigma": 1.0, "steps": 10, **kw})
    with pytest.raises(ValueError, match="quantity"):
        chua.one_epoch("sigma", 1.0, sampler="shuffle", sigma=1.0, steps=10)
    with pytest.raises(ValueError, match="delta"):
        chua.one_epoch("epsilon", 2.0, sampler="deterministic", sigma=1.0, steps=10)


def test_poisson_epoch_result_finest_discretization():
    """Capped refinement: stops at the finest level with not_converged; the value is the pessimistic PLD there."""
    from dpsampling.engine import accountant

    capped = chua.poisson_epoch_result("epsilon", 1e-6, 1.3, 10_000, rel_tol=1e-3, finest_discretization=1e-4)
    assert capped.accuracy["discretization"] == pytest.approx(1e-4) and "not_converged" in capped.flags
    fixed = accountant.epsilon(1e-6, sigma=1.3, q=1e-4, total_steps=10_000, discretization=1e-4)
    assert capped.value == fixed.value and capped.lower == fixed.lower
    assert capped.value >= 0.030627  # a valid (looser) upper bound on the converged 0.030627 (Chua §1.1: < 0.031)
    assert 0.03 < capped.accuracy["est_rel_error"] < 1  # error estimate reported
    # loose target: converges before the cap, same as the accountant's automatic choice
    auto = chua.poisson_epoch_result("epsilon", 1e-5, 0.7, 1000, rel_tol=1e-2, finest_discretization=1e-5)
    ref = accountant.epsilon(1e-5, sigma=0.7, q=1e-3, total_steps=1000, rel_tol=1e-2)
    assert auto.value == ref.value and auto.accuracy["discretization"] == ref.accuracy["discretization"]
    assert auto.flags == ()
    tiny = chua.poisson_epoch_result("delta", 6.0, 0.8, 1000, finest_discretization=1e-3)
    assert "delta_below_1e-10" in tiny.flags
    with pytest.raises(ValueError, match="finest_discretization"):
        chua.poisson_epoch_result("epsilon", 1e-6, 1.0, 100, finest_discretization=1e-8)
    with pytest.raises(ValueError, match="rel_tol"):
        chua.poisson_epoch_result("epsilon", 1e-6, 1.0, 100, rel_tol=0.5)


def test_one_epoch_and_deterministic_sigma():
    sampler_checks.check_one_epoch(1e-4, 10_000, "shuffle")
    sampler_checks.check_one_epoch(1 / 3, 3, "shuffle")
    for q, steps, word in [(1e-3, 10_000, "q must be 1/steps"), (0.0, 10, "q"), (0.1, 0, "steps")]:
        with pytest.raises(ValueError, match=word):
            sampler_checks.check_one_epoch(q, steps, "shuffle")
    r = chua.deterministic_sigma_result(2.0, 1e-6)
    assert r.kind == "exact" and chua.deterministic_delta(2.0, r.value) == pytest.approx(1e-6, rel=1e-8)
    assert chua.deterministic_epsilon(1e-6, r.value) == pytest.approx(2.0, rel=1e-8)


def test_theorem_4_1_margin_and_wrong_mask():
    m, h = chua.theorem_4_1_margin([0.1, 0.3, np.nan, 1.0 + 1e-12], [0.2, 0.2, 0.5, 1.0])
    np.testing.assert_allclose(m[:2], [0.1, -0.1])
    assert list(h) == [True, False, True, True]  # NaN: nothing to check; 1e-12 relative: rounding slack
    mask = chua.provably_wrong_mask([1e-3, 1e-3, np.nan, 1e-9], [1e-5, np.nan, 1e-5, 1e-8])
    assert list(mask) == [True, False, False, False]
    x = np.linspace(0, 4, 5)
    # NaN points are dropped; the end is the log-linear crossing between x = 1 and x = 3
    (a, b), = chua.provably_wrong_intervals(x, [1, 1, np.nan, 1e-9, 1e-9], [1e-3] * 5)
    assert a == 0.0 and b == pytest.approx(1 + 2 / 3)


def test_crossings_of_known_curves():
    # δ_D = e^{-2x}, bounds e^{-x}·{0.9, 1.1}·e^{-4}: crossings at x = 4 − log 1.1 (upper) and 4 − log 0.9 (lower)
    x = np.linspace(0, 10, 101)
    d = np.exp(-2 * x)
    c = chua.deterministic_vs_poisson_crossings(x, d, 0.9 * np.exp(-x - 4), 1.1 * np.exp(-x - 4))
    assert c["eps0"] == pytest.approx(4 - np.log(1.1), abs=1e-9) and c["eps1"] == pytest.approx(4 - np.log(0.9))
    assert c["n_crossings_upper"] == c["n_crossings_lower"] == 1 and c["resolution"] == pytest.approx(0.1)
    assert not c["equal_within_resolution"]  # gap 0.2 > grid step 0.1
    tight = chua.deterministic_vs_poisson_crossings(x, d, 0.99 * np.exp(-x - 4), 1.01 * np.exp(-x - 4))
    assert tight["equal_within_resolution"] and tight["gap"] == pytest.approx(np.log(1.01 / 0.99))
    none = chua.deterministic_vs_poisson_crossings(x, d, d / 2, d / 2)
    assert np.isnan(none["eps0"]) and not none["equal_within_resolution"]
