"""Effective noise of Poisson-subsampled DP-SGD (Räisä, Jälkö & Honkela 2024).

"Subsampling is not Magic" studies the effective noise standard deviation
``sigma_eff = sigma(q, T) / q`` (their Eq. (25)) of the Poisson subsampled
Gaussian mechanism with sensitivity 1.  This module holds the single-step
(T = 1) mathematics of their §6 in closed form, plus the pure helpers of §5
(Corollary 5.4) that the pipeline combines with PLD calibrations for T > 1.

Single step, remove direction, dominating pair (P, Q) of Eq. (6):
P = q N(1, s^2) + (1 - q) N(0, s^2), Q = N(0, s^2).  With
h = e^eps - (1 - q), L = log(h / q), u = s L - 1/(2 s), v = s L + 1/(2 s),
Eq. (45) reads

    delta(q, s, eps) = q Pr(Z >= u) - h Pr(Z >= v).

Two identities (q phi(u) = h phi(v), since (v^2 - u^2)/2 = L) give the
partial derivatives used throughout:

    d delta / d s = -q phi(u) / s^2,          d delta / d q = Phi(v) - Phi(u),

so the implicit derivative of the calibrated s(q) is
s'(q) = s^2 (Phi(v) - Phi(u)) / (q phi(u)), which is Lemma 6.1 / Eq. (48)
rewritten (a - b = -u / sqrt 2, -a - b = -v / sqrt 2).  Theorem 6.2's
criterion d(s/q)/dq < 0 is equivalent to s (Phi(v) - Phi(u)) < phi(u), i.e.
the mean of phi on [u, v] is below phi(u); a < b (u > 0) is sufficient.

Numerics (all in log space): delta is evaluated as
q I - (e^eps - 1) Pr(Z >= v) with I = Phi(v) - Phi(u) (Gauss-Legendre on a
short interval, log-space difference of log Phi otherwise), which is never
worse conditioned than Eq. (45) as printed (q I <= q Pr(Z >= u)) and never
forms v - u by subtraction; deep in the tail (u >= 5) as
q phi(u) (R(u) - R(v)) with R the Mills ratio, integrated without
cancellation.  Relative error vs 60-digit mpmath <= 1e-12 (tests) for
delta down to 1e-300, both directions.

Why hand-written: dp_accounting gives delta only numerically (discretised
PLD, pessimistic/optimistic brackets), which is too slow for the 10^9-point
grid of Fig. 2 and not exact enough for derivatives; the closed form is
checked against dp_accounting in tests/test_effective_noise.py.

Size (~1k lines, over the project's ~600): one paper's §5-§6 in one place; the seams are the
one-step closed form (Eq. (45), a candidate for engine/), Fig. 2 / Conjecture 6.3 and Fig. 1 /
Corollary 5.4; splitting along them is planned (issue 13).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy.special import erfcx, ndtri

from dpsampling.engine.numerics import log1mexp, log_norm_cdf, log_norm_sf, logsubexp
from dpsampling.engine.accountant import calibrate_sigma, calibrate_sigma_curve
from dpsampling.engine.result import AccountingResult

__all__ = [
    "FIG1_EPSILONS",
    "a_minus_b",
    "a_minus_b_exact",
    "a_minus_b_grid",
    "a_minus_b_grid_bruteforce",
    "a_minus_b_table",
    "calibrate_sigma_pld",
    "conjecture63_corner",
    "conjecture63_critical_c",
    "conjecture63_holds",
    "conjecture63_max_a_minus_b",
    "conjecture63_violated",
    "corollary54_ratio",
    "corollary54_ratio_decreasing_in_steps",
    "corollary54_ratio_increasing_in_eps",
    "corollary54_ratio_one_step",
    "corollary54_ratio_pld",
    "delta_one_step",
    "effective_noise",
    "is_monotone",
    "lemma61_max_rel_error",
    "lemma61_sigma_prime_erf",
    "log_delta_one_step",
    "log_norm_interval",
    "max_a_minus_b_decreasing_in_eps",
    "max_delta_gap",
    "monotonicity_violations",
    "paper_grid",
    "sigma_curve",
    "sigma_eff_above_sigma1_one_step",
    "sigma_eff_check",
    "sigma_eff_decreasing_one_step",
    "sigma_eff_decreasing_pld",
    "sigma_eff_one_step",
    "sigma_eff_slope",
    "sigma_grid",
    "sigma_grid_log_step",
    "sigma_one_step",
    "sigma_prime",
    "sigma_prime_at",
    "hockey_stick_one_step",
    "sigma_q1",
    "theorem62_fails_near_delta",
    "theorem62_log_margin",
    "theorem62_sufficient_condition_holds",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_GL_X, _GL_W = leggauss(16)


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


def _arr(x, name):
    a = np.asarray(x, dtype=float)
    if np.any(np.isnan(a)):
        raise ValueError(f"{name} must not be NaN (got {x!r})")
    return a


def _check_q(q):
    q = _arr(q, "q")
    if np.any((q <= 0) | (q > 1)):
        bad = q[(q <= 0) | (q > 1)].ravel()[0]
        raise ValueError(f"q must be in (0, 1] (got {bad})")
    return q


def _check_sigma(sigma):
    s = _arr(sigma, "sigma")
    if np.any((s <= 0) | ~np.isfinite(s)):
        bad = s[(s <= 0) | ~np.isfinite(s)].ravel()[0]
        raise ValueError(f"sigma must be > 0 and finite (got {bad})")
    return s


def _check_eps(eps):
    e = _arr(eps, "epsilon")
    if np.any((e < 0) | ~np.isfinite(e)):
        bad = e[(e < 0) | ~np.isfinite(e)].ravel()[0]
        raise ValueError(f"epsilon must be >= 0 and finite (got {bad})")
    return e


def _check_delta(delta, name="delta"):
    d = _arr(delta, name)
    if np.any((d <= 0) | (d >= 1)):
        bad = d[(d <= 0) | (d >= 1)].ravel()[0]
        raise ValueError(f"{name} must be in (0, 1) (got {bad})")
    return d


def _check_increasing(x, name):
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array (got shape {x.shape})")
    if x.size > 1 and np.any(np.diff(x) <= 0):
        raise ValueError(f"{name} must be strictly increasing (inverted or unsorted bounds)")
    return x


def _scalar(out):
    out = np.asarray(out)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------
# generic log-space helper
# ---------------------------------------------------------------------------


def log_norm_interval(mid, half_width):
    """log(Phi(mid + hw) - Phi(mid - hw)) for hw > 0, accurate for tiny hw.

    On short intervals (hw <= 1 and hw |mid| <= 2, where the log-density
    varies by at most ~4.5) a 16-node Gauss-Legendre rule in log space is
    exact to rounding; elsewhere a log-space difference of log Phi tails is
    used (wide interval, no cancellation).  Generic helper: candidate for
    dpsampling.engine.numerics.
    """
    m, hw = np.broadcast_arrays(np.asarray(mid, dtype=float), np.asarray(half_width, dtype=float))
    out = np.empty(m.shape, dtype=float)
    quad = (hw <= 1.0) & (hw * np.abs(m) <= 2.0)
    if np.any(quad):
        mq, hq = m[quad], hw[quad]
        xmin = np.maximum(np.abs(mq) - hq, 0.0)
        shift = -0.5 * xmin * xmin
        acc = np.zeros_like(mq)
        for xi, wi in zip(_GL_X, _GL_W):
            x = mq + hq * xi
            acc += wi * np.exp(-0.5 * x * x - shift)
        out[quad] = np.log(hq) + np.log(acc) + shift - _LOG_SQRT_2PI
    rest = ~quad
    if np.any(rest):
        mr, hr = m[rest], hw[rest]
        u, v = mr - hr, mr + hr
        r = np.empty_like(mr)
        pos = u >= 0
        neg = v <= 0
        mid_ = ~(pos | neg)
        if np.any(pos):
            r[pos] = logsubexp(log_norm_sf(u[pos]), log_norm_sf(v[pos]))
        if np.any(neg):
            r[neg] = logsubexp(log_norm_cdf(v[neg]), log_norm_cdf(u[neg]))
        if np.any(mid_):
            r[mid_] = log1mexp(np.logaddexp(log_norm_cdf(u[mid_]), log_norm_sf(v[mid_])))
        out[rest] = r
    return _scalar(out)


# ---------------------------------------------------------------------------
# Eq. (45): one step in closed form
# ---------------------------------------------------------------------------


def _log_expm1(eps):
    """log(e^eps - 1) for eps >= 0 (-inf at 0), overflow-free."""
    with np.errstate(divide="ignore"):
        return eps + log1mexp(-eps)


def _parts(q, sigma, eps):
    """Return (log q, log(e^eps - 1), L = log(h/q), m = sigma L, hw = 1/(2 sigma))."""
    logq = np.log(q)
    lem1 = _log_expm1(eps)
    L = np.logaddexp(0.0, lem1 - logq)  # log1p((e^eps - 1)/q), overflow-free
    return logq, lem1, L, sigma * L, 0.5 / sigma


def _log_mills_diff(m, hw):
    """log(R(m - hw) - R(m + hw)), R(x) = Pr(Z >= x)/phi(x) the Mills ratio, for m - hw >= 5.

    R(u) - R(v) = int_u^v (1 - x R(x)) dx (since R' = x R - 1), integrand
    positive and smooth; 16-node Gauss-Legendre on [u, v] with v <= 2u.
    R(x) = sqrt(pi/2) erfcx(x/sqrt2); 1 - x R(x) loses only log10(x^2) digits.
    """
    acc = np.zeros_like(m)
    for xi, wi in zip(_GL_X, _GL_W):
        x = m + hw * xi
        acc += wi * (1.0 - x * _SQRT_HALF_PI * erfcx(x / _SQRT2))
    return np.log(hw) + np.log(acc)


def _log_delta_raw(logc, logd, m, hw):
    """log(c (Phi(v) - Phi(u)) - d Pr(Z >= v)), u, v = m -+ hw, where c phi(u) = (c + d) phi(v).

    Eq. (45) with c = q, d = e^eps - 1 (remove); the add direction has the same
    form.  Deep in the tail (u >= 5) it equals c phi(u) (R(u) - R(v)) with R
    the Mills ratio, computed without cancellation; elsewhere the log-space
    difference (cancellation factor <= ~25 there).
    """
    m, hw, logc, logd = np.broadcast_arrays(m, hw, logc, logd)
    u = m - hw
    tail = (u >= 5.0) & (2.0 * hw <= u)
    out = np.empty(m.shape, dtype=float)
    if np.any(tail):
        ut = u[tail]
        out[tail] = logc[tail] - 0.5 * ut * ut - _LOG_SQRT_2PI + _log_mills_diff(m[tail], hw[tail])
    rest = ~tail
    if np.any(rest):
        mr, hr, lc = m[rest], hw[rest], logc[rest]
        logA = lc + log_norm_interval(mr, hr)
        logB = logd[rest] + log_norm_sf(mr + hr)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[rest] = logsubexp(logA, np.minimum(logB, logA))
    return out


def _log_delta_add(q, sigma, eps):
    """log delta of the ADD direction H_{e^eps}(N(0,s^2) || q N(1,s^2) + (1-q) N(0,s^2)).

    Same derivation as Eq. (45) with the roles swapped: with
    g = q - (1 - e^-eps) (delta = 0 if g <= 0) and W = s log(q/g),
    delta_add = e^eps [g (Phi(W + 1/2s) - Phi(W - 1/2s)) - (1 - e^-eps) Pr(Z >= W + 1/2s)],
    where g phi(W - 1/2s) = q phi(W + 1/2s): the structure of Eq. (45).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lom = np.log(-np.expm1(-eps))  # log(1 - e^-eps), -inf at eps = 0
        g = q + np.expm1(-eps)
        ok = g > 0
        logg = np.log(np.where(ok, g, 1.0))
        W = np.where(ok, -sigma * np.log1p(np.expm1(-eps) / q), 0.0)  # s log(q/g), no cancellation
        out = eps + _log_delta_raw(logg, lom, W, 0.5 / sigma)
    return np.where(ok, out, -np.inf)


def log_delta_one_step(q, sigma, epsilon, direction="remove"):
    """log delta(q, sigma, eps) of Eq. (45) (T = 1).

    Vectorised with numpy broadcasting over q in (0, 1], sigma > 0,
    epsilon >= 0.  direction="remove" (the paper's Eq. (45), dp_accounting's
    REMOVE) is the exact hockey-stick divergence
    H_{e^eps}(q N(1, s^2) + (1-q) N(0, s^2) || N(0, s^2)); "add" swaps the
    pair; "add_remove" is the max of both (numerically add <= remove at
    T = 1, see tests).  Log space, so it stays finite where delta underflows.
    """
    q, sigma, eps = _check_q(q), _check_sigma(sigma), _check_eps(epsilon)
    if direction not in ("remove", "add", "add_remove"):
        raise ValueError(f"direction must be 'remove', 'add' or 'add_remove' (got {direction!r})")
    q, sigma, eps = np.broadcast_arrays(q, sigma, eps)
    out = None
    if direction in ("remove", "add_remove"):
        logq, lem1, _, m, hw = _parts(q, sigma, eps)
        out = _log_delta_raw(logq, lem1, m, hw)
    if direction in ("add", "add_remove"):
        la = _log_delta_add(q, sigma, eps)
        out = la if out is None else np.maximum(out, la)
    return _scalar(out)


def delta_one_step(q, sigma, epsilon, direction="remove"):
    """delta(q, sigma, eps) of Eq. (45) = exp(log_delta_one_step); see there."""
    return _scalar(np.exp(log_delta_one_step(q, sigma, epsilon, direction)))


# ---------------------------------------------------------------------------
# sigma(q) by root finding, Lemma 6.1
# ---------------------------------------------------------------------------


def _solve_log_sigma(logq, lem1, L, logd, tol=1e-14, max_iter=200):
    """Safeguarded Newton on x = log sigma for log delta(x) = logd (1-D arrays).

    Requires logd < logq (a positive root exists).  f(x) = log delta - logd is
    strictly decreasing; f'(x) = -q phi(u) / (sigma delta).
    """
    n = logq.size
    # Upper bracket: q Pr(Z >= u0) = delta_t gives a feasible sigma0 (the
    # subtracted term of Eq. (45) is positive), so sigma* < sigma0.
    z = -ndtri(np.exp(logd - logq))  # Pr(Z >= z) = delta_t / q
    root = np.sqrt(z * z + 2.0 * L)
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.where(z > 0, (z + root) / (2.0 * L), 1.0 / (root - z))
    # delta(q, s, eps) <= delta(q, s, 0) = q (2 Phi(1/2s) - 1) <= q / (s sqrt(2 pi)): also feasible
    s0 = np.fmin(np.where(np.isfinite(s0) & (s0 > 0), s0, np.inf), np.exp(logq - logd - _LOG_SQRT_2PI))
    hi = np.log(s0)

    def f(x, idx):
        s = np.exp(x)
        ld = _log_delta_raw(logq[idx], lem1[idx], s * L[idx], 0.5 / s)
        return ld - logd[idx], ld, s

    fhi, _, _ = f(hi, np.arange(n))
    # guard: rounding may leave f(hi) marginally >= 0; push up
    for _ in range(60):
        bad = fhi >= 0
        if not np.any(bad):
            break
        hi[bad] += 0.5
        fhi[bad] = f(hi[bad], np.nonzero(bad)[0])[0]
    lo = hi - 1.0
    flo = f(lo, np.arange(n))[0]
    step = 1.0
    for _ in range(80):
        bad = flo <= 0
        if not np.any(bad):
            break
        step *= 2.0
        hi[bad] = lo[bad]
        lo[bad] -= step
        flo[bad] = f(lo[bad], np.nonzero(bad)[0])[0]
    x = 0.5 * (lo + hi)
    active = np.arange(n)
    for _ in range(max_iter):
        if active.size == 0:
            break
        xa = x[active]
        fa, ld, s = f(xa, active)
        pos = fa > 0
        lo[active[pos]] = xa[pos]
        hi[active[~pos]] = xa[~pos]
        u = s * L[active] - 0.5 / s
        logslope = logq[active] - 0.5 * u * u - _LOG_SQRT_2PI - xa - ld  # log|f'|
        with np.errstate(over="ignore", invalid="ignore"):
            xnewton = xa + fa * np.exp(-logslope)
        la, ha = lo[active], hi[active]
        scale = tol * np.maximum(1.0, np.abs(xa))
        inside = (xnewton >= la) & (xnewton <= ha) & np.isfinite(xnewton)
        small = inside & (np.abs(xnewton - xa) <= scale)
        narrow = ha - la <= scale
        xn = np.where(inside, xnewton, 0.5 * (la + ha))
        xn = np.where(fa == 0, xa, xn)
        xn = np.where(narrow & ~small & (fa != 0), 0.5 * (la + ha), xn)
        done = small | narrow | (fa == 0)
        x[active] = xn
        active = active[~done]
    return x


def sigma_one_step(q, epsilon, delta):
    """sigma(q) = sigma(q, T=1): smallest sigma with delta(q, sigma, eps) <= delta.

    Root of Eq. (45) in log sigma by safeguarded Newton (bracketed, vectorised
    over broadcast arrays; relative accuracy ~1e-14).  This is the exact
    one-step calibration (remove direction, which is the binding direction
    at T = 1; see tests).  Where q <= delta no noise is needed
    (delta(q, sigma) < q for every sigma > 0) and 0.0 is returned.
    """
    q, eps, d = _check_q(q), _check_eps(epsilon), _check_delta(delta)
    q, eps, d = np.broadcast_arrays(q, eps, d)
    out = np.zeros(q.shape, dtype=float)
    need = q > d
    if np.any(need):
        qq, ee, dd = q[need], eps[need], d[need]
        logq, lem1, L, _, _ = _parts(qq, 1.0, ee)
        out[need] = np.exp(_solve_log_sigma(logq, lem1, L, np.log(dd)))
    return _scalar(out)


def sigma_prime_at(q, sigma, epsilon):
    """Implicit derivative d sigma/dq along the level set of Eq. (45) through (q, sigma).

    Lemma 6.1 / Eq. (48) in the equivalent form
    sigma'(q) = sigma^2 (Phi(v) - Phi(u)) / (q phi(u)), evaluated in log space.
    """
    q, sigma, eps = _check_q(q), _check_sigma(sigma), _check_eps(epsilon)
    logq, _, _, m, hw = _parts(q, sigma, eps)
    u = m - hw
    logsp = 2.0 * np.log(sigma) + log_norm_interval(m, hw) - logq + 0.5 * u * u + _LOG_SQRT_2PI
    return _scalar(np.exp(logsp))


def lemma61_sigma_prime_erf(q, sigma, epsilon):
    """Lemma 6.1, Eq. (48) literally: (s/q)(1/2a)(erf(a-b) - erf(-a-b)) / erf'(a-b).

    Plain floating point (no log space): a cross-check of the printed formula
    for moderate arguments only.
    """
    from scipy.special import erf

    q, sigma, eps = _check_q(q), _check_sigma(sigma), _check_eps(epsilon)
    a = 1.0 / (2.0 * _SQRT2 * sigma)
    b = sigma / _SQRT2 * np.log((np.exp(eps) - (1.0 - q)) / q)
    derf = 2.0 / np.sqrt(np.pi) * np.exp(-((a - b) ** 2))
    return _scalar(sigma / q / (2.0 * a) / derf * (erf(a - b) - erf(-a - b)))


def lemma61_max_rel_error(
    q_values=(1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9), eps_values=(0.01, 0.1, 1.0, 4.0), delta=1e-5, rel_step=1e-5
):
    """max relative gap between Eq. (48) as printed (erf form) and a central finite
    difference of the calibrated sigma(q) (Lemma 6.1 check)."""
    qs = np.asarray(q_values, dtype=float)[None, :]
    eps = np.asarray(eps_values, dtype=float)[:, None]
    h = qs * rel_step
    fd = (np.asarray(sigma_one_step(qs + h, eps, delta)) - np.asarray(sigma_one_step(qs - h, eps, delta))) / (2 * h)
    s = np.asarray(sigma_one_step(qs, eps, delta))
    return float(np.max(np.abs(np.asarray(lemma61_sigma_prime_erf(qs, s, eps)) / fd - 1.0)))


def sigma_prime(q, epsilon, delta):
    """sigma'(q) of Lemma 6.1 at the calibrated sigma(q) (0 where q <= delta)."""
    s = np.asarray(sigma_one_step(q, epsilon, delta))
    q, eps = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(epsilon, dtype=float))
    q, eps = np.broadcast_to(q, s.shape), np.broadcast_to(eps, s.shape)
    out = np.zeros(s.shape)
    pos = s > 0
    if np.any(pos):
        out[pos] = sigma_prime_at(q[pos], s[pos], eps[pos])
    return _scalar(out)


def theorem62_log_margin(q, sigma, epsilon):
    """log(q sigma'(q) / sigma(q)) = log sigma + log(Phi(v) - Phi(u)) - log phi(u).

    d(sigma/q)/dq < 0 (Theorem 6.2's conclusion) iff this is < 0.  Log space,
    so the sign is reliable where sigma'/(sigma/q) is ~1 +- 1e-12.
    """
    q, sigma, eps = _check_q(q), _check_sigma(sigma), _check_eps(epsilon)
    _, _, _, m, hw = _parts(q, sigma, eps)
    u = m - hw
    return _scalar(np.log(sigma) + log_norm_interval(m, hw) + 0.5 * u * u + _LOG_SQRT_2PI)


def sigma_eff_slope(q, epsilon, delta):
    """d sigma_eff/dq = d(sigma(q)/q)/dq = (sigma'(q) - sigma(q)/q)/q at T = 1 (Theorem 6.2)."""
    s = np.asarray(sigma_one_step(q, epsilon, delta))
    sp = np.asarray(sigma_prime(q, epsilon, delta))
    q = np.broadcast_to(np.asarray(q, dtype=float), s.shape)
    return _scalar((sp - s / q) / q)


def a_minus_b(q, sigma, epsilon):
    """a - b of Eqs. (46)-(47): 1/(2 sqrt2 sigma) - sigma/sqrt2 log((e^eps - (1-q))/q).

    Equals -u/sqrt2 with u = sigma L - 1/(2 sigma); decreasing in sigma.
    """
    q, sigma, eps = _check_q(q), _check_sigma(sigma), _check_eps(epsilon)
    _, _, _, m, hw = _parts(q, sigma, eps)
    return _scalar((hw - m) / _SQRT2)


# ---------------------------------------------------------------------------
# Fig. 2 / Conjecture 6.3: the authors' grid, brute force, binary search, exact
# ---------------------------------------------------------------------------


def paper_grid(delta_target=1e-5, c=4.0, n_eps=1000, n_q=100, eps_max=4.0, q_max=0.9999):
    """(eps_values, q_values) of Fig. 2: logspace from c*delta_target to eps_max / q_max.

    The authors use c = 4 (Conjecture 6.3), n_eps = 1000, n_q = 100,
    eps_max = 4, q_max = 0.9999 (their src/plot_a_vs_b.py).
    """
    d = float(_check_delta(delta_target, "delta_target"))
    if not c > 0:
        raise ValueError(f"c must be > 0 (got {c})")
    lo = c * d
    if not lo < eps_max:
        raise ValueError(f"eps bounds inverted: c*delta_target={lo} must be < eps_max={eps_max}")
    if not (lo < q_max <= 1.0):
        raise ValueError(f"q bounds inverted: need c*delta_target={lo} < q_max={q_max} <= 1")
    if int(n_eps) < 1 or int(n_q) < 1:
        raise ValueError(f"n_eps and n_q must be >= 1 (got {n_eps}, {n_q})")
    eps = np.logspace(np.log10(lo), np.log10(eps_max), int(n_eps))
    qs = np.logspace(np.log10(lo), np.log10(q_max), int(n_q))
    return eps, qs


def sigma_grid(sigma_lo, sigma_hi, n_sigma):
    """np.logspace(log10 sigma_lo, log10 sigma_hi, n_sigma), the authors' sigma grid."""
    if not (sigma_lo > 0 and np.isfinite(sigma_hi)):
        raise ValueError(f"sigma_lo must be > 0 (got {sigma_lo})")
    if not sigma_lo <= sigma_hi:
        raise ValueError(f"sigma bounds inverted: sigma_lo={sigma_lo} > sigma_hi={sigma_hi}")
    if int(n_sigma) < 2:
        raise ValueError(f"n_sigma must be >= 2 (got {n_sigma})")
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


def _validate_grid_inputs(eps_values, delta_target, q_values, n_sigma):
    eps = np.atleast_1d(_check_eps(eps_values)).astype(float)
    if eps.ndim != 1:
        raise ValueError("eps_values must be 1-D")
    if np.any(eps <= 0):
        raise ValueError(f"eps_values must be > 0 (got {eps.min()})")
    d = float(_check_delta(delta_target, "delta_target"))
    qs = _check_increasing(_check_q(q_values), "q_values")
    if int(n_sigma) < 2:
        raise ValueError(f"n_sigma must be >= 2 (got {n_sigma})")
    return eps, d, qs, int(n_sigma)


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


def a_minus_b_grid(eps_values, delta_target, q_values, n_sigma, batch=64):
    """max over feasible (q, sigma) of a - b, per eps, on the authors' Fig. 2 grid.

    For each eps: sigma1 = sigma(1, eps); sigma grid =
    logspace(log10(min(q) sigma1), log10 sigma1, n_sigma); keep grid points
    with delta(q, sigma) <= delta_target (Eq. (45)); report max(a - b).
    Since delta is decreasing and a - b is decreasing in sigma, the maximum
    for each q sits at the smallest feasible grid sigma, found by binary
    search (ceil(log2(n_sigma + 1)) evaluations of Eq. (45) instead of
    n_sigma).  Returns exactly what a_minus_b_grid_bruteforce returns.

    Returns a dict of 1-D arrays over eps: epsilon, sigma1, max_a_minus_b,
    argmax_q, argmax_sigma, max_delta_gap (max over q of delta_target minus
    the largest feasible grid delta: the authors' "differs at most ~2e-7"
    quantity), n_at_grid_floor (q's whose smallest grid sigma was already
    feasible, i.e. the exact sigma* lies below the grid), n_infeasible.
    """
    eps, d, qs, n = _validate_grid_inputs(eps_values, delta_target, q_values, n_sigma)
    logd = math.log(d)
    s1 = _sigma1_for_grid(eps, d)
    nq = qs.size
    sig_sel = np.full((eps.size, nq), np.nan)
    floor_hit = np.zeros((eps.size, nq), dtype=bool)
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


def a_minus_b_grid_bruteforce(eps_values, delta_target, q_values, n_sigma):
    """Same as a_minus_b_grid, evaluating Eq. (45) on every (q, sigma) grid point.

    The straightforward method of the authors (n_q * n_sigma evaluations per
    eps); kept as the reference for tests and the benchmark.
    """
    eps, d, qs, n = _validate_grid_inputs(eps_values, delta_target, q_values, n_sigma)
    logd = math.log(d)
    s1 = _sigma1_for_grid(eps, d)
    nq = qs.size
    sig_sel = np.full((eps.size, nq), np.nan)
    floor_hit = np.zeros((eps.size, nq), dtype=bool)
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


def a_minus_b_exact(eps_values, delta_target, q_values):
    """max over q of a - b at the exact calibrated sigma*(q, eps) (root finding).

    Over sigma >= sigma*(q) the maximum of the decreasing a - b is at
    sigma*, so this is the grid-free version of Fig. 2.  Agreement with the
    grid: for each q, 0 <= exact - grid <= a*(1 - e^-D) + b*(e^D - 1) with
    D = sigma_grid_log_step (unless sigma* lies below the grid floor).
    Returns dict: epsilon, max_a_minus_b, argmax_q, argmax_sigma.
    """
    eps = np.atleast_1d(_check_eps(eps_values)).astype(float)
    d = float(_check_delta(delta_target, "delta_target"))
    qs = _check_increasing(_check_q(q_values), "q_values")
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], d))
    E = np.broadcast_to(eps[:, None], S.shape)
    Q = np.broadcast_to(qs[None, :], S.shape)
    amb = np.full(S.shape, np.inf)  # sigma* = 0 (q <= delta): a = +inf
    pos = S > 0
    amb[pos] = a_minus_b(Q[pos], S[pos], E[pos])
    j = np.argmax(amb, axis=1)
    r = np.arange(eps.size)
    return {"epsilon": eps, "max_a_minus_b": amb[r, j], "argmax_q": qs[j], "argmax_sigma": S[r, j]}


def conjecture63_max_a_minus_b(c=4.0, delta_target=1e-5, n_eps=1000, n_q=100, method="exact", n_sigma=10000):
    """max over the whole Fig. 2 grid (eps, q >= c*delta) of a - b.

    method "exact" (sigma* by root finding) or "grid" (the authors' 10^9-point
    grid, binary search).  Conjecture 6.3 (c = 4): this is < 0.
    """
    eps, qs = paper_grid(delta_target, c, n_eps, n_q)
    if method == "exact":
        r = a_minus_b_exact(eps, delta_target, qs)
    elif method == "grid":
        r = a_minus_b_grid(eps, delta_target, qs, n_sigma)
    else:
        raise ValueError(f"method must be 'exact' or 'grid' (got {method!r})")
    return float(np.max(r["max_a_minus_b"]))


def conjecture63_holds(c=4.0, delta_target=1e-5, n_eps=1000, n_q=100, method="exact", n_sigma=10000):
    """True iff max(a - b) < 0 for every eps of the grid with eps, q >= c*delta (Conj. 6.3)."""
    return bool(conjecture63_max_a_minus_b(c, delta_target, n_eps, n_q, method, n_sigma) < 0)


def conjecture63_violated(c=3.0, delta_target=1e-5, n_eps=1000, n_q=100, method="grid", n_sigma=10000):
    """True iff a - b > 0 somewhere on the grid with eps, q >= c*delta (§6: happens for c < 4)."""
    return bool(conjecture63_max_a_minus_b(c, delta_target, n_eps, n_q, method, n_sigma) > 0)


def conjecture63_corner(c, delta_target=1e-5):
    """a - b at the grid corner q = eps = c*delta_target, sigma = sigma*(q, eps).

    On the Fig. 2 grid the maximum of a - b sits at this corner (smallest q,
    smallest eps; checked in tests), so its sign decides Conjecture 6.3 for c.
    """
    d = float(_check_delta(delta_target, "delta_target"))
    x = c * d
    s = float(sigma_one_step(min(x, 1.0), x, d))
    return float("inf") if s == 0 else float(a_minus_b(min(x, 1.0), s, x))


def conjecture63_critical_c(delta_target=1e-5, c_lo=1.0 + 1e-9, c_hi=4.0):
    """Smallest constant c with a - b <= 0 at the corner q = eps = c*delta (root in c).

    The paper's constant 4 "was found numerically"; this locates the exact
    threshold on their grid shape.
    """
    from scipy.optimize import brentq

    if not c_lo < c_hi:
        raise ValueError(f"c bounds inverted: c_lo={c_lo} must be < c_hi={c_hi}")
    fa, fb = conjecture63_corner(c_lo, delta_target), conjecture63_corner(c_hi, delta_target)
    if not (fa > 0 > fb):
        raise ValueError(f"c bracket [{c_lo}, {c_hi}] does not bracket a sign change of a - b")
    return float(brentq(lambda c: conjecture63_corner(c, delta_target), c_lo, c_hi, xtol=1e-10))


def max_delta_gap(delta_target=1e-5, c=4.0, n_eps=1000, n_q=100, n_sigma=10000):
    """Authors' "max delta error" on the full Fig. 2 grid (printed ~2e-7 in §6).

    max over (eps, q) of delta_target - delta(q, smallest feasible grid sigma),
    i.e. how far the sigma grid's resolution leaves delta below the target.
    """
    eps, qs = paper_grid(delta_target, c, n_eps, n_q)
    return float(np.max(a_minus_b_grid(eps, delta_target, qs, n_sigma)["max_delta_gap"]))


def max_a_minus_b_decreasing_in_eps(delta_target=1e-5, c=4.0, n_eps=1000, n_q=100):
    """True iff the exact per-eps max(a - b) of Fig. 2 is decreasing in eps (§6 remark)."""
    eps, qs = paper_grid(delta_target, c, n_eps, n_q)
    y = a_minus_b_exact(eps, delta_target, qs)["max_a_minus_b"]
    return is_monotone(y, decreasing=True)


def theorem62_fails_near_delta(delta=1e-5, eps_values=(0.01, 0.1, 1.0, 4.0), q_factor_max=4.0, n_q=200):
    """True iff d(sigma(q)/q)/dq > 0 somewhere for q in (delta, q_factor_max*delta] (T = 1).

    §6: "values of q ~ delta empirically ... fail to satisfy the claim of
    Theorem 6.2".  Uses the exact sign from theorem62_log_margin at sigma*(q).
    """
    d = float(_check_delta(delta))
    if not q_factor_max > 1:
        raise ValueError(f"q_factor_max must be > 1 (got {q_factor_max})")
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
    d = float(_check_delta(delta))
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
# Fig. 1 / Corollary 5.4 helpers
# ---------------------------------------------------------------------------


def effective_noise(sigma, q):
    """sigma_eff = sigma/q, the effective DP noise std of Eq. (25)."""
    s = np.asarray(sigma, dtype=float)
    if np.any(s < 0):
        raise ValueError(f"sigma must be >= 0 (got {s.min()})")
    return _scalar(s / _check_q(q))


def corollary54_ratio(sigma_q, q, sigma_1):
    """sigma(q, T) / (q sigma(1, T)), which -> 1 as T -> infinity (Corollary 5.4, Eq. (44))."""
    s1 = np.asarray(sigma_1, dtype=float)
    if np.any(s1 <= 0):
        raise ValueError(f"sigma_1 must be > 0 (got {s1.min()})")
    return _scalar(np.asarray(effective_noise(sigma_q, q)) / s1)


def sigma_eff_one_step(q, epsilon, delta):
    """sigma(q, 1)/q from the exact one-step calibration."""
    return effective_noise(sigma_one_step(q, epsilon, delta), q)


def corollary54_ratio_one_step(q, epsilon, delta):
    """sigma(q, 1)/(q sigma(1, 1)) from the exact one-step calibration (>= 1 by Thm 6.2)."""
    return corollary54_ratio(sigma_one_step(q, epsilon, delta), q, sigma_one_step(1.0, epsilon, delta))


def monotonicity_violations(y, decreasing=True, rtol=0.0, axis=-1):
    """Indices i (along axis) where y[i+1] breaks monotonicity by more than rtol*|y[i]|."""
    y = np.asarray(y, dtype=float)
    if rtol < 0:
        raise ValueError(f"rtol must be >= 0 (got {rtol})")
    dy = np.diff(y, axis=axis)
    base = np.abs(np.take(y, np.arange(y.shape[axis] - 1), axis=axis))
    bad = dy > rtol * base if decreasing else dy < -rtol * base
    return np.nonzero(bad)


def is_monotone(y, decreasing=True, rtol=0.0, axis=-1):
    """True iff y is non-increasing (decreasing=True) / non-decreasing along axis, up to rtol."""
    return bool(monotonicity_violations(y, decreasing, rtol, axis)[0].size == 0)


FIG1_EPSILONS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0)  # authors' src/plot.sh; q = logspace(-3, 0, 100)


def sigma_eff_decreasing_one_step(eps_values=FIG1_EPSILONS, delta=1e-5, q_min=1e-3, n_q=100):
    """True iff sigma(q,1)/q is strictly decreasing in q on logspace(q_min, 1, n_q) for every eps.

    Fig. 1 (T = 1 curves) / Theorem 6.2; defaults are the authors' Fig. 1 grid
    (eps in {0.125, ..., 4}, q = logspace(-3, 0, 100), delta = 1e-5).
    """
    qs = np.logspace(np.log10(q_min), 0.0, int(n_q))
    eps = np.asarray(eps_values, dtype=float)
    y = np.asarray(sigma_eff_one_step(qs[None, :], eps[:, None], delta))
    return bool(np.all(np.diff(y, axis=1) < 0))


def sigma_eff_above_sigma1_one_step(eps_values=FIG1_EPSILONS, delta=1e-5, q_min=1e-3, n_q=100):
    """min over the grid of sigma(q,1)/(q sigma(1,1)) (>= 1: sigma_eff above the sigma(1,T) line, §5.1)."""
    qs = np.logspace(np.log10(q_min), 0.0, int(n_q))
    eps = np.asarray(eps_values, dtype=float)
    return float(np.min(corollary54_ratio_one_step(qs[None, :], eps[:, None], delta)))


def hockey_stick_one_step(q, sigma, epsilon, direction="remove"):
    """delta(eps) of one q-subsampled Gaussian step for every real eps (also eps < 0).

    eps >= 0: Eq. (45) (see :func:`log_delta_one_step`).  eps < 0: the identity
    H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P) (the two integrals of
    (p - e^eps q)_+ and (e^eps q - p)_+ differ by 1 - e^eps) turns it into the
    other direction at -eps >= 0, with no cancellation.  1-D ``epsilon``; scalar q, sigma.
    """
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add' (got {direction!r})")
    eps = np.atleast_1d(_arr(epsilon, "epsilon"))
    out = np.empty(eps.shape, dtype=float)
    pos = eps >= 0
    if np.any(pos):
        out[pos] = np.exp(log_delta_one_step(q, sigma, eps[pos], direction))
    if np.any(~pos):
        e = eps[~pos]
        other = "add" if direction == "remove" else "remove"
        out[~pos] = -np.expm1(e) + np.exp(e + log_delta_one_step(q, sigma, -e, other))
    return np.clip(out, 0.0, 1.0)


# ---------------------------------------------------------------------------
# Fig. 1 for T > 1: PLD calibration of sigma(q, T) along a curve in q (the engine's accountant)
# ---------------------------------------------------------------------------


def sigma_q1(epsilon, delta, steps):
    """sigma(1, T) = sqrt(T) sigma(1, 1): T Gaussians compose to one with sigma/sqrt(T), exactly (Cor. 5.4)."""
    return float(sigma_one_step(1.0, epsilon, delta)) * math.sqrt(int(steps))


def _check_steps_direction(steps, direction):
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be an integer >= 1 (got {steps!r})")
    if direction not in ("add", "remove", "add_remove"):
        raise ValueError(f"direction must be one of add, remove, add_remove (got {direction!r})")
    return int(steps)


def calibrate_sigma_pld(epsilon, delta, *, q, steps, direction="add_remove", rel_tol=1e-3):
    """Smallest sigma with (eps, delta)-DP after T steps of the q-subsampled Gaussian (Poisson).

    :func:`dpsampling.engine.accountant.calibrate_sigma`, except that T = 1 is exact
    (kind ``exact``: the root of Eq. (45); remove binds at T = 1, see the tests).
    """
    eps, dlt, q = float(_check_eps(epsilon)), float(_check_delta(delta)), float(_check_q(q))
    steps = _check_steps_direction(steps, direction)
    if steps == 1 and direction != "add" and q < 1.0:
        s = float(sigma_one_step(q, eps, dlt))
        return AccountingResult(s, "exact", "analytic", {}, s, s)
    return calibrate_sigma(eps, dlt, q=q, steps=steps, direction=direction, rel_tol=rel_tol)


def sigma_curve(epsilon, delta, q_values, steps, direction="add_remove", rel_tol=1e-3):
    """sigma(q, T) for increasing ``q_values`` (Fig. 1's curves), one AccountingResult per q.

    T = 1: exact (Eq. (45) roots).  T > 1: the accountant's warm-started curve
    solver :func:`dpsampling.engine.accountant.calibrate_sigma_curve`.
    """
    qs = _check_increasing(_check_q(q_values), "q_values")
    steps = _check_steps_direction(steps, direction)
    if steps == 1 and direction != "add":
        return [calibrate_sigma_pld(epsilon, delta, q=float(q), steps=1, direction=direction) for q in qs]
    return calibrate_sigma_curve(float(_check_eps(epsilon)), float(_check_delta(delta)), [float(q) for q in qs],
                                 steps=steps, direction=direction, rel_tol=rel_tol)


def corollary54_ratio_pld(q, epsilon, delta, steps, rel_tol=1e-3):
    """sigma(q, T) / (q sigma(1, T)) with sigma(q, T) PLD-calibrated (upper bound), Corollary 5.4."""
    r = calibrate_sigma_pld(epsilon, delta, q=q, steps=steps, rel_tol=rel_tol)
    return float(corollary54_ratio(r.value, q, sigma_q1(epsilon, delta, steps)))


def corollary54_ratio_decreasing_in_steps(q=1e-3, epsilon=1.0, delta=1e-5, steps_values=(1, 10, 100, 1000),
                                          rel_tol=1e-3):
    """True iff sigma(q,T)/(q sigma(1,T)) strictly decreases along ``steps_values`` (-> 1, Cor. 5.4),
    by more than the calibration accuracy at each step, and stays >= 1 - rel_tol."""
    T = np.asarray(steps_values)
    if T.ndim != 1 or T.size < 2 or np.any(np.diff(T) <= 0):
        raise ValueError(f"steps_values must be >= 2 strictly increasing integers (got {steps_values!r})")
    r = np.array([corollary54_ratio_pld(q, epsilon, delta, int(t), rel_tol) for t in T])
    return bool(np.all(np.diff(r) < -2 * rel_tol * r[1:]) and np.all(r >= 1 - rel_tol))


def corollary54_ratio_increasing_in_eps(q=1e-3, eps_values=FIG1_EPSILONS, delta=1e-5, steps=1000, rel_tol=1e-3):
    """True iff sigma(q,T)/(q sigma(1,T)) strictly increases with eps (beyond the calibration accuracy).

    §5.1: "for smaller values of eps, the convergence happens faster" (the
    ratio -> 1 of Corollary 5.4 is closer to 1 for smaller eps at the same T).
    """
    e = np.asarray(eps_values, dtype=float)
    if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0):
        raise ValueError(f"eps_values must be >= 2 strictly increasing values (got {eps_values!r})")
    r = np.array([corollary54_ratio_pld(q, float(x), delta, steps, rel_tol) for x in e])
    return bool(np.all(np.diff(r) > 2 * rel_tol * r[1:]))


def sigma_eff_decreasing_pld(eps_values=(0.5, 2.0), steps_values=(10, 100), delta=1e-5, q_min=1e-3, n_q=7,
                             rel_tol=1e-3):
    """True iff sigma(q,T)/q decreases in q on logspace(q_min, 0, n_q) for every (eps, T) (Fig. 1, T > 1).

    PLD-calibrated sigma (upper bounds, relative accuracy rel_tol): an increase
    counts only if it exceeds the two points' estimated errors.
    """
    qs = np.logspace(np.log10(q_min), 0.0, int(n_q))
    for e in np.atleast_1d(eps_values):
        for t in np.atleast_1d(steps_values):
            rs = sigma_curve(float(e), delta, qs, int(t), rel_tol=rel_tol)
            y = np.array([r.value for r in rs]) / qs
            err = np.array([r.accuracy.get("est_rel_error", 0.0) for r in rs])
            if np.any(np.diff(y) > (err[:-1] + err[1:]) * y[1:]):
                return False
    return True


def sigma_eff_check(q, sigma_eff, est_rel_error=None):
    """Monotonicity check of one Fig. 1 curve: dict(n_increases, n_increases_beyond_error, max_rel_increase).

    ``q`` increasing; an increase is "beyond error" if it exceeds the sum of
    the two points' estimated relative errors.
    """
    q = _check_increasing(_check_q(q), "q")
    y = np.asarray(sigma_eff, dtype=float)
    e = np.zeros_like(y) if est_rel_error is None else np.nan_to_num(np.asarray(est_rel_error, dtype=float))
    rel = np.diff(y) / y[:-1]
    return {
        "n_increases": int(np.sum(rel > 0)),
        "n_increases_beyond_error": int(np.sum(rel > e[:-1] + e[1:])),
        "max_rel_increase": float(rel.max()) if rel.size else 0.0,
    }


# ---------------------------------------------------------------------------
# Fig. 2 pipeline table: grid vs exact per eps, for one constant c
# ---------------------------------------------------------------------------


def a_minus_b_table(eps_values, delta_target=1e-5, c=4.0, q_max=0.9999, n_q=100, n_sigma=10000):
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
    eps, qs = paper_grid(delta_target, c, 1, n_q, eps_max=4.0, q_max=q_max)  # validates c, delta, q bounds
    eps = np.atleast_1d(_check_eps(eps_values)).astype(float)
    g = a_minus_b_grid(eps, delta_target, qs, n_sigma)
    x = a_minus_b_exact(eps, delta_target, qs)
    D = sigma_grid_log_step(qs[0], n_sigma)
    S = np.asarray(sigma_one_step(qs[None, :], eps[:, None], delta_target))
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
