"""Numerical helpers shared by every computation: log-space arithmetic, root finding, and the rounding-error
bound of an FFT convolution (:func:`fft_error`).

Products of Gaussian CDFs and differences of tiny probabilities cancel
catastrophically in floating point; the log-space helpers work with logarithms.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.special import log_ndtr, logsumexp

from .errors import InternalError

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


#: unit roundoff of float64
UNIT_ROUNDOFF = float(np.finfo(float).eps) / 2


def norm2(a) -> float:
    """‖a‖₂ of a 1-d array, summed by numpy's pairwise summation of the squares (no BLAS call).

    ``np.linalg.norm`` of a vector is BLAS's dot, which OpenBLAS spreads over its threads above a size: in a plain
    process (default threads) on a busy machine, waking and joining them cost more than the sum itself (most of
    balls-and-bins' σ calibration went there: bench/bench_calibration_plain.py, docs/benchmarks.md).  Pairwise
    summation's error, ≤ u·⌈log₂ n⌉ relative, is below BLAS's sequential u·n; the norms feed :func:`fft_error`,
    which takes computed norms for exact ones to first order in u either way."""
    a = np.asarray(a, dtype=float)
    return math.sqrt(float(np.sum(np.square(a))))


def _other_norms(factors, i):
    """∏ of the 1-norms of ``factors`` other than factor i (factor i once fewer); exact for a product of two."""
    out = 1.0
    for j, (n1, _, m) in enumerate(factors):
        k = m - 1 if j == i else m
        if k:
            out *= n1 ** k
    return out


def _spread(factors, total, g, out_norm2):
    """(spread, ‖c‖₂) of :func:`fft_error`'s derivation: spread = Σᵢ mᵢ‖aᵢ‖₂ ∏_{others}‖·‖₁ (Young), for a power
    the Hölder bound where that is smaller; ‖c‖₂ = ``out_norm2`` or Young's bound."""
    terms = [m * n2 * _other_norms(factors, i) for i, (_, n2, m) in enumerate(factors)]
    spread = terms[0]
    for t in terms[1:]:
        spread += t
    c2 = (float(out_norm2) if out_norm2 is not None
          else min(n2 * _other_norms(factors, i) for i, (_, n2, _) in enumerate(factors)))
    if len(factors) == 1 and total >= 3:  # a power: the Hölder bound where it is smaller
        s = factors[0][0]
        holder = total * s * (1.105 * c2 ** ((total - 1) / total) + (g * s * (10 * total + 1)) ** (total - 1))
        spread = min(spread, holder)
    return spread, c2


def _product_rounding(power, total, c2, propagated):
    """The 2-norm error added by forming the product of the transforms (:func:`fft_error`'s derivation): relative
    3u(T − 2) per entry for a chain of complex multiplications, 6u(T(π + 1) + 1) plus 6u/e absolute for cpow, of
    ‖c‖₂ (``c2``) plus the error propagated so far (``propagated``)."""
    u = UNIT_ROUNDOFF
    if power == "multiply":
        return 3.0 * u * max(total - 2, 0) * (c2 + propagated)
    if power == "cpow":
        return 6.0 * u * (total * (math.pi + 1.0) + 1.0) * (c2 + propagated) + 6.0 * u / math.e
    raise InternalError(f"fft_error: power must be 'multiply' or 'cpow' (got {power!r})")


def fft_error(factors, out_len, transform_len, out_norm2=None, power="multiply", norm=1):
    """A bound on ‖ĉ − c‖₁ over ``out_len`` output bins (``norm=2``: on ‖ĉ − c‖₂), where c = a₁^{∗m₁} ∗ a₂^{∗m₂} ∗ … (T = Σ mᵢ ≥ 2
    factors, each aᵢ ≥ 0 elementwise) is computed in float64 by transforms of length N = ``transform_len``:
    ĉ = F⁻¹(∏ᵢ (F aᵢ)^{mᵢ}) (scipy's FFTs; circular, so c is the circular convolution over N bins).

    ``factors``: one (‖aᵢ‖₁, ‖aᵢ‖₂, mᵢ) per distinct factor; ``out_norm2``: ‖c‖₂ (the computed one, plus
    the mass of any bins left out of it), else Young's bound ‖aⱼ‖₂ ∏_{others} ‖·‖₁ (the smallest over j);
    ``power``: how the product of the transforms was formed, "multiply" (complex multiplications: a product of
    two, or numpy's z**T for T < 100, by squaring) or "cpow" (numpy's z**T for T ≥ 100: the C library's
    cpow = exp(T·log z)).

    Derivation (unnormalised DFT: yᵢ = F aᵢ, |yᵢ|ₖ ≤ sᵢ = ‖aᵢ‖₁, Σₖ|yᵢ|ₖ² = N‖aᵢ‖₂²).  An FFT is a product of
    log₂N butterfly stages, each rounding with relative error ≤ η ≈ 5u (Higham, Accuracy and Stability of
    Numerical Algorithms, §24.1), and each input reaches each output by one path of unit-modulus factors, so
    every computed entry has |eᵢ|ₖ ≤ g·sᵢ with g = 8u(log₂N + 1) (the margin 8u/5u and the "+1" cover the
    second-order terms while (T − 1)·g·max sᵢ/‖aᵢ‖₂ ≤ 0.4, checked: ArithmeticError beyond, far outside any
    size used).  The product of the perturbed transforms differs from ∏ yᵢ by ≤ Σᵢ |eᵢ| ∏_{j≠i}|yⱼ| to first
    order, whose 2-norm over N entries, divided by √N (the inverse's scale), is ≤ g·spread,
    spread = Σᵢ mᵢ‖aᵢ‖₂ ∏_{others}‖·‖₁ (Young).  For a power (one factor, T ≥ 3) also
    ≤ g·T·s·(1.105·‖c‖₂^{(T−1)/T} + (g·s(10T + 1))^{T−1}): |(y + e)^T − y^T| ≤ T|e|(|y| + |e|)^{T−1}, where
    (|y| + gs)^{T−1} ≤ 1.105|y|^{T−1} if |y| ≥ 10T·gs and ≤ (gs(10T + 1))^{T−1} else, and by Hölder and
    Parseval (1/N)Σₖ|y|ₖ^{2T−2} ≤ ((1/N)Σₖ|y|ₖ^{2T})^{(T−1)/T} = ‖c‖₂^{2(T−1)/T}; the smaller is used.  The
    inverse transform adds ≤ g‖c‖₂.  The product's own rounding, relative r per entry, adds ≤ r(‖c‖₂ + the
    propagated error): a chain of complex multiplications has r ≤ 2√2u(T − 1) (Higham Lemma 3.5), whose first
    2√2u ≤ 8u the "+1" of g covers, so r = 3u(T − 2); cpow = cexp(T·clog z) with libm's clog and cexp within
    a few ulp has r ≤ 6u(T(|log|z|| + π + 1) + 1), whose |log|z|| part is ≤ 6u·T|log|z|| |z|^T ≤ 6u/e
    absolute per entry (|z| ≤ 1), i.e. ≤ 6u/e in the output's 2-norm (entries the caller sets to 0 because
    |z|^T < e^{−760} change less).  The 1-norm over ``out_len`` bins is ≤ √out_len times the 2-norm.  The
    computed ‖ĉ‖₂ stands for the exact one (first order in u).
    """
    u = UNIT_ROUNDOFF
    factors = [(float(n1), float(n2), int(m)) for n1, n2, m in factors]
    total = sum(m for _, _, m in factors)
    if total < 2 or any(m < 1 or n1 < 0 for n1, _, m in factors):
        raise InternalError(f"fft_error needs ≥ 2 factors (got {factors!r})")
    log_n = math.log2(max(2, int(transform_len)))
    g = 8.0 * u * (log_n + 1.0)

    x = g * max(n1 / n2 if n2 > 0 else 0.0 for n1, n2, _ in factors)
    if (total - 1) * x > 0.4:
        raise ArithmeticError(f"fft_error: (T − 1)·g·max ‖a‖₁/‖a‖₂ = {(total - 1) * x!r} > 0.4, beyond the "
                              f"bound's margin")
    spread, c2 = _spread(factors, total, g, out_norm2)
    two = spread + c2
    extra = _product_rounding(power, total, c2, g * spread)
    if norm == 2:
        return 8.0 * u * (log_n + 1.0) * two + extra
    if norm != 1:
        raise InternalError(f"fft_error: norm must be 1 or 2 (got {norm!r})")
    bound = math.sqrt(out_len) * 8.0 * u * (log_n + 1.0) * two  # = √out_len·g·two
    return bound + math.sqrt(out_len) * extra if extra else bound


__all__ = ["LOG_HALF", "UNIT_ROUNDOFF", "bisect", "fft_error", "find_root", "log1mexp", "logsubexp",
           "log_norm_cdf", "log_norm_sf", "logsumexp"]
