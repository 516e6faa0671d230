"""The Poisson-subsampled Gaussian under replace-one (substitution) adjacency: a certified upper end.

dp_accounting builds the privacy loss distribution of the q-subsampled Gaussian under replace-one
(``from_gaussian_mechanism(..., sampling_prob=q, neighboring_relation=REPLACE_ONE)``, the PLD its
``PLDAccountant(NeighboringRelation.REPLACE_ONE)`` composes): one pmf (the relation is symmetric), the pair
((1−q)N(0,σ²) + qN(1,σ²), (1−q)N(0,σ²) + qN(−1,σ²)) per step.  With ``pessimistic_estimate=True`` and
connect-the-dots its one-step pmf dominates the true pair (the truncated tail mass is put at +∞ loss), so its
composition's δ(ε) is an upper bound up to the floating-point rounding of the FFT composition, which is bounded
here as :mod:`.pld` bounds it for add/remove (:func:`.pld.composition_error`, :func:`.pld.rounding_at`):
:func:`certified_delta` adds that bound to δ, :func:`certified_epsilon` reads ε at δ less it.

For lower ends: the pair is realised by the datasets whose changed record has clipped gradient C against −C, every
other record's 0 (Lebeda et al. 2024 Prop. 13), so a pair it dominates gives lower bounds.  :func:`profile` is the
pair's privacy profile in closed form (the loss is monotone in the output, its inverse a quadratic's root) and
:func:`dominated_one_step` the dominated pmf :mod:`.dominated_pld` builds from a profile (tangents below the convex
profile, a post-processing of the pair); :func:`dominated_composed` composes it as the add/remove ones are (the
caller allows the folded mass τ and the rounding, :mod:`.phases`).  The single-sampler answers under replace-one
(samplers/relations.py) do not use it yet; a run of phases does.

WOR under replace-one: :func:`max_pair_one_step` (one pair dominating both add/remove directions), composed by
:func:`max_pair_composed`; samplers/relations.py answers WOR under replace-one with it (through :mod:`.phases`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

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
                      discretization: float = DISCRETIZATION, pair: str = "replace_one") -> float:
    """An upper bound on ε(δ) under replace-one: ε₁ = ε̂(δ − E(ε₀)) with ε₀ = ε̂(δ) (as
    :func:`.pld.certified_epsilon`: ε₁ read for an upper bound by construction, the larger of ε₀ and ε₁ kept);
    ``pair`` "replace_one" (the Poisson pair, :func:`_composed`) or "max_of_directions" (the pair dominating both
    add/remove directions, :func:`max_pair_composed`)."""
    from . import pld
    from .reading import epsilon_for_delta_upper

    _check(sigma, q, total_steps, discretization)
    composed = max_pair_composed if pair == "max_of_directions" else _composed
    pmf, err2 = composed(float(sigma), float(q), int(total_steps), float(discretization))
    reader = pld.EpsilonReader(pmf)
    eps0 = float(reader(float(delta)))
    if not math.isfinite(eps0):
        return math.inf
    target = float(delta) - (pld.rounding_at(pmf, err2, eps0) if err2 else 0.0)
    return max(eps0, epsilon_for_delta_upper(pmf, target, reader.read)) if target > 0 else math.inf


def sufficient_sigma(epsilon: float, delta: float, *, q: float, total_steps: int, start: float,
                     rel_tol: float = 1e-3, discretization: float = DISCRETIZATION, pair: str = "replace_one") -> float:
    """A σ whose certified replace-one ε(δ) (of ``pair``, :func:`certified_epsilon`) is ≤ ``epsilon``: bisection on
    log σ from ``start`` (any σ > 0), stopped at a relative width ``rel_tol``; the σ returned is the bracket's upper
    end, checked sufficient."""
    def ok(s):
        return certified_epsilon(delta, sigma=s, q=q, total_steps=total_steps, discretization=discretization,
                                 pair=pair) <= epsilon

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


# --------------------------------------------------------------------------- a dominated pmf (the lower end)
def profile(sigma: float, q: float, epsilon):
    """(h(e^ε), Q(L > ε)) of the replace-one pair P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²), ε an
    array (:mod:`.dominated_pld`'s profile).

    The loss L(y) = log P(y)/Q(y) = log((1−q) + q·a·t) − log((1−q) + q·a/t), a = e^{−1/(2σ²)}, t = e^{y/σ²}, is
    increasing in y (numerator up, denominator down) and onto ℝ; L(y) = ε is the quadratic
    q·a·t² + (1−q)(1−e^ε)·t − q·a·e^ε = 0, whose positive root is taken in the form without cancellation.  Then
    P(L > ε) = (1−q)Φ̄(y/σ) + qΦ̄((y−1)/σ), Q(L > ε) = (1−q)Φ̄(y/σ) + qΦ̄((y+1)/σ) and h = P(L > ε) − e^ε Q(L > ε).
    The pair is symmetric (y ↦ −y swaps P and Q), so one profile serves both orders."""
    from scipy.special import ndtr

    eps = np.asarray(epsilon, dtype=float)
    c = float(q) * math.exp(-0.5 / float(sigma) ** 2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        b = (1.0 - float(q)) * np.expm1(eps)  # (1−q)(e^ε − 1)
        root = np.sqrt(b * b + 4.0 * c * c * np.exp(eps))
        log_t = np.where(b >= 0, np.log(b + root) - math.log(2.0 * c),
                         math.log(2.0 * c) + eps - np.log(root - b))
        y = float(sigma) ** 2 * log_t
        s = float(sigma)
        tail_p = (1.0 - q) * ndtr(-y / s) + q * ndtr(-(y - 1.0) / s)
        tail_q = (1.0 - q) * ndtr(-y / s) + q * ndtr(-(y + 1.0) / s)
        h = tail_p - np.exp(eps) * tail_q
    return np.clip(np.nan_to_num(h), 0.0, 1.0), np.clip(np.nan_to_num(tail_q), 0.0, 1.0)


@lru_cache(maxsize=8)
def dominated_one_step(sigma: float, q: float, discretization: float):
    """One-step dominated pmf of the replace-one pair (:func:`.dominated_pld.from_profile` on :func:`profile`): a
    post-processing of the pair (Blackwell), so its compositions' δ(ε), ε(δ) are lower bounds.  Grid: the range of
    dp_accounting's pessimistic replace-one pmf at this discretisation (any range is valid; it sets the accuracy)."""
    from . import dominated_pld

    d = float(discretization)
    pmf = _composed(float(sigma), float(q), 1, d)[0]
    size = len(pmf._probs) if hasattr(pmf, "_probs") else max(pmf._loss_probs) - min(pmf._loss_probs) + 1  # noqa: SLF001
    lo = pmf._lower_loss if hasattr(pmf, "_lower_loss") else min(pmf._loss_probs)  # noqa: SLF001
    return dominated_pld.from_profile(lambda e: profile(float(sigma), float(q), e), int(lo) - 1, int(lo) + size + 1, d)


@lru_cache(maxsize=8)
def dominated_composed(sigma: float, q: float, total_steps: int, discretization: float):
    """The ``total_steps``-fold composition of :func:`dominated_one_step` with its rounding bound
    (:class:`.dominated_pld.Composed`; the folded mass ≤ τ is the caller's, as for the add/remove pairs)."""
    from . import dominated_pld

    return dominated_pld._compose_pmf(dominated_one_step(float(sigma), float(q), float(discretization)),  # noqa: SLF001
                                      int(total_steps))


# --------------------------------------------------------------------------- WOR under replace-one: one dominating pair
@lru_cache(maxsize=8)
def max_pair_one_step(sigma: float, q: float, discretization: float):
    """One pessimistic pmf dominating both of the q-subsampled Gaussian's directions at once: the connect-the-dots
    pmf of the pointwise maximum of the remove and add pessimistic pmfs' profiles on the grid e^{iΔ} (each pmf's
    profile there is its exact δ; the maximum of convex functions is convex, ≥ (1 − x)₊ and decreasing, so it is a
    pair's profile, and its chords lie above both chords, hence above both true profiles; beyond the grid its last
    value is the mass at +∞).  Its reverse-order profile is the maximum of the reverses (remove's reverse is add's),
    so it serves both orders.  Why it is needed: sampling without replacement under substitution is bounded per step
    by the remove pair for ε ≥ 0 and the add pair below (Lebeda et al. 2024 Thm 14, ZDW22 Prop. 30), and neither
    direction dominates for every α, so composing each direction apart and taking the larger is not a proven bound
    (Lebeda et al. §7); one pair dominating both is (their §8)."""
    from dp_accounting.pld import pld_pmf

    from . import pld, truncated

    d = float(discretization)
    one = pld.one_step(float(sigma), float(q), True, d)
    pmfs = [x if isinstance(x, pld_pmf.DensePLDPmf) else x.to_dense_pmf() for x in pld.direction_pmfs(one, "add_remove")]
    lo = min(x._lower_loss for x in pmfs) - 1  # noqa: SLF001
    hi = max(x._lower_loss + len(x._probs) for x in pmfs) + 1  # noqa: SLF001
    prof = np.maximum(*[truncated._profile_on_grid(x, lo, hi, d) for x in pmfs])  # noqa: SLF001
    return truncated._pmf_from_profile(prof, lo, d)  # noqa: SLF001


@lru_cache(maxsize=8)
def max_pair_composed(sigma: float, q: float, total_steps: int, discretization: float):
    """(composed pmf of :func:`max_pair_one_step`, 2-norm bound of its rounding error), as :func:`_composed`."""
    from . import pld

    dense = max_pair_one_step(float(sigma), float(q), float(discretization))
    if total_steps == 1:
        return dense, 0.0
    comp = pld._self_compose(dense, int(total_steps))  # noqa: SLF001 - the FFT path whose rounding is bounded
    return comp, pld.composition_error(dense._probs, int(total_steps), comp._probs)  # noqa: SLF001
