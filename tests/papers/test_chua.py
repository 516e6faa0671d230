"""papers/chua.py: Chua et al. 2024 (ICML) — crossings, Theorem 4.1 margin, provably-wrong regions, one_epoch, and the
paper's printed numbers that pin down its settings."""

import numpy as np
import pytest
from dpsampling.papers import chua


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


def test_shuffle_lower_vs_poisson_gap_paper_example():
    # Chua Fig. 3: σ = 0.4, T = 1e4: the shuffle lower bound exceeds the Poisson PLD upper bound at ε = 4 and 12
    dp4 = chua.poisson_epoch_delta(4.0, 0.4, 10_000, discretization=1e-3)
    assert chua.shuffle_delta_lower(12.0, 0.4, 10_000) > dp4


def test_bad_input_deterministic_and_helpers():
    with pytest.raises(ValueError, match="sigma"):
        chua.deterministic_delta(1.0, -2.0)
    with pytest.raises(ValueError, match="epsilon"):
        chua.deterministic_delta(-1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        chua.crossover_points([0.0, 0.0], [1, 2], [2, 1])


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
