"""Lebeda et al. (2024) §8 / Fig. 4: the Gaussian under substitution with sampling without replacement.

Theorem 14 (= Zhu Prop. 30) bounds the one-step profile by the α ≥ 1 / α < 1 split; the pointwise maximum
is a valid hockey-stick curve (Zhu Lemma 9), so the pessimistic connect-the-dots discretisation of it
(Doroshenko et al. 2022, as implemented in dp_accounting) is a dominating pair of discrete distributions
that can be self-composed (Zhu Theorem 10): an upper bound on the composed curve.  The remove-direction
composition is a lower bound (it is realised by a pair of datasets); the RDP accountant is the reference.
The one-step curves are :func:`dpsampling.papers.zhu.hs_subsampled_gaussian` (Zhu App. C.4).

Conventions as in :mod:`dpsampling.papers.zhu`: P = N(Δ, σ²), Q = N(0, σ²) (Δ = sensitivity), ``q`` the
sampling rate (γ), ``steps`` the number of compositions (k).
"""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.cf import Gaussian, PoissonSubsampled, cf_delta
from dpsampling.engine.validation import check_positive
from dpsampling.papers.zhu import hs_subsampled_gaussian, split_dominates

__all__ = [
    "wor_substitution_profile",
    "connect_dots_pmf",
    "pmf_hockey_stick",
    "wor_substitution_curves",
    "lebeda_fig4_split_holds",
    "lebeda_fig4_gap",
    "lebeda_fig4_upper_exceeds_rdp",
    "lebeda_s8_not_better_than_rdp",
]


def wor_substitution_profile(epsilon, sigma=4.0, q=0.05, sensitivity=2.0):
    """One-step profile of the WOR-subsampled Gaussian under substitution (Lebeda Thm 14).

    max{H_α((1-γ)Q+γP ‖ Q), H_α(Q ‖ (1-γ)Q+γP)} with P = N(Δ,σ²), Q = N(0,σ²); Δ = 2 for
    data in [-1, 1].  By Theorem 14 the first term is the bound for α ≥ 1 and the second
    for α < 1; the pointwise maximum equals that split (checked by split_dominates) and,
    being a maximum of two hockey-stick curves, is convex, decreasing, = 1 at α = 0
    and ≥ (1-α)_+, i.e. a valid hockey-stick curve (Zhu Lemma 9).
    """
    r = hs_subsampled_gaussian(epsilon, sigma, q, "remove", sensitivity)
    a = hs_subsampled_gaussian(epsilon, sigma, q, "add", sensitivity)
    return np.maximum(r, a)


def connect_dots_pmf(profile, eps_lo, eps_hi, discretization=1e-4):
    """Pessimistic connect-the-dots PLD pmf (dp_accounting) of a hockey-stick curve.

    `profile(eps_array)` must be a valid hockey-stick curve H(e^ε) (Zhu Lemma 9).  The
    returned discrete pair has curve equal to the chordal interpolation of H in α = e^ε
    through the grid points, the chord to (α=0, 1) below eps_lo and the constant
    H(eps_hi) (mass at +∞) above eps_hi, hence dominates H everywhere (convexity).
    """
    from dp_accounting.pld import pld_pmf

    check_positive("discretization", discretization)
    if not eps_hi > eps_lo:
        raise ParameterError("eps_hi", f"> eps_lo = {eps_lo}", eps_hi,
                             message=f"eps_hi must be > eps_lo (got {eps_lo}, {eps_hi})")
    lo = math.floor(eps_lo / discretization)
    hi = math.ceil(eps_hi / discretization)
    grid = np.arange(lo, hi + 1) * discretization
    deltas = np.clip(np.asarray(profile(grid), dtype=float), 0.0, 1.0)
    deltas = np.minimum.accumulate(deltas)
    return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(discretization, lo, hi, deltas)


def pmf_hockey_stick(pmf, epsilons):
    """H_{e^ε} of a dp_accounting PLD pmf at each ε (exact for the discrete pair)."""
    e = np.atleast_1d(np.asarray(epsilons, dtype=float))
    order = np.argsort(e)  # dp_accounting's vectorised routine wants sorted input
    out = np.empty_like(e)
    from dpsampling.engine.pld import delta_for_epsilons  # dp_accounting's reading, the same floats

    out[order] = np.asarray(delta_for_epsilons(pmf, e[order]), dtype=float)
    return out


def _wor_eps_range(sigma, q, sensitivity, tail=1e-16):
    """[ε_lo, ε_hi] with profile(ε_hi) ≤ tail and profile(ε_lo) ≥ 1 - e^{ε_lo}(1 - tail)."""
    prof = lambda e: float(wor_substitution_profile(e, sigma, q, sensitivity))  # noqa: E731
    hi = 0.1
    while prof(hi) > tail:
        hi *= 1.5
    lo = -0.1
    while prof(lo) < 1 - math.exp(lo) * (1 - tail) - 1e-15 and lo > -60:
        lo *= 1.5
    return lo, hi


def wor_substitution_curves(epsilons, sigma=4.0, q=0.05, steps=1000, sensitivity=2.0,
                            discretization=1e-4, dataset_size=20000, abs_tol=1e-10):
    """Lebeda Fig. 4 (right): composed privacy curves δ(ε) for WOR + substitution.

    Returns a dict of arrays over `epsilons`:
      upper     — self-composition of the connect-the-dots dominating pair of the max profile
                  (upper bound on the true curve; pessimistic discretisation, dp_accounting FFT);
      lower     — the remove-direction pair ((1-γ)Q+γP, Q) composed `steps` times, realised
                  by D=(-1,…,-1,1), D'=(-1,…,-1,-1) hence a lower bound; computed with the
                  φ accountant (dpsampling.engine.cf, Poisson-subsampled Gaussian with σ/Δ);
      lower_err — the φ accountant's error bound on `lower`;
      rdp       — dp_accounting RDP accountant, SampledWithoutReplacementDpEvent under
                  REPLACE_ONE, noise multiplier σ/Δ, sample_size = γ·dataset_size (nan for ε<0);
      rdp_poisson — dp_accounting RDP accountant of the Poisson-subsampled Gaussian (σ/Δ, γ) under
                  add/remove: the paper's dotted "reference of scale" ("the difference between the
                  blue and the dotted line corresponds to the difference between using the PLD and
                  RDP accountants for Poisson subsampling under add/remove"); not a bound for WOR +
                  substitution (nan for ε<0).
    """
    from dp_accounting import dp_event
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    lo, hi = _wor_eps_range(sigma, q, sensitivity)
    pmf = connect_dots_pmf(lambda e: wor_substitution_profile(e, sigma, q, sensitivity),
                           lo, hi, discretization)
    up = pld.PrivacyLossDistribution(pmf).self_compose(steps)
    mech = [(PoissonSubsampled(Gaussian(sigma / sensitivity), q), steps)]
    low = [cf_delta(float(e), mech, "remove", abs_tol) for e in eps]
    acc = rdp.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    m = int(round(q * dataset_size))
    acc.compose(dp_event.SelfComposedDpEvent(
        dp_event.SampledWithoutReplacementDpEvent(
            dataset_size, m, dp_event.GaussianDpEvent(sigma / sensitivity)), steps))
    acc_p = rdp.RdpAccountant()
    acc_p.compose(dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma / sensitivity)), steps))
    return {
        "epsilon": eps,
        "rdp_poisson": np.array([acc_p.get_delta(float(e)) if e >= 0 else np.nan for e in eps]),
        "upper": pmf_hockey_stick(up._pmf_remove, eps),
        "lower": np.array([v for v, _ in low]),
        "lower_err": np.array([e for _, e in low]),
        "rdp": np.array([acc.get_delta(float(e)) if e >= 0 else np.nan for e in eps]),
    }


def lebeda_fig4_upper_exceeds_rdp(sigma=4.0, q=0.05, steps=1000, sensitivity=2.0, eps_max=4.0, n=41):
    """Lebeda §1/§8: the dominating-pair accountant 'does not generally outperform the RDP accountant':
    smallest ε on [0, eps_max] (grid of n) where the composed upper bound exceeds the RDP reference curve
    of Fig. 4 (Poisson-subsampled, add/remove, σ/Δ); nan if it never does."""
    eps = np.linspace(0.0, eps_max, n)
    c = wor_substitution_curves(eps, sigma, q, steps, sensitivity)
    above = eps[c["upper"] > c["rdp_poisson"]]
    return float(above[0]) if above.size else math.nan



def lebeda_fig4_split_holds(sigma=4.0, q=0.05, sensitivity=2.0):
    """Lebeda §8 / Thm 14 / Fig. 4 (left): the split at ε = 0 is the pointwise maximum."""
    return split_dominates(sigma, q, sensitivity)


def lebeda_fig4_gap(epsilon=1.0, sigma=4.0, q=0.05, steps=1000, sensitivity=2.0):
    """Upper (dominating pair) minus lower (remove direction) composed δ at ε (Fig. 4 right)."""
    c = wor_substitution_curves([epsilon], sigma, q, steps, sensitivity)
    return float(c["upper"][0] - c["lower"][0] - c["lower_err"][0])


def lebeda_s8_not_better_than_rdp(sigma=4.0, q=0.05, steps=1000, sensitivity=2.0):
    """Lebeda §1/§8: 'this accountant does not generally outperform the RDP accountant' — True iff the
    composed dominating-pair upper bound exceeds the Fig. 4 RDP reference somewhere on ε ∈ [0, 4]."""
    return not math.isnan(lebeda_fig4_upper_exceeds_rdp(sigma, q, steps, sensitivity))
