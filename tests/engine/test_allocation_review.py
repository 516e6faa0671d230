"""Review of engine/allocation against independent references.

Finding (fixed: ``_compose`` now bounds the FFT's rounding, adds it to the upper end's +∞ mass and subtracts it
from the lower end's δ): at small δ the FFT composition's rounding noise, clipped at 0, put ~1e-15..1e-14 of
spurious mass (absolute) at high losses; ``epsilon_of`` summed it, so the LOWER end was pushed up, above the
exact value (T = 1, the Gaussian at σ/√E) and even above the upper end.  These tests failed before the fix.  References: the analytic Gaussian, and the module's own one-epoch
dominating pmf composed exactly by an exponentially tilted FFT (tilting makes the rounding noise relative to
the tail being measured, so δ ≈ 1e-14 is resolved to ~1e-16 relative).

Passing checks: a direct two-dimensional quadrature of both directions' δ(ε) at T = 3, E = 1.
"""

import math
from functools import partial

import numpy as np
import pytest
import lognormal  # tests/engine/lognormal.py: the Black–Scholes closed forms
from scipy import integrate, signal

from dpsampling.engine import allocation as al
from dpsampling.engine import gaussian



@pytest.mark.parametrize("sigma,epochs", [(1.1, 60), (0.5, 60)])
def test_one_step_small_delta_contains_the_gaussian(sigma, epochs):
    # measured: σ = 1.1 → [78.159, 78.118] (crossed) vs exact 77.991; σ = 0.5 → [237.739, 238.040] vs 237.711
    exact = gaussian.epsilon(1e-14, sigma / math.sqrt(epochs))
    lo, up, _ = al.epsilon_interval(1e-14, sigma, 1, epochs, step=al.first_step(sigma, 1, 1e-2))  # one pass
    assert lo <= exact <= up


def test_one_step_small_delta_query_contains_the_gaussian():
    # δ(ε) as well: measured [1.0261e-14, 4.4263e-14] vs exact 9.9060e-15 (σ/√E = 1.1/√60, ε = 78)
    exact = gaussian.delta(78.0, 1.1 / math.sqrt(60))
    lo, up, _ = al.delta_interval(78.0, 1.1, 1, 60, step=0.01)
    assert lo <= exact <= up


def _tilted_delta(pmf, times, eps):
    """δ(ε) of the ``times``-fold composition of a LossPmf, computed on the tilted pmf p·e^{λℓ} (λ puts the
    tilted mean of the composition at ε), so that FFT rounding is relative to the mass near ε."""
    p = pmf.probs
    loss = (pmf.k0 + np.arange(len(p))) * pmf.step
    pos = p > 0
    logp = np.full(len(p), -np.inf)
    logp[pos] = np.log(p[pos])

    def tilted(lam):
        w = logp + lam * loss
        c = w[pos].max()
        q = np.where(pos, np.exp(w - c), 0.0)
        return q, c

    lo, hi = 0.0, 50.0
    for _ in range(80):  # λ with tilted mean × times = ε
        lam = (lo + hi) / 2
        q, _ = tilted(lam)
        if times * np.dot(q, loss) / q.sum() < eps:
            lo = lam
        else:
            hi = lam
    q, c = tilted(lo)
    z = q.sum()
    q /= z
    res, k0, base, kb, t = None, 0, q, pmf.k0, times
    while True:
        if t & 1:
            res, k0 = (base, kb) if res is None else (np.maximum(signal.fftconvolve(res, base), 0), k0 + kb)
        t >>= 1
        if not t:
            break
        base, kb = np.maximum(signal.fftconvolve(base, base), 0), 2 * kb
    L = (k0 + np.arange(len(res))) * pmf.step
    sel = (L > eps) & (res > 0)
    log_terms = np.log(res[sel]) + times * (c + math.log(z)) - lo * L[sel] + np.log(-np.expm1(eps - L[sel]))
    finite = float(np.exp(log_terms).sum()) if len(log_terms) else 0.0
    return -math.expm1(times * math.log1p(-pmf.inf)) + finite


def test_mnist_small_delta_lower_below_an_exactly_composed_upper():
    # T = 235, E = 60, σ = 1.1, δ = 1e-14; measured: module [17.83, 7.11]; the same one-epoch pmfs composed
    # exactly give [4.3997, 4.4311].  The lower end must not exceed the exact ε of a dominating pair.
    sigma, steps, epochs, delta = 1.1, 235, 60, 1e-14
    lo, up, info = al.epsilon_interval(delta, sigma, steps, epochs, step=al.first_step(sigma, steps, 1e-2))  # 1 pass
    step = info["passes"][-1]["step"]
    tail = 1e-4 * delta / (epochs * (math.log2(steps) + 2))
    upper_law, _ = al.epoch_laws(sigma, steps, step, tail)
    exact_up = max(_tilted_delta(p, epochs, 4.44) for p in al.upper_pmfs(upper_law, step))
    assert exact_up < delta  # so the true ε is < 4.44
    assert lo <= up
    assert lo <= 4.44


def test_tilted_reference_agrees_with_the_module_at_moderate_delta():
    # the reference above reproduces the module where FFT noise is negligible (δ ~ 1e-5)
    up_law, _ = al.epoch_laws(1.1, 235, 0.01, 1e-12)
    for pmf in al.upper_pmfs(up_law, 0.01):
        comp = al.self_compose(pmf, 60, True, 0.0)
        ref, ours = _tilted_delta(pmf, 60, 2.3), al.delta_of(comp, 2.3)
        assert ref * (1 - 1e-8) <= ours <= ref + 1e-10  # ours adds its FFT rounding bound (an upper end)


def _three_step_deltas(eps, sigma):
    """(REMOVE, ADD) δ(ε) at T = 3, E = 1 by quadrature: X = (Y₁ + Y₂ + Y₃)/3, Y lognormal with E Y = 1 and
    log-sd 1/σ; over (Y₁, Y₂) numerically, over Y₃ in closed form (Black–Scholes call / put)."""
    s, m, g = 1 / sigma, -0.5 / sigma**2, math.exp(eps)

    call, put = partial(lognormal.call, s=s), partial(lognormal.put, s=s)  # E[(Y − k)_+], E[(k − Y)_+]

    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    y = lambda z: math.exp(m + s * z)  # noqa: E731

    def expect(f, strike):  # E f(strike − Y₁ − Y₂ ...) with the last term in closed form
        def inner(z1):
            c = strike - y(z1)
            pts = [-12.0, 12.0]
            if c > 0 and -12 < (math.log(c) - m) / s < 12:
                pts.insert(1, (math.log(c) - m) / s)  # the kink of f
            return sum(integrate.quad(lambda z2: pdf(z2) * f(c - y(z2)), a, b, epsabs=0, epsrel=1e-11,
                                      limit=200)[0] for a, b in zip(pts, pts[1:]))

        return integrate.quad(lambda z1: pdf(z1) * inner(z1), -12, 12, epsabs=0, epsrel=1e-10, limit=200)[0]

    # H_γ(P‖Q) = E(X − γ)_+ = (1/3) E(ΣY − 3γ)_+ ;  H_γ(Q‖P) = E(1 − γX)_+ = (γ/3) E(3/γ − ΣY)_+
    return expect(call, 3 * g) / 3, g / 3 * expect(put, 3 / g)


@pytest.mark.parametrize("sigma,eps", [(0.7, 1.0), (1.5, 0.3), (1.0, 2.5)])
def test_three_steps_one_epoch_against_quadrature(sigma, eps):
    # measured: (0.7, 1.0) 0.1401451 ∈ [0.1399631, 0.1401485]; (1.0, 2.5) 2.67595e-4 ∈ [2.67257e-4, 2.67654e-4]
    ref = max(_three_step_deltas(eps, sigma))
    lo, up, _ = al.delta_interval(eps, sigma, 3, 1, step=0.01)
    assert lo <= ref <= up
    assert up - lo <= 0.01 * ref
