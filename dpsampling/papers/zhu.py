"""Dominating pairs of distributions and one-step privacy profiles.

(a) Zhu, Dong & Wang (2022), App. C.4 / Fig. 4: the two one-step hockey-stick
    curves of the Poisson-subsampled Gaussian, H_α((1-γ)Q + γP ‖ Q) ("remove")
    and H_α(P ‖ (1-γ)P + γQ) ("add"), and which one dominates for α ≥ 1 / α < 1
    (Proposition 30).
(b) Lebeda et al. (2024) §8 / Fig. 4 (WOR under substitution, built on (a)) lives in
    :mod:`dpsampling.papers.lebeda.wor_substitution`.
(c) Zhu Fig. 1 (§3): randomized response with p = e/(1+e) versus the Gaussian
    mechanism with σ = 1: RDP curves, trade-off functions (exact and implied by
    the RDP → f-DP conversion of App. F), privacy profiles, and the printed
    statements "GM is (0.277, 0.3)-DP" and "RR is not (ε, 0.3)-DP for ε < 0.471".

Conventions: base Gaussian pair P = N(Δ, σ²), Q = N(0, σ²) (Δ = sensitivity); the sampling rate
is ``q`` (the papers' γ) and the number of compositions ``steps`` (the papers' k); all profiles are functions of ε with α = e^ε.

One paper's figure families (a), (c) plus its Experiments 1-3 predicates; the one-step hockey stick
itself is the engine kernel (dpsampling.engine.subsampled_gaussian).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from dpsampling.engine.errors import ParameterError
from dpsampling.engine import accountant, gaussian, subsampled_gaussian
from dpsampling.engine.numerics import bisect, find_root
from dpsampling.engine.cf import Gaussian, PoissonSubsampled, RandomizedResponse, cf_delta, cf_epsilon
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice, check_delta, check_int, check_positive, check_rate

__all__ = [
    "hs_subsampled_gaussian",
    "split_dominates",
    "rdp_gaussian",
    "rdp_randomized_response",
    "tradeoff_gaussian",
    "tradeoff_randomized_response",
    "tradeoff_from_rdp",
    "tradeoff_from_rdp_via_dp",
    "profile_from_tradeoff",
    "gaussian_delta",
    "randomized_response_delta",
    "zhu_fig1_gm_epsilon",
    "zhu_fig1_rr_epsilon",
    "zhu_fig1_rdp_converted_epsilon",
    "zhu_fig1_rr_rdp_below_gaussian",
    "zhu_fig4_split_holds",
    "zhu_fig1_curves",
    "heterogeneous_delta",
    "zhu_exp3_error_bound",
    "zhu_exp1_beats_rdp",
    "zhu_exp3_beats_rdp",
    "zhu_exp1_max_gap",
    "zhu_exp2_within_pld",
    "zhu_exp3_within_pld",
    "zhu_exp3_query_cpu_seconds",
]


# --------------------------------------------------------------------------
# (a) one-step hockey-stick curves of the Poisson-subsampled Gaussian
# --------------------------------------------------------------------------
def hs_subsampled_gaussian(epsilon, sigma, q, direction, sensitivity=1.0):
    """One-step H_{e^ε} of the Poisson-subsampled Gaussian in closed form (Theorem 11 pairs).

    direction="remove": H_α((1-γ)Q + γP ‖ Q)
    direction="add":    H_α(Q ‖ (1-γ)Q + γP)  (≅ Zhu's H_α(P ‖ (1-γ)P + γQ) by reflection)
    with P = N(Δ, σ²), Q = N(0, σ²).  The likelihood ratio r(o) = 1-γ+γe^{(2o-1)/(2s²)}
    (s = σ/Δ) is monotone, so H is a difference of Gaussian tail masses:
      remove: γΦ̄(z-1/s) - (α-1+γ)Φ̄(z),  z = s log((α-1+γ)/γ) + 1/(2s)   (H = 1-α if α ≤ 1-γ)
      add:    (1-α(1-γ))Φ(z) - αγΦ(z-1/s), z = s log((1/α-1+γ)/γ) + 1/(2s) (H = 0 if 1/α ≤ 1-γ)
    evaluated by the engine kernel dpsampling.engine.subsampled_gaussian (log space).  Vectorised over
    epsilon (any real ε; α = e^ε).
    """
    check_positive("sigma", sigma)
    check_positive("sensitivity", sensitivity)
    check_rate(q)
    check_choice("direction", direction, ("add", "remove"))
    eps = np.asarray(epsilon, dtype=float)
    # the engine's one-step kernel (Räisä Eq. (45) form, log space, Mills-ratio tail; ε < 0 by the
    # identity H_α(P‖Q) = 1 - α + α H_{1/α}(Q‖P)) at the noise multiplier σ/Δ
    out = subsampled_gaussian.hockey_stick_one_step(float(q), sigma / sensitivity, eps.ravel(), direction)
    out = out.reshape(eps.shape)
    return out[()] if out.ndim == 0 else out


def split_dominates(sigma, q, sensitivity=1.0, eps_grid=None):
    """Zhu Prop. 30 / Fig. 4 and Lebeda Thm 14: True iff the remove curve ≥ the add curve for
    ε ≥ 0 (α ≥ 1) and the add curve ≥ the remove curve for ε < 0 (α < 1), on a grid."""
    if eps_grid is None:
        eps_grid = np.linspace(-6.0, 6.0, 2401)
    eps_grid = np.asarray(eps_grid, dtype=float)
    r = hs_subsampled_gaussian(eps_grid, sigma, q, "remove", sensitivity)
    a = hs_subsampled_gaussian(eps_grid, sigma, q, "add", sensitivity)
    tol = 1e-14
    pos = eps_grid >= 0
    return bool(np.all(r[pos] >= a[pos] - tol) and np.all(a[~pos] >= r[~pos] - tol))


# --------------------------------------------------------------------------
# (c) Zhu Fig. 1: RR vs Gaussian — RDP, f-DP, privacy profiles
# --------------------------------------------------------------------------
def rdp_gaussian(alpha, sigma=1.0):
    """Rényi divergence of N(1,σ²) from N(0,σ²): α/(2σ²), all α > 0."""
    check_positive("sigma", sigma)
    return np.asarray(alpha, dtype=float) / (2 * sigma**2)


def rdp_randomized_response(alpha, p):
    """D_α(P‖Q) for P = (p, 1-p), Q = (1-p, p), α > 0 (α = 1: KL)."""
    check_delta(p, "p")  # (the rule of a number in (0, 1))
    a = np.asarray(alpha, dtype=float)
    lr = math.log(p / (1 - p))
    t = a - 1.0
    # log(p e^{t lr} + (1-p) e^{-t lr}) / t
    num = np.logaddexp(math.log(p) + t * lr, math.log1p(-p) - t * lr)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / t
    kl = (2 * p - 1) * lr
    out = np.where(np.abs(t) < 1e-9, kl, out)
    return out[()] if out.ndim == 0 else out


def tradeoff_gaussian(x, sigma=1.0):
    """Exact trade-off function of the Gaussian mechanism: Φ(Φ^{-1}(1-x) - 1/σ)."""
    check_positive("sigma", sigma)
    return ndtr(ndtri(1 - np.asarray(x, dtype=float)) - 1.0 / sigma)


def tradeoff_randomized_response(x, p):
    """Trade-off function of RR with p > 1/2: f_{ε0,0}(x) = max(0, 1-e^{ε0}x, e^{-ε0}(1-x))."""
    if not 0.5 <= p < 1:
        raise ParameterError("p", "in [0.5, 1)", p)
    e0 = math.log(p / (1 - p))
    x = np.asarray(x, dtype=float)
    return np.maximum.reduce([np.zeros_like(x), 1 - math.exp(e0) * x, math.exp(-e0) * (1 - x)])


def _f_alpha(x, alpha, eps_alpha, iters=50):
    """Smallest type-II error y compatible with (α, ε(α))-RDP at type-I error x (App. F.1).

    Both post-processing constraints (h(o) under (P,Q) and (Q,P)) are imposed; for α > 1 the
    constraint is LHS ≤ e^{(α-1)ε}, for α < 1 it is LHS ≥ e^{(α-1)ε}.  The LHS is monotone in
    y on [0, 1-x] so the feasible set is an interval [y*, 1-x]; y* is found by bisection
    (50 halvings: |error| ≤ 2^-50).  Vectorised over x.  The infeasible end of the final
    bracket is returned, so the result is ≤ y* (a valid lower trade-off, i.e. a privacy guarantee);
    log terms are finite for y strictly inside (0, 1-x), so NaN/inf cannot mark a feasible y
    infeasible there (y = 0 is tested separately).
    """
    x = np.asarray(x, dtype=float)
    bound = (alpha - 1.0) * eps_alpha

    def infeasible(y):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            l1 = np.logaddexp(alpha * np.log1p(-y) + (1 - alpha) * np.log(x),
                              alpha * np.log(y) + (1 - alpha) * np.log1p(-x))
            l2 = np.logaddexp(alpha * np.log(x) + (1 - alpha) * np.log1p(-y),
                              alpha * np.log1p(-x) + (1 - alpha) * np.log(y))
        if alpha > 1:
            return (l1 > bound) | (l2 > bound) | ~np.isfinite(l1) | ~np.isfinite(l2)
        return (l1 < bound) | (l2 < bound) | np.isnan(l1) | np.isnan(l2)

    lo = np.zeros_like(x)
    hi = 1.0 - x
    feasible_at_zero = ~infeasible(np.zeros_like(x))
    lo, hi = bisect(infeasible, lo, hi, iters)
    # the infeasible end: f_α(x) ≥ lo, so the returned trade-off value never exceeds the true one
    return np.where(feasible_at_zero, 0.0, lo)


def tradeoff_from_rdp(x, rdp_fn, alphas=None):
    """f-DP implied by an RDP curve (Zhu App. F.1, extension of Balle et al. 2020):
    pointwise maximum over orders α ∈ [0.5, ∞) of the per-order trade-off bounds.

    A valid lower trade-off (privacy guarantee): each per-order bound is one (the mechanism is
    (α, ε(α))-RDP for every α, and :func:`_f_alpha` returns y ≤ y*), and the maximum of valid
    lower trade-offs over a finite set of orders is valid; fewer orders only loosen it."""
    if alphas is None:
        alphas = np.concatenate([np.linspace(0.5, 0.99, 15), np.linspace(1.01, 5, 60),
                                 np.geomspace(5, 200, 45)])
    x = np.clip(np.asarray(x, dtype=float), 1e-300, 1 - 1e-16)
    f = np.zeros_like(x)
    for a in alphas:
        f = np.maximum(f, _f_alpha(x, float(a), float(rdp_fn(a))))
    return f


def tradeoff_from_rdp_via_dp(x, rdp_fn, deltas=None, orders=None):
    """f-DP implied by RDP through a family of (ε(δ), δ) guarantees (Zhu Fig. 1(b) variant).

    ε(δ) from dp_accounting's RDP→DP conversion (Canonne-Kamath-Steinke Prop. 12 /
    Asoodeh et al.), then f(x) = sup_δ max(0, 1-δ-e^ε x, e^{-ε}(1-δ-x)) (Lemma 5(2) / Lemma 21).
    A valid lower trade-off: each (ε(δ), δ) is a valid DP guarantee, hence each term is, and the
    maximum over the finite δ grid of valid lower trade-offs is valid (a coarser grid is looser).
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    if deltas is None:
        deltas = np.geomspace(1e-8, 0.999, 200)
    if orders is None:
        orders = np.concatenate([np.linspace(1.01, 5, 100), np.geomspace(5, 500, 100)])
    rdp = np.array([float(rdp_fn(a)) for a in orders])
    x = np.asarray(x, dtype=float)
    f = np.zeros_like(x)
    for d in deltas:
        e = compute_epsilon(orders, rdp, float(d))[0]
        f = np.maximum.reduce([f, 1 - d - math.exp(e) * x, math.exp(-e) * (1 - d - x)])
    return np.clip(f, 0.0, 1.0)


def _sup_upper(x, fx, eps):
    """An upper bound on sup_{x∈[0,1]} [1 - f(x) - e^ε x] from f on an increasing grid x (x[-1] = 1).

    A grid maximum alone can miss the supremum (it is a lower bound on it).  Bound: on each cell
    [x_i, x_{i+1}] (with x_{-1} = 0), f non-increasing (every trade-off function is) gives
    1 - f(x) - e^ε x ≤ 1 - f(x_{i+1}) - e^ε x_i, so the maximum of those over cells bounds the sup.
    """
    left = np.concatenate([[0.0], x[:-1]])
    return np.array([max(float(np.max(1 - fx - math.exp(e) * left)), 0.0) for e in np.atleast_1d(eps)])


def _profile_grid(n):
    return np.concatenate([np.geomspace(1e-12, 1e-3, n // 4, endpoint=False), np.linspace(1e-3, 1, n)])


def profile_from_tradeoff(epsilon, f, n=200001):
    """δ(ε) = sup_x [1 - f(x) - e^ε x]  (Lemma 20 / 21; f symmetric), bounded from above on an x grid
    (:func:`_sup_upper`): an upper bound on the profile of f whenever f is a non-increasing trade-off
    function, hence an upper bound on the mechanism's profile when f is a valid lower trade-off."""
    x = _profile_grid(n)
    return _sup_upper(x, f(x), np.asarray(epsilon, dtype=float))


def gaussian_delta(epsilon, sigma=1.0):
    """Exact profile of the Gaussian mechanism (Balle & Wang 2018), log-space."""
    check_positive("sigma", sigma)
    return np.exp(gaussian.log_delta(epsilon, sigma))


def randomized_response_delta(epsilon, p):
    """Exact profile of RR: Σ (p_i - e^ε q_i)_+ = (p - e^ε(1-p))_+ + ((1-p) - e^ε p)_+."""
    e = np.exp(np.asarray(epsilon, dtype=float))
    return np.maximum(p - e * (1 - p), 0.0) + np.maximum((1 - p) - e * p, 0.0)


_P_FIG1 = math.e / (1 + math.e)


def zhu_fig1_gm_epsilon(delta=0.3, sigma=1.0):
    """ε such that the Gaussian mechanism (σ=1) is (ε, δ)-DP, via the φ accountant
    (Zhu §3 prints: GM obeys (0.277, 0.3)-DP)."""
    return float(cf_epsilon(delta, Gaussian(sigma), "remove")[0])


def zhu_fig1_rr_epsilon(delta=0.3, p=_P_FIG1):
    """Smallest ε with RR(p) (ε, δ)-DP: log((p - δ)/(1 - p))  (Zhu §3 prints 0.471)."""
    return math.log((p - delta) / (1 - p))


def zhu_fig1_rdp_converted_epsilon(delta=0.3, sigma=1.0):
    """ε at δ from the RDP curve α/(2σ²) converted to f-DP (App. F) and then to (ε, δ)."""
    f = lambda x: tradeoff_from_rdp(x, lambda a: float(rdp_gaussian(a, sigma)))  # noqa: E731
    x = np.concatenate([np.geomspace(1e-9, 1e-3, 150, endpoint=False), np.linspace(1e-3, 1.0, 6000)])
    fx = f(x)
    g = lambda e: float(_sup_upper(x, fx, e)[0]) - delta  # noqa: E731  (δ bounded above: root on the safe side)
    return find_root(g, 0.0, 5.0, xtol=1e-6)


def zhu_fig1_rr_rdp_below_gaussian(p=_P_FIG1, sigma=1.0):
    """True iff D_α(RR) ≤ α/(2σ²) on α ∈ (0, 200] (Fig. 1(a): RR satisfies the GM's RDP)."""
    a = np.concatenate([np.linspace(0.01, 0.99, 99), np.linspace(1.001, 10, 500),
                        np.geomspace(10, 200, 100)])
    return bool(np.all(rdp_randomized_response(a, p) <= rdp_gaussian(a, sigma) + 1e-12))


def zhu_fig4_split_holds(sigma=1.0, q=0.5):
    """Zhu App. C.4 / Fig. 4: remove curve dominates for α ≥ 1, add curve for α < 1."""
    return split_dominates(sigma, q)




# --------------------------------------------------------------------------
# Zhu §5 experiments, as checks returning numbers / booleans (for claims)
# --------------------------------------------------------------------------
def zhu_exp1_max_gap(sigmas=(50.0, 100.0), delta=1e-4, steps_values=(1, 10, 100, 1000, 10000)):
    """Exp. 1 / Fig. 3(a): max |ε_φ - ε_analytic| over σ ∈ {50,100} and compositions k,
    ε_analytic from the Balle-Wang analytic Gaussian with σ/√k."""
    gap = 0.0
    for s in sigmas:
        for steps in steps_values:
            e_cf = cf_epsilon(delta, [(Gaussian(s), steps)], "remove")[0]
            s_eff = s / math.sqrt(steps)
            e_an = find_root(lambda e: float(gaussian_delta(e, s_eff)) - delta, 0.0, 100.0,
                                   xtol=1e-13)
            gap = max(gap, abs(e_cf - e_an))
    return float(gap)


def zhu_exp2_within_pld(sigma=5.0, p=0.52, epsilon=2.0, steps_values=(20, 100, 400), disc=1e-4):
    """Exp. 2 / Fig. 3(b): δ(ε=2) of alternating Gaussian(σ=5) / RR(p=0.52) compositions from
    the φ accountant lies within dp_accounting's optimistic/pessimistic PLD bounds."""
    import logging
    from dp_accounting.pld import privacy_loss_distribution as pld
    lp, l1p = math.log(p), math.log1p(-p)
    ok = True
    logging.disable(logging.WARNING)
    try:
        for steps in steps_values:
            v, er = cf_delta(epsilon, [(Gaussian(sigma), steps // 2), (RandomizedResponse(p), steps // 2)],
                             "remove")
            bounds = []
            for pess in (False, True):
                g = pld.from_gaussian_mechanism(sigma, value_discretization_interval=disc,
                                                pessimistic_estimate=pess, use_connect_dots=pess)
                r = pld.from_two_probability_mass_functions(
                    {0: l1p, 1: lp}, {0: lp, 1: l1p}, pessimistic_estimate=pess,
                    value_discretization_interval=disc)
                bounds.append(g.self_compose(steps // 2).compose(r.self_compose(steps // 2))
                              .get_delta_for_epsilon(epsilon))
            ok &= bounds[0] - er <= v <= bounds[1] + er
    finally:
        logging.disable(logging.NOTSET)
    return bool(ok)


def zhu_exp3_within_pld(sigma=2.0, q=0.01, delta=1e-5, steps=1500, disc=1e-4):
    """Exp. 3 / Fig. 3(c): ε(δ=1e-5) of the Poisson-subsampled Gaussian (σ=2, γ=0.01, remove
    direction as in Zhu) after 1500 steps lies between dp_accounting's optimistic and
    pessimistic PLD ε."""
    import logging
    from dp_accounting.pld import privacy_loss_distribution as pld
    e, er = cf_epsilon(delta, [(PoissonSubsampled(Gaussian(sigma), q), steps)], "remove")
    logging.disable(logging.WARNING)
    try:
        lo = pld.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=False,
                                         use_connect_dots=False,
                                         value_discretization_interval=disc)
        hi = pld.from_gaussian_mechanism(sigma, sampling_prob=q,
                                         value_discretization_interval=disc)
        e_lo = lo._pmf_remove.self_compose(steps).get_epsilon_for_delta(delta)
        e_hi = hi._pmf_remove.self_compose(steps).get_epsilon_for_delta(delta)
    finally:
        logging.disable(logging.NOTSET)
    return bool(e_lo - er <= e <= e_hi + er)


def zhu_exp3_query_cpu_seconds(sigma=2.0, q=0.01, steps=1500, epsilon=1.0):
    """CPU seconds of one δ(ε) query of the φ accountant in the Exp. 3 setting (Zhu App. E.2
    reports about 0.2 s per query for their double quadrature)."""
    import time

    m = [(PoissonSubsampled(Gaussian(sigma), q), steps)]
    cf_delta(epsilon, m, "remove")  # warm-up
    t = time.process_time()
    cf_delta(epsilon, m, "remove")
    return time.process_time() - t


# --------------------------------------------------------------------------
# curves for the pipeline (Zhu Fig. 1, Fig. 3(b))
# --------------------------------------------------------------------------
_RDP_ORDERS = np.concatenate([np.linspace(1.01, 5, 100), np.geomspace(5, 500, 100)])


def _rows(curve, x, y, kind, method):
    return [{"curve": curve, "x": float(a), "value": float(b), "kind": kind, "method": method}
            for a, b in zip(np.atleast_1d(x), np.atleast_1d(y))]


def zhu_fig1_curves(panel, mechanism, sigma=1.0, p=_P_FIG1, n_points=200, n_x=1651):
    """Rows (curve, x, value, kind, method) of one panel of Zhu Fig. 1 for one mechanism.

    panel "rdp":      x = α ∈ [0.05, 10], RDP ε(α) (closed form; RR: log(cosh(α-½)/cosh ½)/(α-1)).
    panel "tradeoff": x = type-I error, the exact trade-off function f and the f implied by the
                      mechanism's RDP curve: App. F.1 (orders α ≥ 0.5, a lower bound on f) and,
                      for the GM, through dp_accounting's (ε(δ), δ) family (also a lower bound on f).
    panel "profile":  x = ε ∈ [0, 2], δ(ε): exact (Balle–Wang / RR closed form), the φ
                      accountant (Gaussian; estimate ± err), and the upper bounds implied by RDP:
                      App. F.1 f-DP → profile (Lemma 20/21) and, for the GM, dp_accounting's RDP → DP.
    ``n_x`` is the x-grid of the f → profile conversion (its error is O(1/n_x)).
    """
    check_choice("panel", panel, ("rdp", "tradeoff", "profile"))
    check_choice("mechanism", mechanism, ("gaussian", "randomized_response"))
    check_int("n_points", n_points, 2)
    gm = mechanism == "gaussian"
    rdp_fn = (lambda a: float(rdp_gaussian(a, sigma))) if gm else (
        lambda a: float(rdp_randomized_response(a, p)))
    name = f"GM σ={sigma:g}" if gm else f"RR p={p:.4g}"
    if panel == "rdp":
        a = np.linspace(0.05, 10.0, n_points)
        y = rdp_gaussian(a, sigma) if gm else rdp_randomized_response(a, p)
        return _rows(name, a, y, "exact", "closed_form")
    if panel == "tradeoff":
        x = np.linspace(0.0, 1.0, n_points)
        xi = np.clip(x, 1e-12, 1 - 1e-12)
        exact = tradeoff_gaussian(xi, sigma) if gm else tradeoff_randomized_response(xi, p)
        rows = _rows(name, x, exact, "exact", "closed_form")
        rows += _rows(f"{name}: f-DP implied by its RDP (App. F.1)", x, tradeoff_from_rdp(xi, rdp_fn),
                      "lower", "rdp_conversion")
        if gm:  # for RR both conversions coincide with its exact f (App. F.3)
            rows += _rows(f"{name}: f-DP implied by its RDP via (ε, δ)", x,
                          tradeoff_from_rdp_via_dp(xi, rdp_fn), "lower", "rdp_via_dp")
        return rows
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    e = np.linspace(0.0, 2.0, n_points)
    exact = gaussian_delta(e, sigma) if gm else randomized_response_delta(e, p)
    rows = _rows(name, e, exact, "exact", "closed_form")
    if gm:
        phi = [cf_delta(float(v), Gaussian(sigma), "remove", abs_tol=1e-12) for v in e]
        rows += [dict(r, err=er) for r, (_, er) in
                 zip(_rows(name, e, [v for v, _ in phi], "estimate", "cf"), phi)]
    f_conv = lambda z: tradeoff_from_rdp(z, rdp_fn)  # noqa: E731
    rows += _rows(f"{name}: profile implied by its RDP (App. F.1 f-DP)", e,
                  profile_from_tradeoff(e, f_conv, n=n_x), "upper", "rdp_conversion")
    if gm:
        rdp = np.array([rdp_fn(a) for a in _RDP_ORDERS])
        rows += _rows(f"{name}: RDP → (ε, δ) (dp_accounting)", e,
                      [compute_delta(_RDP_ORDERS, rdp, float(v))[0] for v in e], "upper", "rdp")
    return rows


def heterogeneous_delta(epsilon, sigma=5.0, p=0.52, steps=100, method="cf", bound="upper",
                        discretization=1e-4):
    """Zhu Exp. 2 / Fig. 3(b): δ(ε) after `steps` mechanisms alternating Gaussian(σ) and
    randomized response(p) (⌈k/2⌉ Gaussians, ⌊k/2⌋ RR; order does not matter, Prop. 13).

    method "cf":  φ accountant (AccountingResult kind "estimate", error in accuracy["err"]);
    method "pld": dp_accounting PLDs (stand-in for Koskela's FA): bound "upper" = pessimistic
                  (connect-the-dots), "lower" = optimistic, at ``discretization``;
    method "rdp": closed-form RDP of both (α/(2σ²) and the RR formula) summed, converted by
                  dp_accounting (upper bound).
    RR has one privacy loss direction (symmetric pair), so remove = add here.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    steps = check_int("steps", steps, 1)
    check_choice("method", method, ("cf", "pld", "rdp"))
    n_g, n_r = (steps + 1) // 2, steps // 2
    eps = float(epsilon)
    if method == "cf":
        mech = [(Gaussian(sigma), n_g)] + ([(RandomizedResponse(p), n_r)] if n_r else [])
        v, e = cf_delta(eps, mech, "remove", abs_tol=1e-12)
        return AccountingResult(float(v), "estimate", "cf", {"err": float(e)}, max(v - e, 0.0), v + e)
    if method == "rdp":
        rdp = n_g * rdp_gaussian(_RDP_ORDERS, sigma) + n_r * rdp_randomized_response(_RDP_ORDERS, p)
        v = float(compute_delta(_RDP_ORDERS, rdp, eps)[0])
        return AccountingResult(v, "upper", "rdp", {"orders": "1.01..500 (200)"}, None, v)
    pess = bound == "upper"
    lp, l1p = math.log(p), math.log1p(-p)
    g = pld.from_gaussian_mechanism(sigma, value_discretization_interval=discretization,
                                    pessimistic_estimate=pess, use_connect_dots=pess)
    out = g.self_compose(n_g) if n_g > 1 else g
    if n_r:
        r = pld.from_two_probability_mass_functions({0: l1p, 1: lp}, {0: lp, 1: l1p},
                                                    pessimistic_estimate=pess,
                                                    value_discretization_interval=discretization)
        out = out.compose(r.self_compose(n_r) if n_r > 1 else r)
    v = float(out.get_delta_for_epsilon(eps))
    return AccountingResult(v, bound, "pld", {"discretization": discretization},
                            v if not pess else None, v if pess else None)


def zhu_exp3_error_bound(epsilon=1.0, sigma=2.0, q=0.01, steps=1500, abs_tol=1e-14):
    """Certified error bound of the φ accountant's δ(ε) in the Exp. 3 setting at budget `abs_tol`
    (Zhu §5: 'the numerical issues induced by Gaussian quadrature are at most O(1e-14)')."""
    return float(cf_delta(epsilon, [(PoissonSubsampled(Gaussian(sigma), q), steps)], "remove",
                          abs_tol=abs_tol)[1])



def zhu_exp1_beats_rdp(sigmas=(50.0, 100.0), delta=1e-4, steps_values=(1, 10, 100, 1000, 10000)):
    """Zhu Exp. 1 / Fig. 3(a): the φ accountant 'strictly outperforms the RDP accountant': True iff
    ε_φ < ε_RDP (dp_accounting, default orders) at every σ and k."""
    return all(accountant.epsilon(delta, sigma=s, q=1.0, total_steps=steps, method="cf").upper
               < accountant.epsilon(delta, sigma=s, q=1.0, total_steps=steps, method="rdp").value for s in sigmas for steps in steps_values)


def zhu_exp3_beats_rdp(sigma=2.0, q=0.01, delta=1e-5, steps_values=(100, 500, 1000, 1500)):
    """Zhu Exp. 3 / Fig. 3(c): 'all Fourier accountant-based approaches improve over the RDP-based
    accountant': True iff ε_φ < ε_RDP at every k (Poisson-subsampled Gaussian, add/remove)."""
    kw = dict(sigma=sigma, q=q)
    return all((accountant.epsilon(delta, total_steps=steps, method="cf", **kw).upper
                < accountant.epsilon(delta, total_steps=steps, method="rdp", **kw).value)
               for steps in steps_values)


