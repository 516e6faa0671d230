"""Chua et al. ICML 2024 (How Private are DP-SGD Implementations?): the paper's one-epoch quantities and checks.

The samplers' multi-epoch accounting lives in :mod:`dpsampling.samplers` (``deterministic``, ``shuffle``,
``poisson``); this module holds the paper's own API: the one-epoch curves δ_D, ε_D (Prop. 3.1), the shuffle
lower bounds from the sets E_C (§4.3, computed in :mod:`dpsampling.samplers._ec_sets`, which the shuffle
sampler shares), one epoch of Poisson at q = 1/T, crossings of sampled curves (Fig. 2, Theorem 4.2,
Conjecture 4.3), the Theorem 4.1 margin and the provably-wrong regions (Fig. 3).

The one-epoch setting of Chua et al.:

ABLQ_B (Chua Alg. 1) with T batches, noise σ and batch sampler B:

* Deterministic batching D (Chua Prop. 3.1): the tightly dominating pair is
  (N(1, σ²), N(0, σ²)), so δ_D(ε) is the analytic Gaussian curve with
  sensitivity 1 (Balle & Wang 2018, Thm 8), independent of T.
* Shuffle batching S (Chua §3, eqs. (1)-(2)): no dominating pair is known; the
  pair P_S = Σ_t N(2e_t, σ²I)/T, Q_S = Σ_t N(e_t, σ²I)/T comes from one
  concrete query method and adjacent pair, so any set E gives the *lower bound*
  δ_S(ε) ≥ P_S(E) − e^ε Q_S(E).  We use the sets E_C = {w : max_t w_t ≥ C}
  of Chua §4.3, eq. (3).
* Poisson batching P with q = 1/T (Chua §3, footnote 3): the T-fold
  composition of the q-subsampled Gaussian.  Not reimplemented here — the
  helpers :func:`poisson_epoch_epsilon` / :func:`poisson_epoch_delta` call
  :mod:`dpsampling.engine.accountant` with ``q = 1/steps``, ``total_steps = steps`` (dp_accounting PLD / RDP).

Theorem 4.1: δ_S(ε) ≤ δ_D(ε) for all ε, so the E_C lower bound never exceeds
:func:`deterministic_delta` (checked in the tests).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine import accountant, gaussian
from dpsampling.engine.result import RELIABLE_DELTA_FLOOR, AccountingResult
from dpsampling.engine.validation import (check_choice, check_delta, check_epsilon, check_grid, check_int,
                                          check_positive, scalar_or_array)
from dpsampling.samplers._checks import check_quantity, check_sigma_steps
from dpsampling.samplers._ec_sets import (  # noqa: F401 - the paper's shuffle bounds (Chua §4.3), public here
    EC_METHOD,
    shuffle_delta_lower,
    shuffle_epsilon_lower,
    shuffle_log_delta_lower,
    shuffle_log_pq,
    shuffle_result,
)

#: the samplers compared in the paper (one epoch of T batches)
CHUA_SAMPLERS = ("deterministic", "shuffle", "poisson")


# --------------------------------------------------------------------------- one epoch: deterministic (Prop. 3.1)


def deterministic_log_delta(epsilon, sigma):
    """log δ_D(ε) (Chua Prop. 3.1), vectorised over ``epsilon``; see :func:`deterministic_delta`."""
    check_epsilon(epsilon)
    check_positive("sigma", sigma)
    out = np.asarray(gaussian.log_delta(np.asarray(epsilon, dtype=float), float(sigma)), dtype=float)
    return scalar_or_array(out, epsilon)


def deterministic_delta(epsilon, sigma):
    """δ_D(ε) for deterministic batching (Chua Prop. 3.1 = Balle & Wang 2018, Thm 8).

        δ_D(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)),

    the analytic Gaussian mechanism with sensitivity 1 (the dominating pair is
    (N(1, σ²), N(0, σ²)); each record is in exactly one batch, so T does not
    enter).  Evaluated in log space (:func:`dpsampling.engine.gaussian.log_delta`:
    log Φ(a) + log1mexp(ε + log Φ(b) − log Φ(a))), so values far below 1e-16
    keep their digits.  Vectorised over ``epsilon`` (array in, array out).
    """
    return scalar_or_array(np.exp(deterministic_log_delta(epsilon, sigma)), epsilon)


def deterministic_epsilon(delta, sigma):
    """ε_D(δ): the smallest ε ≥ 0 with δ_D(ε) ≤ δ (Chua Prop. 3.1), by root finding.

    Brent's method on log δ_D(ε) − log δ (monotone decreasing in ε), tolerance
    1e-13.  Vectorised over ``delta`` by a loop (each root is ~30 evaluations).
    """
    check_delta(delta)
    check_positive("sigma", sigma)
    d = np.asarray(delta, dtype=float)
    out = np.array([gaussian.epsilon(float(x), float(sigma)) for x in d.ravel()], dtype=float).reshape(d.shape)
    return scalar_or_array(out, delta)


def deterministic_result(quantity, target, sigma):
    """ε_D(δ) (``quantity="epsilon"``, target δ) or δ_D(ε) (``"delta"``, target ε) as an exact result.

    Chua Prop. 3.1: the analytic Gaussian curve with sensitivity 1, independent
    of T; ``kind="exact"``, ``method="analytic"``.
    """
    target = check_quantity(quantity, target)
    check_positive("sigma", sigma)
    f = deterministic_epsilon if quantity == "epsilon" else deterministic_delta
    v = float(f(target, float(sigma)))
    return AccountingResult(v, "exact", "analytic", {}, v, v)


def deterministic_sigma_result(epsilon, delta):
    """Smallest σ with deterministic batching (ε, δ)-DP (one epoch), exact.

    One epoch of deterministic batching is a single Gaussian mechanism with
    sensitivity 1 (Chua Prop. 3.1), so this is the analytic-Gaussian
    calibration (:func:`dpsampling.engine.accountant.calibrate_sigma` with q = 1,
    T = 1).  By Theorem 4.1 this σ is also sufficient for shuffle batching.
    """
    return accountant.calibrate_sigma(epsilon, delta, q=1.0, total_steps=1)



# --------------------------------------------------------------------------- one epoch: Poisson at q = 1/T


def poisson_epoch_epsilon(delta, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """ε_P(δ) for one epoch of Poisson batching: q = 1/T, T steps (Chua §3, footnote 3).

    A thin wrapper: ``dpsampling.engine.accountant.epsilon(delta, sigma=σ, q=1/T,
    total_steps=T, direction="add_remove", ...)`` — dp_accounting
    PLD (``bound="upper"``: pessimistic, ``"lower"``: optimistic; max over add
    and remove) or RDP (default orders; upper only).  ``discretization`` is
    the PLD value discretisation (None: the accountant picks it from its
    accuracy target, which can take minutes at T ≥ 1e4).  Returns a float.
    """
    r = poisson_epoch_result("epsilon", delta, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)


def poisson_epoch_delta(epsilon, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """δ_P(ε) for one epoch of Poisson batching (q = 1/T); see :func:`poisson_epoch_epsilon`.

    PLD values below RELIABLE_DELTA_FLOOR (1e-10) are not reliable upper
    bounds (the accountant flags them ``delta_below_1e-10`` and reports the φ accountant's certified value).
    """
    r = poisson_epoch_result("delta", epsilon, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)


def poisson_epoch_result(quantity, target, sigma, steps, *, method="pld", bound="upper", rel_tol=None,
                         discretization=None, finest_discretization=None):
    """ε_P(δ) or δ_P(ε) for one epoch of Poisson batching (q = 1/T, Chua §3 footnote 3), as a result.

    Delegates to :func:`dpsampling.engine.accountant.epsilon` / ``delta`` (dp_accounting
    PLD or RDP, max over add and remove).  PLD: a fixed ``discretization`` is
    used as is; ``None`` refines it to ``rel_tol``.  ``finest_discretization``
    (PLD, automatic only) stops the refinement there (flag ``not_converged``
    with the estimated error if ``rel_tol`` is not reached); only the
    pessimistic PLD is refined, the optimistic one (``lower``) is evaluated at
    the final discretisation, as in the accountant.
    """
    target = check_quantity(quantity, target)
    _, steps = check_sigma_steps(sigma, steps)
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ParameterError("rel_tol", "in (0, 0.1]", rel_tol)
    finest = None if finest_discretization is None else float(finest_discretization)  # the accountant checks it
    q, s = 1.0 / steps, float(sigma)
    call = accountant.epsilon if quantity == "epsilon" else accountant.delta
    kw = {}
    if method == "pld":
        kw = {"discretization": None if discretization is None else float(discretization)}
        if finest is not None:
            kw["finest_discretization"] = finest
    return call(target, sigma=s, q=q, total_steps=steps, direction="add_remove",
                method=method, bound=bound, rel_tol=rel_tol, **kw)



# --------------------------------------------------------------------------- curves and checks


def _check_curves(epsilon, delta_a, delta_b):
    x = np.asarray(epsilon, dtype=float)
    a = np.asarray(delta_a, dtype=float)
    b = np.asarray(delta_b, dtype=float)
    check_grid("epsilon", x), check_int("len(epsilon)", x.size, 2)
    if a.shape != x.shape or b.shape != x.shape:
        raise ParameterError("delta_a", "curves of the shape of epsilon", (delta_a, delta_b),
                             message=f"curves must have the shape of epsilon {x.shape} (got {a.shape} and {b.shape})")
    return x, a, b


def _gap(a, b):
    """log a − log b where both are positive, else a − b (same sign as a − b)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a > 0) & (b > 0), np.log(np.where(a > 0, a, 1.0)) - np.log(np.where(b > 0, b, 1.0)), a - b)


def _cross_between(x, a, b, i, j):
    """Interpolated crossing of a and b between grid points i < j (g(i), g(j) of opposite sign)."""
    if j > i + 1:  # exact ties in between: the middle of the tie run
        return float(0.5 * (x[i + 1] + x[j - 1]))
    both_pos = a[i] > 0 and b[i] > 0 and a[j] > 0 and b[j] > 0
    gi, gj = _gap(a[[i, j]], b[[i, j]]) if both_pos else (a[[i, j]] - b[[i, j]])
    return float(x[i] + (x[j] - x[i]) * gi / (gi - gj))


def crossover_points(epsilon, delta_a, delta_b):
    """The ε at which curve ``delta_a`` crosses curve ``delta_b`` (Fig. 2's ε0/ε1, Conj. 4.3).

    Both curves are sampled on the strictly increasing grid ``epsilon``.  A
    crossing is a sign change of a − b between grid points (touching without a
    sign change is not one); its location is interpolated linearly in
    log a − log b when both curves are positive there, else in a − b.
    Returns a sorted 1-D array (empty if the curves do not cross).  With
    bounds instead of exact curves, one crossing is evidence for Conjecture
    4.3 (ε0 = ε1), not a proof.
    """
    x, a, b = _check_curves(epsilon, delta_a, delta_b)
    s = np.sign(_gap(a, b))
    nz = np.flatnonzero(s != 0)
    out = [_cross_between(x, a, b, i, j) for i, j in itertools.pairwise(nz) if s[i] != s[j]]
    return np.asarray(out, dtype=float)


def provably_wrong_region(epsilon, shuffle_lower, poisson_upper):
    """ε intervals where the shuffle lower bound exceeds the Poisson upper bound.

    There δ_S(ε) ≥ shuffle_lower > poisson_upper ≥ δ_P(ε): reporting the
    Poisson guarantee for a shuffled implementation is provably wrong (Chua
    §4.3, Fig. 3).  Returns a list of (start, end) pairs: maximal runs of grid
    points with shuffle_lower > poisson_upper, extended to the interpolated
    crossings (or clipped to the grid ends).
    """
    x, s, p = _check_curves(epsilon, shuffle_lower, poisson_upper)
    above = _gap(s, p) > 0
    regions = []
    i, n = 0, x.size
    while i < n:
        if not above[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and above[j + 1]:
            j += 1
        start = x[0] if i == 0 else _cross_between(x, s, p, i - 1, i)
        end = x[-1] if j == n - 1 else _cross_between(x, s, p, j, j + 1)
        regions.append((float(start), float(end)))
        i = j + 1
    return regions


def conjecture_4_3_single_crossing(sigma=0.3, steps=10, eps_max=20.0, n_eps=201, discretization=1e-3):
    """True iff δ_D crosses both PLD bounds on δ_P exactly once on [0, eps_max] (Chua Fig. 2, Conj. 4.3).

    δ_P is bracketed by the optimistic (lower) and pessimistic (upper)
    dp_accounting PLD of one epoch (q = 1/T); grid points where the upper PLD
    bound is below RELIABLE_DELTA_FLOOR (1e-10, unreliable) are dropped.
    """
    _, steps = check_sigma_steps(sigma, steps)
    eps = np.linspace(0.0, float(eps_max), int(n_eps))
    dd = deterministic_delta(eps, sigma)
    res = [
        accountant.delta(
            e, sigma=float(sigma), q=1.0 / steps, total_steps=steps, bound="upper", discretization=discretization
        )
        for e in eps
    ]
    up = np.array([r.upper for r in res])
    lo = np.array([r.lower for r in res])
    m = up >= RELIABLE_DELTA_FLOOR
    return bool(crossover_points(eps[m], dd[m], up[m]).size == 1 and crossover_points(eps[m], dd[m], lo[m]).size == 1)


def theorem_4_1_margin(shuffle_lower, deterministic, rtol=1e-9):
    """Margin of Theorem 4.1 (δ_S ≤ δ_D, hence also ε_S ≤ ε_D) on a grid: (margin, holds).

    ``margin = deterministic − shuffle_lower`` (≥ 0 by the theorem);
    ``holds`` allows a relative rounding slack ``rtol`` (relative to
    ``deterministic``).  NaN entries (no shuffle value) hold trivially.
    """
    s = np.asarray(shuffle_lower, dtype=float)
    d = np.asarray(deterministic, dtype=float)
    margin = d - s
    with np.errstate(invalid="ignore"):
        holds = ~(margin < -rtol * np.abs(d) - 1e-300)
    return margin, holds


def provably_wrong_mask(shuffle_lower, poisson_upper):
    """True where the shuffle lower bound exceeds the Poisson upper bound (NaN: False).

    There δ_S ≥ shuffle_lower > poisson_upper ≥ δ_P (or the same with ε), so
    reporting the Poisson guarantee for a shuffled implementation is provably
    wrong (Chua §4.3).
    """
    s = np.asarray(shuffle_lower, dtype=float)
    p = np.asarray(poisson_upper, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(s) & np.isfinite(p) & (_gap(s, p) > 0)


def provably_wrong_intervals(x, shuffle_lower, poisson_upper):
    """:func:`provably_wrong_region` on the grid points where both curves are finite."""
    x = np.asarray(x, dtype=float)
    s = np.asarray(shuffle_lower, dtype=float)
    p = np.asarray(poisson_upper, dtype=float)
    m = np.isfinite(s) & np.isfinite(p)
    if m.sum() < 2:
        return [(float(v), float(v)) for v in x[m & provably_wrong_mask(s, p)]]
    return provably_wrong_region(x[m], s[m], p[m])


def deterministic_vs_poisson_crossings(epsilon, delta_d, poisson_lower, poisson_upper):
    """ε0 and ε1 of Chua Theorem 4.2 / Conjecture 4.3 from sampled curves.

    Below ε0 deterministic batching is provably worse (δ_D > upper bound ≥
    δ_P): ε0 is where δ_D crosses the upper bound on δ_P.  Above ε1 Poisson is
    provably worse (δ_P ≥ lower bound > δ_D): ε1 is where δ_D crosses the lower
    bound.  ε0 ≤ ε1 and the true crossing lies in [ε0, ε1].  Returns a dict:
    ``eps0``, ``eps1`` (first crossing each; nan if none), ``n_crossings_upper``,
    ``n_crossings_lower``, ``gap = eps1 − eps0``, ``resolution`` (the largest
    grid step) and ``equal_within_resolution`` (one crossing each and
    |ε1 − ε0| ≤ resolution: evidence for Conjecture 4.3, not a proof).
    Grid points with a non-finite value in any curve are dropped.
    """
    x = np.asarray(epsilon, dtype=float)
    d, lo, up = (np.asarray(a, dtype=float) for a in (delta_d, poisson_lower, poisson_upper))
    m = np.isfinite(x) & np.isfinite(d) & np.isfinite(lo) & np.isfinite(up)
    x, d, lo, up = x[m], d[m], lo[m], up[m]
    c_up = crossover_points(x, d, up)
    c_lo = crossover_points(x, d, lo)
    e0 = float(c_up[0]) if c_up.size else math.nan
    e1 = float(c_lo[0]) if c_lo.size else math.nan
    res = float(np.max(np.diff(x)))
    return {
        "eps0": e0,
        "eps1": e1,
        "n_crossings_upper": int(c_up.size),
        "n_crossings_lower": int(c_lo.size),
        "gap": e1 - e0,
        "resolution": res,
        "equal_within_resolution": bool(c_up.size == 1 and c_lo.size == 1 and abs(e1 - e0) <= res),
    }


def one_epoch(quantity, target, *, sampler, sigma, steps, method="pld", bound="upper", rel_tol=None,
              discretization=None, finest_discretization=None, c_grid=None):
    """ε(δ) or δ(ε) of one epoch (T batches) under ``sampler`` (Chua et al. 2024), as an AccountingResult.

    ``deterministic``: exact (Prop. 3.1).  ``shuffle``: a lower bound from the
    sets E_C (§4.3, eq. (3)), ``c_grid`` as in :func:`dpsampling.samplers.shuffle.c_grid_from_spec`.
    ``poisson``: q = 1/T, :func:`poisson_epoch_result` (``method``, ``bound``,
    ``rel_tol``, ``discretization``, ``finest_discretization`` apply to it only).
    """
    check_choice("sampler", sampler, CHUA_SAMPLERS)
    if sampler == "deterministic":
        return deterministic_result(quantity, target, sigma)
    if sampler == "shuffle":
        return shuffle_result(quantity, target, sigma, steps, c_grid)
    return poisson_epoch_result(quantity, target, sigma, steps, method=method, bound=bound, rel_tol=rel_tol,
                                discretization=discretization, finest_discretization=finest_discretization)
