"""Add vs remove: exact per-direction privacy curves, their crossings, Conjecture 12.

Lebeda et al. (2024) §4-§5.  By Prop. 9 the k-fold subsampled Laplace /
Gaussian mechanism has the per-direction curves

    add:    δ_A(ε) = H_{e^ε}(B(0)^k ‖ ((1-γ)B(0) + γB(Δ))^k)
    remove: δ_R(ε) = H_{e^ε}(((1-γ)B(0) + γB(Δ))^k ‖ B(0)^k)

with Δ = 1 (Poisson) or Δ = 2 (WOR; the shifted substitution pair of App. A),
and δ_{A/R} = max(δ_A, δ_R) (§5).  Without composition δ_R ≥ δ_A for ε ≥ 0
(Prop. 30 of [ZDW22]); for k = 2 the subsampled Laplace curves cross (Fig. 1,
Prop. 11), and Conjecture 12 says they never do for the Gaussian.

dp_accounting is the engine: ``from_laplace_mechanism`` /
``from_gaussian_mechanism`` with ``sampling_prob=γ`` and ``sensitivity=Δ``,
``self_compose(k)``.  dp_accounting's ADD pair is (B(0), (1-γ)B(0)+γB(Δ)) and
its REMOVE pair is ((1-γ)B(0)+γB(-Δ), B(0)), the mirror image of the paper's
remove pair (same hockey-stick divergence).  **dp_accounting 0.6 exposes only
max(δ_A, δ_R) publicly; the private attributes ``_pmf_add`` / ``_pmf_remove``
are the only way to read one direction.**  ``tests/test_directions.py``
checks max(add, remove) against the public ``get_delta_for_epsilon`` so a
change inside dp_accounting fails loudly.  Pessimistic PLDs (connect-the-dots)
give upper bounds on δ, optimistic ones (privacy buckets) lower bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .montecarlo import MECHANISMS, SAMPLERS, SHIFT, MCCurve
from .validation import check_choice, check_positive, check_rate

# PLD δ below this is dominated by truncated tail mass and rounding (COMMON.md)
UNRELIABLE_DELTA = 1e-12

# Settings we use for Fig. 1 (the paper does not print its parameters):
# subsampled Laplace, WOR, scale 1.5, γ = 0.7.  For k = 2 the add curve is
# above the remove curve on ε ∈ (0, ≈0.647) (max gap ≈ 0.031 at ε ≈ 0.36,
# ~27× the Hoeffding α of the paper's N), while at ε = 1.5 (the second point
# App. B.1 suggests checking) δ_R ≈ 0.104 > δ_A = 0.  Within the brief's
# suggested range (scale 1-2, γ ≤ 0.5) scale 2, γ = 0.5 also crosses
# (ε ∈ (0, ≈0.37), gap ≈ 0.020) but both curves vanish before ε = 1.5.
FIG1_SETTINGS = {"mechanism": "laplace", "sampler": "wor", "scale": 1.5, "gamma": 0.7, "k": 2}


def _check_k(k):
    if isinstance(k, bool) or not float(k).is_integer() or int(k) < 1:
        raise ValueError(f"k must be an integer >= 1 (got {k!r})")
    return int(k)


def _check_eps(eps):
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)):
        raise ValueError(f"eps must be a non-empty 1-D list of finite numbers (got {eps!r})")
    return e


@lru_cache(maxsize=32)
def _composed(mechanism: str, scale: float, gamma: float, k: int, shift: float,
              pessimistic: bool, discretization: float):
    """k-fold composed dp_accounting PLD (cached; treat as immutable)."""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    kw = {"sensitivity": shift, "pessimistic_estimate": pessimistic,
              "value_discretization_interval": discretization, "sampling_prob": gamma,
              "use_connect_dots": pessimistic}  # connect-the-dots is pessimistic-only
    build = pldlib.from_gaussian_mechanism if mechanism == "gaussian" else pldlib.from_laplace_mechanism
    pld = build(scale, **kw)
    return pld.self_compose(k) if k > 1 else pld


def composed_pld(mechanism, scale, gamma, k, *, sampler="poisson", pessimistic=True,
                 discretization=1e-4):
    """The dp_accounting ``PrivacyLossDistribution`` of the k-fold mechanism (Prop. 9 pair)."""
    check_choice("mechanism", mechanism, MECHANISMS)
    check_positive("scale", scale)
    check_rate(gamma, name="gamma")
    check_choice("sampler", sampler, SAMPLERS)
    check_positive("discretization", discretization)
    return _composed(mechanism, float(scale), float(gamma), _check_k(k), SHIFT[sampler],
                     bool(pessimistic), float(discretization))


@dataclass(frozen=True)
class DirectionCurves:
    """Per-direction δ(ε) with rigorous PLD bounds (upper = pessimistic, lower = optimistic)."""

    eps: np.ndarray
    add_upper: np.ndarray
    add_lower: np.ndarray
    remove_upper: np.ndarray
    remove_lower: np.ndarray
    discretization: float
    params: dict = field(default_factory=dict)

    @property
    def add_remove_upper(self):
        """δ_{A/R} upper bound = max of the two directions (§5)."""
        return np.maximum(self.add_upper, self.remove_upper)

    @property
    def unreliable(self):
        """True where the larger upper bound is below 1e-12 (PLD rounding noise)."""
        return self.add_remove_upper < UNRELIABLE_DELTA


def direction_curves(mechanism, scale, gamma, k, eps, *, sampler="poisson", discretization=1e-4):
    """Exact (to PLD discretisation) add and remove curves of the k-fold mechanism.

    Returns a ``DirectionCurves`` with upper (pessimistic) and lower
    (optimistic) bounds for each direction; the true curve lies between.
    """
    e = _check_eps(eps)
    out = {}
    for pess, tag in ((True, "upper"), (False, "lower")):
        pld = composed_pld(mechanism, scale, gamma, k, sampler=sampler, pessimistic=pess,
                           discretization=discretization)
        out[f"add_{tag}"] = np.asarray(pld._pmf_add.get_delta_for_epsilon(e), dtype=float)
        out[f"remove_{tag}"] = np.asarray(pld._pmf_remove.get_delta_for_epsilon(e), dtype=float)
    params = {"mechanism": mechanism, "scale": float(scale), "gamma": float(gamma), "k": int(k),
              "sampler": sampler}
    return DirectionCurves(eps=e, discretization=float(discretization), params=params, **out)


def public_delta(mechanism, scale, gamma, k, eps, *, sampler="poisson", pessimistic=True,
                 discretization=1e-4):
    """dp_accounting's public ``get_delta_for_epsilon`` (= max over directions)."""
    pld = composed_pld(mechanism, scale, gamma, k, sampler=sampler, pessimistic=pessimistic,
                       discretization=discretization)
    return np.asarray(pld.get_delta_for_epsilon(_check_eps(eps)), dtype=float)


# --------------------------------------------------------------------------
# crossings
# --------------------------------------------------------------------------
def _runs(mask):
    """(start, stop) index pairs of maximal runs of True."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    d = np.diff(m.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0] - 1))


def _intervals(eps, diff):
    """ε intervals where ``diff`` > 0, ends linearly interpolated between grid points."""
    eps = np.asarray(eps, dtype=float)
    diff = np.asarray(diff, dtype=float)
    out = []
    for i, j in _runs(diff > 0):
        lo = eps[i]
        if i > 0:
            lo = eps[i - 1] + (eps[i] - eps[i - 1]) * (-diff[i - 1]) / (diff[i] - diff[i - 1])
        hi = eps[j]
        if j < eps.size - 1:
            hi = eps[j] + (eps[j + 1] - eps[j]) * diff[j] / (diff[j] - diff[j + 1])
        out.append((float(lo), float(hi)))
    return out


def crossing_intervals(eps, add_curve, remove_curve, *, eps_min=None):
    """ε intervals (on the grid ``eps``, ascending) where the add curve is above the remove curve.

    Interval ends are linear interpolations of the sign change of
    add - remove between neighbouring grid points (the grid end if the
    condition holds there).  ``eps_min`` drops grid points below it
    (e.g. 0 for the §5 statement "cross in the region ε ≥ 0").
    """
    e = _check_eps(eps)
    if np.any(np.diff(e) <= 0):
        raise ValueError("eps must be strictly increasing")
    a = np.asarray(add_curve, dtype=float)
    r = np.asarray(remove_curve, dtype=float)
    if a.shape != e.shape or r.shape != e.shape:
        raise ValueError("add_curve and remove_curve must have the shape of eps")
    keep = np.ones(e.size, bool) if eps_min is None else e >= eps_min
    return _intervals(e[keep], (a - r)[keep])


def crossing_intervals_with_confidence(eps, add_lower, add_upper, remove_lower, remove_upper,
                                       *, eps_min=None):
    """Crossings with uncertainty bands.

    ``certain``: add_lower > remove_upper (the add curve is above the remove
    curve whatever the true values inside the bands); ``possible``:
    add_upper > remove_lower.  Bands are PLD optimistic/pessimistic bounds or
    an MC estimate ∓ α (see ``mc_crossing_intervals``).
    """
    return {
        "certain": crossing_intervals(eps, add_lower, remove_upper, eps_min=eps_min),
        "possible": crossing_intervals(eps, add_upper, remove_lower, eps_min=eps_min),
    }


def mc_crossing_intervals(add: MCCurve, remove: MCCurve, *, eps_min=None):
    """Crossings from two Monte Carlo curves; certain ⇔ add - α_A > remove + α_R.

    With each band holding w.p. ≥ 1 - β, a ``certain`` interval is real with
    probability ≥ 1 - 2β at every grid point inside it.
    """
    if add.eps.shape != remove.eps.shape or not np.array_equal(add.eps, remove.eps):
        raise ValueError("add and remove must share the same eps grid")
    out = crossing_intervals_with_confidence(
        add.eps, add.estimate - add.alpha, add.estimate + add.alpha,
        remove.estimate - remove.alpha, remove.estimate + remove.alpha, eps_min=eps_min)
    out["estimate"] = crossing_intervals(add.eps, add.estimate, remove.estimate, eps_min=eps_min)
    return out


def fig1_crossing(eps=None, discretization=1e-4):
    """Crossing intervals (ε ≥ 0) of the k = 2 Fig. 1 curves at ``FIG1_SETTINGS`` (PLD bounds)."""
    s = FIG1_SETTINGS
    e = np.linspace(0.0, 3.0, 601) if eps is None else _check_eps(eps)
    c = direction_curves(s["mechanism"], s["scale"], s["gamma"], s["k"], e, sampler=s["sampler"],
                         discretization=discretization)
    out = crossing_intervals_with_confidence(e, c.add_lower, c.add_upper, c.remove_lower,
                                             c.remove_upper, eps_min=0.0)
    out["curves"] = c
    return out


def fig1_crossing_end(discretization=1e-4):
    """Upper end of the first ε ≥ 0 interval where δ_A > δ_R with certainty (Fig. 1 settings)."""
    iv = fig1_crossing(discretization=discretization)["certain"]
    return iv[0][1] if iv else float("nan")


def fig1_crossing_present(discretization=1e-4, min_gap=0.0):
    """True iff at FIG1_SETTINGS, k = 2, add_lower > remove_upper + min_gap somewhere at ε ≥ 0."""
    c = fig1_crossing(discretization=discretization)["curves"]
    return bool(np.any(c.add_lower - c.remove_upper > min_gap))


def fig1_mc_matches_exact(n=3_342_306, seed=1, eps=(0.25, 1.5)):
    """App. B.1/B.2: Fig. 1 Monte Carlo curves (paper's N) within ±α of the exact k = 2 values.

    Exact values from ``substitution.laplace_two_fold`` (1-D quadrature) at
    the two ε the paper suggests checking; both directions; True iff all
    four estimates are within their Hoeffding α (β = 0.01).
    """
    from .montecarlo import mc_privacy_curve
    from .substitution import laplace_two_fold

    s = FIG1_SETTINGS
    ok = True
    for i, d in enumerate(("add", "remove")):
        exact = laplace_two_fold(eps, s["scale"], s["gamma"], SHIFT[s["sampler"]], (d, d))
        res = mc_privacy_curve(s["mechanism"], s["scale"], s["gamma"], s["k"], eps, n, seed + i,
                               sampler=s["sampler"], direction=d)
        ok &= bool(np.all(np.abs(res.estimate - exact) <= res.alpha))
    return ok


def remove_dominates_uncomposed(mechanism="laplace", scale=1.5, gamma=0.7, sampler="wor",
                                discretization=1e-4, eps=None):
    """§5 / Prop. 30 [ZDW22]: for k = 1, δ_R(ε) ≥ δ_A(ε) for all ε ≥ 0 (up to PLD error)."""
    e = np.linspace(0.0, 5.0, 501) if eps is None else _check_eps(eps)
    c = direction_curves(mechanism, scale, gamma, 1, e, sampler=sampler, discretization=discretization)
    return bool(np.all(c.add_lower <= c.remove_upper + 1e-12))


# --------------------------------------------------------------------------
# Conjecture 12
# --------------------------------------------------------------------------
def choose_discretization(sigma, gamma, n_bins=5_000, d_min=1e-5, d_max=0.05):
    """PLD discretisation for one Gaussian (σ, γ) point: ~``n_bins`` bins per step.

    The single-step loss spans ≈ [log(1-γ), log γ + 10/σ + 1/σ²] (dp_accounting
    truncates the noise at log-mass -50, |z| ≲ 10); cost grows linearly in the
    number of bins, so 5e3 bins keeps one (σ, γ, k) point at ~0.1-0.3 s on an
    idle core (both estimates, both directions).
    """
    check_positive("sigma", sigma)
    check_rate(gamma, name="gamma")
    hi = max(0.0, math.log(gamma) + 10.0 / sigma + 1.0 / sigma**2)
    lo = math.log1p(-gamma) if gamma < 1.0 else -(10.0 / sigma + 1.0 / sigma**2)
    width = max(hi - lo, 1e-3)
    return float(min(d_max, max(d_min, width / n_bins)))


@dataclass(frozen=True)
class Conjecture12Margin:
    """δ_A - δ_R for the Poisson-subsampled Gaussian, with PLD bounds.

    ``margin_certain`` = add_lower - remove_upper (> tol ⇒ counterexample),
    ``margin_possible`` = add_upper - remove_lower (≤ 0 ⇒ remove dominates
    for sure).  ``classification`` per ε: "counterexample",
    "within numerical error", or "unreliable" (remove_upper < 1e-12).
    """

    eps: np.ndarray
    add_upper: np.ndarray
    add_lower: np.ndarray
    remove_upper: np.ndarray
    remove_lower: np.ndarray
    margin_certain: np.ndarray
    margin_possible: np.ndarray
    classification: tuple
    discretization: float
    params: dict = field(default_factory=dict)

    @property
    def margin(self):
        """Point estimate: midpoint of the add bracket minus midpoint of the remove bracket."""
        return 0.5 * (self.add_upper + self.add_lower) - 0.5 * (self.remove_upper + self.remove_lower)

    @property
    def counterexample(self):
        return "counterexample" in self.classification


def conjecture12_margin(sigma, gamma, k, eps_grid, discretization=None):
    """Conjecture 12 check at one (σ, γ, k): δ_A - δ_R on ``eps_grid`` (Gaussian, Poisson).

    Counterexample at ε iff add_lower > remove_upper + tol with
    tol = 1e-12 + 1e-9·remove_upper (floating-point noise of dp_accounting's
    sums; at ε = 0 the two directions are equal in exact arithmetic).
    ``discretization=None`` picks ``choose_discretization(σ, γ)``.
    """
    k = _check_k(k)
    e = _check_eps(eps_grid)
    d = choose_discretization(sigma, gamma) if discretization is None else float(discretization)
    c = direction_curves("gaussian", sigma, gamma, k, e, sampler="poisson", discretization=d)
    certain = c.add_lower - c.remove_upper
    possible = c.add_upper - c.remove_lower
    tol = UNRELIABLE_DELTA + 1e-9 * c.remove_upper
    cls = np.where(c.remove_upper < UNRELIABLE_DELTA, "unreliable",
                   np.where(certain > tol, "counterexample", "within numerical error"))
    return Conjecture12Margin(eps=e, add_upper=c.add_upper, add_lower=c.add_lower,
                              remove_upper=c.remove_upper, remove_lower=c.remove_lower,
                              margin_certain=certain, margin_possible=possible,
                              classification=tuple(str(x) for x in cls), discretization=d,
                              params={"sigma": float(sigma), "gamma": float(gamma), "k": k})


CONJ12_GRID = {"sigma": (0.5, 1.0, 2.0), "gamma": (0.01, 0.1, 0.5, 1.0), "k": (2, 10)}


def conjecture12_search(sigmas=CONJ12_GRID["sigma"], gammas=CONJ12_GRID["gamma"],
                        ks=CONJ12_GRID["k"], eps_grid=None):
    """Run ``conjecture12_margin`` over a grid; returns a list of per-point summaries."""
    e = np.linspace(0.0, 4.0, 41) if eps_grid is None else _check_eps(eps_grid)
    rows = []
    for s in sigmas:
        for g in gammas:
            for k in ks:
                r = conjecture12_margin(s, g, k, e)
                rows.append({"sigma": s, "gamma": g, "k": k, "discretization": r.discretization,
                             "counterexample": r.counterexample,
                             "max_margin_certain": float(np.max(r.margin_certain)),
                             "max_margin_possible": float(np.max(r.margin_possible))})
    return rows


def conjecture12_no_counterexample():
    """True iff the default grid (24 points) yields no certain counterexample (claim helper)."""
    return not any(r["counterexample"] for r in conjecture12_search())


__all__ = [
    "CONJ12_GRID",
    "FIG1_SETTINGS",
    "UNRELIABLE_DELTA",
    "Conjecture12Margin",
    "DirectionCurves",
    "choose_discretization",
    "composed_pld",
    "conjecture12_margin",
    "conjecture12_no_counterexample",
    "conjecture12_search",
    "crossing_intervals",
    "crossing_intervals_with_confidence",
    "direction_curves",
    "fig1_crossing",
    "fig1_crossing_end",
    "fig1_crossing_present",
    "fig1_mc_matches_exact",
    "mc_crossing_intervals",
    "public_delta",
    "remove_dominates_uncomposed",
]
