"""Truncated Poisson's third dominating pair, R₁ (issue 40): the count of kept others revealed only below B − 1.

Notation as in :mod:`.truncated`: n records (n − 1 others), K ~ Bin(n − 1, q) the others drawn, π_k = P[K = k],
p = P[K ≥ B], q' the rate at which the differing record d is kept when K ≥ B, S = q·π_{B−1} + p·q' (d kept with
B − 1 others), w = π_{B−1} + p.  Per step and in each direction the mechanism is dominated by

    R₁ = (1 − w)·[Poisson's pair (σ, q)] ⊕ w·(P_loc, Q_loc),
    P_loc = [(1 − q)π_{B−1}·N(0) + S·N(v) + p(1 − q')·N(e)]/w,   Q_loc = [π_{B−1}·N(0) + p·N(e)]/w,

v and e unit vectors at an angle θ, its profile the supremum over θ ∈ [0, π].  Why, one step per sentence:

1. Order the others uniformly at random, independently of the data and the draw, and let x_k be the sum of the
   first k of their gradients: given the number C of kept others (and whether d is kept) the kept others are a
   uniform C-subset under both inputs, so taking the first C of the order draws the same batch, and the output
   given the order and (d kept c, C) is N(x_C + c·v, σ²I).
2. Reveal the order and W = C if C ≤ B − 2, W = ⊤ otherwise: the output is a marginal of (order, W, output), so
   revealing can only raise every hockey-stick divergence (data processing).
3. The order has the same law under both inputs, and so has W (C = K ≤ B − 2 with or without d exactly when
   K ≤ B − 2, so P[W = k] = π_k, P[W = ⊤] = w), so the revealed pair's profile is at most the average of its
   slices' profiles with these masses (joint convexity).
4. Given W = k ≤ B − 2 the slice is (1 − q)N(x_k) + q·N(x_k + v) against N(x_k): Poisson's pair translated,
   whose profile is at most that at ‖v‖ = 1.
5. Given ⊤ the slice is, with d, (1 − q)π_{B−1} at x_{B−1} (K = B − 1, d not drawn), S at x_{B−1} + v (d
   kept) and p(1 − q') at x_B (d drawn and cut, or not drawn, K ≥ B), and without d π_{B−1} at x_{B−1} and p
   at x_B (all over w); translating by −x_{B−1} (a bijection) gives (P_loc, Q_loc) with e = x_B − x_{B−1} the
   B-th other's gradient, ‖v‖, ‖e‖ ≤ 1.
6. Norms below 1 are a post-processing of norm 1: with unit v̂, ê at cosine ⟨v, e⟩ the linear map A with
   Av̂ = v, Aê = e is a contraction (the Gram matrices differ by diag(1 − ‖v‖², 1 − ‖e‖²) ⪰ 0), and
   y ↦ Ay + N(0, σ²(I − AAᵀ)) sends N(μ, σ²I) to N(Aμ, σ²I) and fixes the atom at 0.
7. The supremum over θ is at θ = 0 or θ = π, so it is a one-dimensional pair's at every γ: write the integrand
   of H_γ as g + β·φ_e with g = α_v·φ_v + α₀·φ₀ (P_loc − γQ_loc for remove, Q_loc − γP_loc for add); for unit e,
   e' with ∠(v, e) ≤ ∠(v, e') the reflection R across the bisector of e and e' fixes 0 and swaps e and e', and
   a point y on e's side is at least as near to v and to e as Ry is, so x = g(y), x' = g(Ry), u = βφ_e(y),
   u' = βφ_e(Ry) have (x − x')(u − u') of the sign of α_v·β; pairing y with Ry, the integral of (·)₊ at e has
   the terms (x + u)₊ + (x' + u')₊ and at e' the terms (x + u')₊ + (x' + u)₊ (equal sums), so by convexity
   of (·)₊ it is ≥ at e when α_v·β ≥ 0 and ≤ when α_v·β ≤ 0: the profile is monotone in θ, largest at θ = π
   where α_v·β ≤ 0 (remove: α_v = S, β = p(1 − q' − γ), so γ ≥ 1 − q'; add: α_v = −γS, β = p(1 − γ(1 − q')),
   so γ ≤ 1/(1 − q')) and at θ = 0 otherwise (tested against two-dimensional quadrature at intermediate θ).
8. Each one-dimensional pair's H_γ is closed form (:func:`_three_point_integral`: the region where the
   integrand is positive is read off a quadratic in e^{y/σ²}), rounded up by a relative guard; the Poisson part
   is its pessimistic pmf's profile, as in the other pairs.

R₁'s profile at the grid points joins the minimum of the other two pairs' before the convex minorant
(:func:`.truncated._combined_one_step`, :func:`.truncated._r1_profiles`).  At MNIST (n = 60000, q = 256/60000,
σ 1.1, 14100 steps, δ 1e-5) it gives ε ≤ 7.04 / 4.05 / 2.66 at caps 256 / 272 / 288, against 8.82 / 4.80 / 2.80
with the first two pairs.

A limit of this route: any argument that reveals the order of the others cannot certify below the "folded
path" (x_k = k·v for k ≤ B − 1, x_B = (B − 2)·v: the B-th other undoes the (B − 1)-th; an order's slice that
every such argument must dominate), about 6.72 at MNIST cap 256 (its one-dimensional pair coarsened to cells
of 0.01σ and composed as the lower end is: ε ≥ 6.722), so R₁ is within 0.32 of what revealing the order
allows.  The conjectured true value (all other records sharing one gradient is the worst case: proved for B = 1
by joint convexity, no counterexample in exhaustive small searches, issue 40) is about 3.13 there, near the
lower end; a proof would have to use the spread of the kept others' sum, not only their exchangeability.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def _gauss_mass(lo, hi, mu, sigma):
    """N(μ, σ²)((lo, hi)) elementwise, from the nearer tail (½(erfc(z_lo/√2) − erfc(z_hi/√2)) on the right of μ, its
    mirror on the left: no cancellation in either tail); 0 if lo ≥ hi."""
    zl, zh = (lo - mu) / (sigma * math.sqrt(2.0)), (hi - mu) / (sigma * math.sqrt(2.0))
    t = np.where(zl > 0, 1.0, -1.0)
    with np.errstate(invalid="ignore"):
        out = 0.5 * t * (special.erfc(t * zl) - special.erfc(t * zh))
    return np.where(lo < hi, np.maximum(out, 0.0), 0.0)


#: relative guard added to a three-point integral (:func:`_three_point_integral`): a multiple of Σ|c_μ|·mass_μ of the
#: region, above the float error of the masses' sum and of the region's ends (the integrand vanishes at the ends, so an
#: end off by η costs O(η²)); tested against 40-digit mpmath quadrature (tests/engine/test_truncated_r1.py)
GUARD = 1e-10
#: below this σ the pair R₁ is not used (its quadratic's middle coefficient carries e^{1/(2σ²)}, which overflows)
MIN_SIGMA = 0.05


def _three_point_integral(cm, c0, cp, sigma):
    """∫ (c₋·φ(y + 1) + c₀·φ(y) + c₊·φ(y − 1))₊ dy, φ the N(0, σ²) density, elementwise over arrays of coefficients,
    rounded up by :data:`GUARD`.

    Divided by φ(y) the integrand is c₀ + k·(c₊u + c₋/u) with u = e^{y/σ²} > 0, k = e^{−1/(2σ²)}; times u/k it is
    the quadratic c₊u² + (c₀/k)u + c₋, so {integrand > 0} is at most two intervals in y = σ² log u, read off its
    roots (the stable quadratic formula); the integral is Σ_μ c_μ·N(μ, σ²)(region)."""
    cm, c0, cp = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (cm, c0, cp)))
    a, b, c = cp, c0 * math.exp(0.5 / sigma**2), cm
    disc = b * b - 4.0 * a * c
    qq = -0.5 * (b + np.copysign(np.sqrt(np.maximum(disc, 0.0)), b))
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(a != 0, qq / np.where(a != 0, a, 1.0), np.nan)
        r2 = np.where(qq != 0, c / np.where(qq != 0, qq, 1.0), np.nan)
        lin = np.where(b != 0, -c / np.where(b != 0, b, 1.0), np.nan)
    rlo, rhi = np.fmin(r1, r2), np.fmax(r1, r2)

    def y_of(r):  # y = σ² log r, −∞ where r ≤ 0 (no positive root: the interval starts or ends at u = 0)
        return np.where(r > 0, sigma**2 * np.log(np.where(r > 0, r, 1.0)), -np.inf)

    inf = np.full(a.shape, np.inf)
    lo1, hi1, lo2, hi2 = -inf, -inf, -inf, -inf  # two intervals, both empty
    for mask, l1, h1, l2, h2 in (
            ((a > 0) & (disc > 0), -inf, y_of(rlo), y_of(rhi), inf),  # outside the roots
            ((a > 0) & (disc <= 0), -inf, inf, -inf, -inf),  # everywhere
            ((a < 0) & (disc > 0), y_of(rlo), y_of(rhi), -inf, -inf),  # between the roots
            ((a == 0) & (b > 0), y_of(lin), inf, -inf, -inf),  # linear: u > −c/b
            ((a == 0) & (b < 0), -inf, y_of(lin), -inf, -inf),  # u < −c/b
            ((a == 0) & (b == 0) & (c > 0), -inf, inf, -inf, -inf)):
        lo1, hi1, lo2, hi2 = (np.where(mask, new, old) for new, old in ((l1, lo1), (h1, hi1), (l2, lo2), (h2, hi2)))
    total, size = np.zeros(a.shape), np.zeros(a.shape)
    for coef, mu in ((cm, -1.0), (c0, 0.0), (cp, 1.0)):
        mass = _gauss_mass(lo1, hi1, mu, sigma) + _gauss_mass(lo2, hi2, mu, sigma)
        total += coef * mass
        size += np.abs(coef) * mass
    return np.clip(total + GUARD * size, 0.0, None)


def local_profile(gammas, sigma, q, weights, direction, theta=None):
    """w·H_γ of R₁'s local pair (P_loc, Q_loc) (masses, not normalised by w) at each γ of ``gammas``, ``weights`` =
    (π_{B−1}, p, q', S, w) (:func:`.truncated.r1_weights`): ``direction`` "remove" H_γ(P_loc‖Q_loc), "add"
    H_γ(Q_loc‖P_loc).  ``theta`` None: the supremum over the angle θ ∈ [0, π] between v and e, which is the value
    at θ = π or at θ = 0 (module docstring, step 7); ``theta`` "pi" or "zero": that one-dimensional pair.
    Coordinates along v (unit length, noise σ): P_loc = (1 − q)π_{B−1}·N(0) + S·N(1) + p(1 − q')·N(±1),
    Q_loc = π_{B−1}·N(0) + p·N(±1), e = −v at θ = π, e = v at θ = 0."""
    pi, p, qq, s, _ = weights
    g = np.asarray(gammas, dtype=float)
    if theta is None:  # step 7: θ = π where the e-atom's coefficient has the sign opposite to v's, else θ = 0
        switch = 1 - qq if direction == "remove" else 1 / (1 - qq) if qq < 1 else math.inf
        near = 1e-9 * switch  # both ends where float rounding could put γ on the wrong side of the switch
        at_pi = g >= switch - near if direction == "remove" else g <= switch + near
        at_zero = g <= switch + near if direction == "remove" else g >= switch - near
        out = np.zeros(g.shape)
        for th, mask in (("pi", at_pi), ("zero", at_zero)):
            if mask.any():
                out[mask] = np.maximum(out[mask], local_profile(g[mask], sigma, q, weights, direction, th))
        return out
    pm = {-1.0: p * (1 - qq) if theta == "pi" else 0.0, 0.0: (1 - q) * pi,
          1.0: s + (p * (1 - qq) if theta == "zero" else 0.0)}
    qm = {-1.0: p if theta == "pi" else 0.0, 0.0: pi, 1.0: p if theta == "zero" else 0.0}
    if direction == "add":
        pm, qm = qm, pm
    return _three_point_integral(*(pm[mu] - g * qm[mu] for mu in (-1.0, 0.0, 1.0)), sigma)
