"""ε(δ) read off a discrete privacy-loss pmf for a lower bound, valid where the losses are large.

dp_accounting's reading (``pld_pmf._get_epsilon_for_delta``; :func:`.pld.epsilon_for_delta` is its float bit for bit)
walks down from the largest loss summing U = Σ p and W = Σ p·e^{−ℓ}, and stops at ε = log((U − δ)/W).  Above
ℓ ≈ 745, e^{−ℓ} is 0 in floating point; while every term walked is such, W = 0 and the walk returns the loss at which
U first reaches δ.  That loss lies above the pmf's ε(δ) (there δ(ε) = U − e^ε·W < U), so it may stand for an upper end
but not for a lower one: read that way, the shuffle lower bound after 60 epochs of σ = 0.2 came out at 915.17, above
the exact deterministic ε 914.23, which bounds every shuffle ε from above (Chua et al. 2024, Thm 4.1).

δ(ε) = Σ p·(1 − e^{ε−ℓ})₊ depends on ℓ − ε only.  So where a reading lands at or above :data:`SAFE_EPSILON`, the
losses are shifted down by a whole number k of grid steps (the masses unchanged), the shifted pmf is read (its ε near
:data:`SHIFT_TARGET`, where every loss walked has a representable e^{−ℓ} up to 440 above it), and k steps are added
back, less a relative 1e-12 for the rounding of the shifted grid.  Readings below :data:`SAFE_EPSILON` are returned
unchanged: every loss within 145 of them has a representable e^{−ℓ}, and the terms beyond weigh at most e^{−145}
relative, far below the rounding bounds the callers add to δ.
"""

from __future__ import annotations

import math

#: a reading at or above this is redone on shifted losses
SAFE_EPSILON = 600.0
#: where a shifted reading puts ε
SHIFT_TARGET = 300.0
#: relative amount taken off a shifted reading: the shifted grid's losses (lower − k + i)·d differ from
#: (lower + i)·d − k·d by a few ulps of the largest loss (≤ 1e-13 relative)
SHIFT_GUARD = 1e-12


def _plain(pmf, delta):
    from . import pld

    return pld.epsilon_for_delta(pmf, delta)


def epsilon_for_delta_lower(pmf, delta, read=None) -> float:
    """ε(δ) of ``pmf`` (a dp_accounting PLD pmf) for a lower bound: ``read(pmf, δ)`` (default
    :func:`.pld.epsilon_for_delta`), redone on losses shifted by whole grid steps where it lands at or above
    :data:`SAFE_EPSILON` (module docstring).  Valid because δ(ε) depends on the losses only through ℓ − ε, so the
    shifted reading is the same ε without the underflow that makes large readings too high; 0 (always a lower bound
    on ε) if no shifted reading is positive."""
    read = _plain if read is None else read
    eps = float(read(pmf, delta))
    if not SAFE_EPSILON <= eps < math.inf:
        return eps
    from dp_accounting.pld import pld_pmf

    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    d = dense._discretization
    k = math.floor((eps - SHIFT_TARGET) / d)
    while k > 0:
        shifted = pld_pmf.DensePLDPmf(d, dense._lower_loss - k, dense._probs, dense._infinity_mass,
                                      dense._pessimistic_estimate)
        e1 = float(read(shifted, delta))
        if e1 >= SAFE_EPSILON:  # the mass above ε + 445 would exceed δ, against the first reading's bound on ε
            from .errors import InternalError

            raise InternalError(f"a shifted ε reading landed at {e1!r} (shift {k} steps of {d!r})")
        if e1 > 0:
            out = e1 + k * d
            return max(0.0, out - SHIFT_GUARD * abs(out))
        k -= math.ceil(SHIFT_TARGET / d)  # the answer lies below the shift: shift less
    return 0.0
