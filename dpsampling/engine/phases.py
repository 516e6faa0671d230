"""A certified interval for a run of phases: compositions of Poisson-subsampled Gaussians at different (σ, q).

A phase is ``(sigma, q, total_steps[, pair])``: ``total_steps`` compositions of the q-subsampled Gaussian at noise
multiplier σ (sensitivity 1; a sampler that reduces to it maps its own parameters), under ``pair`` (:data:`PAIRS`:
its add/remove pairs, by default; dp_accounting's replace-one pair; truncated Poisson's combined pair, with ``n``
and ``cap``; one pair dominating both add/remove directions).  The caller (:mod:`dpsampling.samplers.phases`) may
give the lower end as other runs (``lower``: the max over their composed dominated pmfs, each a run it proved the
run's pair dominates, e.g. under an explicit adversary) and a floor proven otherwise (``lower_floor``); such a run
is refined until it reaches ``rel_tol`` or a level stops halving the width (the gap need not close).  The run is the
composition of all phases' steps, in any order (composition is commutative), so equal (σ, q) are merged first
(:func:`groups`): one group left is the single-phase question, answered by :mod:`.poisson_interval` itself (the same
floats as today's one-phase answer); two equal phases are one run of their total length.

Two or more groups, each end a bound by the argument of its single-phase counterpart, per direction (remove, add; a
neighbouring pair is in the same direction at every step, so each direction is composed across phases and the max
over the directions is taken):

* upper: every group's composed pessimistic connect-the-dots pmf with its proven rounding bound (today's
  single-phase composition and cache, :func:`.pld.certified_delta`'s pmfs), then the groups' pmfs convolved by one
  transform of their full linear length (nothing truncated or folded; :func:`convolve`), the groups' rounding bounds
  propagated and the transform's added; δ(ε) read off plus the rounding bound at ε (:func:`.pld.rounding_at`);
* lower: every group's composed dominated pmf (:func:`.dominated_pld.composed`: its pair is a post-processing of the
  group's true pair, so the convolution of the dominated pairs is a post-processing of the run's), convolved the same
  way; δ(ε) less the rounding bound and the mass the groups' circular compositions may have folded in
  (:func:`.dominated_pld.delta`'s argument, propagated through the convolution).

The discretisation is refined as in :mod:`.poisson_interval` (its levels and prediction) until the relative width
is ≤ ``rel_tol``; the φ accountant is not asked (it composes one mechanism): a width not reached is flagged
``not_converged``.  Full-batch (q = 1) phases are merged into one Gaussian step (exact); its upper end is
dp_accounting's connect-the-dots Gaussian, its lower end the dominated pmf of a subsampled pair it dominates
(:data:`FULL_BATCH_LOWER_Q`).
δ must be at or above :data:`.result.RELIABLE_DELTA_FLOOR` (below it only the φ accountant certifies a single phase).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from dp_accounting.pld import pld_pmf as _pmflib
from scipy import fft

from . import dominated_pld, pld, poisson_interval
from .errors import InternalError, ParameterError
from .numerics import fft_error, norm2
from .reading import delta_lower, epsilon_for_delta_lower
from .result import RELIABLE_DELTA_FLOOR, AccountingResult

_DIRECTIONS = {"add_remove": ("remove", "add"), "remove": ("remove",), "add": ("add",)}


#: the pairs a group's upper end is composed from: ``add_remove`` the q-subsampled Gaussian's remove and add pairs
#: (one per direction, :mod:`.pld`), ``replace_one`` its one symmetric replace-one pair (:mod:`.replace_one`,
#: dp_accounting's ``REPLACE_ONE`` PLD: the same pmf in both directions, the relation being symmetric),
#: ``truncated`` truncated Poisson's pair dominating its three dominating pairs (:mod:`.truncated`, per direction;
#: ``n`` records in the larger dataset, batches cut to ``cap``; upper ends only), ``max_of_directions`` one
#: symmetric pair dominating both directions of the add/remove pairs (:func:`.replace_one.max_pair_one_step`: WOR
#: under replace-one; its lower end the add/remove pairs' dominated pmfs, realised per direction)
PAIRS = ("add_remove", "replace_one", "truncated", "max_of_directions")


class Group(NamedTuple):
    """One mechanism of a run: ``total_steps`` compositions of the q-subsampled Gaussian at σ, under ``pair``."""

    sigma: float
    q: float
    total_steps: int
    pair: str = "add_remove"
    n: int = 0
    cap: int = 0


def groups(phases) -> tuple:
    """The run's phases ``(sigma, q, total_steps[, pair])`` with equal (σ, q, pair) merged (their steps added), in
    order of first appearance: the same run, since composition is commutative.  A full-batch replace-one phase is the
    Gaussian at sensitivity 2, i.e. at σ/2 (the loss depends on Δ/σ only).  With any subsampled phase, the
    full-batch (q = 1) phases become one Gaussian step at (Σ Tᵢ/σᵢ²)^{−1/2} (exactly their composition), last."""
    steps = {}
    for phase in phases:
        sigma, q, total_steps = phase[:3]
        pair = phase[3] if len(phase) > 3 else "add_remove"
        n, cap = (int(phase[4]), int(phase[5])) if pair == "truncated" else (0, 0)
        if pair not in PAIRS:
            raise InternalError(f"phase {phase!r}: pair {pair!r} is not one of {PAIRS}")
        if pair == "replace_one" and float(q) == 1.0:
            sigma, pair = float(sigma) / 2.0, "add_remove"
        elif pair == "max_of_directions" and float(q) == 1.0:  # the Gaussian: both directions are one pair
            pair = "add_remove"
        key = (float(sigma), float(q), pair, n, cap)
        steps[key] = steps.get(key, 0) + int(total_steps)
    run = [Group(s, q, t, p, n, cap) for (s, q, p, n, cap), t in steps.items()]
    full = [g for g in run if g.q == 1.0]
    if (len(full) > 1 or (full and len(run) > 1)) and all(g.sigma > 0 and g.total_steps >= 1 for g in full):
        merged = Group(math.fsum(g.total_steps / g.sigma**2 for g in full) ** -0.5, 1.0, 1)
        run = [g for g in run if g.q != 1.0] + [merged]
    return tuple(run)


#: the rate of the subsampled Gaussian whose dominated pmf stands for a full-batch Gaussian's lower end: the
#: q-subsampled pair is a post-processing of the Gaussian's (keep the output with probability q, else replace it by
#: fresh N(0, σ²)), so its dominated pair is dominated by the Gaussian's; 1 − 1e-12 loses ~1e-12 relative in δ
FULL_BATCH_LOWER_Q = 1.0 - 1e-12


def _check(run, delta=None):
    for i, g in enumerate(run):
        if not (g.sigma > 0 and 0 < g.q <= 1 and g.total_steps >= 1):
            raise InternalError(f"phase group {i} (σ={g.sigma!r}, q={g.q!r}, steps={g.total_steps!r}): a run of "
                                f"several phases needs σ > 0, q in (0, 1] and steps ≥ 1 in each (samplers.phases "
                                f"checks them)")
    if delta is not None and delta < RELIABLE_DELTA_FLOOR:
        raise ParameterError("delta", f">= {RELIABLE_DELTA_FLOOR:g} for a run of several phases", delta,
                             message=f"delta {delta!r} is below the PLD reliability floor {RELIABLE_DELTA_FLOOR:g}; "
                                     f"a run of several phases is answered by PLDs only: use a larger delta")


class Composed(NamedTuple):
    """A composed pmf of one direction, a bound on the 2-norm of its masses' rounding error, and (a dominated pmf) a
    bound on the nonnegative mass the compositions' circular folding may have added."""

    pmf: object
    err2: float
    fold: float = 0.0


def _dense(pmf):
    return pmf if isinstance(pmf, _pmflib.DensePLDPmf) else pld._to_dense(pmf)  # noqa: SLF001


def _zero_infinity(pmf):
    if not pmf._infinity_mass:  # noqa: SLF001
        return pmf
    return _pmflib.DensePLDPmf(pmf._discretization, pmf._lower_loss, pmf._probs, 0.0, False)  # noqa: SLF001


def convolve(parts, pessimistic: bool) -> Composed:
    """The convolution of the groups' composed pmfs ``parts`` (:class:`Composed`, one discretisation): one transform
    of at least the full linear length, so nothing is truncated or folded here.

    Rounding (2-norm): the parts' own errors propagate as Σᵢ ‖eᵢ‖₂ ∏_{j≠i} Bⱼ (Young, telescoping over the parts;
    Bⱼ = Σ|ĉⱼ| + √lenⱼ·‖eⱼ‖₂ bounds both the computed and the exact part's 1-norm), and the transform adds
    :func:`.numerics.fft_error`'s bound for a product of k factors (``power="multiply"``, each factor's 1-norm taken
    as Σ|ĉⱼ|, which bounds its transform).  The folded mass of the parts (nonnegative) becomes Σᵢ foldᵢ ∏_{j≠i} Bⱼ.
    +∞ mass: 1 − ∏(1 − infᵢ) (``pessimistic``; the parts' τ included), else 0."""
    if len(parts) == 1:  # nothing to convolve: the part itself (a lower part has no +∞ mass)
        c = parts[0]
        return c if pessimistic else Composed(_zero_infinity(_dense(c.pmf)), c.err2, c.fold)
    pmfs = [_dense(c.pmf) for c in parts]
    d = pmfs[0]._discretization  # noqa: SLF001 - dp_accounting's pmf fields, as in .pld
    probs = [np.asarray(p._probs, dtype=float) for p in pmfs]  # noqa: SLF001
    n1 = [math.fsum(np.abs(p)) for p in probs]
    bounds = [a * (1 + 1e-12) + math.sqrt(len(p)) * c.err2 for a, p, c in zip(n1, probs, parts)]
    others = [math.prod(bounds[:i] + bounds[i + 1:]) for i in range(len(parts))]
    out_len = sum(len(p) for p in probs) - len(probs) + 1
    fast_len = fft.next_fast_len(out_len)
    spectrum = fft.fft(probs[0], fast_len)
    for p in probs[1:]:
        spectrum = spectrum * fft.fft(p, fast_len)
    out = np.real(fft.ifft(spectrum))[:out_len]
    err = fft_error([(a, norm2(p), 1) for a, p in zip(n1, probs)], out_len, fast_len,
                    out_norm2=norm2(out), norm=2, power="multiply")
    err2 = err + sum(c.err2 * o for c, o in zip(parts, others))
    fold = sum(c.fold * o for c, o in zip(parts, others))
    lowest = sum(p._lower_loss for p in pmfs)  # noqa: SLF001
    inf_mass = -math.expm1(sum(math.log1p(-p._infinity_mass) for p in pmfs)) if pessimistic else 0.0  # noqa: SLF001
    return Composed(_pmflib.DensePLDPmf(d, lowest, out, inf_mass, bool(pessimistic)), err2, fold)


def _upper_part(g, dr, d):
    """One group's composed pessimistic pmf of direction ``dr`` (:func:`.pld._upper_pmfs`, today's single-phase
    composition and cache) with its 2-norm rounding bound (a sparse composition's flat bound bounds its 1-norm)."""
    if g.pair == "truncated":  # the combined dominating pair's composition and rounding bound (.truncated)
        from . import truncated

        which = "combined" if truncated.truncation_probability(g.q, g.n, g.cap) > 0 else "sensitivity2"
        pmf, err2 = truncated._upper_pmfs(g.sigma, g.q, g.n, g.cap, g.total_steps, float(d), which)[  # noqa: SLF001
            ("remove", "add").index(dr)]
        return Composed(pmf, err2)
    if g.pair == "max_of_directions":  # one symmetric pmf dominating both directions (.replace_one)
        from . import replace_one

        pmf, err2 = replace_one.max_pair_composed(g.sigma, g.q, g.total_steps, float(d))
        return Composed(pmf, err2)
    if g.pair == "replace_one":  # one symmetric pmf, its composition's rounding bounded as .pld's (.replace_one)
        from . import replace_one

        pmf, err2 = replace_one._composed(g.sigma, g.q, g.total_steps, float(d))  # noqa: SLF001
        return Composed(pmf, err2)
    one = pld._upper_pmfs(g.sigma, g.q, g.total_steps, dr, d)[0]  # noqa: SLF001 - the engine's certified upper pmfs
    pmf, err2, flat = one
    return Composed(pmf, err2 + flat)


def _lower_part(g, dr, d):
    """One group's composed dominated pmf of direction ``dr`` (:func:`.dominated_pld.composed`) with its rounding
    bound and the mass its circular composition may have folded in (≤ τ when composed); a replace-one group's
    (:func:`.replace_one.dominated_composed`) is the same in both directions (a symmetric pair)."""
    if g.pair == "replace_one":
        from . import replace_one

        c = replace_one.dominated_composed(g.sigma, g.q, g.total_steps, float(d))
        return Composed(c.pmf, c.err2, dominated_pld.FOLD_MASS if g.total_steps > 1 else 0.0)
    if g.pair not in ("add_remove", "max_of_directions"):
        raise InternalError(f"group {tuple(g)}: no dominated pmf of pair {g.pair!r} is built here (a lower run is "
                            f"of add_remove and replace_one pairs)")
    if g.q == 1.0:  # one merged Gaussian step (groups): the dominated pmf of a subsampled pair it dominates
        return Composed(dominated_pld.one_step(g.sigma, FULL_BATCH_LOWER_Q, d, dr), 0.0, 0.0)
    c = dominated_pld.composed(g.sigma, g.q, g.total_steps, d, dr)
    return Composed(c.pmf, c.err2, dominated_pld.FOLD_MASS if g.total_steps > 1 else 0.0)


#: a few runs only: a calibration visits many σ, and each entry holds a run's composed grid (up to ~1 GB)
@lru_cache(maxsize=4)
def upper_pmfs(run, direction, discretization) -> tuple:
    """(Composed, …) over ``direction``: the run's composed pessimistic pmfs (cached, treat as immutable)."""
    return tuple(convolve([_upper_part(g, dr, float(discretization)) for g in run], True)
                 for dr in _DIRECTIONS[direction])


@lru_cache(maxsize=4)
def lower_pmfs(run, direction, discretization) -> tuple:
    """(Composed, …) over ``direction``: the run's composed dominated pmfs (cached, treat as immutable)."""
    return tuple(convolve([_lower_part(g, dr, float(discretization)) for g in run], False)
                 for dr in _DIRECTIONS[direction])


def certified_delta(epsilon, run, direction, discretization) -> float:
    """An upper bound on the run's δ(ε): the composed pessimistic pmf's δ plus its rounding bound, max over
    ``direction`` (:func:`.pld.certified_delta`'s argument)."""
    return max(float(pld.delta_for_epsilon(c.pmf, float(epsilon))) + pld.rounding_at(c.pmf, c.err2, float(epsilon))
               for c in upper_pmfs(run, direction, float(discretization)))


def certified_epsilon(delta, run, direction, discretization) -> float:
    """An upper bound on the run's ε(δ): per direction ε₁ = ε̂(δ − E(ε₀)), ε₀ = ε̂(δ), ε₁ read for an upper bound by
    construction (:func:`.reading.epsilon_for_delta_upper`) and the larger of ε₀, ε₁ kept (:func:`.pld.certified_epsilon`'s
    argument, the same reading as a single group's), max over ``direction``."""
    from .reading import epsilon_for_delta_upper

    out = []
    for c in upper_pmfs(run, direction, float(discretization)):
        reader = pld.EpsilonReader(c.pmf)
        eps0 = float(reader(float(delta)))
        target = float(delta) - pld.rounding_at(c.pmf, c.err2, eps0) if math.isfinite(eps0) else 0.0
        out.append(max(eps0, epsilon_for_delta_upper(c.pmf, target, reader.read)) if target > 0 else math.inf)
    return max(out)


def _lower_error(c, eps):
    return c.fold + pld.rounding_at(c.pmf, c.err2, eps)


def lower_delta(epsilon, run, direction, discretization) -> float:
    """A lower bound on the run's δ(ε): the composed dominated pmf's δ (read for a lower bound,
    :func:`.reading.delta_lower`) less the folded mass and its rounding bound, max over ``direction``."""
    vals = [float(delta_lower(c.pmf, float(epsilon))) - _lower_error(c, float(epsilon))
            for c in lower_pmfs(run, direction, float(discretization))]
    return max(0.0, max(vals))


def lower_epsilon(delta, run, direction, discretization) -> float:
    """A lower bound on the run's ε(δ): :func:`.dominated_pld.epsilon`'s two readings per direction, max over
    ``direction``."""
    out = []
    for c in lower_pmfs(run, direction, float(discretization)):
        eps0 = epsilon_for_delta_lower(c.pmf, float(delta) + _lower_error(c, -math.inf))
        out.append(max(eps0, epsilon_for_delta_lower(c.pmf, float(delta) + _lower_error(c, eps0))))
    return max(out)


def _lower_runs(run, lower):
    """The lower runs: ``(run,)`` by default (the run's own dominated pairs), else ``lower`` grouped."""
    if lower is None:
        return (run,)
    out = tuple(groups(r) for r in lower if list(r))
    for r in out:
        _check(r)
    return out


def epsilon(delta, phases, *, direction="add_remove", rel_tol=1e-3, finest_discretization=None,
            discretization=None, lower=None, lower_floor=0.0, labels=None) -> AccountingResult:
    """ε(δ) of the run of ``phases`` (``(sigma, q, total_steps[, pair])`` each) as a certified interval (module
    docstring).  ``lower``: the runs whose composed dominated pmfs give the lower end (the max over them; None: the
    run itself), each a run the caller proved a post-processing of the run's pair is dominated by (see
    :mod:`dpsampling.samplers.phases`); ``lower_floor``: a lower bound the caller proved otherwise (max'd in);
    ``labels``: (lower method, upper method) of a run so assembled."""
    run = groups(phases)
    if len(run) == 1 and run[0].pair == "add_remove" and lower is None and not lower_floor:
        g = run[0]
        return poisson_interval.epsilon(delta, sigma=g.sigma, q=g.q, total_steps=g.total_steps, direction=direction,
                                        rel_tol=rel_tol, finest_discretization=finest_discretization,
                                        discretization=discretization)
    _check(run, float(delta))
    lows = _lower_runs(run, lower)

    def lower_at(d):
        return max([float(lower_floor)] + [lower_epsilon(delta, r, direction, d) for r in lows])

    return _interval(lambda d: certified_epsilon(delta, run, direction, d), lower_at, run, rel_tol,
                     finest_discretization, discretization, lows if lower is not None else None, labels,
                     _points_at(run, direction))


def delta(epsilon_value, phases, *, direction="add_remove", rel_tol=1e-3, finest_discretization=None,
          discretization=None, lower=None, lower_floor=0.0, labels=None) -> AccountingResult:
    """δ(ε) of the run of ``phases`` as a certified interval (module docstring; ``lower``, ``lower_floor`` and
    ``labels`` as :func:`epsilon`'s); an upper end below the reliability floor is flagged as
    :func:`.poisson_interval.delta`'s PLD answers are."""
    run = groups(phases)
    if len(run) == 1 and run[0].pair == "add_remove" and lower is None and not lower_floor:
        g = run[0]
        return poisson_interval.delta(epsilon_value, sigma=g.sigma, q=g.q, total_steps=g.total_steps,
                                      direction=direction, rel_tol=rel_tol,
                                      finest_discretization=finest_discretization, discretization=discretization)
    _check(run)
    lows = _lower_runs(run, lower)

    def lower_at(d):
        return max([float(lower_floor)] + [lower_delta(epsilon_value, r, direction, d) for r in lows])

    r = _interval(lambda d: certified_delta(epsilon_value, run, direction, d), lower_at, run, rel_tol,
                  finest_discretization, discretization, lows if lower is not None else None, labels,
                  _points_at(run, direction))
    if r.upper < RELIABLE_DELTA_FLOOR:
        from dataclasses import replace

        from .result import BELOW_FLOOR_FLAG

        return replace(r, kind="estimate", flags=r.flags + (BELOW_FLOOR_FLAG,))
    return r


def _points_at(run, direction):
    """The grid points of the run's composed pessimistic pmfs at ``d`` (the cached compositions the upper end just
    used, every direction), the size :func:`.poisson_interval._refine` bounds the next level by, as a single phase's."""
    def points(d):
        return sum(len(c.pmf._probs) for c in upper_pmfs(run, direction, float(d)))  # noqa: SLF001 - dense pmf
    return points


def _interval(upper_at, lower_at, run, rel_tol, finest_discretization, discretization, lows=None, labels=None,
              points_at=None):
    finest = poisson_interval._check_finest(finest_discretization)  # noqa: SLF001 - the one refinement of the engine
    args = (upper_at, lower_at, float(rel_tol), finest, None if discretization is None else float(discretization))
    # the refinement's grid bound on its points only: steps=1 leaves out the single phase's work bound (points ×
    # log2 T), measured far above a run's time (two groups of 10⁶ steps at σ 1.1 / 0.9, q 256/60000: 2.3e6 points
    # × 20 predicted 55 s, took 3.6 CPU-s; the run's cost model, samplers.phases.predict_cost, has admitted it); a
    # lower end assembled from other runs (or a floor) need not close as d → 0, so a level that did not halve the
    # width stops it
    assembled = not (lows is None and labels is None and all(g.pair == "add_remove" for g in run))
    lo, up, d, widths = poisson_interval._refine(*args, points_at=points_at, steps=1,  # noqa: SLF001
                                                 stop_on_stall=assembled)
    acc = {"discretization": d, "pld_widths": widths, "groups": [tuple(g) for g in run]}
    if lows is not None:
        acc["lower_groups"] = [[tuple(g) for g in r] for r in lows]
    lo_m, up_m = labels or (poisson_interval.LOWER_PLD, poisson_interval.UPPER_PLD)
    result = poisson_interval._result  # noqa: SLF001 - the engine's one labelled interval
    return result(lo, up, lo_m, up_m, acc, (), float(rel_tol))
