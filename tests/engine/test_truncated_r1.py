"""engine/truncated_r1: R₁'s local pair against independent references: 40-digit mpmath quadrature of each
one-dimensional pair, and two-dimensional quadrature (across v in closed form) at intermediate angles for the
supremum over the angle (module docstring, step 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from r1_reference import npdf, r1_atoms  # tests/engine/r1_reference.py
from scipy import integrate, stats

from dpsampling.engine import truncated as tr
from dpsampling.engine import truncated_r1 as r1

N, Q, SIGMA = 400, 0.25, 1.0  # mean batch 100, sd 8.7


def _local(g, cap, direction, theta=None):
    return float(r1.local_profile(np.array([g]), SIGMA, Q, tr.r1_weights(Q, N, cap), direction, theta)[0])


@pytest.mark.parametrize("cap,theta", [(100, "pi"), (108, "zero")])
def test_r1_one_dimensional_pairs_match_mpmath_quadrature(cap, theta):
    """The closed form (quadratic region, normal masses) of each one-dimensional local pair against 40-digit
    quadrature split at the sign changes: at or above it, by at most the relative guard."""
    import mpmath as mp

    mp.mp.dps = 40
    pm, qm = r1_atoms(Q, N, cap, theta)
    for direction in ("remove", "add"):
        a, b = (pm, qm) if direction == "remove" else (qm, pm)
        for g in (0.3, 1.0, 1.05, 7.0, 40.0):
            gm = mp.mpf(g)

            def f(y):
                return sum(mp.mpf(w) * mp.npdf(y, mu, SIGMA) for mu, w in a.items()) - gm * sum(
                    mp.mpf(w) * mp.npdf(y, mu, SIGMA) for mu, w in b.items())

            ys = [mp.mpf(-14) + mp.mpf(i) * 28 / 400 for i in range(401)]
            vals = [f(y) for y in ys]
            cuts = [ys[0]] + [mp.findroot(f, (ys[i], ys[i + 1]), solver="anderson")
                              for i in range(400) if (vals[i] > 0) != (vals[i + 1] > 0)] + [ys[-1]]
            ref = float(sum(mp.quad(f, [x, y]) for x, y in zip(cuts[:-1], cuts[1:]) if f((x + y) / 2) > 0))
            got = _local(g, cap, direction, theta)
            assert got >= ref
            assert got <= ref * (1 + 1e-8) + 1e-300


def _two_dim_local(q, n, cap, theta_angle, direction, gamma, sigma=SIGMA):
    """H_γ of the local pair with v = (1, 0), e = (cos θ, sin θ) by quadrature: along v numerically, across it in
    closed form (the integrand is A(y₁)φ(y₂) + B(y₁)φ(y₂ − sin θ))."""
    pm, qm = r1_atoms(q, n, cap, "pi")
    pi, s, pe = pm[0.0], pm[1.0], pm[-1.0]
    qi, qe = qm[0.0], qm[-1.0]
    if direction == "remove":
        c0, cv, ce = pi - gamma * qi, s, pe - gamma * qe
    else:
        c0, cv, ce = qi - gamma * pi, -gamma * s, qe - gamma * pe
    c, sn = math.cos(theta_angle), math.sin(theta_angle)
    dens = lambda y, m: npdf(y, m, sigma)  # noqa: E731

    def inner(y1):
        a = c0 * dens(y1, 0.0) + cv * dens(y1, 1.0)
        b = ce * dens(y1, c)
        if sn < 1e-12 or a == 0 or b == 0:
            return max(a + b, 0.0)
        if a > 0 and b > 0:
            return a + b
        if a <= 0 and b <= 0:
            return 0.0
        if a > 0:  # a φ(y) > |b| φ(y − s) for y < t
            t = sigma**2 * math.log(a / -b) / sn + sn / 2
            return a * stats.norm.cdf(t / sigma) + b * stats.norm.cdf((t - sn) / sigma)
        t = sigma**2 * math.log(-a / b) / sn + sn / 2  # b φ(y − s) > |a| φ(y) for y > t
        return b * stats.norm.sf((t - sn) / sigma) + a * stats.norm.sf(t / sigma)

    return integrate.quad(inner, -14, 15, points=[-1, 0, 1], limit=400, epsabs=1e-15, epsrel=1e-11)[0]


# q' = 0.233 at cap 100: remove γ = 0.76 ∈ (1 − q, 1 − q') and add γ = 1.32 ∈ (1/(1 − q'), 1/(1 − q)) are on the
# θ = 0 side with a term of each sign (elsewhere on that side the integrand has one sign and nothing moves)
@pytest.mark.parametrize("direction,gamma", [("remove", 1.0), ("remove", 2.5), ("remove", 0.76), ("add", 1.0),
                                             ("add", 0.5), ("add", 1.32)])
def test_r1_profile_is_monotone_in_the_angle_and_its_supremum_is_an_end(direction, gamma):
    """Step 7 of the module docstring: the two-dimensional local pair's H_γ by quadrature at angles 0 … π moves
    monotonically, upwards where the e-atom's coefficient has the sign opposite to v's, and its ends are the
    closed-form one-dimensional pairs; the supremum the code takes is their maximum."""
    cap = 100
    angles = np.linspace(0, math.pi, 7)
    vals = np.array([_two_dim_local(Q, N, cap, a, direction, gamma) for a in angles])
    _, p, qq, _, _ = tr.r1_weights(Q, N, cap)
    up = gamma >= 1 - qq if direction == "remove" else gamma * (1 - qq) <= 1
    steps = np.diff(vals) if up else -np.diff(vals)
    assert np.all(steps >= -1e-12 * vals.max())
    assert steps.sum() > 1e-11 * vals.max()  # it does move (by ~6e-11 relative at remove 0.76: a narrow window)
    ends = [_local(gamma, cap, direction, th) for th in ("zero", "pi")]
    assert ends == pytest.approx([vals[0], vals[-1]], rel=1e-8, abs=1e-14)
    sup = _local(gamma, cap, direction)
    assert sup == max(ends) and sup >= vals.max() * (1 - 1e-9)


def test_three_point_integral_every_sign_pattern():
    """The closed form against quadrature for random coefficients of every sign pattern (zeros included: the
    linear and constant cases of its quadratic) at small, unit and large σ."""
    from r1_reference import hockey_1d

    rng = np.random.default_rng(2)
    for trial in range(90):
        sigma = (0.3, 1.0, 3.0)[trial % 3]
        c = rng.normal(size=3) * rng.choice([1e-3, 1.0], size=3)
        c[rng.random(3) < 0.2] = 0.0
        got = float(r1._three_point_integral(c[0], c[1], c[2], sigma))

        def f(y, c=c, s=sigma):
            return c[0] * npdf(y, -1.0, s) + c[1] * npdf(y, 0.0, s) + c[2] * npdf(y, 1.0, s)

        ref = hockey_1d(f, -1 - 14 * sigma, 1 + 14 * sigma, scan=2000)
        scale = np.abs(c).sum()
        assert got >= ref - 1e-13 * scale
        assert got <= ref * (1 + 1e-8) + 1e-13 * scale
