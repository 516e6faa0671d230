"""ε(δ) and δ(ε) read off a discrete privacy-loss pmf for a lower (and, mirrored, an upper) bound: valid by
construction, at any loss.

dp_accounting's reading (``pld_pmf._get_epsilon_for_delta``; :func:`.pld.epsilon_for_delta` is that walk on the
grid's own losses) walks down from the largest loss summing U = Σ p and W = Σ p·e^{−ℓ}, and stops at
ε = log((U − δ)/W).  Two things make that float a poor lower end: above ℓ ≈ 745, e^{−ℓ} is 0 in floating point,
so while every term walked is such the walk returns the loss at which U first reaches δ (above the pmf's ε(δ): read
that way, the shuffle lower bound after 60 epochs of σ = 0.2 came out at 915.17, above the exact deterministic ε
914.23, Chua et al. 2024, Thm 4.1); and dp_accounting builds its losses by repeated subtraction of the grid step from
the largest one, which drifts (≈ 3.8e-9 at a loss of 280 on a 10⁶-entry one-step pmf: a Poisson lower end 4.6e-10
above the exact ε).

Here the losses are the grid's own, ℓ_i = (lower + i)·Δ (an integer times Δ, one rounding each), and the reading
rests on one inequality: for every set S of atoms and every ε,

    δ_pmf(ε) = Σ p·(1 − e^{ε−ℓ})₊ ≥ Σ_{ℓ∈S} p·(1 − e^{ε−ℓ}) = U_S − e^{ε}·W_S

(each term of the left is ≥ its term on the right, and the left has more nonnegative terms; the +∞ atom counts with
e^{−∞} = 0).  Taking S_k = the atoms i ≥ k (and +∞) and writing W_S = e^{−ℓ_k}·V_k with V_k = Σ_{i≥k} p_i·e^{−(i−k)Δ}
(≤ U_k: no overflow or underflow whatever the losses), every

    ε_k = ℓ_k + log((U_k − δ)/V_k)      (U_k > δ)

has δ_pmf(ε_k) ≥ δ, so ε_k ≤ the pmf's ε(δ) (δ_pmf decreases strictly where positive), and the largest ε_k is that
ε(δ) exactly (the k of the cell it lies in).  Likewise δ_pmf(ε) ≥ U_k − e^{ε−ℓ_k}·V_k for the first k with ℓ_k > ε,
with e^{ε−ℓ_k} ≤ 1: no e^{ε} overflows at ε ≥ 709.78.  Any k is valid, so no float decision (which cell, which stop)
can make a reading too high; only the arithmetic of the one formula can, and that is bounded (:func:`_sums`,
:func:`epsilon_lower_at`, :func:`delta_lower`) and taken off: :data:`GUARD` per operation, proven there.  Masses an
FFT composition left slightly negative are split off first (:func:`_split`: read at δ plus their total).
"""

from __future__ import annotations

import math

import numpy as np

#: the unit roundoff u = 2⁻⁵³ (= numerics.UNIT_ROUNDOFF; not imported from there, which loads scipy: this module is
#: imported by modules the registry loads)
UNIT_ROUNDOFF = 2.0 ** -53
#: the smallest positive subnormal float: an underflowed product is off by at most this, absolutely
_TINY = 2.0 ** -1074
#: the guard of :func:`epsilon_lower_at`, per unit of |ℓ̂_k| + |a| + |b| + 1: 16 unit roundoffs (proof there)
GUARD = 16.0 * UNIT_ROUNDOFF
#: where :func:`epsilon_for_delta_lower` first looks below the walk's reading, in grid steps (doubled while the
#: largest ε_k sits at the window's lowest k)
_WINDOW = 64


def _split(probs):
    """(p⁺, N) of masses that may hold small negative values (an FFT composition's rounding): p⁺ = max(p, 0) and
    N ≥ Σ max(−p, 0).  For every ε, δ_p(ε) = δ_{p⁺}(ε) − Σ_{ℓ>ε} |p⁻|·(1 − e^{ε−ℓ}) ≥ δ_{p⁺}(ε) − N (weights ≤ 1),
    so a lower reading of p⁺ at δ + N (of δ less N) is one of p.  N: the float sum of n nonnegative terms within
    γ_n, taken up by 1.01 (n < 10¹³), plus n·2⁻¹⁰⁷⁴ for underflow."""
    probs = np.asarray(probs, dtype=float)
    if probs.size == 0 or probs.min() >= 0:
        return probs, 0.0
    neg = np.minimum(probs, 0.0)
    return probs - neg, 1.01 * float(-neg.sum()) + probs.size * _TINY


def _sums(probs, inf_mass, d):
    """(U_lo, V_hi) over k = 0 … n − 1 of a pmf's masses ``probs`` (ascending losses): U_lo ≤ U_k = p_∞ + Σ_{i≥k} p_i
    and V_hi ≥ V_k = Σ_{i≥k} p_i·e^{−(i−k)Δ} (Δ = ``d``), the exact sums of the float masses.

    Proof of the bounds (running error bounds, Higham, Accuracy and Stability, §3.3; u = 2⁻⁵³).  Û is the sequential
    sum from the top (``np.cumsum``), Û_j = (Û_{j−1} + p_j)(1 + θ_j), |θ_j| ≤ u, so each addition errs by at most
    u/(1 − u)·Û_j and, telescoping, |Û_k − U_k| ≤ u/(1 − u)·Σ_{j from the top to k} Û_j.  V̂ is the recurrence
    V̂_k = fl(p_k + fl(r̂·V̂_{k+1})) (``scipy.signal.lfilter``, a first-order recursive filter: one product and one
    sum per step, or one fused rounding) with r̂ = fl(e^{−Δ}) within 2u·r of r = e^{−Δ} (``math.exp``, < 1 ulp), so
    |V̂_k − V_k| ≤ r·|V̂_{k+1} − V_{k+1}| + c_k, c_k = u/(1 − u)·V̂_k + 3.01u·r̂V̂_{k+1}: the same filter applied to c
    bounds it.  The bounds' own float evaluation (sums of ≤ m = n + 1 nonnegative terms, r̂ʲ for rʲ) is within
    (1 + 4mu) of them, taken up by 1.03 (m < 10¹³); underflowed products err by ≤ 2⁻¹⁰⁷⁴ each (4m of them allowed);
    the final subtraction (addition) and product round by ≤ u each, taken off by (1 − 2u) (on by (1 + 4u))."""
    u = UNIT_ROUNDOFF
    u_hat, u_err, v_hat, v_err, m = _running_sums(probs, inf_mass, d)
    u_lo = ((u_hat - u_err) * (1.0 - 2.0 * u))[1:][::-1]
    v_hi = ((v_hat + v_err + 4.0 * m * _TINY) * (1.0 + 4.0 * u))[::-1]
    return u_lo, v_hi


def _running_sums(probs, inf_mass, d):
    """(Û, its error bound, V̂, its error bound, m) of :func:`_sums`'s proof, from the top of the pmf (ascending
    losses reversed): both sides' readings take their bounds from these."""
    from scipy.signal import lfilter

    u = UNIT_ROUNDOFF
    top = np.asarray(probs, dtype=float)[::-1]
    r = math.exp(-float(d))
    u_hat = np.cumsum(np.concatenate(([float(inf_mass)], top)))
    u_err = 1.03 * u * np.cumsum(u_hat)
    v_hat = lfilter([1.0], [1.0, -r], top)
    c = u * v_hat + 3.01 * u * r * np.concatenate(([0.0], v_hat[:-1]))
    v_err = 1.03 * lfilter([1.0], [1.0, -r], c)
    return u_hat, u_err, v_hat, v_err, top.size + 1


def epsilon_lower_at(probs, first, lower, d, inf_mass, delta):
    """(ε_k lower bounds, their k) for the atoms k ≥ ``first`` of a pmf (masses ``probs`` at losses (lower + i)·d,
    +∞ mass ``inf_mass``): each ε_k of the module docstring less :data:`GUARD`'s bound on its arithmetic, so that
    δ_pmf(ε) ≥ δ at every returned value (nan where U_k ≤ δ: no bound from that k).

    Arithmetic.  With U_lo ≤ U_k and V_hi ≥ V_k (:func:`_sums`), δ_pmf ≥ U_k − e^{ε−ℓ_k}V_k ≥ δ at every
    ε ≤ ℓ_k + log(U_lo − δ) − log(V_hi) (two logs: the quotient could overflow where V_hi underflowed).  Computed:
    fl(U_lo − δ) within u relative, so its log (numpy, ≤ 4 ulp) within 8u|a| + 1.01u, a = log(U_lo − δ); log V_hi
    within 8u|b|; their difference within u(|a| + |b|); ℓ̂_k = fl((lower + k)·d) within u|ℓ_k|; the sum ℓ̂_k + L̂
    within u(|ℓ̂_k| + |a| + |b|), the guard's own subtraction as much again.  All of it is at most
    GUARD·(|ℓ̂_k| + |a| + |b| + 1) with GUARD = 16u ≈ 1.8e-15 (≈ 5e-13 absolute at ε ≈ 280), which is subtracted."""
    probs = np.asarray(probs, dtype=float)[first:]
    u_lo, v_hi = _sums(probs, inf_mass, d)
    k = np.arange(first, first + probs.size)
    num = u_lo - float(delta)
    ok = num > 0
    a = np.where(ok, np.log(np.where(ok, num, 1.0)), np.nan)
    b = np.log(v_hi)
    losses = (k + lower) * float(d)
    eps = losses + (a - b)
    return eps - GUARD * (np.abs(losses) + np.abs(a) + np.abs(b) + 1.0), k


def epsilon_for_delta_lower(pmf, delta, read=None) -> float:
    """A lower bound on the ε(δ) of ``pmf`` (a dp_accounting PLD pmf), valid by construction (module docstring):
    the largest ε_k (:func:`epsilon_lower_at`) over k from a window below ``read(pmf, δ)`` (e.g.
    :func:`.pld.epsilon_for_delta`; None: the largest loss; only where to look, not trusted: the window is doubled
    downward while the
    largest ε_k sits at its lowest k) up to the largest loss; +∞ where the +∞ mass exceeds δ (as dp_accounting), 0
    (always a lower bound on ε) where no k gives a positive value."""
    from dp_accounting.pld import pld_pmf

    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    inf_mass, d = float(dense._infinity_mass), float(dense._discretization)  # noqa: SLF001
    lower = int(dense._lower_loss)  # noqa: SLF001
    probs, neg = _split(dense._probs)  # noqa: SLF001
    if inf_mass > delta:
        return math.inf
    if neg:  # read p⁺ at δ + N (rounded up): a lower reading of p (:func:`_split`)
        delta = math.nextafter(float(delta) + neg, math.inf)
    n = probs.size
    if n == 0:
        return 0.0
    if read is None:  # no hint: the window starts at the largest loss and widens downward (the same value)
        hint = math.nan
    else:
        with np.errstate(over="ignore", divide="ignore"):  # the walk's (U − δ)/W overflows where W underflowed:
            hint = float(read(pmf, delta))                 # the hint is +∞ or too high, and the window widens
    if math.isnan(hint) or hint == math.inf:
        hint = (lower + n - 1) * d
    top = n - 1
    first = min(top, max(0, math.floor(hint / d) - lower - _WINDOW)) if math.isfinite(hint / d) else 0
    width = max(_WINDOW, top - first)
    while True:
        eps, _ = epsilon_lower_at(probs, first, lower, d, inf_mass, delta)
        if not np.any(np.isfinite(eps)):
            best, at = -math.inf, None
        else:
            at = int(np.nanargmax(eps))
            best = float(eps[at])
        if first == 0 or (at is not None and at > 0):  # the largest ε_k is inside the window (ε_k is unimodal in k)
            return max(0.0, best)
        width *= 2
        first = max(0, top - width)


def delta_lower(pmf, epsilon):
    """Lower bounds on the δ(ε) of ``pmf`` (a dp_accounting PLD pmf) at ``epsilon`` (a number or an array, any
    order, any size of ε: no e^{ε} is formed), valid by construction (module docstring): with k the first atom whose
    float loss exceeds ε, δ_pmf(ε) ≥ U_k − e^{x}·V_k, x = ε − ℓ_k ≲ 0 (any k is valid, so an exact ℓ_k a rounding
    below ε costs nothing), and δ_pmf(ε) ≥ p_∞ beyond the largest loss.

    Arithmetic.  x̂ = fl(ε − ℓ̂_k) is within u(|ℓ_k| + |x̂|) + u|ℓ_k| of x, so x ≤ x̂ + 3u(|ℓ̂_k| + |x̂| + 1) =: x_hi;
    e^{x_hi} by numpy within 4 ulp (≤ 8u relative) and the product with V_hi within u: their product t is taken up
    by (1 + 16u); fl(U_lo − t) ≥ (U_lo − t)(1 − u) when positive, taken down by (1 − 2u).  Each step rounds away
    from the bound, so the result is ≤ U_k − e^{x}V_k ≤ δ_pmf(ε)."""
    from dp_accounting.pld import pld_pmf

    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    inf_mass, d = float(dense._infinity_mass), float(dense._discretization)  # noqa: SLF001
    lower = int(dense._lower_loss)  # noqa: SLF001
    probs, neg = _split(dense._probs)  # noqa: SLF001: δ_p ≥ δ_{p⁺} − N
    e = np.asarray(epsilon, dtype=float)
    flat = np.atleast_1d(e).ravel()
    out = np.full(flat.shape, inf_mass)
    if probs.size:
        u_lo, v_hi = _sums(probs, inf_mass, d)
        losses = (np.arange(probs.size) + lower) * d  # nondecreasing: an integer times d, one rounding each
        k = np.searchsorted(losses, flat, side="right")  # first loss > ε
        inside = k < probs.size
        kk = k[inside]
        lk = losses[kk]
        x = flat[inside] - lk
        x_hi = x + 3.0 * UNIT_ROUNDOFF * (np.abs(lk) + np.abs(x) + 1.0)
        t = np.exp(x_hi) * v_hi[kk] * (1.0 + 16.0 * UNIT_ROUNDOFF)
        out[inside] = np.maximum((u_lo[kk] - t) * (1.0 - 2.0 * UNIT_ROUNDOFF), 0.0)
    if neg:  # less N, rounded down (the subtraction within u of its result, taken off by (1 − 2u))
        out = np.maximum((out - neg) * (1.0 - 2.0 * UNIT_ROUNDOFF), 0.0)
    out = np.minimum(out, 1.0)
    return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)


# --------------------------------------------------------------------------- upper readings (the mirror image)


def _sums_upper(probs, inf_mass, d):
    """(U_hi, V_lo): U_hi ≥ U_k and 0 ≤ V_lo ≤ V_k, the mirror of :func:`_sums` (the same running error bounds
    added to Û and taken off V̂, the final roundings taken the other way)."""
    u = UNIT_ROUNDOFF
    u_hat, u_err, v_hat, v_err, m = _running_sums(probs, inf_mass, d)
    u_hi = ((u_hat + u_err) * (1.0 + 2.0 * u))[1:][::-1]
    v_lo = np.maximum((v_hat - v_err - 4.0 * m * _TINY) * (1.0 - 4.0 * u), 0.0)[::-1]
    return u_hi, v_lo


def delta_upper(pmf, epsilon):
    """Upper bounds on the δ(ε) of ``pmf`` (a dp_accounting PLD pmf) at ``epsilon`` (a number or an array): the
    mirror of :func:`delta_lower`.  With k the first atom whose float loss ℓ̂_k exceeds ε by more than its rounding
    (ℓ̂_k − 2u(|ℓ̂_k| + 1) > ε, so every exact loss from k up is > ε), δ_pmf(ε) = p_∞ + Σ_{i≥k} p_i(1 − e^{ε−ℓ_i})
    + Σ_{i<k} p_i(1 − e^{ε−ℓ_i})₊ ≤ U_k − e^{x}·V_k + A, x = ε − ℓ_k, A the mass of the atoms below k whose exact
    loss may still exceed ε (ℓ̂_i + 2u(|ℓ̂_i| + 1) > ε) times the most they can weigh, 1 − e^{−4u(|ℓ̂_i|+1)} ≤
    4u(|ℓ̂_i| + 1).  Negative masses (an FFT's rounding) only lower δ_pmf: dropped (p⁺ ≥ p).

    Arithmetic.  x ≥ x̂ − 3u(|ℓ̂_k| + |x̂| + 1) =: x_lo (as :func:`delta_lower`, the other way); e^{x_lo} by numpy
    within 4 ulp and its product with V_lo within u: the product t is taken down by (1 − 16u); fl(U_hi − t) is
    taken up by (1 + 2u); A (a sum of ≤ n nonnegative terms, each a product) is taken up by 1.01·(1 + 4u)."""
    from dp_accounting.pld import pld_pmf

    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    inf_mass, d = float(dense._infinity_mass), float(dense._discretization)  # noqa: SLF001
    lower = int(dense._lower_loss)  # noqa: SLF001
    probs = np.maximum(np.asarray(dense._probs, dtype=float), 0.0)  # noqa: SLF001: δ_p ≤ δ_{p⁺}
    e = np.asarray(epsilon, dtype=float)
    flat = np.atleast_1d(e).ravel()
    out = np.full(flat.shape, inf_mass)
    u = UNIT_ROUNDOFF
    if probs.size:
        u_hi, v_lo = _sums_upper(probs, inf_mass, d)
        losses = (np.arange(probs.size) + lower) * d
        sure = losses - 2.0 * u * (np.abs(losses) + 1.0)  # ≤ the exact loss
        maybe = losses + 2.0 * u * (np.abs(losses) + 1.0)  # ≥ the exact loss
        k = np.searchsorted(sure, flat, side="right")  # first atom surely above ε (sure is nondecreasing)
        j = np.searchsorted(maybe, flat, side="right")  # first atom that may be above ε
        inside = k < probs.size
        kk = k[inside]
        lk = losses[kk]
        x = flat[inside] - lk
        x_lo = x - 3.0 * u * (np.abs(lk) + np.abs(x) + 1.0)
        with np.errstate(over="ignore"):
            t = np.exp(x_lo) * v_lo[kk] * (1.0 - 16.0 * u)
        out[inside] = np.maximum((u_hi[kk] - t) * (1.0 + 2.0 * u), 0.0)
        weight = probs * 4.0 * u * (np.abs(losses) + 1.0)
        csum = np.concatenate(([0.0], np.cumsum(weight)))
        amb = (csum[np.minimum(k, probs.size)] - csum[np.minimum(j, probs.size)]) * 1.01 * (1.0 + 4.0 * u)
        out = out + np.maximum(amb, 0.0)
    out = np.minimum(out, 1.0)
    return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)


def epsilon_for_delta_upper(pmf, delta, read=None) -> float:
    """An upper bound on the ε(δ) of ``pmf`` (a dp_accounting PLD pmf), valid by construction: the smallest of a
    rising list of candidates whose proven upper δ (:func:`delta_upper`) is ≤ δ, since δ_pmf(ε) ≤ δ at a candidate
    means ε(δ) ≤ it.  The candidates (only where to look, not trusted): the lower reading
    (:func:`epsilon_for_delta_lower`, exact up to its guard) raised by 2, 64, 4096 and 2²⁰ × :data:`GUARD`·(|ε| + 64),
    the plain reading ``read(pmf, δ)`` (e.g. :func:`.pld.epsilon_for_delta`; None: none)
    so raised, then the grid losses above,
    each raised past its rounding.  Beyond the largest loss δ_pmf is the +∞ mass ≤ δ, so a candidate passes; +∞
    where the +∞ mass exceeds δ (as dp_accounting)."""
    from dp_accounting.pld import pld_pmf

    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    inf_mass, d = float(dense._infinity_mass), float(dense._discretization)  # noqa: SLF001
    lower, n = int(dense._lower_loss), len(dense._probs)  # noqa: SLF001
    if inf_mass > delta:
        return math.inf
    top = (lower + n - 1) * d if n else 0.0
    top_up = top + 4.0 * UNIT_ROUNDOFF * (abs(top) + 1.0)
    low = epsilon_for_delta_lower(dense, delta, read)
    plain = math.nan
    if read is not None:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            plain = float(read(pmf, delta))
    starts = [low] + ([plain] if math.isfinite(plain) and plain < top_up else [])
    # 0 is a candidate too: where the proven δ at ε = 0 is ≤ δ, ε(δ) = 0 exactly (e.g. σ → ∞), not 0 + a guard
    cand = np.array(sorted([0.0] + [h + c * GUARD * (abs(h) + 64.0) for h in starts
                                    for c in (2.0, 64.0, 4096.0, 2.0**20)]))
    ok = np.asarray(delta_upper(dense, cand)) <= delta
    if ok.any():
        return max(0.0, float(cand[int(np.argmax(ok))]))
    # the grid losses above the lower reading, each raised past its rounding, in growing blocks up to the largest
    k, block = max(0, math.floor(low / d) - lower), 64
    while k < n:
        idx = np.arange(k, min(n, k + block))
        grid = (idx + lower) * d
        grid = grid + 4.0 * UNIT_ROUNDOFF * (np.abs(grid) + 1.0)
        ok = np.asarray(delta_upper(dense, grid)) <= delta
        if ok.any():
            return max(0.0, float(grid[int(np.argmax(ok))]))
        k, block = k + block, 2 * block
    return max(0.0, top_up)


# --------------------------------------------------------------------------- a pmf with a rounding allowance
# (engine.allocation.LossPmf: masses ``probs`` at losses (k0 + i)·step, +∞ mass ``inf``, an error bound ``err`` on δ)


def _as_dense(pmf):
    """A LossPmf as dp_accounting's dense pmf (the same masses at the same losses (k0 + i)·step, +∞ mass ``inf``)."""
    from dp_accounting.pld import pld_pmf

    return pld_pmf.DensePLDPmf(float(pmf.step), int(pmf.k0), pmf.probs, float(pmf.inf), False)


def loss_pmf_epsilon_lower(pmf, delta, hint):
    """A lower end's ε(δ) of a LossPmf: the ε(δ + err) of its masses read for a lower bound by construction
    (:func:`epsilon_for_delta_lower`); ``hint(d)`` (its plain reading at δ = d) only says where to look."""
    target = math.nextafter(float(delta) + pmf.err, math.inf) if pmf.err else float(delta)
    return max(0.0, epsilon_for_delta_lower(_as_dense(pmf), target, read=lambda _p, d: hint(d - pmf.err)))


def loss_pmf_delta_lower(pmf, epsilon):
    """A lower end's δ(ε) of a LossPmf: its masses' δ(ε) read for a lower bound (:func:`delta_lower`) less ``err``,
    rounded down (the subtraction within u of its result, taken off by (1 − 2u))."""
    d = float(delta_lower(_as_dense(pmf), float(epsilon))) - pmf.err
    return max(0.0, d * (1.0 - 2.0 * np.finfo(float).eps / 2))
