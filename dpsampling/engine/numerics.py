"""Log-space numerical helpers shared by every computation.

Products of Gaussian CDFs and differences of tiny probabilities cancel
catastrophically in floating point; everything here works with logarithms.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.special import log_ndtr, logsumexp

LOG_HALF = np.log(0.5)


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate near 0 and for very negative x.

    Uses the two-branch rule of Mächler (2012): log(-expm1(x)) for
    x > -log 2 and log1p(-exp(x)) otherwise.  Returns -inf at x = 0 and
    nan for x > 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            x > -np.log(2.0),
            np.log(-np.expm1(np.minimum(x, 0.0))),
            np.log1p(-np.exp(np.minimum(x, 0.0))),
        )
    out = np.where(x > 0, np.nan, out)
    return out[()] if out.ndim == 0 else out


def logsubexp(a, b):
    """log(exp(a) - exp(b)) for a >= b; -inf where a == b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        out = a + log1mexp(b - a)
    out = np.where(np.isneginf(b), a, out)
    return out[()] if np.ndim(out) == 0 else out


def log_norm_cdf(x):
    """log Φ(x), accurate in both tails (scipy.special.log_ndtr)."""
    return log_ndtr(x)


def log_norm_sf(x):
    """log(1 - Φ(x)) = log Φ(-x)."""
    return log_ndtr(-np.asarray(x, dtype=float))


def find_root(f, lo, hi, *, xtol=2e-12, rtol=4 * np.finfo(float).eps, maxiter=100):
    """Root of a continuous scalar f with a sign change on [lo, hi]: the package's one bracketed root
    finder (Brent's method, scipy.optimize.brentq, whose defaults these are); |error| <= xtol + rtol·|root|.

    Specialised solvers stay with their kernel and say why (the vectorised safeguarded Newton of
    engine.subsampled_gaussian, the warm-started secant of the PLD calibration in engine.accountant,
    the Newton steps of the φ accountant's ε(δ) that reuse the inversion's exact derivative)."""
    return optimize.brentq(f, lo, hi, xtol=xtol, rtol=rtol, maxiter=maxiter)


def bisect(too_low, lo, hi, iters, *, width=None):
    """Vectorised bisection for a monotone predicate: ``too_low(x)`` True left of the root.

    Returns the final (lo, hi) after ``iters`` halvings (hi - lo = 2^-iters of the start width), or
    earlier, once every hi - lo < ``width`` (if given); lo, hi may be arrays (one independent bisection
    per entry)."""
    for _ in range(iters):
        if width is not None and np.all(hi - lo < width):
            break
        mid = 0.5 * (lo + hi)
        low = too_low(mid)
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    return lo, hi


__all__ = ["LOG_HALF", "bisect", "find_root", "log1mexp", "logsubexp", "log_norm_cdf", "log_norm_sf",
           "logsumexp"]
