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
are the only way to read one direction.**  ``tests/papers/lebeda/test_directions.py``
checks max(add, remove) against the public ``get_delta_for_epsilon`` so a
change inside dp_accounting fails loudly.  Pessimistic PLDs (connect-the-dots)
give upper bounds on δ, optimistic ones (privacy buckets) lower bounds.

Names: the paper's sampling rate γ is ``q`` and its number of compositions k is ``steps`` in code,
config and CSVs (one word per concept; the formulas above keep the paper's symbols).

Size (~640 lines): the exact curves, their crossings, the Monte Carlo comparison and the
Conjecture 12 search share the composed-PLD cache and the interval helpers of this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
from dpsampling.engine.montecarlo import MECHANISMS, MCCurve
from dpsampling.engine.validation import (ONE_WAY_DIRECTIONS, check_choice, check_delta, check_finite_list,
                                         check_grid, check_int, check_positive, check_rate)
from dpsampling.engine import pld as pldmod
from dpsampling.engine.montecarlo import hoeffding_half_width, hoeffding_samples, mc_privacy_curve
from .substitution import laplace_two_fold

#: sensitivity (shift Δ) of the dominating pair per sampler (Prop. 9): Poisson 1; WOR 2, since its pair
#: N(-b)/N(-b+2) is a shifted substitution pair
SHIFT = {"poisson": 1.0, "wor": 2.0}


# Settings we use for Fig. 1 (the paper does not print its parameters):
# subsampled Laplace, WOR, scale 1.5, γ = 0.7.  For k = 2 the add curve is
# above the remove curve on ε ∈ (0, ≈0.647) (max gap ≈ 0.031 at ε ≈ 0.36,
# ~27× the Hoeffding α of the paper's N), while at ε = 1.5 (the second point
# App. B.1 suggests checking) δ_R ≈ 0.104 > δ_A = 0.  Within the brief's
# suggested range (scale 1-2, γ ≤ 0.5) scale 2, γ = 0.5 also crosses
# (ε ∈ (0, ≈0.37), gap ≈ 0.020) but both curves vanish before ε = 1.5.
FIG1_SETTINGS = {"mechanism": "laplace", "sampler": "wor", "scale": 1.5, "q": 0.7, "steps": 2}


def composed_pld(mechanism, scale, q, steps, *, sampler="poisson", pessimistic=True,
                 discretization=1e-4):
    """The dp_accounting ``PrivacyLossDistribution`` of the k-fold mechanism (Prop. 9 pair)."""
    check_choice("mechanism", mechanism, MECHANISMS)
    check_positive("scale", scale)
    check_rate(q, name="q")
    check_choice("sampler", sampler, tuple(SHIFT))
    check_positive("discretization", discretization)
    # the package's one composed-PLD cache (engine.pld.composed; bit-identical to dp_accounting)
    return pldmod.composed(float(scale), float(q), check_int("steps", steps), bool(pessimistic), float(discretization),
                           mechanism, SHIFT[sampler])


@dataclass(frozen=True)
class DirectionCurves:
    """Per-direction δ(ε) with rigorous PLD bounds (upper = pessimistic, lower = optimistic)."""

    epsilon: np.ndarray
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
        """True where the larger upper bound is below :data:`RELIABLE_DELTA_FLOOR` (PLD rounding noise)."""
        return self.add_remove_upper < RELIABLE_DELTA_FLOOR


def pmf_delta(pmf, epsilon):
    """δ(ε) of one dp_accounting PLD pmf for sorted ε ≥ 0, vectorised: :func:`dpsampling.engine.pld.delta_for_epsilons`
    (dp_accounting's floats without its Python loop) on the dense pmf; the search needs ε ≥ 0 sorted."""
    e = check_finite_list("epsilon", epsilon)
    if np.any(np.diff(e) < 0) or e[0] < 0:
        raise ParameterError("epsilon", "sorted ascending and >= 0", epsilon)
    return pldmod.delta_for_epsilons(pmf.to_dense_pmf(), e)


def direction_curves(mechanism, scale, q, steps, epsilon, *, sampler="poisson", discretization=1e-4,
                     fast=False):
    """Exact (to PLD discretisation) add and remove curves of the k-fold mechanism.

    Returns a ``DirectionCurves`` with upper (pessimistic) and lower
    (optimistic) bounds for each direction; the true curve lies between.
    ``fast=True`` evaluates δ(ε) with ``pmf_delta`` (needs sorted ε ≥ 0).
    """
    e = check_finite_list("epsilon", epsilon)
    out = {}
    for pess, tag in ((True, "upper"), (False, "lower")):
        pld = composed_pld(mechanism, scale, q, steps, sampler=sampler, pessimistic=pess,
                           discretization=discretization)
        for d, pmf in (("add", pld._pmf_add), ("remove", pld._pmf_remove)):
            val = pmf_delta(pmf, e) if fast else pmf.get_delta_for_epsilon(e)
            out[f"{d}_{tag}"] = np.asarray(val, dtype=float)
    params = {"mechanism": mechanism, "scale": float(scale), "q": float(q), "steps": int(steps),
              "sampler": sampler}
    return DirectionCurves(epsilon=e, discretization=float(discretization), params=params, **out)


def public_delta(mechanism, scale, q, steps, epsilon, *, sampler="poisson", pessimistic=True,
                 discretization=1e-4):
    """dp_accounting's public ``get_delta_for_epsilon`` (= max over directions)."""
    pld = composed_pld(mechanism, scale, q, steps, sampler=sampler, pessimistic=pessimistic,
                       discretization=discretization)
    return np.asarray(pld.get_delta_for_epsilon(check_finite_list("epsilon", epsilon)), dtype=float)


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


def crossing_intervals(epsilon, add_curve, remove_curve, *, eps_min=None):
    """ε intervals (on the grid ``epsilon``, ascending) where the add curve is above the remove curve.

    Interval ends are linear interpolations of the sign change of
    add - remove between neighbouring grid points (the grid end if the
    condition holds there).  ``eps_min`` drops grid points below it
    (e.g. 0 for the §5 statement "cross in the region ε ≥ 0").
    """
    e = check_grid("epsilon", check_finite_list("epsilon", epsilon))
    a = np.asarray(add_curve, dtype=float)
    r = np.asarray(remove_curve, dtype=float)
    if a.shape != e.shape or r.shape != e.shape:
        raise ParameterError("add_curve", "curves of the shape of eps", add_curve,
                             message="add_curve and remove_curve must have the shape of eps")
    keep = np.ones(e.size, bool) if eps_min is None else e >= eps_min
    return _intervals(e[keep], (a - r)[keep])


def crossing_intervals_with_confidence(epsilon, add_lower, add_upper, remove_lower, remove_upper,
                                       *, eps_min=None):
    """Crossings with uncertainty bands.

    ``certain``: add_lower > remove_upper (the add curve is above the remove
    curve whatever the true values inside the bands); ``possible``:
    add_upper > remove_lower.  Bands are PLD optimistic/pessimistic bounds or
    an MC estimate ∓ α (see ``mc_crossing_intervals``).
    """
    return {
        "certain": crossing_intervals(epsilon, add_lower, remove_upper, eps_min=eps_min),
        "possible": crossing_intervals(epsilon, add_upper, remove_lower, eps_min=eps_min),
    }


def mc_crossing_intervals(add: MCCurve, remove: MCCurve, *, eps_min=None):
    """Crossings from two Monte Carlo curves; certain ⇔ add - α_A > remove + α_R (α: ``mc_half_width``).

    With each band holding w.p. ≥ 1 - β (``mc_failure_prob``), a ``certain`` interval is real with
    probability ≥ 1 - 2β at every grid point inside it.
    """
    if add.epsilon.shape != remove.epsilon.shape or not np.array_equal(add.epsilon, remove.epsilon):
        raise ParameterError("remove", "a curve on the eps grid of add", remove,
                             message="add and remove must share the same eps grid")
    out = crossing_intervals_with_confidence(
        add.epsilon, add.estimate - add.mc_half_width, add.estimate + add.mc_half_width,
        remove.estimate - remove.mc_half_width, remove.estimate + remove.mc_half_width, eps_min=eps_min)
    out["estimate"] = crossing_intervals(add.epsilon, add.estimate, remove.estimate, eps_min=eps_min)
    return out


def fig1_crossing(epsilon=None, discretization=1e-4):
    """Crossing intervals (ε ≥ 0) of the k = 2 Fig. 1 curves at ``FIG1_SETTINGS`` (PLD bounds)."""
    s = FIG1_SETTINGS
    e = np.linspace(0.0, 3.0, 601) if epsilon is None else check_finite_list("epsilon", epsilon)
    c = direction_curves(s["mechanism"], s["scale"], s["q"], s["steps"], e, sampler=s["sampler"],
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


def fig1_mc_matches_exact(mc_samples=3_342_306, mc_seed=1, epsilon=(0.25, 1.5)):
    """App. B.1/B.2: Fig. 1 Monte Carlo curves (paper's N) within ±α of the exact k = 2 values.

    Exact values from ``substitution.laplace_two_fold`` (1-D quadrature) at
    the two ε the paper suggests checking; both directions; True iff all
    four estimates are within their Hoeffding α (β = 0.01); ``mc_samples`` draws per direction, seeds
    ``mc_seed`` (add) and ``mc_seed + 1`` (remove).
    """
    s = FIG1_SETTINGS
    ok = True
    for i, d in enumerate(("add", "remove")):
        exact = laplace_two_fold(epsilon, s["scale"], s["q"], SHIFT[s["sampler"]], (d, d))
        res = mc_privacy_curve(s["mechanism"], s["scale"], s["q"], s["steps"], epsilon, mc_samples, mc_seed + i,
                               shift=SHIFT[s["sampler"]], direction=d)
        ok &= bool(np.all(np.abs(res.estimate - exact) <= res.mc_half_width))
    return ok


def fig1_crossing_vanishes(steps_values=(4, 16), discretization=1e-4):
    """§5: "this break vanishes as the number of compositions increases" — at FIG1_SETTINGS no
    certain crossing (add_lower > remove_upper + 1e-12) at ε ≥ 0 for any k in ``ks``."""
    s = FIG1_SETTINGS
    e = np.linspace(0.0, 6.0, 601)
    for steps in steps_values:
        c = direction_curves(s["mechanism"], s["scale"], s["q"], steps, e, sampler=s["sampler"],
                             discretization=discretization, fast=True)
        if np.any(c.add_lower - c.remove_upper > RELIABLE_DELTA_FLOOR):
            return False
    return True


def remove_dominates_uncomposed(mechanism="laplace", scale=1.5, q=0.7, sampler="wor",
                                discretization=1e-4, epsilon=None):
    """§5 / Prop. 30 [ZDW22]: for k = 1, δ_R(ε) ≥ δ_A(ε) for all ε ≥ 0 (up to PLD error)."""
    e = np.linspace(0.0, 5.0, 501) if epsilon is None else check_finite_list("epsilon", epsilon)
    c = direction_curves(mechanism, scale, q, 1, e, sampler=sampler, discretization=discretization)
    return bool(np.all(c.add_lower <= c.remove_upper + 1e-12))


# --------------------------------------------------------------------------
# Fig. 1 pipeline: Monte Carlo vs PLD per direction, and the crossing intervals
# --------------------------------------------------------------------------
MC_CHECK = ("ok", "outside_band", "far_outside")


def _intervals_with_margin(eps, diff):
    """``_intervals`` plus the largest ``diff`` inside each interval: [(lo, hi, max_diff)]."""
    eps = np.asarray(eps, dtype=float)
    diff = np.asarray(diff, dtype=float)
    ends = _intervals(eps, diff)
    runs = _runs(diff > 0)
    return [(lo, hi, float(np.max(diff[i:j + 1]))) for (lo, hi), (i, j) in zip(ends, runs)]


def curve_eps_max(mechanism, scale, q, steps, delta, *, sampler="poisson", discretization=1e-4,
                  step=0.25, cap=50.0):
    """Right end of a plotting ε range: the smallest multiple of ``step`` at which both
    pessimistic per-direction curves are ≤ ``delta`` (at least ``step``, at most ``cap``)."""
    d = float(check_delta(delta))
    check_positive("step", step)
    check_positive("cap", cap)
    pld = composed_pld(mechanism, scale, q, steps, sampler=sampler, pessimistic=True,
                       discretization=discretization)
    e = pldmod.pld_epsilon(pld, d)
    if not math.isfinite(e):
        return float(cap)
    return float(min(cap, max(step, step * math.ceil(e / step - 1e-9))))


@dataclass(frozen=True)
class AddRemoveComparison:
    """Fig. 1 at one (mechanism, scale, γ, k): MC and PLD curves per direction, crossings.

    ``pld``: PLD bounds on the fine grid ``pld.epsilon``; ``mc[d]``: the Monte Carlo
    curve of direction d on the coarse grid (|E| points, simultaneous ±α band
    w.p. 1-β; α = ``mc_half_width``, β = ``mc_failure_prob``); ``pld_at_mc``: PLD bounds on the MC grid; ``mc_excess[d]``: how
    far the MC estimate lies outside [PLD lower, PLD upper], in units of α
    (0 inside).  ``crossings[(method, kind)]``: ε intervals (ε ≥ 0) where add
    is above remove, as (start, end, largest add - remove inside):
    ("pld", "lower") certain (add_lower > remove_upper, inside the true set),
    ("pld", "upper") possible (add_upper > remove_lower, contains the true set),
    ("montecarlo", "lower"/"upper") the same with the MC bands (holds with
    probability ≥ 1 - 2β), ("montecarlo", "estimate") from the point estimates.
    """

    pld: DirectionCurves
    pld_at_mc: DirectionCurves
    mc: dict
    mc_excess: dict
    crossings: dict
    confidence: dict
    eps_max: float

    def mc_check(self, direction):
        """Per MC grid point: "ok" (estimate within ±α of the PLD bracket), "outside_band"
        (probability ≤ β for a correct implementation) or "far_outside" (beyond ±2α:
        probability ≤ 2|E|(β/2|E|)^4 by Hoeffding, i.e. a bug)."""
        x = self.mc_excess[direction]
        return np.where(x <= 1.0, "ok", np.where(x <= 2.0, "outside_band", "far_outside"))


def add_remove_comparison(mechanism, scale, q, steps, *, sampler="wor", mc_samples=None, mc_half_width=None,
                          mc_failure_prob=0.01, n_eps=40, n_eps_pld=401, eps_max=None, mc_seed=0,
                          discretization=1e-4, chunk_size=2**15):
    """Fig. 1 (§5, App. B.2) at one setting: MC and exact PLD curves per direction.

    Monte Carlo on |E| = ``n_eps`` equally spaced ε ∈ [0, eps_max] with
    either ``mc_samples`` samples or the N = ⌈ln(2|E|/β)/(2α²)⌉ of App. B.2 for a
    target half-width α = ``mc_half_width`` (give exactly one; β = ``mc_failure_prob``).  Seeds: the add
    curve uses ``2·mc_seed``, the remove curve ``2·mc_seed + 1`` (independent streams, so the
    output depends only on the arguments).  PLD upper/lower bounds on
    ``n_eps_pld`` points of the same range.  ``eps_max=None`` picks
    ``curve_eps_max`` at δ = the MC half-width (beyond it both curves are
    within MC resolution of 0).
    """
    steps = check_int("steps", steps)
    if (mc_samples is None) == (mc_half_width is None):
        raise ParameterError("mc_samples", "given exactly when mc_half_width is not", mc_samples,
                             message=f"give exactly one of mc_samples (samples) and mc_half_width (target half-width) "
                                     f"(got mc_samples={mc_samples!r}, mc_half_width={mc_half_width!r})")
    n_eps = int(check_int("n_eps", n_eps, 2))
    n_eps_pld = int(check_int("n_eps_pld", n_eps_pld, 2))
    seed = int(check_int("mc_seed", mc_seed, 0))
    beta = mc_failure_prob
    n = (hoeffding_samples(mc_half_width, beta, n_eps) if mc_samples is None
         else int(check_int("mc_samples", mc_samples, 1)))
    half = hoeffding_half_width(n, beta, n_eps)  # also validates β
    if eps_max is None:
        eps_max = curve_eps_max(mechanism, scale, q, steps, min(half, 0.5), sampler=sampler,
                                discretization=discretization)
    check_positive("eps_max", eps_max)
    e_mc = np.linspace(0.0, float(eps_max), n_eps)
    e_pld = np.linspace(0.0, float(eps_max), n_eps_pld)
    pld = direction_curves(mechanism, scale, q, steps, e_pld, sampler=sampler, discretization=discretization,
                           fast=True)
    at = direction_curves(mechanism, scale, q, steps, e_mc, sampler=sampler, discretization=discretization,
                          fast=True)
    mc, excess = {}, {}
    for i, d in enumerate(ONE_WAY_DIRECTIONS):
        mc[d] = mc_privacy_curve(mechanism, scale, q, steps, e_mc, n, 2 * seed + i, shift=SHIFT[sampler],
                                 direction=d, mc_failure_prob=beta, chunk_size=chunk_size)
        lo, hi = getattr(at, f"{d}_lower"), getattr(at, f"{d}_upper")
        excess[d] = np.maximum(np.maximum(lo - mc[d].estimate, mc[d].estimate - hi), 0.0) / mc[d].mc_half_width
    a, r = mc["add"], mc["remove"]
    crossings = {
        ("pld", "lower"): _intervals_with_margin(e_pld, pld.add_lower - pld.remove_upper),
        ("pld", "upper"): _intervals_with_margin(e_pld, pld.add_upper - pld.remove_lower),
        ("montecarlo", "lower"): _intervals_with_margin(
            e_mc, (a.estimate - a.mc_half_width) - (r.estimate + r.mc_half_width)),
        ("montecarlo", "upper"): _intervals_with_margin(
            e_mc, (a.estimate + a.mc_half_width) - (r.estimate - r.mc_half_width)),
        ("montecarlo", "estimate"): _intervals_with_margin(e_mc, a.estimate - r.estimate),
    }
    conf = {("pld", "lower"): 1.0, ("pld", "upper"): 1.0, ("montecarlo", "lower"): 1.0 - 2.0 * a.mc_failure_prob,
            ("montecarlo", "upper"): 1.0 - 2.0 * a.mc_failure_prob, ("montecarlo", "estimate"): float("nan")}
    return AddRemoveComparison(pld=pld, pld_at_mc=at, mc=mc, mc_excess=excess, crossings=crossings,
                               confidence=conf, eps_max=float(eps_max))


def max_margin(epsilon, diff):
    """(max of ``diff`` over the grid, the ε where it is attained) — for 'no interval' rows."""
    diff = np.asarray(diff, dtype=float)
    i = int(np.argmax(diff))
    return float(diff[i]), float(np.asarray(epsilon, dtype=float)[i])


# --------------------------------------------------------------------------
# Conjecture 12
# --------------------------------------------------------------------------
def choose_discretization(sigma, q, n_bins=5_000, d_min=1e-5, d_max=0.05):
    """PLD discretisation for one Gaussian (σ, γ) point: ~``n_bins`` bins per step.

    The single-step loss is log((1-γ) + γe^ℓ) with |ℓ| ≲ L = 10/σ + 1/σ²
    (dp_accounting truncates the noise at log-mass -50, |z| ≲ 10), so it spans
    ≈ [log((1-γ) + γe^{-L}), log((1-γ) + γe^{L})]; cost grows linearly in the
    number of bins, so ``n_bins`` per step bounds the cost of one point (both estimates, both directions).
    """
    check_positive("sigma", sigma)
    check_rate(q, name="q")
    big = 10.0 / sigma + 1.0 / sigma**2
    log_rest = math.log1p(-q) if q < 1.0 else -math.inf
    hi = float(np.logaddexp(log_rest, math.log(q) + big))
    lo = float(np.logaddexp(log_rest, math.log(q) - big))
    width = max(hi - lo, 1e-6)
    return float(min(d_max, max(d_min, width / n_bins)))


@dataclass(frozen=True)
class Conjecture12Margin:
    """δ_A - δ_R for the Poisson-subsampled Gaussian, with PLD bounds.

    ``margin_certain`` = add_lower - remove_upper (> tol ⇒ counterexample),
    ``margin_possible`` = add_upper - remove_lower (≤ 0 ⇒ remove dominates
    for sure).  ``classification`` per ε: "counterexample",
    "within numerical error", or "unreliable" (remove_upper < RELIABLE_DELTA_FLOOR).
    """

    epsilon: np.ndarray
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


def conjecture12_margin(sigma, q, steps, eps_grid, discretization=None):
    """Conjecture 12 check at one (σ, γ, k): δ_A - δ_R on ``eps_grid`` (Gaussian, Poisson).

    Counterexample at ε iff add_lower > remove_upper + tol with
    tol = RELIABLE_DELTA_FLOOR + 1e-9·remove_upper (floating-point noise of dp_accounting's
    sums; at ε = 0 the two directions are equal in exact arithmetic).
    ``discretization=None`` picks ``choose_discretization(σ, γ)``.
    """
    steps = check_int("steps", steps)
    e = check_finite_list("eps_grid", eps_grid)
    d = choose_discretization(sigma, q) if discretization is None else float(discretization)
    fast = bool(e[0] >= 0 and np.all(np.diff(e) >= 0))
    c = direction_curves("gaussian", sigma, q, steps, e, sampler="poisson", discretization=d, fast=fast)
    certain = c.add_lower - c.remove_upper
    possible = c.add_upper - c.remove_lower
    tol = RELIABLE_DELTA_FLOOR + 1e-9 * c.remove_upper
    cls = np.where(c.remove_upper < RELIABLE_DELTA_FLOOR, "unreliable",
                   np.where(certain > tol, "counterexample", "within numerical error"))
    return Conjecture12Margin(epsilon=e, add_upper=c.add_upper, add_lower=c.add_lower,
                              remove_upper=c.remove_upper, remove_lower=c.remove_lower,
                              margin_certain=certain, margin_possible=possible,
                              classification=tuple(str(x) for x in cls), discretization=d,
                              params={"sigma": float(sigma), "q": float(q), "steps": steps})


# e^ε overflows beyond ~709 inside dp_accounting's δ(ε); ε above this is not searched (flagged).
CONJ12_EPS_CAP = 700.0


def conjecture12_eps_grid(sigma, q, steps, n_eps=200, discretization=None, eps_cap=CONJ12_EPS_CAP):
    """The ε grid searched at one (σ, γ, k): [0, ε_max] with ε_max the larger pessimistic
    ε(δ = RELIABLE_DELTA_FLOOR) of the two directions (beyond it PLD δ is unreliable), capped at ``eps_cap``.

    ``n_eps`` linear points plus ``n_eps // 2`` log-spaced points in [1e-4·ε_max, ε_max]
    (the margin vanishes at ε = 0, where δ_A = δ_R exactly, so small ε get extra points).
    Returns (grid, capped).
    """
    n_eps = check_int("n_eps", n_eps, 2)
    check_positive("eps_cap", eps_cap)
    d = choose_discretization(sigma, q) if discretization is None else float(discretization)
    pld = composed_pld("gaussian", sigma, q, check_int("steps", steps), sampler="poisson", pessimistic=True,
                       discretization=d)
    emax = pldmod.pld_epsilon(pld, RELIABLE_DELTA_FLOOR)  # dp_accounting's ε(δ), the same float, no Python loop
    capped = not (emax <= eps_cap)
    emax = min(float(emax), float(eps_cap))
    if emax <= 0:
        return np.array([0.0]), capped
    grid = np.concatenate([np.linspace(0.0, emax, n_eps), emax * np.geomspace(1e-4, 1.0, n_eps // 2)])
    return np.unique(grid), capped


CONJ12_CLASSES = ("remove dominates", "within numerical error", "counterexample")


def conjecture12_point(sigma, q, steps, n_eps=200, discretization=None, eps_cap=CONJ12_EPS_CAP, n_bins=5_000):
    """Conjecture 12 at one (σ, γ, k), summarised over ε ≥ 0 (one dict).

    margin estimate = δ_A - δ_R from the two pessimistic (connect-the-dots) PLDs at the same
    discretisation; certified lower bound on the margin = add_lower - remove_upper, upper
    bound = add_upper - remove_lower (PLD optimistic/pessimistic).  Maxima are over the ε
    where max(δ_A, δ_R) ≥ RELIABLE_DELTA_FLOOR (PLD δ below that is not reliable).  Classification:
    "counterexample" iff add_lower > remove_upper + tol at some ε (certified, see
    ``conjecture12_margin``); otherwise "within numerical error" if the margin estimate is
    positive somewhere (it is then below the width of the add bracket there); otherwise
    "remove dominates".  ``discretization=None`` picks ``choose_discretization(σ, γ, n_bins)``.
    """
    steps = check_int("steps", steps)
    n_bins = check_int("n_bins", n_bins, 10)
    d = choose_discretization(sigma, q, n_bins=n_bins) if discretization is None else float(discretization)
    check_positive("discretization", d)
    e, capped = conjecture12_eps_grid(sigma, q, steps, n_eps, d, eps_cap)
    r = conjecture12_margin(sigma, q, steps, e, discretization=d)
    est = r.add_upper - r.remove_upper
    ok = np.maximum(r.add_upper, r.remove_upper) >= RELIABLE_DELTA_FLOOR
    if not ok.any():
        ok = np.ones_like(ok)
    i = int(np.argmax(np.where(ok, est, -np.inf)))
    pos = ok & (e > 0)
    cls = ("counterexample" if r.counterexample
           else "within numerical error" if est[i] > 0 else "remove dominates")
    j = int(np.argmax(np.where(ok, r.margin_certain, -np.inf)))
    return {
        "sigma": float(sigma), "q": float(q), "steps": steps, "discretization": d,
        "eps_max": float(e[-1]), "eps_capped": bool(capped), "n_eps": int(e.size),
        "n_unreliable": int((~ok).sum()),
        "max_margin_estimate": float(est[i]), "eps_at_max": float(e[i]),
        "max_margin_estimate_eps_pos": float(np.max(est[pos])) if pos.any() else float("nan"),
        "min_margin_estimate": float(np.min(est[ok])),
        "max_margin_certain": float(r.margin_certain[j]), "eps_at_max_certain": float(e[j]),
        "max_margin_possible": float(np.max(r.margin_possible[ok])),
        "add_bracket_at_max": float(r.add_upper[i] - r.add_lower[i]),
        "classification": cls,
    }


def conjecture12_verdict(points):
    """Overall verdict over ``conjecture12_point`` summaries (dicts or DataFrame rows)."""
    pts = list(points)
    if not pts:
        raise ParameterError("points", "a non-empty list of conjecture12_point summaries", points,
                             message="points must be a non-empty list of conjecture12_point summaries (got [])")
    cls = [p["classification"] for p in pts]
    worst = max(pts, key=lambda p: p["max_margin_estimate"])
    cex = [p for p in pts if p["classification"] == "counterexample"]
    return {
        "verdict": "counterexample" if cex else "no counterexample",
        "n_points": len(pts),
        "n_counterexample": len(cex),
        "n_within_numerical_error": cls.count("within numerical error"),
        "n_remove_dominates": cls.count("remove dominates"),
        "max_margin_estimate": float(worst["max_margin_estimate"]),
        "argmax": {key: worst[key] for key in ("sigma", "q", "steps", "eps_at_max")},
        "max_margin_certain": float(max(p["max_margin_certain"] for p in pts)),
        "n_eps_capped": int(sum(bool(p["eps_capped"]) for p in pts)),
    }


# Reduced but wide grid for the claims table (48 points): σ 0.3-10, γ 1e-4-1, k 1-100.
# The full grid is the pipeline's `conjecture12` computation (results/conjecture12/verdict.csv).
CONJ12_GRID = {"sigma": (0.3, 1.0, 3.0, 10.0), "q": (1e-4, 1e-2, 0.3, 1.0), "steps": (1, 10, 100)}


def conjecture12_search(sigmas=CONJ12_GRID["sigma"], qs=CONJ12_GRID["q"],
                        steps_values=CONJ12_GRID["steps"], n_eps=100):
    """``conjecture12_point`` over a grid (list of summaries)."""
    return [conjecture12_point(s, g, steps, n_eps=n_eps) for s in sigmas for g in qs for steps in steps_values]


def conjecture12_no_counterexample(sigmas=CONJ12_GRID["sigma"], qs=CONJ12_GRID["q"],
                                   steps_values=CONJ12_GRID["steps"], n_eps=100):
    """True iff the grid (default: the reduced ``CONJ12_GRID``) has no certified counterexample (claim)."""
    return conjecture12_verdict(conjecture12_search(sigmas, qs, steps_values, n_eps))["verdict"] == "no counterexample"


__all__ = [
    "CONJ12_CLASSES",
    "CONJ12_EPS_CAP",
    "CONJ12_GRID",
    "FIG1_SETTINGS",
    "MC_CHECK",
    "AddRemoveComparison",
    "Conjecture12Margin",
    "DirectionCurves",
    "add_remove_comparison",
    "choose_discretization",
    "composed_pld",
    "conjecture12_eps_grid",
    "conjecture12_margin",
    "conjecture12_no_counterexample",
    "conjecture12_point",
    "conjecture12_search",
    "conjecture12_verdict",
    "crossing_intervals",
    "crossing_intervals_with_confidence",
    "curve_eps_max",
    "direction_curves",
    "fig1_crossing",
    "fig1_crossing_end",
    "fig1_crossing_present",
    "fig1_crossing_vanishes",
    "fig1_mc_matches_exact",
    "max_margin",
    "mc_crossing_intervals",
    "pmf_delta",
    "public_delta",
    "remove_dominates_uncomposed",
]
