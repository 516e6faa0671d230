"""The one-step Poisson-subsampled Gaussian in closed form: hockey stick δ(ε) and σ(q, ε, δ).

One step, sensitivity 1, remove direction, dominating pair (P, Q) (Räisä et al. 2024, Eq. (6)):
P = q N(1, s^2) + (1 - q) N(0, s^2), Q = N(0, s^2).  With
h = e^eps - (1 - q), L = log(h / q), u = s L - 1/(2 s), v = s L + 1/(2 s),
Räisä et al. Eq. (45) reads

    delta(q, s, eps) = q Pr(Z >= u) - h Pr(Z >= v)

(the same difference of Gaussian tails as Zhu et al. 2022, Theorem 11 pairs); the add direction has
the same form with the roles swapped (:func:`_log_delta_add`).  Exact (no discretisation): the
likelihood ratio is monotone in the output, so δ is a difference of two Gaussian tail masses.

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
grid of Räisä Fig. 2 and not exact enough for derivatives; the closed form is
checked against dp_accounting in tests/engine/test_subsampled_gaussian.py.

This is the engine's one kernel for the one-step subsampled-Gaussian hockey stick used by the
papers layer (dpsampling.papers.raisa, dpsampling.papers.zhu); the PLD adapter's vectorised
privacy loss (engine.pld) stays separate because it must match dp_accounting bit for bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy.special import erfcx, ndtri

from .errors import ParameterError
from .numerics import log1mexp, log_norm_cdf, log_norm_sf, logsubexp
from .validation import check_choice, check_delta, check_epsilon, check_positive, check_rate

__all__ = [
    "delta_one_step",
    "hockey_stick_one_step",
    "log_delta_one_step",
    "log_norm_interval",
    "sigma_one_step",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_GL_X, _GL_W = leggauss(16)




def _arr(x, name):
    a = np.asarray(x, dtype=float)
    if np.any(np.isnan(a)):
        raise ParameterError(name, "not NaN", x, message=f"{name} must not be NaN (got {x!r})")
    return a


# one-line ParameterErrors naming the parameter (engine.validation); arrays back as float arrays
def _q(q, name="q"):
    return np.asarray(check_rate(q, name), dtype=float)


def _sigma(sigma):
    return np.asarray(check_positive("sigma", sigma), dtype=float)


def _eps(eps):
    return np.asarray(check_epsilon(eps, finite=True), dtype=float)


def _delta(delta, name="delta"):
    return np.asarray(check_delta(delta, name), dtype=float)


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
    q, sigma, eps = _q(q), _sigma(sigma), _eps(epsilon)
    check_choice("direction", direction, ("remove", "add", "add_remove"))
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


def _log_sigma_start(logq, L, logd):
    """log of a feasible σ (δ at it ≤ the target) for every entry: q Pr(Z ≥ u0) = δ_t gives a feasible σ0 (the
    subtracted term of Eq. (45) is positive), so σ* < σ0; and δ(q, s, ε) ≤ δ(q, s, 0) = q (2Φ(1/2s) − 1) ≤
    q / (s √(2π)) gives another."""
    z = -ndtri(np.exp(logd - logq))  # Pr(Z >= z) = delta_t / q
    root = np.sqrt(z * z + 2.0 * L)
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.where(z > 0, (z + root) / (2.0 * L), 1.0 / (root - z))
    s0 = np.fmin(np.where(np.isfinite(s0) & (s0 > 0), s0, np.inf), np.exp(logq - logd - _LOG_SQRT_2PI))
    return np.log(s0)


def _residual(logq, lem1, L, logd, x, idx):
    """(f, log δ, σ) at x = log σ for the entries ``idx``: f = log δ − log δ_target."""
    s = np.exp(x)
    ld = _log_delta_raw(logq[idx], lem1[idx], s * L[idx], 0.5 / s)
    return ld - logd[idx], ld, s


def _bracket_log_sigma(f, hi, n):
    """(lo, hi) with f(lo) > 0 > f(hi) for every entry, from hi (f(hi) < 0 but for rounding: pushed up) by
    doubling steps down."""
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
    return lo, hi


def _solve_log_sigma(logq, lem1, L, logd, tol=1e-14, max_iter=200):
    """Safeguarded Newton on x = log sigma for log delta(x) = logd (1-D arrays).

    Requires logd < logq (a positive root exists).  f(x) = log delta - logd is
    strictly decreasing; f'(x) = -q phi(u) / (sigma delta).
    """
    n = logq.size
    f = functools.partial(_residual, logq, lem1, L, logd)
    lo, hi = _bracket_log_sigma(f, _log_sigma_start(logq, L, logd), n)
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
    q, eps, d = _q(q), _eps(epsilon), _delta(delta)
    q, eps, d = np.broadcast_arrays(q, eps, d)
    out = np.zeros(q.shape, dtype=float)
    need = q > d
    if np.any(need):
        qq, ee, dd = q[need], eps[need], d[need]
        logq, lem1, L, _, _ = _parts(qq, 1.0, ee)
        out[need] = np.exp(_solve_log_sigma(logq, lem1, L, np.log(dd)))
    return _scalar(out)


def hockey_stick_one_step(q, sigma, epsilon, direction="remove"):
    """delta(eps) of one q-subsampled Gaussian step for every real eps (also eps < 0).

    eps >= 0: Eq. (45) (see :func:`log_delta_one_step`).  eps < 0: the identity
    H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P) (the two integrals of
    (p - e^eps q)_+ and (e^eps q - p)_+ differ by 1 - e^eps) turns it into the
    other direction at -eps >= 0, with no cancellation.  1-D ``epsilon``; scalar q, sigma.
    """
    check_choice("direction", direction, ("remove", "add"))
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

