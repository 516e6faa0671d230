"""Balls-and-bins: PLD_accounting bounds against closed forms, Monte Carlo against the bounds."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from allocation_refs import LOSS_STEP, TAIL, allocation_plds  # tests/allocation_refs.py
from scipy.stats import norm

from dpsampling.engine.result import BELOW_FLOOR_FLAG, WIDTH_NOT_MET_FLAG
from dpsampling.papers import chua25
from dpsampling.samplers import account
from dpsampling.samplers import balls_and_bins as bnb
from dpsampling.engine import allocation_pld as pa
from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import balls_and_bins_mc as mc

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FAST = {"loss_discretization": 0.05, "tail_truncation": 1e-7}


def gauss_delta(eps, s):
    """Exact δ(ε) of the Gaussian mechanism, sensitivity 1, noise s."""
    return norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)


def gauss_eps(delta, s):
    return brentq(lambda e: gauss_delta(e, s) - delta, 0.0, 200.0, xtol=1e-12)


@pytest.mark.parametrize("sigma,epochs", [(1.0, 1), (2.0, 3)])
def test_one_step_is_the_gaussian_mechanism(sigma, epochs):
    # T = 1: the record is in the only batch of each epoch, so E epochs = Gaussian at σ/√E
    exact = gauss_eps(1e-6, sigma / math.sqrt(epochs))
    lo = bnb.epsilon(1e-6, sigma=sigma, steps=1, epochs=epochs, bound="lower", **FAST, method="pld").value
    up = bnb.epsilon(1e-6, sigma=sigma, steps=1, epochs=epochs, bound="upper", **FAST, method="pld").value
    assert lo <= exact <= up
    assert up - lo < 0.02 * exact


def test_large_sigma_gives_small_epsilon():
    # σ → ∞: ε(δ) → 0; at σ = 5, 10 steps the upper bound is below the Gaussian at σ = 5
    up = bnb.epsilon(1e-6, sigma=5.0, steps=10, bound="upper", **FAST, method="pld").value
    assert 0 < up < gauss_eps(1e-6, 5.0)
    up2 = bnb.epsilon(1e-6, sigma=20.0, steps=10, bound="upper", **FAST, method="pld").value
    assert up2 < up / 3


def test_bounds_ordered_and_tighten_with_discretisation():
    coarse = bnb.epsilon_range(1e-6, sigma=1.0, steps=10, loss_discretization=0.1, tail_truncation=1e-7, method="pld")
    fine = bnb.epsilon_range(1e-6, sigma=1.0, steps=10, loss_discretization=0.02, tail_truncation=1e-9, method="pld")
    assert coarse.lower <= fine.lower <= fine.upper <= coarse.upper
    assert (fine.upper - fine.lower) < 0.5 * (coarse.upper - coarse.lower)


def test_between_lower_bounds_and_one_gaussian_step():
    # Upper ≤ one Gaussian step at σ: the output is post-processing of (the record's batch index,
    # which is data-independent, and a Gaussian release of that batch).  Ballpark: Poisson with
    # q = 1/T over T steps is of the same size (Chua et al. 2025, Fig. 1: within ~10-20%).
    from dp_accounting.pld import privacy_loss_distribution as pldm

    r = bnb.epsilon_range(1e-6, sigma=1.0, steps=10, **FAST, method="pld")
    assert 0 < r.lower <= r.upper <= gauss_eps(1e-6, 1.0)
    poisson = pldm.from_gaussian_mechanism(1.0, sampling_prob=0.1,
                                           value_discretization_interval=1e-4).self_compose(10)
    assert 0.7 < r.upper / poisson.get_epsilon_for_delta(1e-6) < 1.2


def test_mc_between_certified_bounds():
    eps, sigma, steps = 1.0, 1.0, 20
    lo = bnb.delta(eps, sigma=sigma, steps=steps, bound="lower", **FAST, method="pld").value
    up = bnb.delta(eps, sigma=sigma, steps=steps, bound="upper", **FAST, method="pld").value
    for importance in (True, False):
        r = bnb.delta(eps, sigma=sigma, steps=steps, method="montecarlo", mc_samples=50_000, mc_seed=3,
                      importance=importance)
        assert r.kind == "estimate"
        assert r.lower <= up and r.upper >= lo
        assert r.lower <= r.value <= r.upper


def test_mc_multi_epoch_between_bounds():
    eps, sigma, steps, epochs = 1.5, 1.0, 10, 2
    lo = bnb.delta(eps, sigma=sigma, steps=steps, epochs=epochs, bound="lower", **FAST, method="pld").value
    up = bnb.delta(eps, sigma=sigma, steps=steps, epochs=epochs, bound="upper", **FAST, method="pld").value
    r = bnb.delta(eps, sigma=sigma, steps=steps, epochs=epochs, method="montecarlo", mc_samples=50_000, mc_seed=4)
    assert r.accuracy["importance"] is False
    assert r.lower <= up and r.upper >= lo


def test_mc_takes_the_max_of_add_and_remove():
    r = mc.mc_delta(0.5, sigma=1.0, steps=10, mc_samples=20_000, mc_seed=5)
    per = [mc.mc_direction(0.5, sigma=1.0, steps=10, direction=d, mc_samples=20_000, mc_seed=5) for d in mc.DIRECTIONS]
    assert r.value == max(p.estimate for p in per)
    assert r.upper == max(p.upper for p in per)
    assert per[0].estimate != per[1].estimate  # both computed, and they differ
    # at T = 1 the pair is the Gaussian pair in both directions: each direction ≈ the exact δ
    g = gauss_delta(0.5, 1.0)
    for d in mc.DIRECTIONS:
        p = mc.mc_direction(0.5, sigma=1.0, steps=1, direction=d, mc_samples=100_000, mc_seed=6, importance=False)
        assert p.lower <= g <= p.upper


def test_importance_sampling_is_unbiased_on_a_small_case():
    # same quantity two ways (IS vs naive), large n: the two KL intervals overlap
    a = mc.mc_direction(2.0, sigma=0.8, steps=5, direction="remove", mc_samples=100_000, mc_seed=7, importance=True)
    b = mc.mc_direction(2.0, sigma=0.8, steps=5, direction="remove", mc_samples=100_000, mc_seed=8, importance=False)
    assert a.lower <= b.upper and b.lower <= a.upper
    assert a.scale < 1.0


def test_reproducible_and_chunk_independent():
    kw = dict(sigma=1.0, steps=50, epochs=2, direction="remove", mc_samples=30_000, mc_seed=11, importance=False)
    all_blocks = mc.block_sums(1.0, **kw)
    nb = len(all_blocks)
    assert nb > 2
    split = mc.block_sums(1.0, blocks=range(0, 2), **kw) + mc.block_sums(1.0, blocks=range(2, nb), **kw)
    assert math.fsum(all_blocks).hex() == math.fsum(split).hex()
    r1 = mc.mc_delta(1.0, sigma=1.0, steps=50, epochs=2, mc_samples=30_000, mc_seed=11)
    r2 = mc.mc_delta(1.0, sigma=1.0, steps=50, epochs=2, mc_samples=30_000, mc_seed=11)
    assert r1 == r2
    r3 = mc.mc_delta(1.0, sigma=1.0, steps=50, epochs=2, mc_samples=30_000, mc_seed=12)
    assert r3.value != r1.value


def test_kl_bounds_against_exact_binomial_tail():
    # Chernoff–KL limit is conservative: P[Bin(n, up) ≤ k] ≤ β
    from scipy.stats import binom

    n, k, beta = 1000, 13, 0.01
    lo, up = mc.kl_bounds(k / n, n, beta)
    assert binom.cdf(k, n, up) <= beta
    assert binom.sf(k - 1, n, lo) <= beta
    assert lo < k / n < up
    # v̄ = 0: up = 1 − β^{1/n}
    assert mc.kl_bounds(0.0, n, beta)[1] == pytest.approx(1 - beta ** (1 / n), rel=1e-6)


def test_samples_needed_meets_half_width():
    n = mc.samples_needed(1e-3, 0.01, scale=0.2)
    assert n == math.ceil(0.04 * math.log(400) / 2e-6)
    lo, up = mc.kl_bounds(0.05, n, 0.01 / 4, scale=0.2)
    assert up - 0.05 <= 1e-3 and 0.05 - lo <= 1e-3


def test_budget_too_small_raises_accuracy_error():
    with pytest.raises(mc.MCAccuracyError, match="mc_samples"):
        mc.mc_delta(1.0, sigma=1.0, steps=10, epochs=2, mc_half_width=1e-5, mc_samples=1000)
    r = mc.mc_delta(1.0, sigma=1.0, steps=10, mc_half_width=0.02, mc_seed=1)
    assert r.upper - r.lower <= 0.04


@pytest.mark.parametrize("kwargs,name", [
    (dict(sigma=1.0, steps=0), "steps"),
    (dict(sigma=1.0, steps=10, epochs=0), "epochs"),
    (dict(sigma=0.0, steps=10), "sigma"),
    (dict(sigma=-1.0, steps=10), "sigma"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        bnb.epsilon(1e-6, **kwargs, method="pld")
    with pytest.raises(ValueError, match=name):
        bnb.delta(1.0, method="montecarlo", mc_samples=10, **kwargs)


@pytest.mark.parametrize("d", [0.0, 1.0, -0.1, 1.5])
def test_bad_delta(d):
    with pytest.raises(ValueError, match="delta"):
        bnb.epsilon(d, sigma=1.0, steps=10, method="pld")


def test_bad_mc_parameters():
    with pytest.raises(ValueError, match="^mc_samples "):
        bnb.delta(1.0, sigma=1.0, steps=10, method="montecarlo", mc_samples=0)
    for beta in (0.0, 1.0, 2.0):
        with pytest.raises(ValueError, match="mc_failure_prob"):
            bnb.delta(1.0, sigma=1.0, steps=10, method="montecarlo", mc_samples=10, mc_failure_prob=beta)
    with pytest.raises(ValueError, match="method"):
        bnb.epsilon(1e-6, sigma=1.0, steps=10, method="montecarlo")
    with pytest.raises(ValueError, match="bound"):
        bnb.delta(1.0, sigma=1.0, steps=10, bound="middle", method="pld")


def test_claim_not_worse_than_poisson():
    # the claim's predicate at a cheap setting (T=10); the T=100 claim itself runs in the pipeline
    from dpsampling import claims

    assert chua25.not_worse_than_poisson(delta=1e-6, sigma=1.0, steps=10) is True
    assert chua25.not_worse_than_poisson(delta=1e-6, sigma=1.0, steps=1) is False  # T=1: both the Gaussian
    import pathlib

    import yaml

    data = yaml.safe_load((pathlib.Path(__file__).parents[2] / "config" / "claims.yaml").read_text())["claims"]
    entry = next(c for c in data if c["id"] == "chua25_bnb_not_worse_than_poisson")
    claims.validate(entry)
    assert claims.resolve(entry["evaluate"]["call"]) is chua25.not_worse_than_poisson


def test_pipeline_stops_when_mc_misses_the_certified_bracket(repo_root, monkeypatch):
    import sys

    monkeypatch.syspath_prepend(str(repo_root / "scripts"))
    sys.modules.pop("balls_and_bins", None)
    import balls_and_bins as script

    script.check_mc(1e-4, 3e-4, 2e-4, 2.5e-4, "ok")  # overlapping: passes
    with pytest.raises(RuntimeError, match="misses the certified"):
        script.check_mc(1e-4, 1.5e-4, 2e-4, 2.5e-4, "below")
    with pytest.raises(RuntimeError, match="misses the certified"):
        script.check_mc(3e-4, 4e-4, 2e-4, 2.5e-4, "above")
    # a (deliberately) wrong MC estimate makes compute_point raise
    real = script.bnb.delta

    def biased(eps, **kw):
        r = real(eps, **kw)
        if kw.get("method") == "montecarlo":
            return type(r)(value=r.value + 0.5, kind=r.kind, method=r.method, accuracy=r.accuracy,
                           lower=r.lower + 0.5, upper=r.upper + 0.5)
        return r

    monkeypatch.setattr(script.bnb, "delta", biased)
    p = {"view": "delta_vs_eps", "sampler": "balls_and_bins", "sigma": 1.0, "steps": 5, "epochs": 1, "mc_seed": 0}
    with pytest.raises(RuntimeError, match="misses the certified"):
        script.compute_point(p, n_eps=2, eps_max=1.0, n_eps_mc=1, mc_samples=1000)


@pytest.mark.parametrize("path,value,needle", [
    (("balls_and_bins", "fixed", "epochs"), 0, "epochs"),
    (("balls_and_bins", "settings", "accuracy"), "medium", "accuracy"),
    (("balls_and_bins", "settings", "mc_failure_prob"), 1.0, "mc_failure_prob"),
    (("balls_and_bins", "settings", "mc_samples"), 0, "mc_samples"),
])
def test_bad_balls_and_bins_config_rejected_naming_the_key(rejects_bad_config, path, value, needle):
    rejects_bad_config(path, value, needle)


def test_sigma_at_one_step_is_the_gaussian_calibration():
    # T = 1: the smallest σ with ε_upper(1e-6) ≤ 2 is within rel_tol above the exact Gaussian σ
    exact = brentq(lambda s: gauss_eps(1e-6, s) - 2.0, 0.5, 10.0, xtol=1e-12)
    r = bnb.sigma(2.0, 1e-6, steps=1, rel_tol=1e-3, **FAST, method="pld")
    assert r.kind == "upper"
    assert exact <= r.value <= exact * 1.01
    assert bnb.epsilon(1e-6, sigma=r.value, steps=1, bound="upper", **FAST, method="pld").value <= 2.0


# ε(δ = 1e-6) brackets of the PLD_accounting version before the adaptive bracket (main 7caac0b,
# "default" accuracy: one PLD pair at loss_discretization 6e-2·ε̂, tail ≤ 0.1·δ): (σ, T, E) -> (lower, upper)
OLD_BRACKETS = {(1.0, 20, 3): (2.7761884770345517, 2.9007850893251903),
                (0.35, 100, 1): (12.317787263330027, 12.496132341025316),
                (0.5, 100, 2): (7.744640859240947, 7.887744398646221)}


@pytest.mark.parametrize("point", sorted(OLD_BRACKETS))
def test_adaptive_bracket_meets_its_width_and_overlaps_the_old_one(point):
    # both are certified intervals on the same ε, so they must overlap: new upper ≥ old lower, new lower ≤ old upper
    sigma, steps, epochs = point
    r = bnb.epsilon_range(1e-6, sigma=sigma, steps=steps, epochs=epochs, method="pld")
    old_lo, old_up = OLD_BRACKETS[point]
    assert r.upper >= old_lo and r.lower <= old_up
    assert 0 < r.lower <= r.upper
    assert (r.upper - r.lower) / r.upper <= bnb.ACCURACY["default"]["rel_width"]
    assert r.accuracy["rel_width"] == pytest.approx((r.upper - r.lower) / r.upper)
    assert not r.flags


def test_fine_bracket_nests_in_the_default_one_and_meets_1e_2():
    d = bnb.epsilon_range(1e-6, sigma=1.0, steps=10, epochs=2, method="pld")
    f = bnb.epsilon_range(1e-6, sigma=1.0, steps=10, epochs=2, accuracy="fine", method="pld")
    assert (f.upper - f.lower) / f.upper <= 1e-2 < (d.upper - d.lower) / d.upper
    # both certified: they overlap; and the fine one sits inside the default one up to that one's width
    assert f.lower <= d.upper and f.upper >= d.lower


def test_adaptive_bracket_at_one_step_contains_the_gaussian():
    # T = 1: E epochs = the Gaussian at σ/√E, exactly
    exact = gauss_eps(1e-6, 1.5 / math.sqrt(4))
    for acc in ("default", "fine"):
        r = bnb.epsilon_range(1e-6, sigma=1.5, steps=1, epochs=4, accuracy=acc, method="pld")
        assert r.lower <= exact <= r.upper
        assert (r.upper - r.lower) / r.upper <= bnb.ACCURACY[acc]["rel_width"]


def test_bracket_is_the_max_over_directions_of_each_directions_bounds():
    # the adaptive bracket's ends are the max over add/remove of per-direction PLD_accounting bounds
    # at the steps it used: at a fixed step it equals the two-direction PLD_accounting PLD's ε
    from PLD_accounting import AllocationSchemeConfig, BoundType, PrivacyParams, gaussian_allocation_pld

    kw = {"sigma": 0.8, "steps": 10, "epochs": 2}
    r = bnb.epsilon_range(1e-6, loss_discretization=0.05, tail_truncation=1e-9, **kw, method="pld")
    cfg = AllocationSchemeConfig(loss_discretization=0.05, tail_truncation=1e-9)
    params = PrivacyParams(sigma=0.8, num_steps=10, num_epochs=2)
    for bt, end in ((BoundType.DOMINATES, r.upper), (BoundType.IS_DOMINATED, r.lower)):
        full = gaussian_allocation_pld(params=params, config=cfg, bound_type=bt).get_epsilon_for_delta(1e-6)
        # the same bins summed in another order (the window-sum kernel against PLD_accounting's own convolution):
        # they differ by floating-point rounding only, 1.3e-11 relative with numpy 2.4 / numba 0.68
        assert end == pytest.approx(full, rel=1e-10)


def test_upper_and_lower_calls_share_one_bracket():
    kw = {"sigma": 1.0, "steps": 10, "epochs": 1}
    up = bnb.epsilon(1e-6, bound="upper", **kw, method="pld")
    lo = bnb.epsilon(1e-6, bound="lower", **kw, method="pld")
    assert (up.kind, lo.kind) == ("upper", "lower") and lo.value < up.value
    assert up.accuracy == lo.accuracy
    with pytest.raises(ValueError, match="mc_samples"):  # checked once, by samplers.account
        account("balls_and_bins", "epsilon", 1e-6, mc_samples=10, **kw, method="pld")


def test_mc_epsilon_inverts_the_delta_estimate_and_its_band():
    # ε(δ) by Monte Carlo: the interval overlaps the certified bracket, the estimate sits inside it,
    # and δ̂ at the estimate (same sample: common random numbers) is δ to the bisection's accuracy
    dl, kw = 1e-2, {"sigma": 1.0, "steps": 10, "epochs": 2}
    r = bnb.epsilon(dl, method="montecarlo", mc_samples=50_000, mc_seed=3, **kw)
    cert = bnb.epsilon_range(dl, accuracy="fine", **kw, method="pld")
    assert r.kind == "estimate" and r.lower < r.value < r.upper
    assert r.lower <= cert.upper and cert.lower <= r.upper
    losses = [mc.direction_losses(direction=d, mc_samples=50_000, mc_seed=3, importance=False, eps0=0.0, **kw)
              for d in mc.DIRECTIONS]

    def means(eps):
        return [float((-np.expm1(eps - v[v > eps])).sum()) / 50_000 for v in losses]

    assert max(means(r.value)) == pytest.approx(dl, rel=1e-3)
    # the δ band inverted: the KL upper limit at ε = upper is ≤ δ, the lower limit at ε = lower is > δ
    assert max(mc.kl_bounds(m, 50_000, 0.01 / 4)[1] for m in means(r.upper)) <= dl
    assert max(mc.kl_bounds(m, 50_000, 0.01 / 4)[0] for m in means(r.lower)) > dl
    assert r == bnb.epsilon(dl, method="montecarlo", mc_samples=50_000, mc_seed=3, **kw)  # reproducible
    assert r.value != bnb.epsilon(dl, method="montecarlo", mc_samples=50_000, mc_seed=4, **kw).value


def test_mc_epsilon_one_step_contains_the_gaussian_and_is_sampling_agrees():
    # T = 1: the pair is the Gaussian pair; naive and importance-sampled intervals both contain it
    exact = gauss_eps(1e-3, 1.0)
    for importance in (False, True):
        r = mc.mc_epsilon(1e-3, sigma=1.0, steps=1, mc_samples=100_000, mc_seed=5, importance=importance)
        assert r.lower <= exact <= r.upper, importance
    r = mc.mc_epsilon(1e-3, sigma=1.0, steps=20, mc_samples=100_000, mc_seed=6)
    cert = bnb.epsilon_range(1e-3, sigma=1.0, steps=20, accuracy="fine", method="pld")
    assert r.accuracy["importance"] is True and r.lower <= cert.upper and cert.lower <= r.upper


def test_mc_epsilon_with_too_few_samples_says_how_many():
    with pytest.raises(mc.MCAccuracyError, match=r"at least mc_samples=\d+"):
        mc.mc_epsilon(1e-6, sigma=1.0, steps=10, epochs=2, mc_samples=1000)
    with pytest.raises(ValueError, match="delta"):
        mc.mc_epsilon(0.0, sigma=1.0, steps=10, mc_samples=10)


def test_lower_end_is_the_larger_of_pld_and_max_statistic_lower_bounds():
    # σ = 0.8, T = 20: the Chua et al. max-statistic bound (threshold events, exact) beats PLD_accounting's lower;
    # σ = 1.5: PLD_accounting's lower wins.  Either way the lower end is the max and says which one gave it.
    for sigma, winner in ((0.8, "max-statistic events"), (1.5, "pld_accounting")):
        r = bnb.epsilon_range(1e-5, sigma=sigma, steps=20, epochs=1, method="pld")
        ms = bnb.epsilon(1e-5, sigma=sigma, steps=20, epochs=1, bound="lower", method="max_statistic").value
        assert r.accuracy["lower_method"] == winner
        assert r.lower == max(ms, r.accuracy["lower_pld"]) and r.accuracy["lower_max_statistic"] == ms
        assert r.lower <= r.upper
    # measured at σ = 0.8: max statistic 2.7466 vs PLD lower ≤ 2.672 (the PLD one at its finer steps)
    assert bnb.epsilon_range(1e-5, sigma=0.8, steps=20, epochs=1, method="pld").lower == pytest.approx(2.746601, abs=1e-6)
    # δ(ε): same rule, the lower end is max of the two and the upper end is untouched
    d = bnb.delta(2.0, sigma=0.8, steps=20, epochs=1, both_ends=True, method="pld")
    ms = bnb.delta(2.0, sigma=0.8, steps=20, epochs=1, bound="lower", method="max_statistic").value
    assert d.accuracy["lower_method"] == "max-statistic events" and d.lower == ms > d.accuracy["lower_pld"]
    assert d.value == d.upper > d.lower


def test_fft_first_bracket_contains_a_high_accuracy_reference():
    # σ ≥ _FFT_FIRST_SIGMA, E > 1: the bracket starts from the FFT uppers of both directions and one GEOM lower
    # (ADD) at the step its error model predicts (no coarse pass).  Reference: PLD_accounting's two-direction
    # GEOM pair (upper: an independent route) at a step 10× below the one the bracket used (~4 CPU-s; 20× below:
    # ~13 CPU-s, and a narrower reference is easier to contain); both are certified, so they overlap, and the
    # reference (narrow: under a fifth of our width) sits inside ours
    kw = {"sigma": 1.5, "steps": 20, "epochs": 3}
    r = bnb.epsilon_range(1e-6, **kw, method="pld")
    assert r.accuracy["upper_route"] == "fft" and not r.flags
    assert 0 < r.lower <= r.upper and (r.upper - r.lower) / r.upper <= bnb.ACCURACY["default"]["rel_width"]
    ref = {b: pa.allocation_pld(bound=b, loss_discretization=r.accuracy["loss_discretization"] / 10,
                                 tail_truncation=1e-10, **kw)[0].get_epsilon_for_delta(1e-6) for b in ("upper", "lower")}
    assert ref["lower"] <= ref["upper"] < ref["lower"] + 0.2 * (r.upper - r.lower)
    assert r.lower <= ref["lower"] and ref["upper"] <= r.upper


def test_delta_curve_lower_end_takes_the_max_statistic_floor():
    # δ(ε) curve: the lower end at each ε is max(PLD lower, max-statistic lower), labelled, as in delta;
    # at σ = 0.8, T = 20 the max statistic wins at large ε; the upper curve is the dominating PLD's, unchanged
    kw = {"sigma": 0.8, "steps": 20, "epochs": 1}
    eps = [0.5, 2.0, 3.0]
    lo, up = (bnb.delta_curve(eps, bound=b, **kw, method="pld") for b in ("lower", "upper"))
    for e, low, upp in zip(eps, lo, up):
        ms = bnb.delta(e, bound="lower", method="max_statistic", **kw).value
        assert low.value == low.lower == max(ms, low.accuracy["lower_pld"]) <= upp.value
        assert low.accuracy["lower_max_statistic"] == ms and "lower_method" not in upp.accuracy
    assert lo[1].accuracy["lower_method"] == "max-statistic events" and lo[1].value > lo[1].accuracy["lower_pld"]
    assert bnb.delta(2.0, bound="lower", **kw, method="pld") == lo[1]  # delta at one ε is the curve's point


def test_loose_fft_upper_of_the_smaller_direction_is_refined_by_geom():
    # T = 4, σ = 2: ADD's ε is well below REMOVE's but its FFT upper is not (27 GEOM steps above ADD's lower),
    # so refining ADD's lower alone cannot close the width; the bracket must stop trusting that FFT upper,
    # refine REMOVE's lower instead and meet its width (before: the width was missed after 81 CPU-s at E = 1)
    kw = {"sigma": 2.0, "steps": 4, "epochs": 2}
    r = bnb.epsilon_range(1e-5, **kw, method="pld")
    assert not r.flags and 0 < r.lower <= r.upper
    assert (r.upper - r.lower) / r.upper <= bnb.ACCURACY["default"]["rel_width"]
    ref = {b: pa.allocation_pld(bound=b, loss_discretization=2e-3, tail_truncation=1e-10,
                                 **kw)[0].get_epsilon_for_delta(1e-5) for b in ("upper", "lower")}
    assert ref["lower"] <= r.upper and r.lower <= ref["upper"]  # both certified: they overlap
    assert ref["upper"] - ref["lower"] < 0.5 * (r.upper - r.lower)


# ------------------------------------------------------------------ method allocation (the default)


def _pld_references(sigma, steps, epochs, ld, tail, bounds=("lower", "upper")):
    """PLD_accounting's own certified PLDs at a fixed (fine) loss step, {"lower": IS_DOMINATED, "upper": DOMINATES}
    (only the ``bounds`` asked for: each costs seconds; memoised for the session, tests/allocation_refs.py); read
    ε(δ) or δ(ε) off them, max over directions."""
    return allocation_plds(sigma, steps, epochs, ld, tail, tuple(bounds))


def _pld_reference(delta, sigma, steps, epochs, ld, bounds=("lower", "upper")):
    """PLD_accounting's own certified pair at a fixed (fine) loss step: (lower, upper) of ε(δ), max over directions
    (only the ``bounds`` asked for, in that order)."""
    plds = _pld_references(sigma, steps, epochs, ld, 1e-3 * delta, bounds)
    return tuple(float(plds[b].get_epsilon_for_delta(delta)) for b in bounds)


@pytest.mark.parametrize("sigma,steps,epochs", [(0.7, 10, 1), (0.7, 4, 3), (2.0, 20, 2)])
def test_allocation_default_overlaps_a_fine_pld_accounting_bracket(sigma, steps, epochs):
    # two certified intervals on the same ε: the default answer overlaps PLD_accounting's at a fine step
    # ((0.7, 4, 3): the pair tests/engine/test_allocation.py checks the engine against, built once per session)
    r = bnb.epsilon(1e-6, sigma=sigma, steps=steps, epochs=epochs)
    assert r.method.endswith(" / allocation-spread") and r.kind == "upper" and r.value == r.upper
    assert r.accuracy["upper_method"] == "allocation-spread" and r.method.startswith(r.accuracy["lower_method"])
    # one pair of reference PLDs for both the ε and the δ check (tail 1e-12: tighter than 1e-3 δ, so the ε
    # reference is at least as narrow as a pair built for ε alone)
    ref = _pld_references(sigma, steps, epochs, LOSS_STEP, TAIL)
    lo, up = (float(ref[b].get_epsilon_for_delta(1e-6)) for b in ("lower", "upper"))
    assert r.lower <= up and r.upper >= lo
    assert r.lower <= r.upper
    d = bnb.delta(0.5, sigma=sigma, steps=steps, epochs=epochs)
    assert d.lower <= float(ref["upper"].get_delta_for_epsilon(0.5))
    assert d.upper >= float(ref["lower"].get_delta_for_epsilon(0.5))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("steps,epochs", [(10, 1), (100, 5), (1000, 2)])
def test_allocation_meets_its_width_targets(sigma, steps, epochs):
    for accuracy, target in (("default", 1e-2), ("fine", 1e-3)):
        r = bnb.epsilon(1e-5, sigma=sigma, steps=steps, epochs=epochs, accuracy=accuracy)
        assert not r.flags
        assert 0 < r.lower <= r.upper and (r.upper - r.lower) / r.upper <= target
        assert r.accuracy["rel_width_target"] == target and r.accuracy["grid_step"] > 0


def test_allocation_delta_meets_its_width():
    r = bnb.delta(1.0, sigma=1.0, steps=100, epochs=5)
    assert not r.flags and 0 < r.lower <= r.upper and (r.upper - r.lower) / r.upper <= 1e-2


@pytest.mark.parametrize("target_eps,steps,epochs", [(1.0, 10, 5), (3.0, 20, 3)])
def test_allocation_sigma_brackets_the_true_sigma(target_eps, steps, epochs):
    # sufficient σ: its certified upper ε ≤ target; insufficient σ: its certified lower ε > target
    r = bnb.sigma(target_eps, 1e-5, steps=steps, epochs=epochs)
    assert r.kind == "upper" and r.value == r.upper and 0 < r.lower < r.upper <= r.lower * 1.03
    assert bnb.epsilon(1e-5, sigma=r.upper, steps=steps, epochs=epochs).upper <= target_eps
    assert bnb.epsilon(1e-5, sigma=r.lower, steps=steps, epochs=epochs).lower > target_eps
    # and the PLD_accounting bracket at a fine step agrees on the sides (independent reference)
    # (each side needs one bound of the pair: the lower ε at the sufficient σ, the upper at the insufficient one)
    assert _pld_reference(1e-5, r.upper, steps, epochs, 2e-2, bounds=("lower",))[0] <= target_eps
    assert _pld_reference(1e-5, r.lower, steps, epochs, 2e-2, bounds=("upper",))[0] > target_eps


@pytest.mark.parametrize("sigma,epochs", [(0.8, 3), (1.1, 1), (2.0, 10)])
def test_allocation_one_step_per_epoch_is_exact(sigma, epochs):
    exact = gauss_eps(1e-5, sigma / math.sqrt(epochs))
    r = bnb.epsilon(1e-5, sigma=sigma, steps=1, epochs=epochs)
    assert r.kind == "exact" and r.value == r.lower == r.upper == pytest.approx(exact, rel=1e-9)
    d = bnb.delta(1.0, sigma=sigma, steps=1, epochs=epochs)
    assert d.kind == "exact" and d.value == pytest.approx(gauss_delta(1.0, sigma / math.sqrt(epochs)), rel=1e-9)
    s = bnb.sigma(2.0, 1e-6, steps=1, epochs=epochs)
    exact_s = brentq(lambda x: gauss_eps(1e-6, x) - 2.0, 0.3, 10.0, xtol=1e-12) * math.sqrt(epochs)
    assert s.kind == "exact" and s.value == pytest.approx(exact_s, rel=1e-6)


def test_allocation_lower_end_is_the_larger_of_merge_and_max_statistic():
    # both certified lower bounds; at small σ with one epoch the max statistic's threshold events win, elsewhere the
    # merge (the floor then adds nothing)
    for (sigma, steps, epochs), floor_wins in (((0.8, 20, 1), True), ((0.8, 20, 2), False), ((2.0, 100, 2), False)):
        r = bnb.epsilon(1e-5, sigma=sigma, steps=steps, epochs=epochs)
        ms = bnb.epsilon(1e-5, sigma=sigma, steps=steps, epochs=epochs, bound="lower", method="max_statistic")
        assert r.lower == max(r.accuracy["lower_merge"], ms.value)
        assert (ms.value > r.accuracy["lower_merge"]) == floor_wins
        assert r.accuracy["lower_method"] == (ms.method if floor_wins else "allocation-merge")
        assert r.method == r.accuracy["lower_method"] + " / allocation-spread"


def test_allocation_bad_options_name_themselves():
    """Checked once, by samplers.account (the sampler module takes checked input)."""
    with pytest.raises(ValueError, match="accuracy"):
        account("balls_and_bins", "epsilon", 1e-5, sigma=1.0, steps=10, accuracy="medium")
    with pytest.raises(ValueError, match="loss_discretization"):
        account("balls_and_bins", "epsilon", 1e-5, sigma=1.0, steps=10, loss_discretization=0.1)


def test_allocation_delta_below_the_floor_is_flagged_not_refined():
    # δ ~ 5e-15: below the reliability floor the interval is not refined (one pass) and carries the floor flag only
    from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR

    r = bnb.delta(4.0, sigma=1.0, steps=100, epochs=5)
    assert r.flags == (BELOW_FLOOR_FLAG,) and r.accuracy["passes"] == 1 and r.upper < RELIABLE_DELTA_FLOOR
    ok = bnb.delta(0.8, sigma=1.0, steps=100, epochs=5)
    assert not ok.flags and (ok.upper - ok.lower) / ok.upper <= 1e-2


def test_allocation_delta_curve_is_the_pointwise_delta():
    """delta_curve (one set of compositions, both ends from one cached curve) returns exactly what delta() returns
    at each ε asked alone (caches cleared), flags and labels included: the below-floor points (not refined), one
    where the FFT error bounds alone exceed the width (not refined further, flagged) and the ordinary ones."""
    eps = [0.4, 1.2, 2.6, 3.4]
    kw = {"sigma": 1.0, "steps": 100, "epochs": 5}
    curve = {b: bnb.delta_curve(eps, bound=b, **kw) for b in ("upper", "lower")}
    for b in ("upper", "lower"):
        for e, r in zip(eps, curve[b]):
            bnb._allocation_interval.cache_clear()
            bnb._allocation_delta_curve.cache_clear()
            p = bnb.delta(e, bound=b, **kw)
            assert (r.value, r.lower, r.upper, r.kind, r.method, r.flags, r.accuracy) == \
                (p.value, p.lower, p.upper, p.kind, p.method, p.flags, p.accuracy)
    up = curve["upper"]
    assert not up[0].flags and not up[1].flags
    assert up[2].flags == (WIDTH_NOT_MET_FLAG,) and up[2].accuracy["passes"] == 1 and up[2].lower <= up[2].upper
    assert up[3].flags == (BELOW_FLOOR_FLAG,)


_MC_RUN = dict(sigma=1.0, steps=10, epochs=1, direction="remove", importance=False)


def test_mc_direction_reports_its_sample_count():
    est = mc.mc_direction(0.5, **_MC_RUN, mc_samples=10, mc_seed=1)
    assert est.mc_samples == 10


def test_mc_accuracy_keys_are_the_library_names():
    r = mc.mc_delta(0.5, sigma=1.0, steps=10, mc_samples=1000, mc_seed=2)
    assert set(r.accuracy) == {"mc_samples", "mc_failure_prob", "mc_seed", "importance", "mc_half_width"}
    e = mc.mc_epsilon(0.1, sigma=1.0, steps=10, mc_samples=1000, mc_seed=2)
    assert {"mc_samples", "mc_failure_prob", "mc_seed"} <= set(e.accuracy)


def test_mc_direction_missing_count_names_it():
    with pytest.raises(ParameterError, match=r"^mc_samples is missing: it must be an integer >= 1$"):
        mc.mc_direction(0.5, **_MC_RUN, mc_seed=1)
    with pytest.raises(ParameterError, match=r"^mc_seed is missing: it must be an integer >= 0$"):
        mc.block_sums(0.5, **_MC_RUN, mc_samples=10)


def test_tiny_sigma_gets_a_certified_interval_not_an_overflow():
    # σ = 0.01 used to stop with "math range error": now the upper end is the Gaussian mechanism's (a dominating
    # pair, engine.allocation._closed_form_interval) and the lower end the max statistic's (nearly tight at small σ)
    r = bnb.epsilon(1e-5, sigma=0.01, steps=100)
    assert r.method == "max-statistic events / gaussian-mechanism"
    ms = bnb.epsilon(1e-5, sigma=0.01, steps=100, bound="lower", method="max_statistic").value
    assert r.lower == ms and ms < r.upper < ms * 1.01 and r.value == r.upper
    assert r.upper >= gauss_eps_large(1e-5, 0.01) and not r.flags


def gauss_eps_large(delta, s):
    """ε(δ) of the Gaussian mechanism in log space (scipy), for ε far beyond e^709."""
    from scipy.special import log_ndtr

    def log_gap(e):  # log Φ(a) + log(1 − e^{ε + log Φ(b) − log Φ(a)}) − log δ
        la, lb = log_ndtr(1 / (2 * s) - e * s), log_ndtr(-1 / (2 * s) - e * s)
        return la + math.log(-math.expm1(e + lb - la)) - math.log(delta)

    return brentq(log_gap, 1.0, 1e5, xtol=1e-9)


def test_pld_without_the_pipeline_extra_names_it(monkeypatch):
    import sys

    from dpsampling.engine.lazy import MissingExtra

    monkeypatch.setitem(sys.modules, "PLD_accounting", None)  # import PLD_accounting now raises ImportError
    for call in (lambda: bnb.epsilon(1e-5, sigma=1.0, steps=10, method="pld"),
                 lambda: bnb.delta(1.0, sigma=1.0, steps=10, method="pld"),
                 lambda: bnb.sigma(2.0, 1e-5, steps=10, method="pld")):
        with pytest.raises(MissingExtra, match=r"method 'pld' .* needs the 'pipeline' extra: pip install "
                                              r"'dpsampling\[pipeline\]'"):
            call()
    assert bnb.epsilon(1e-5, sigma=1.0, steps=10).upper > 0  # the default method does not need it


def test_mc_bad_inputs_raise_parameter_errors_naming_them():
    cases = [(lambda: mc.block_sums(0.5, **_MC_RUN, mc_samples=10, mc_seed=1, blocks=[5]), "blocks"),
             (lambda: mc.mc_direction(0.5, **{**_MC_RUN, "direction": "both"}, mc_samples=10, mc_seed=1), "direction"),
             (lambda: mc.mc_epsilon(1e-3, sigma=1.0, steps=10, mc_samples=10, eps0=-1.0), "eps0"),
             (lambda: mc.mc_direction(0.5, **{**_MC_RUN, "epochs": 2, "importance": True}, mc_samples=10, mc_seed=1),
              "importance")]
    for call, name in cases:
        with pytest.raises(ParameterError) as e:
            call()
        assert e.value.param == name
    with pytest.raises(ParameterError) as e:  # options: checked once, by samplers.account
        account("balls_and_bins", "epsilon", 1e-5, sigma=1.0, steps=10, method="allocation", loss_discretization=0.1)
    assert e.value.param == "loss_discretization"
    with pytest.raises(ParameterError) as e:  # an option montecarlo does not take (n: never a keyword)
        account("balls_and_bins", "delta", 1.0, sigma=1.0, steps=10, method="montecarlo", n=10)
    assert e.value.param == "n"


def _mp_gaussian_epsilon(sigma, delta):
    """ε(δ) of the Gaussian mechanism N(0, σ²) vs N(1, σ²) in mpmath (bisection of the closed form)."""
    import mpmath

    with mpmath.workdps(50):
        mu = 1 / mpmath.mpf(sigma)
        d = lambda e: mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)  # noqa: E731
        lo, hi = mpmath.mpf(0), mu * mu + 40 * mu
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
        return hi


def test_upper_end_at_most_the_deterministic_value(monkeypatch):
    """Issue 38: σ 17, 3 steps, 867 epochs, δ 1.29e-12 answered [6.37, ∞]; balls-and-bins is a mixture of
    deterministic batchings (joint convexity), so the upper end is at most the Gaussian's ε at σ/√E (13.22, mpmath
    here).  The allocation interval's upper end is injected as ∞ (the case itself takes a minute)."""
    import math

    from dpsampling.samplers import balls_and_bins as bb

    sigma, steps, epochs, delta = 17.0, 3, 867, 1.29e-12
    exact = _mp_gaussian_epsilon(sigma / math.sqrt(epochs), delta)
    assert abs(float(exact) - 13.22289394605429) < 1e-9
    lo, up, info = bb._at_most_deterministic("epsilon", delta, sigma, steps, epochs, (6.37, math.inf, {"x": 1}))
    assert (lo, info["method_upper"]) == (6.37, bb.DETERMINISTIC_UPPER_METHOD) and up == pytest.approx(float(exact),
                                                                                                        rel=1e-12)
    assert bb._at_most_deterministic("epsilon", delta, sigma, steps, epochs, (1.0, 2.0, {}))[1] == 2.0  # tighter kept
    fake = (0.5, math.inf, {"step": 0.1, "loss_step": 0.1, "passes": [1], "method_upper": "allocation-spread"})
    monkeypatch.setattr(bb, "_allocation_interval", lambda *a: fake)
    r = bb.epsilon(1e-5, sigma=2.0, steps=3, epochs=4, bound="upper")
    det = float(_mp_gaussian_epsilon(2.0 / 2, 1e-5))
    assert r.upper == r.value == pytest.approx(det, rel=1e-12)
    assert r.accuracy["upper_method"] == bb.DETERMINISTIC_UPPER_METHOD
    assert r.lower <= r.upper
