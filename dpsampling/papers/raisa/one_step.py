"""Räisä et al. 2024 §5-§6 at T = 1: Lemma 6.1 (σ'(q)), Theorem 6.2 (σ_eff decreasing), a − b of
Eqs. (46)-(47), and the Fig. 1 / Corollary 5.4 one-step helpers.  The closed form of Eq. (45) and
σ(q) by root finding are the engine kernel :mod:`dpsampling.engine.subsampled_gaussian`.

Identities (q phi(u) = h phi(v), since (v^2 - u^2)/2 = L) give the partial derivatives

    d delta / d s = -q phi(u) / s^2,          d delta / d q = Phi(v) - Phi(u),

so the implicit derivative of the calibrated s(q) is
s'(q) = s^2 (Phi(v) - Phi(u)) / (q phi(u)), which is Lemma 6.1 / Eq. (48)
rewritten (a - b = -u / sqrt 2, -a - b = -v / sqrt 2).  Theorem 6.2's
criterion d(s/q)/dq < 0 is equivalent to s (Phi(v) - Phi(u)) < phi(u), i.e.
the mean of phi on [u, v] is below phi(u); a < b (u > 0) is sufficient.
"""

from __future__ import annotations

import numpy as np

from dpsampling.engine.validation import check_epsilon, check_positive
from dpsampling.engine.subsampled_gaussian import (
    _LOG_SQRT_2PI, _SQRT2, _eps, _parts, _q, _scalar, _sigma,
    log_norm_interval, sigma_one_step,
)


def sigma_prime_at(q, sigma, epsilon):
    """Implicit derivative d sigma/dq along the level set of Eq. (45) through (q, sigma).

    Lemma 6.1 / Eq. (48) in the equivalent form
    sigma'(q) = sigma^2 (Phi(v) - Phi(u)) / (q phi(u)), evaluated in log space.
    """
    q, sigma, eps = _q(q), _sigma(sigma), _eps(epsilon)
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

    q, sigma, eps = _q(q), _sigma(sigma), _eps(epsilon)
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
    q, sigma, eps = _q(q), _sigma(sigma), _eps(epsilon)
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
    q, sigma, eps = _q(q), _sigma(sigma), _eps(epsilon)
    _, _, _, m, hw = _parts(q, sigma, eps)
    return _scalar((hw - m) / _SQRT2)




# ---------------------------------------------------------------------------
# Fig. 1 / Corollary 5.4 helpers
# ---------------------------------------------------------------------------


def effective_noise(sigma, q):
    """sigma_eff = sigma/q, the effective DP noise std of Eq. (25)."""
    s = np.asarray(check_epsilon(sigma, "sigma"), dtype=float)
    return _scalar(s / _q(q))


def corollary54_ratio(sigma_q, q, sigma_1):
    """sigma(q, T) / (q sigma(1, T)), which -> 1 as T -> infinity (Corollary 5.4, Eq. (44))."""
    s1 = np.asarray(check_positive("sigma_1", sigma_1), dtype=float)
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
    check_epsilon(rtol, "rtol")
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


