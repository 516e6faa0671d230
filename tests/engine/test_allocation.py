"""engine/allocation: the convex-order interval of random allocation against independent references.

References: the Gaussian mechanism at σ/√E (one step per epoch), a quadrature of the two-step hockey
stick (Black–Scholes integrand, scipy quad), closed-form moments of X = dP/dQ, PLD_accounting's certified
bracket, dp_accounting's composition, and the Monte Carlo estimate with its confidence band.
"""

import math
from functools import partial

import numpy as np
import pytest
import lognormal  # tests/engine/lognormal.py: the Black–Scholes closed forms
from allocation_refs import allocation_plds  # tests/allocation_refs.py: shared, built once
from scipy import integrate

from dpsampling.engine import allocation as al
from dpsampling.engine import gaussian


@pytest.mark.parametrize("sigma,epochs", [(0.8, 3), (1.1, 1), (2.0, 10)])
def test_one_step_is_the_gaussian_at_sigma_over_root_epochs(sigma, epochs):
    exact = gaussian.epsilon(1e-5, sigma / math.sqrt(epochs))
    lo, up, info = al.epsilon_interval(1e-5, sigma, 1, epochs)
    assert lo <= exact <= up
    assert up - lo <= 1e-2 * up
    assert info["method_upper"] and info["method_lower"]


def _two_step_delta(eps, sigma):
    """max over directions of δ(ε) at T = 2, E = 1 by quadrature: X = (Y₁ + Y₂)/2 with Y lognormal, E Y = 1,
    log-sd 1/σ; given Y₁ the inner expectation over Y₂ is a Black–Scholes call (REMOVE) or put (ADD)."""
    s, m, g = 1 / sigma, -0.5 / sigma**2, math.exp(eps)

    call, put = partial(lognormal.call, s=s), partial(lognormal.put, s=s)  # E[(Y − k)_+], E[(k − Y)_+]

    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    rem = lambda z: pdf(z) * 0.5 * call(2 * g - math.exp(m + s * z))  # noqa: E731
    add = lambda z: pdf(z) * (g / 2) * put(2 / g - math.exp(m + s * z))  # noqa: E731
    out = []
    for f, kink in ((rem, (math.log(2 * g) - m) / s), (add, (math.log(2 / g) - m) / s)):
        out.append(sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-12, limit=200)[0]
                       for a, b in ((-40, kink), (kink, 40))))
    return max(out)


@pytest.mark.parametrize("sigma,eps", [(0.5, 1.0), (1.0, 0.1), (1.0, 1.0), (2.0, 0.5), (2.0, 1.0)])
def test_two_steps_one_epoch_against_quadrature(sigma, eps):
    ref = _two_step_delta(eps, sigma)
    lo, up, _ = al.delta_interval(eps, sigma, 2, 1, step=0.01)
    assert lo <= ref <= up
    assert up - lo <= 0.02 * ref


@pytest.mark.parametrize("sigma,steps", [(0.7, 3), (1.1, 10), (2.0, 235)])
def test_one_epoch_laws_bracket_the_second_moment(sigma, steps):
    # E_Q[X] = 1 and E_Q[X²] = 1 + (e^{1/σ²} − 1)/T in closed form; x² is convex, so the spread law's
    # second moment is ≥ it and the merged law's ≤ it; the spread keeps the mean (with the escaped mass ν)
    up, lo = al.epoch_laws(sigma, steps, 0.01, 1e-14)
    g = np.exp((up.k0 + np.arange(len(up.w))) * 0.01)
    second = 1 + math.expm1(1 / sigma**2) / steps
    assert np.dot(up.w, g) + up.nu == pytest.approx(1.0, abs=1e-12)
    assert up.w.sum() + up.zero == pytest.approx(1.0, abs=1e-12)
    assert np.dot(up.w, g * g) >= second * (1 - 1e-12)
    assert np.dot(lo.m, lo.x**2) <= second
    assert np.dot(lo.m, lo.x) <= 1 + 1e-12
    assert np.dot(lo.m, lo.x**2) >= second * (1 - 1e-3)  # and close: the merge is second order


def test_composition_matches_dp_accounting():
    from dp_accounting.pld import pld_pmf

    up, _ = al.epoch_laws(1.0, 20, 0.01, 1e-14)
    for pmf in al.upper_pmfs(up, 0.01):
        composed = al.self_compose(pmf, 7, True, 0.0)
        theirs = pld_pmf.DensePLDPmf(0.01, pmf.k0, pmf.probs.copy(), pmf.inf, True).self_compose(7, 0.0)
        # ours adds its FFT rounding bound to the +∞ mass (an upper end); that bound is small, and without it the
        # two compositions agree
        margin = composed.inf - theirs._infinity_mass  # noqa: SLF001
        assert 0 < margin < 1e-11
        ours = al.LossPmf(composed.step, composed.k0, composed.probs, theirs._infinity_mass)  # noqa: SLF001
        for d in (1e-3, 1e-5, 1e-7):  # the two FFT schedules (squaring vs dp_accounting's) differ by rounding
            assert al.epsilon_of(ours, d) == pytest.approx(theirs.get_epsilon_for_delta(d), rel=1e-8)
        assert al.delta_of(ours, 0.7) == pytest.approx(float(theirs.get_delta_for_epsilon(0.7)), rel=1e-9)


@pytest.mark.parametrize("sigma,steps,epochs", [(1.0, 8, 2), (0.7, 4, 3)])
def test_overlaps_pld_accounting(sigma, steps, epochs):
    # PLD_accounting's certified bracket (dominating / dominated PLDs of the same pair, GEOM, loss step 1e-2, tail
    # 1e-12), built once per session (tests/allocation_refs.py: (0.7, 4, 3) is also tests/samplers' reference;
    # 4 steps, not 6: the same widths, ours and the reference's, ~13 CPU-s instead of ~21)
    plds = allocation_plds(sigma, steps, epochs)
    ref = [plds[b].get_epsilon_for_delta(1e-5) for b in ("lower", "upper")]
    for rel in (1e-2, 2e-3):
        lo, up, _ = al.epsilon_interval(1e-5, sigma, steps, epochs, rel_width=rel)
        assert max(lo, ref[0]) <= min(up, ref[1])
        assert up - lo <= rel * up


def test_mnist_inside_pld_accounting_fine_bracket():
    # PLD_accounting at fine accuracy (issue 23): [2.324, 2.345] for 235 steps × 60 epochs, σ = 1.1
    lo, up, _ = al.epsilon_interval(1e-5, 1.1, 235, 60)
    assert 2.324 <= lo <= up <= 2.345
    assert up - lo <= 1e-2 * up


@pytest.mark.parametrize("sigma,steps,epochs,eps", [(1.0, 10, 1, 0.5), (0.8, 10, 3, 1.5)])
def test_overlaps_monte_carlo_band(sigma, steps, epochs, eps):
    # E = 1: importance sampling; E = 3: plain sampling of the E-epoch loss (both with a KL band, β = 1e-3)
    from dpsampling.samplers.balls_and_bins_mc import mc_delta

    r = mc_delta(eps, sigma=sigma, steps=steps, epochs=epochs, mc_samples=200_000, mc_seed=3, mc_failure_prob=1e-3)
    lo, up, _ = al.delta_interval(eps, sigma, steps, epochs)
    assert max(lo, r.lower) <= min(up, r.upper)
    assert up - lo < r.upper - r.lower


def test_refining_the_grid_tightens_and_overlaps():
    runs = [al.epsilon_interval(1e-6, 1.5, 100, 5, step=h) for h in (0.02, 0.01, 0.005)]
    widths = [up - lo for lo, up, _ in runs]
    assert widths[0] > widths[1] > widths[2]
    assert max(lo for lo, _, _ in runs) <= min(up for _, up, _ in runs)
    assert all(lo <= up for lo, up, _ in runs)


def test_delta_interval_brackets_epsilon_interval():
    lo, up, _ = al.epsilon_interval(1e-5, 1.0, 50, 4)
    d_lo, d_up, info = al.delta_interval(up, 1.0, 50, 4)
    assert d_lo <= 1e-5 * (1 + 1e-6)
    assert d_up - d_lo <= 1e-2 * d_up or not info["width_met"]
    d_lo, d_up, _ = al.delta_interval(lo, 1.0, 50, 4)
    assert d_up >= 1e-5 * (1 - 1e-6)


@pytest.mark.parametrize("epsilon,epochs", [(2.0, 4), (0.5, 1)])
def test_sigma_interval_one_step_contains_the_gaussian_calibration(epsilon, epochs):
    # T = 1: E epochs = the Gaussian at σ/√E, so the exact noise is √E × the analytic calibration
    exact = math.sqrt(epochs) * gaussian.sigma(epsilon, 1e-5)
    lo, hi, info = al.sigma_interval(epsilon, 1e-5, 1, epochs)
    assert lo <= exact <= hi
    assert hi - lo <= 2e-2 * hi
    assert info["epsilon_upper_at_sufficient"] <= epsilon < info["epsilon_lower_at_insufficient"]


@pytest.mark.parametrize("kw,name", [({"sigma": 0.0}, "sigma"), ({"steps": 0}, "steps"), ({"epochs": 0}, "epochs"),
                                     ({"rel_width": 1.5}, "rel_width"), ({"delta": 0.0}, "delta")])
def test_bad_input_names_the_parameter(kw, name):
    args = {"delta": 1e-5, "sigma": 1.0, "steps": 10, "epochs": 1, "rel_width": 1e-2, **kw}
    with pytest.raises(ValueError, match=name):
        al.epsilon_interval(args["delta"], args["sigma"], args["steps"], args["epochs"], args["rel_width"])


def test_delta_curve_equals_pointwise_queries_and_pld_accounting_finer_bracket():
    """One set of compositions for a whole δ(ε) curve gives exactly the pointwise intervals (each computed from
    scratch), and each interval overlaps PLD_accounting's certified bracket at a finer loss step (5e-3, its width
    there ~0.6 % at ε = 1; run with the windowed kernel, PLD_accounting's bins: tests/samplers)."""
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        PrivacyParams,
        gaussian_allocation_pld,
    )

    from dpsampling.engine.geometric_kernel import geometric_kernel

    sigma, steps, epochs = 1.0, 6, 3
    eps = [0.1, 0.5, 1.0, 2.0, 3.0, 4.5, 1.0]
    curve = al.delta_curve(eps, sigma, steps, epochs, refine_from=1e-10)
    for e, (lo, up, info) in zip(eps, curve):
        p_lo, p_up, p_info = al.delta_interval(e, sigma, steps, epochs, refine_from=1e-10)
        assert (lo, up) == (p_lo, p_up) and info == p_info
    cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM, loss_discretization=5e-3,
                                 tail_truncation=1e-13)
    params = PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs)
    with geometric_kernel():
        ref_lo, ref_up = (gaussian_allocation_pld(params=params, config=cfg, bound_type=b)
                          for b in (BoundType.IS_DOMINATED, BoundType.DOMINATES))
    for e, (lo, up, info) in zip(eps, curve):
        r_lo, r_up = float(ref_lo.get_delta_for_epsilon(e)), float(ref_up.get_delta_for_epsilon(e))
        assert lo <= r_up and r_lo <= up, (e, lo, up, r_lo, r_up)
        if up >= 1e-10:
            assert info["width_met"] and (up - lo) <= 1e-2 * up


def _gaussian_epsilon_mpmath(delta, sigma):
    """ε(δ) of the Gaussian mechanism (sensitivity 1) at 60 digits: the reference of the tiny-σ interval."""
    import mpmath as mp

    mp.mp.dps = 60
    s = mp.mpf(sigma)

    def d(e):
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s) - mp.mpf(delta)

    lo, hi = mp.mpf(0), mp.mpf(1)
    while d(hi) > 0:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
    return float(hi)


@pytest.mark.parametrize("sigma,steps,epochs", [(0.01, 100, 1), (1 / math.sqrt(1e5), 100, 1), (0.02, 10, 4)])
def test_tiny_sigma_gives_the_gaussian_mechanism_interval(sigma, steps, epochs):
    # where the grid would be too fine (σ ≲ 0.044) the interval is [0, Gaussian mechanism at σ/√E], an upper bound by
    # joint convexity; it used to overflow (math range error).  Reference: the Gaussian ε at 60 digits
    lo, up, info = al.epsilon_interval(1e-5, sigma, steps, epochs)
    ref = _gaussian_epsilon_mpmath(1e-5, sigma / math.sqrt(epochs))
    assert lo == 0.0 and ref <= up <= ref * (1 + 1e-8)
    assert info["method_upper"] == al.GAUSSIAN_METHOD and not info["width_met"]
    (d_lo, d_up, _), = al.delta_curve([ref], sigma, steps, epochs)
    assert d_lo == 0.0 and 1e-5 <= d_up <= 1e-5 * (1 + 1e-6)


def test_bad_rel_width_and_unreachable_epsilon_raise_parameter_errors():
    from dpsampling.engine.errors import ParameterError

    for bad in (1.0, 1.5):
        with pytest.raises(ParameterError) as e:
            al.epsilon_interval(1e-5, 1.0, 10, 1, rel_width=bad)
        assert (e.value.param, e.value.got) == ("rel_width", bad)
    with pytest.raises(ParameterError) as e:  # ε(1e-10) at σ = 1e4, T = 10 is ≈ 6e-4 > 1e-6
        al.sigma_interval(1e-6, 1e-10, 10, 1)
    assert (e.value.param, e.value.got) == ("epsilon", 1e-6)
