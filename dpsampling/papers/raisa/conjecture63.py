"""Räisä et al. 2024 Fig. 2 / Conjecture 6.3 (max a − b over the authors' grid, brute force, binary
search and exactly) and Theorem 6.2's sufficient condition; the Fig. 2 pipeline table."""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.subsampled_gaussian import (
    _SQRT2, _delta, _eps, _log_delta_raw, _parts, log_delta_one_step, sigma_one_step,
)
from dpsampling.engine.validation import (check_choice, check_finite_list, check_grid, check_int, check_positive,
                                          check_rate)
from dpsampling.engine.numerics import find_root

from .one_step import a_minus_b, is_monotone, theorem62_log_margin


# ---------------------------------------------------------------------------
# Fig. 2 / Conjecture 6.3: the authors' grid, brute force, binary search, exact
# ---------------------------------------------------------------------------


def paper_grid(delta=1e-5, c=4.0, n_eps=1000, n_q=100, eps_max=4.0, q_max=0.9999):
    """(eps_values, q_values) of Fig. 2: logspace from c*delta to eps_max / q_max.

    The authors use c = 4 (Conjecture 6.3), n_eps = 1000, n_q = 100,
    eps_max = 4, q_max = 0.9999 (their src/plot_a_vs_b.py).
    """
    d = float(_delta(delta, "delta"))
    lo = check_positive("c", c) * d
    if not lo < eps_max:
        raise ParameterError("eps_max", f"> c*delta = {lo}", eps_max,
                             message=f"eps bounds inverted: c*delta={lo} must be < eps_max={eps_max}")
    if not (lo < q_max <= 1.0):
        raise ParameterError("q_max", f"in (c*delta = {lo}, 1]", q_max,
                             message=f"q bounds inverted: need c*delta={lo} < q_max={q_max} <= 1")
    check_int("n_eps", n_eps, 1), check_int("n_q", n_q, 1)
    eps = np.logspace(np.log10(lo), np.log10(eps_max), int(n_eps))
    qs = np.logspace(np.log10(lo), np.log10(q_max), int(n_q))
    return eps, qs


def sigma_grid(sigma_lo, sigma_hi, n_sigma):
    """np.logspace(log10 sigma_lo, log10 sigma_hi, n_sigma), the authors' sigma grid."""
    check_positive("sigma_lo", sigma_lo), check_positive("sigma_hi", sigma_hi)
    if not sigma_lo <= sigma_hi:
        raise ParameterError("sigma_lo", f"<= sigma_hi = {sigma_hi}", sigma_lo,
                             message=f"sigma bounds inverted: sigma_lo={sigma_lo} > sigma_hi={sigma_hi}")
    check_int("n_sigma", n_sigma, 2)
    return np.logspace(np.log10(sigma_lo), np.log10(sigma_hi), int(n_sigma))


def sigma_grid_log_step(q_min, n_sigma):
    """Resolution Delta log sigma = log(1/q_min)/(n_sigma - 1) of the grid (natural log).

    Paper grid: q_min = 4e-5, n_sigma = 10^4 gives 1.0128e-3.
    """
    return math.log(1.0 / q_min) / (int(n_sigma) - 1)


def _sigma1_for_grid(eps, d):
    """sigma(1, eps): exact root, nudged up until delta(1, sigma1) <= d in floating point.

    The authors use fsolve then multiply by 1.00001 until feasible; the exact
    root is the same up to that factor (< 1% of the grid step).
    """
    s1 = np.atleast_1d(np.asarray(sigma_one_step(1.0, eps, d), dtype=float)).copy()
    logd = math.log(d)
    for _ in range(50):
        bad = np.asarray(log_delta_one_step(1.0, s1, eps)) > logd
        bad = np.atleast_1d(bad)
        if not np.any(bad):
            break
        s1[bad] *= 1.0 + 1e-13
    return s1


def _validate_grid_inputs(eps_values, delta, q_values, n_sigma):
    eps = check_finite_list("eps_values", check_positive("eps_values", _eps(eps_values)))
    d = float(_delta(delta, "delta"))
    qs = check_grid("q_values", check_rate(q_values), low=0.0, high=1.0)
    return eps, d, qs, check_int("n_sigma", n_sigma, 2)


def _grid_result(eps, s1, qs, sig_sel, d, floor_hit):
    """Assemble the per-eps result from the selected sigma per (eps, q) (NaN = none feasible)."""
    ne, nq = sig_sel.shape
    Q = np.broadcast_to(qs, (ne, nq))
    E = np.broadcast_to(eps[:, None], (ne, nq))
    ok = np.isfinite(sig_sel)
    amb = np.full((ne, nq), -np.inf)
    ldel = np.full((ne, nq), -np.inf)
    if np.any(ok):
        amb[ok] = a_minus_b(Q[ok], sig_sel[ok], E[ok])
        ldel[ok] = log_delta_one_step(Q[ok], sig_sel[ok], E[ok])
    j = np.argmax(amb, axis=1)
    r = np.arange(ne)
    gap = np.where(ok, d - np.exp(ldel), d)  # authors: infeasible rows count as |0 - d|
    return {
        "epsilon": eps,
        "sigma1": s1,
        "max_a_minus_b": amb[r, j],
        "argmax_q": qs[j],
        "argmax_sigma": sig_sel[r, j],
        "max_delta_gap": gap.max(axis=1),
        "n_at_grid_floor": floor_hit.sum(axis=1),
        "n_infeasible": (~ok).sum(axis=1),
    }


def _grid_setup(eps_values, delta, q_values, n_sigma):
    """The checked inputs of a grid search and what both searches start from: (eps, delta, q values, n_sigma,
    log delta, sigma1 per eps, number of q, the selected sigma per (eps, q) (nan: none yet), grid-floor hits)."""
    eps, d, qs, n = _validate_grid_inputs(eps_values, delta, q_values, n_sigma)
    nq = qs.size
    return (eps, d, qs, n, math.log(d), _sigma1_for_grid(eps, d), nq, np.full((eps.size, nq), np.nan),
            np.zeros((eps.size, nq), dtype=bool))


def a_minus_b_grid(eps_values, delta, q_values, n_sigma, batch=64):
    """max over feasible (q, sigma) of a - b, per eps, on the authors' Fig. 2 grid.

    For each eps: sigma1 = sigma(1, eps); sigma grid =
    logspace(log10(min(q) sigma1), log10 sigma1, n_sigma); keep grid points
    with δ(q, sigma) <= delta (Eq. (45)); report max(a - b).
    Since delta is decreasing and a - b is decreasing in sigma, the maximum
    for each q sits at the smallest feasible grid sigma, found by binary
    search (ceil(log2(n_sigma + 1)) evaluations of Eq. (45) instead of
    n_sigma).  Returns exactly what a_minus_b_grid_bruteforce returns.

    Returns a dict of 1-D arrays over eps: epsilon, sigma1, max_a_minus_b,
    argmax_q, argmax_sigma, max_delta_gap (max over q of delta minus
    the largest feasible grid delta: the authors' "differs at most ~2e-7"
    quantity), n_at_grid_floor (q's whose smallest grid sigma was already
    feasible, i.e. the exact sigma* lies below the grid), n_infeasible.
    """
    eps, d, qs, n, logd, s1, nq, sig_sel, floor_hit = _grid_setup(eps_values, delta, q_values, n_sigma)
    logq_all = np.log(qs)
    n_iter = math.ceil(math.log2(n + 1))
    for b0 in range(0, eps.size, batch):
        sl = slice(b0, min(b0 + batch, eps.size))
        eb, s1b = eps[sl], s1[sl]
        nb = eb.size
        grids = np.stack([np.logspace(np.log10(qs[0] * s), np.log10(s), n) for s in s1b])
        # per (eps, q) lower_bound for first feasible index in [0, n]
        _, lem1, L, _, _ = _parts(qs[None, :], 1.0, eb[:, None])
        lem1 = np.broadcast_to(lem1, (nb, nq)).ravel()
        L = L.ravel()
        logq = np.broadcast_to(logq_all, (nb, nq)).ravel()
        row = np.repeat(np.arange(nb), nq)
        lo = np.zeros(nb * nq, dtype=np.int64)
        hi = np.full(nb * nq, n, dtype=np.int64)
        for _ in range(n_iter):
            act = np.nonzero(lo < hi)[0]
            if act.size == 0:
                break
            mid = (lo[act] + hi[act]) // 2
            s = grids[row[act], mid]
            ld = _log_delta_raw(logq[act], lem1[act], s * L[act], 0.5 / s)
            feas = ld <= logd
            hi[act[feas]] = mid[feas]
            lo[act[~feas]] = mid[~feas] + 1
        found = lo < n
        sel = np.full(nb * nq, np.nan)
        sel[found] = grids[row[found], lo[found]]
        sig_sel[sl] = sel.reshape(nb, nq)
        floor_hit[sl] = (lo == 0).reshape(nb, nq)
    return _grid_result(eps, s1, qs, sig_sel, d, floor_hit)


def a_minus_b_grid_bruteforce(eps_values, delta, q_values, n_sigma):
    """Same as a_minus_b_grid, evaluating Eq. (45) on every (q, sigma) grid point.

    The straightforward method of the authors (n_q * n_sigma evaluations per
    eps); kept as the reference for tests and the benchmark.
    """
    eps, d, qs, n, logd, s1, nq, sig_sel, floor_hit = _grid_setup(eps_values, delta, q_values, n_sigma)
    logq = np.log(qs)[:, None]
    for i, (e, s) in enumerate(zip(eps, s1)):
        grid = np.logspace(np.log10(qs[0] * s), np.log10(s), n)
        _, lem1, L, _, _ = _parts(qs[:, None], 1.0, e)
        S = np.broadcast_to(grid[None, :], (nq, n))
        ld = _log_delta_raw(np.broadcast_to(logq, (nq, n)), np.broadcast_to(lem1, (nq, n)), S * L, 0.5 / S)
        feas = ld <= logd
        # max of a - b over feasible points (a - b decreasing in sigma, but do not use it)
        amb = np.where(feas, (0.5 / S - S * L) / _SQRT2, -np.inf)
        j = np.argmax(amb, axis=1)
        anyf = feas.any(axis=1)
        sig_sel[i] = np.where(anyf, grid[j], np.nan)
        floor_hit[i] = feas[:, 0]
    return _grid_result(eps, s1, qs, sig_sel, d, floor_hit)


def a_minus_b_exact(eps_values, delta, q_values):
    """max over q of a - b at the exact calibrated sigma*(q, eps) (root finding).

    Over sigma >= sigma*(q) the maximum of the decreasing a - b is at
    sigma*, so this is the grid-free version of Fig. 2.  Agreement with the
    grid: for each q, 0 <= exact - grid <= a*(1 - e^-D) + b*(e^D - 1) with
    D = sigma_grid_log_step (unless sigma* lies below the grid floor).
    Returns dict: epsilon, max_a_minus_b, argmax_q, argmax_sigma.
    """
    eps = np.atleast_1d(_eps(eps_values)).astype(float)
    d = float(_delta(delta, "delta"))
    qs = check_grid("q_values", check_rate(q_values), low=0.0, high=1.0)
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], d))
    E = np.broadcast_to(eps[:, None], S.shape)
    Q = np.broadcast_to(qs[None, :], S.shape)
    amb = np.full(S.shape, np.inf)  # sigma* = 0 (q <= delta): a = +inf
    pos = S > 0
    amb[pos] = a_minus_b(Q[pos], S[pos], E[pos])
    j = np.argmax(amb, axis=1)
    r = np.arange(eps.size)
    return {"epsilon": eps, "max_a_minus_b": amb[r, j], "argmax_q": qs[j], "argmax_sigma": S[r, j]}


def conjecture63_max_a_minus_b(c=4.0, delta=1e-5, n_eps=1000, n_q=100, method="exact", n_sigma=10000):
    """max over the whole Fig. 2 grid (eps, q >= c*delta) of a - b.

    method "exact" (sigma* by root finding) or "grid" (the authors' 10^9-point
    grid, binary search).  Conjecture 6.3 (c = 4): this is < 0.
    """
    eps, qs = paper_grid(delta, c, n_eps, n_q)
    if method == "exact":
        r = a_minus_b_exact(eps, delta, qs)
    elif method == "grid":
        r = a_minus_b_grid(eps, delta, qs, n_sigma)
    else:
        check_choice("method", method, ("exact", "grid"))
    return float(np.max(r["max_a_minus_b"]))


def conjecture63_holds(c=4.0, delta=1e-5, n_eps=1000, n_q=100, method="exact", n_sigma=10000):
    """True iff max(a - b) < 0 for every eps of the grid with eps, q >= c*delta (Conj. 6.3)."""
    return bool(conjecture63_max_a_minus_b(c, delta, n_eps, n_q, method, n_sigma) < 0)


def conjecture63_violated(c=3.0, delta=1e-5, n_eps=1000, n_q=100, method="grid", n_sigma=10000):
    """True iff a - b > 0 somewhere on the grid with eps, q >= c*delta (§6: happens for c < 4)."""
    return bool(conjecture63_max_a_minus_b(c, delta, n_eps, n_q, method, n_sigma) > 0)


def conjecture63_corner(c, delta=1e-5):
    """a - b at the grid corner q = eps = c*delta, sigma = sigma*(q, eps).

    On the Fig. 2 grid the maximum of a - b sits at this corner (smallest q,
    smallest eps; checked in tests), so its sign decides Conjecture 6.3 for c.
    """
    d = float(_delta(delta, "delta"))
    x = c * d
    s = float(sigma_one_step(min(x, 1.0), x, d))
    return float("inf") if s == 0 else float(a_minus_b(min(x, 1.0), s, x))


def conjecture63_critical_c(delta=1e-5, c_lo=1.0 + 1e-9, c_hi=4.0):
    """Smallest constant c with a - b <= 0 at the corner q = eps = c*delta (root in c).

    The paper's constant 4 "was found numerically"; this locates the exact
    threshold on their grid shape.
    """
    if not c_lo < c_hi:
        raise ParameterError("c_lo", f"< c_hi = {c_hi}", c_lo,
                             message=f"c bounds inverted: c_lo={c_lo} must be < c_hi={c_hi}")
    fa, fb = conjecture63_corner(c_lo, delta), conjecture63_corner(c_hi, delta)
    if not (fa > 0 > fb):
        raise ParameterError("c_lo", "with c_hi a bracket of a sign change of a - b", (c_lo, c_hi),
                             message=f"c bracket [{c_lo}, {c_hi}] does not bracket a sign change of a - b")
    return float(find_root(lambda c: conjecture63_corner(c, delta), c_lo, c_hi, xtol=1e-10))


def max_delta_gap(delta=1e-5, c=4.0, n_eps=1000, n_q=100, n_sigma=10000):
    """Authors' "max delta error" on the full Fig. 2 grid (printed ~2e-7 in §6).

    max over (eps, q) of delta - δ(q, smallest feasible grid sigma),
    i.e. how far the sigma grid's resolution leaves delta below the target.
    """
    eps, qs = paper_grid(delta, c, n_eps, n_q)
    return float(np.max(a_minus_b_grid(eps, delta, qs, n_sigma)["max_delta_gap"]))


def max_a_minus_b_decreasing_in_eps(delta=1e-5, c=4.0, n_eps=1000, n_q=100):
    """True iff the exact per-eps max(a - b) of Fig. 2 is decreasing in eps (§6 remark)."""
    eps, qs = paper_grid(delta, c, n_eps, n_q)
    y = a_minus_b_exact(eps, delta, qs)["max_a_minus_b"]
    return is_monotone(y, decreasing=True)


def theorem62_fails_near_delta(delta=1e-5, eps_values=(0.01, 0.1, 1.0, 4.0), q_factor_max=4.0, n_q=200):
    """True iff d(sigma(q)/q)/dq > 0 somewhere for q in (delta, q_factor_max*delta] (T = 1).

    §6: "values of q ~ delta empirically ... fail to satisfy the claim of
    Theorem 6.2".  Uses the exact sign from theorem62_log_margin at sigma*(q).
    """
    d = float(_delta(delta))
    if not q_factor_max > 1:
        raise ParameterError("q_factor_max", "> 1", q_factor_max,
                             message=f"q_factor_max must be > 1 (got {q_factor_max})")
    qs = d * np.logspace(1e-6, np.log10(q_factor_max), int(n_q))
    qs = qs[qs <= 1]
    eps = np.asarray(eps_values, dtype=float)
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], d))
    Q = np.broadcast_to(qs[None, :], S.shape)
    E = np.broadcast_to(eps[:, None], S.shape)
    pos = S > 0
    return bool(np.any(theorem62_log_margin(Q[pos], S[pos], E[pos]) > 0))


def theorem62_sufficient_condition_holds(q_values=None, eps_values=None, delta=1e-5):
    """Theorem 6.2 check: wherever a < b at sigma*(q), d(sigma/q)/dq < 0 (T = 1).

    Defaults: q = logspace(1.5 delta, 1, 200), eps = logspace(4 delta, 4, 100)
    (q includes the region q < 4 delta where a > b occurs).
    """
    d = float(_delta(delta))
    qs = np.logspace(np.log10(1.5 * d), 0, 200) if q_values is None else np.asarray(q_values, dtype=float)
    eps = np.logspace(np.log10(4 * d), np.log10(4), 100) if eps_values is None else np.asarray(eps_values, dtype=float)
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], delta))
    Q = np.broadcast_to(qs[None, :], S.shape)
    E = np.broadcast_to(eps[:, None], S.shape)
    pos = S > 0
    amb = a_minus_b(Q[pos], S[pos], E[pos])
    margin = theorem62_log_margin(Q[pos], S[pos], E[pos])
    return bool(np.all(margin[amb < 0] < 0))




# ---------------------------------------------------------------------------
# Fig. 2 pipeline table: grid vs exact per eps, for one constant c
# ---------------------------------------------------------------------------


def a_minus_b_table(eps_values, delta=1e-5, c=4.0, q_max=0.9999, n_q=100, n_sigma=10000):
    """Per eps: max(a - b) on the authors' grid and exactly, their difference and the grid's resolution.

    q = logspace(c delta, q_max, n_q) (Conjecture 6.3 uses c = 4); sigma grid of
    n_sigma points per eps (:func:`a_minus_b_grid`).  Returns a dict of 1-D
    arrays over eps: ``grid`` and ``exact`` max(a - b), ``diff`` = exact - grid,
    ``resolution_log_sigma`` (Delta log sigma of the grid), ``diff_bound`` (max
    over q of a(1 - e^-D) + b(e^D - 1) at sigma*, the bound 0 <= diff <= bound
    whenever sigma* is inside the grid), ``within_resolution`` (False where that
    bound does not apply: sigma* = 0 or below the grid floor), the argmax q and
    sigma of both, ``max_delta_gap``, ``n_at_grid_floor``, and
    ``n_q_sigma_eff_increasing`` (grid q's where d(sigma/q)/dq > 0 at T = 1, i.e.
    Theorem 6.2's conclusion fails; sigma* = 0 at q <= delta counts as failing)
    and ``q_sigma_eff_increasing_max`` (the largest such q, NaN if none).
    """
    eps, qs = paper_grid(delta, c, 1, n_q, eps_max=4.0, q_max=q_max)  # validates c, delta, q bounds
    eps = np.atleast_1d(_eps(eps_values)).astype(float)
    g = a_minus_b_grid(eps, delta, qs, n_sigma)
    x = a_minus_b_exact(eps, delta, qs)
    D = sigma_grid_log_step(qs[0], n_sigma)
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], delta))
    Q = np.broadcast_to(qs[None, :], S.shape)
    E = np.broadcast_to(eps[:, None], S.shape)
    pos = S > 0
    bound = np.zeros(S.shape)
    margin = np.full(S.shape, np.inf)
    if np.any(pos):
        a = 1.0 / (2.0 * _SQRT2 * S[pos])
        b = a - np.asarray(a_minus_b(Q[pos], S[pos], E[pos]))
        bound[pos] = a * (-np.expm1(-D)) + b * np.expm1(D)
        margin[pos] = theorem62_log_margin(Q[pos], S[pos], E[pos])
    bound = np.where(pos.all(axis=1), bound.max(axis=1), np.inf)
    with np.errstate(invalid="ignore"):
        diff = x["max_a_minus_b"] - g["max_a_minus_b"]
    inc = margin > 0
    q_inc = np.where(inc.any(axis=1), np.max(np.where(inc, Q, 0.0), axis=1), np.nan)
    return {
        "epsilon": eps,
        "grid": g["max_a_minus_b"],
        "exact": x["max_a_minus_b"],
        "diff": diff,
        "resolution_log_sigma": np.full(eps.shape, D),
        "diff_bound": bound,
        "within_resolution": np.isfinite(diff) & (g["n_at_grid_floor"] == 0) & (diff >= 0)
        & (diff <= bound * (1 + 1e-9)),
        "grid_argmax_q": g["argmax_q"],
        "grid_argmax_sigma": g["argmax_sigma"],
        "exact_argmax_q": x["argmax_q"],
        "exact_argmax_sigma": x["argmax_sigma"],
        "sigma1": g["sigma1"],
        "max_delta_gap": g["max_delta_gap"],
        "n_at_grid_floor": g["n_at_grid_floor"],
        "n_q_sigma_eff_increasing": inc.sum(axis=1),
        "q_sigma_eff_increasing_max": q_inc,
    }

