"""The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8) in log space.

For the Gaussian mechanism with sensitivity 1 and noise σ, the exact privacy
curve (both directions coincide) is

    δ(ε) = Φ(-εσ + 1/(2σ)) - e^ε Φ(-εσ - 1/(2σ)).

It is also the deterministic-batching curve of Chua et al. (Prop. 3.1) and the
T-fold composition of the unsubsampled Gaussian (σ → σ/√T).  The difference is
computed as log Φ(a) + log(1 - exp(ε + log Φ(b) - log Φ(a))) so that values
far below machine epsilon (δ ~ 1e-300) keep all their digits.
"""

from __future__ import annotations

import numpy as np

from .numerics import find_root, log1mexp, log_norm_cdf
from .subsampled_gaussian import sigma_one_step
from .validation import check_delta, check_epsilon, check_positive


def log_delta(epsilon, sigma):
    """log δ(ε) of the Gaussian mechanism with sensitivity 1 and noise ``sigma``.

    Vectorised over ``epsilon`` and ``sigma`` (numpy broadcasting); any real ε (for ε < 0 the
    same formula is the hockey-stick divergence H_{e^ε}).  The one implementation of this curve.
    """
    eps = np.asarray(epsilon, dtype=float)
    sig = np.asarray(sigma, dtype=float)
    la = log_norm_cdf(-eps * sig + 0.5 / sig)
    lb = log_norm_cdf(-eps * sig - 0.5 / sig)
    # e^ε Φ(b) ≤ Φ(a) exactly (δ ≥ 0); the clamp turns a rounding excess into δ = 0 instead of nan
    return la + log1mexp(np.minimum(eps + lb - la, 0.0))


def delta(epsilon, sigma):
    """δ(ε) of the Gaussian mechanism (sensitivity 1), exact."""
    check_epsilon(epsilon)
    check_positive("sigma", sigma)
    return np.exp(log_delta(epsilon, sigma))


def epsilon(delta, sigma):
    """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (exact up to root-finding tolerance 1e-12)."""
    check_delta(delta)
    check_positive("sigma", sigma)
    log_target = np.log(delta)
    if log_delta(0.0, sigma) <= log_target:
        return 0.0
    hi = 1.0
    while log_delta(hi, sigma) > log_target:
        hi *= 2.0
    return find_root(lambda e: log_delta(e, sigma) - log_target, 0.0, hi, xtol=1e-13, rtol=1e-13)


def sigma(epsilon, delta):
    """Smallest σ with the Gaussian mechanism (sensitivity 1) (ε, δ)-DP: the analytic calibration
    (Balle & Wang 2018).  The Gaussian is the q = 1 one-step subsampled Gaussian, so this is the engine's
    one σ(ε, δ) kernel, :func:`dpsampling.engine.subsampled_gaussian.sigma_one_step` at q = 1 (safeguarded
    Newton in log σ on Eq. (45), relative error ~1e-15 against mpmath even at ε → 0, where root finding
    on :func:`log_delta` loses digits: 5e-12 at ε = 0, δ = 1e-5; 1e-6 at ε = 0, δ = 1e-10)."""
    return float(sigma_one_step(1.0, epsilon, delta))


def composed_sigma(sigma, total_steps):
    """Noise of the single Gaussian equivalent to ``total_steps`` compositions (σ/√T)."""
    return sigma / np.sqrt(total_steps)
