"""The Poisson-subsampled Gaussian under replace-one (substitution) adjacency: a certified upper end.

dp_accounting builds the privacy loss distribution of the q-subsampled Gaussian under replace-one
(``from_gaussian_mechanism(..., sampling_prob=q, neighboring_relation=REPLACE_ONE)``, the PLD its
``PLDAccountant(NeighboringRelation.REPLACE_ONE)`` composes): one pmf (the relation is symmetric), the pair
((1−q)N(0,σ²) + qN(1,σ²), (1−q)N(0,σ²) + qN(−1,σ²)) per step.  With ``pessimistic_estimate=True`` and
connect-the-dots its one-step pmf dominates the true pair (the truncated tail mass is put at +∞ loss), so its
composition's δ(ε) is an upper bound up to the floating-point rounding of the FFT composition, which is bounded
here as :mod:`.pld` bounds it for add/remove (:func:`.pld.composition_error`, :func:`.pld.rounding_at`):
:func:`certified_delta` adds that bound to δ, :func:`certified_epsilon` reads ε at δ less it.  No lower end is
computed here (a dominated PLD under replace-one is not built); a lower end under replace-one can come from a
zero-out lower end (every zero-out pair is a replace-one pair).
"""

from __future__ import annotations

import math
from functools import lru_cache

#: the method label of the upper end
UPPER_METHOD = "pessimistic PLD (replace-one, dp_accounting)"
#: the default discretisation of the loss grid
DISCRETIZATION = 1e-4


@lru_cache(maxsize=8)
def _composed(sigma: float, q: float, total_steps: int, discretization: float):
    """(composed pessimistic pmf, 2-norm bound of its rounding error) of ``total_steps`` replace-one steps."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from dp_accounting.privacy_accountant import NeighboringRelation

    from . import pld

    one = pldlib.from_gaussian_mechanism(float(sigma), pessimistic_estimate=True,
                                         value_discretization_interval=float(discretization), sampling_prob=float(q),
                                         use_connect_dots=True,
                                         neighboring_relation=NeighboringRelation.REPLACE_ONE)
    pmf = one._pmf_remove  # noqa: SLF001 - the one pmf of a symmetric relation (see engine/pld.py)
    if total_steps == 1:
        return pmf, 0.0
    dense = pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()
    comp = pld._self_compose(dense, int(total_steps))  # noqa: SLF001 - the FFT path whose rounding is bounded
    return comp, pld.composition_error(dense._probs, int(total_steps), comp._probs)  # noqa: SLF001


def _check(sigma, q, total_steps, discretization):
    if not (sigma > 0 and 0 < q <= 1 and total_steps >= 1 and discretization > 0):
        from .errors import InternalError

        raise InternalError(f"replace_one: unchecked input sigma={sigma!r}, q={q!r}, total_steps={total_steps!r}")


def certified_delta(epsilon: float, *, sigma: float, q: float, total_steps: int,
                    discretization: float = DISCRETIZATION) -> float:
    """An upper bound on δ(ε) under replace-one after ``total_steps`` compositions."""
    from . import pld

    _check(sigma, q, total_steps, discretization)
    pmf, err2 = _composed(float(sigma), float(q), int(total_steps), float(discretization))
    d = float(pld.delta_for_epsilon(pmf, float(epsilon)))
    return min(1.0, d + (pld.rounding_at(pmf, err2, float(epsilon)) if err2 else 0.0))


def certified_epsilon(delta: float, *, sigma: float, q: float, total_steps: int,
                      discretization: float = DISCRETIZATION) -> float:
    """An upper bound on ε(δ) under replace-one: ε₁ = ε̂(δ − E(ε₀)) with ε₀ = ε̂(δ) (as
    :func:`.pld.certified_epsilon`: ε₁ read for an upper bound by construction, the larger of ε₀ and ε₁ kept)."""
    from . import pld
    from .reading import epsilon_for_delta_upper

    _check(sigma, q, total_steps, discretization)
    pmf, err2 = _composed(float(sigma), float(q), int(total_steps), float(discretization))
    reader = pld.EpsilonReader(pmf)
    eps0 = float(reader(float(delta)))
    if not math.isfinite(eps0):
        return math.inf
    target = float(delta) - (pld.rounding_at(pmf, err2, eps0) if err2 else 0.0)
    return max(eps0, epsilon_for_delta_upper(pmf, target, reader.read)) if target > 0 else math.inf


def sufficient_sigma(epsilon: float, delta: float, *, q: float, total_steps: int, start: float,
                     rel_tol: float = 1e-3, discretization: float = DISCRETIZATION) -> float:
    """A σ whose certified replace-one ε(δ) is ≤ ``epsilon``: bisection on log σ from ``start`` (any σ > 0),
    stopped at a relative width ``rel_tol``; the σ returned is the bracket's upper end, checked sufficient."""
    def ok(s):
        return certified_epsilon(delta, sigma=s, q=q, total_steps=total_steps, discretization=discretization) \
            <= epsilon

    hi = float(start)
    for _ in range(60):
        if ok(hi):
            break
        hi *= 2.0
    else:
        return math.inf
    lo = hi / 2.0
    while ok(lo) and lo > 1e-6:
        hi, lo = lo, lo / 2.0
    while hi / lo - 1.0 > rel_tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
