"""Balls-and-bins batches (random allocation): certified bounds and Monte Carlo.

Each epoch every record goes to one uniformly random step out of ``steps``
(Chua et al., AISTATS 2025, arXiv 2412.16802; the random-allocation scheme of
Feldman & Shenfeld).  With MoG(1) := (1/T) Σ_t N(e_t, σ² I_T), one epoch's
dominating pair is (Chua et al. 2025, §3; Feldman & Shenfeld):

    remove:  P = MoG(1),  Q = N(0, σ² I_T),   L_R(x) = log Σ_t e^{x_t/σ²} − log T − 1/(2σ²)
    add:     P = N(0, σ² I_T),  Q = MoG(1),   L_A(x) = −L_R(x)

E epochs compose (losses add), and δ(ε) is the max of the two directions.

Bounds and why each is one:
* ``method="allocation"`` (the default): :mod:`dpsampling.engine.allocation`, a certified interval from a
  convex-order spread (upper end, ``allocation-spread``: a pair that dominates one epoch, losses exact on a
  geometric grid) and merge (lower end, ``allocation-merge``: a dominated sub-probability pair, losses rounded
  down) of the likelihood ratio dP/dQ of the pair below, composed over the E epochs; its docstring argues each
  side.  The grid step is refined until the relative width ≤ 1e-2 (``accuracy="default"``) or 1e-3 (``"fine"``);
  where it is not met within the passes the result carries the flag ``rel_width_not_reached`` (the command
  line then exits 1).  The lower end is raised to the max-statistic bound below where that is larger (small σ,
  one epoch).  Kind = ``bound``, both ends always filled.  One step per epoch: exactly the Gaussian at
  σ/√E (kind ``exact``).  σ: a certifiably sufficient σ (value, upper) and a certifiably insufficient one
  (lower), :func:`dpsampling.engine.allocation.sigma_interval`.
* ``bound="upper"``/``"lower"``, ``method="pld"``: PLD_accounting's
  ``gaussian_allocation_pld`` (Feldman & Shenfeld), a dp_accounting PLD for the
  dominating pair above that is itself dominating (DOMINATES: losses rounded
  up, truncated tail mass moved to +∞) or dominated (IS_DOMINATED: losses
  rounded down, tail mass dropped), so its δ(ε)/ε(δ) is an upper resp. lower
  bound on the true curve.  No well-kept library other than PLD_accounting
  accounts this pair; we call it rather than re-implement it.  Evaluated
  (PLD_accounting 2.0): T=1 and k=T reproduce the exact Gaussian ε to ≤ 1e-4
  relative with lower ≤ exact ≤ upper; σ→∞ gives ε→0; [lower, upper] nests
  and shrinks ∝ loss_discretization; at σ=1, T=100 it sits below Poisson
  (0.84–0.87 vs 0.954) and brackets our Monte Carlo (tests/test_balls_and_bins.py).
* ``method="montecarlo"``: an ``estimate`` of δ(ε) (or of ε(δ), by inverting δ(ε) and its band) with a two-sided
  Chernoff–KL confidence interval (``lower``/``upper`` of the result) that holds
  with probability ≥ 1 − ``beta`` for both directions together (β/4 per side
  and direction, union bound).  The Monte Carlo code lives in
  :mod:`dpsampling.samplers.balls_and_bins_mc`.
* ``method="max_statistic"`` (kind ``lower``): the Chua et al. (AISTATS 2025) lower bound.  The pair
  above is the exact output law of one epoch on one adjacent pair, and reducing each epoch to its
  max coordinate (threshold events for E = 1; sliced, losses rounded down and composed over the
  independent epochs for E > 1) is post-processing, so its divergence is ≤ the true one
  (:mod:`dpsampling.samplers._max_statistic`).

PLD_accounting's GEOM route spends ~98 % of its time in one O(n²) loop over pairs of grid points; we run
its convolutions with :mod:`dpsampling.samplers._geometric_kernel`, the same sum by window sums (every pair
in the bin PLD_accounting assigns it, so the side of each bound is PLD_accounting's; less CPU, and on
two threads where the process has two cores: docs/benchmarks.md).

Through :func:`dpsampling.samplers.account` the certified bounds come with both ends of the bracket
filled (``lower`` and ``upper``; ``value`` = the end asked for by ``bound``).

The certified ε(δ) bracket (:func:`_epsilon_bracket`: an :class:`EpsilonBracket`, whose docstring argues each
end's side, refined by a swappable :class:`StepPolicy`, which holds the tuned constants and picks steps only)
combines, each end a max/min of valid bounds:
* upper end = min over PLD_accounting's two routes, GEOM (exp-space geometric grids, O(n²) per
  convolution) and FFT (linear exp-space grid, O(n log n), DOMINATES only; tight and cheap where the
  per-step loss is light-tailed, σ ≳ 1, useless at σ ≲ 0.7), both dominating PLDs of the pair above;
  checked against each other in tests/test_balls_and_bins.py (FFT upper ≥ GEOM lower, decreasing in
  its step).  Measured at σ = 2, T = 1000, E = 1: 0.05945 in 2 s vs GEOM 0.06060 in 5 s.  Why it stays
  above: DOMINATES rounds every loss up in each stage and moves truncated tail mass to +∞ (PLD_accounting),
  and E dominating epoch PLDs compose to one dominating the E-epoch pair (losses add; dominating pairs
  compose: Zhu, Dong & Wang, AISTATS 2022).
* lower end = max(GEOM lower of one direction, the max-statistic lower bound), labelled in
  ``accuracy["lower_method"]``: each is a lower bound on ε of the pair (a lower bound on one
  direction's ε is one on the max over directions), so the max is one too.  Why the GEOM lower stays
  below: IS_DOMINATED rounds every loss down and drops truncated tail mass, and E dominated epoch PLDs
  compose to one dominated by the E-epoch pair (same theorem, roles swapped).  (PLD_accounting's FFT route
  has no dominated version: its linear-grid sums round up; it is never used for the lower end.)
* the steps: at σ ≥ 1 the bracket starts from the FFT uppers and one GEOM lower (the direction whose
  predicted step is cheapest) at the step an error model predicts; elsewhere (or where E × the FFT route's
  grid-cap error is too large, or no lower can close the width) from a coarse
  GEOM pass of both ends.  The FFT upper of a direction is trusted (GEOM no longer refines that upper) only
  where it sits low in that direction's GEOM bracket: at σ = 1, T = 1000 it does not, and refining the GEOM
  upper there is what meets the width in time (docs/benchmarks.md).  Steps only change
  the cost and the width, never the side of a bound.  With E epochs PLD_accounting uses the step / E per
  epoch (the rounding of E epochs adds up: measured, the width at E = 10 is the same multiple of the step
  as at E = 1), so the step is chosen from the E-epoch ε, not the one-epoch one.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

from dpsampling.engine import lazy
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, WIDTH_NOT_MET_FLAG, AccountingResult
from dpsampling.engine.validation import check_choice, check_delta, check_epsilon, check_int, check_positive

from . import deterministic


# heavy modules (scipy, numba, PLD_accounting) load on first use
bisect = lazy.function("dpsampling.engine.numerics", "bisect")
geometric_kernel = lazy.function("dpsampling.samplers._geometric_kernel", "geometric_kernel")
_poisson_guess = lazy.function("dpsampling.samplers.balls_and_bins_mc", "poisson_epsilon_guess")

NAME = "balls_and_bins"
BOUNDS = ("upper", "lower")
#: allocation: certified interval by convex order (default); pld: certified bracket (PLD_accounting);
#: montecarlo: estimate of δ(ε) with its band; max_statistic: the Chua et al. lower bound (threshold events /
#: optimistic PLD of the max coordinate)
METHODS = ("allocation", "pld", "montecarlo", "max_statistic")
#: method allocation: relative width (upper − lower)/upper aimed at per accuracy setting
ALLOCATION_REL_WIDTH = {"default": 1e-2, "fine": 1e-3}

#: PLD_accounting settings.  ``rel_width``: the certified ε(δ) interval is refined until
#: (upper − lower)/upper ≤ rel_width (``epsilon``; see :func:`_epsilon_bracket`).
#: ``rel_loss_discretization`` r (``delta`` / ``delta_curve``): loss_discretization = r (PLD_accounting's
#: meaning: the final loss-grid step summed over compositions).  ``tail_truncation``: mass dropped (lower)
#: or moved to +∞ (upper); for epsilon queries at most 1e-3·δ.  Measured in bench/bench_balls_and_bins.py.
ACCURACY = {
    "default": {"rel_width": 5e-2, "tail_per_delta": 1e-3, "rel_loss_discretization": 6e-2, "tail_truncation": 1e-10},
    "fine": {"rel_width": 1e-2, "tail_per_delta": 1e-4, "rel_loss_discretization": 1.5e-2, "tail_truncation": 1e-11},
}
_MIN_LOSS_DISCRETIZATION = 1e-4
#: grid cap of PLD_accounting's FFT route (:func:`_fft_upper`; its default 1e6 points is too coarse at T = 1000:
#: ε 0.0614 vs 0.0595 at σ = 2).  The adaptive bracket's tuned constants are the fields of :class:`StepPolicy`.
_FFT_MAX_GRID = 10**8


def _check(sigma, steps, epochs, bound, method, q=None, direction="add_remove"):
    check_positive("sigma", sigma)
    steps = check_int("steps", steps, 1)
    epochs = check_int("epochs", epochs, 1)
    check_choice("bound", bound, BOUNDS)
    check_choice("method", method, METHODS)
    if q is not None:
        from ._checks import check_one_epoch

        check_one_epoch(q, steps, NAME)
    if direction != "add_remove":
        raise ParameterError("direction", f"add_remove for sampler '{NAME}'", direction,
                             message=f"direction must be add_remove for sampler '{NAME}' (every method takes the max "
                                     f"of add and remove) (got {direction!r})")
    return steps, epochs


_OTHER = {"upper": "lower", "lower": "upper"}


def _bracket(r, other):
    """``r`` (kind = its bound) with both ends of the certified bracket [lower, upper] filled."""
    lo, up = (r.value, other.value) if r.kind == "lower" else (other.value, r.value)
    return AccountingResult(value=r.value, kind=r.kind, method=r.method, accuracy=r.accuracy, lower=lo, upper=up,
                            flags=tuple(dict.fromkeys(r.flags + other.flags)))


def _max_statistic_lower(quantity, target, sigma, steps, epochs, bound, options):
    """The Chua et al. (AISTATS 2025) lower bound from the max coordinate: kind ``lower`` only.

    Valid because MoG(1) vs N(0, σ²I) is the exact output law of one epoch on one adjacent pair and the
    max coordinate (sliced, rounded down, composed over independent epochs) is a post-processing
    (:mod:`._max_statistic`)."""
    from . import _max_statistic as ms

    if bound != "lower":
        raise ParameterError("bound", "'lower' for method 'max_statistic'", bound, message=
                             f"bound must be 'lower' for method 'max_statistic' with sampler '{NAME}' (got {bound!r}): "
                         "the max statistic gives only a lower bound; use method 'pld' for a certified upper bound")
    unknown = sorted(set(options) - {"c_grid", "discretization"})
    if unknown:
        raise ValueError(f"options {unknown} do not apply to method 'max_statistic' (allowed: c_grid, discretization)")
    r = ms.lower_bound_result(quantity, target, 1.0, 0.0, float(sigma), steps, epochs=epochs, **options)
    method = MAX_STATISTIC_METHOD if r.method == ms.EVENTS_METHOD else r.method
    return AccountingResult(r.value, r.kind, method, r.accuracy, r.lower, r.upper, r.flags)


#: method label of the one-epoch max-statistic lower bound (threshold events {M ≥ C}, {M < C})
MAX_STATISTIC_METHOD = "max-statistic events"


class _Floor(NamedTuple):
    """A max-statistic lower bound (:func:`_max_statistic_floor`): its value and method label; 0.0 and None
    where it gives none."""
    value: float
    method: str | None


def _max_statistic_floor(quantity, target, sigma, steps, epochs) -> _Floor:
    """The Chua et al. max-statistic lower bound on ε(δ) / δ(ε) at default settings (value and method), or value
    0.0 and method None where it is flagged (δ below the PLD floor) or nan.  A valid lower bound on the true curve,
    not an estimate: MoG(1) vs N(0, σ²I) is the exact output law of E epochs on one adjacent pair, and
    for E = 1 the hockey-stick difference of the threshold events {M ≥ C}, {M < C} is evaluated exactly
    (closed-form Φ in log space, checked against mpmath in tests/test_max_statistic.py), for E > 1 the
    sliced max's losses are rounded down and its FFT tail moved off δ (optimistic), see :mod:`._max_statistic`."""
    r = _max_statistic_lower(quantity, target, sigma, steps, epochs, "lower", {})
    if BELOW_FLOOR_FLAG in r.flags or not math.isfinite(r.value):
        return _Floor(value=0.0, method=None)
    return _Floor(value=float(r.value), method=r.method)


def _lower_label(pld_lower, floor):
    """accuracy entries naming which certified lower bound gave the lower end: the PLD one or the max statistic
    (``floor``, a :class:`_Floor`)."""
    by = floor.method if floor.method is not None and floor.value > pld_lower else "pld_accounting"
    return {"lower_method": by, "lower_pld": pld_lower,
            "lower_max_statistic": floor.value if floor.method else None}


def _allocation_options(options):
    """(accuracy setting, its relative width) of method allocation; ValueError for options it does not take."""
    accuracy = options.pop("accuracy", "default")
    check_choice("accuracy", accuracy, tuple(ALLOCATION_REL_WIDTH))
    if options:
        raise ValueError(f"options {sorted(options)} do not apply to method 'allocation' with sampler '{NAME}' "
                         "(allowed: accuracy)")
    return accuracy, ALLOCATION_REL_WIDTH[accuracy]


def _allocation_method(lower_method=None):
    """The method string of an allocation result: each end's label, lower / upper (as the audit's interval rows)."""
    from dpsampling.engine.allocation import LOWER_METHOD, UPPER_METHOD

    return f"{lower_method or LOWER_METHOD} / {UPPER_METHOD}"


@functools.lru_cache(maxsize=512)
def _allocation_interval(quantity, target, sigma, steps, epochs, rel_width):
    """(lower, upper, info) of :func:`dpsampling.engine.allocation.epsilon_interval` / ``delta_interval`` (cached:
    the pipeline asks each end separately; ``info`` is not mutated).  δ: one pass at the first grid step first; an
    upper end below :data:`RELIABLE_DELTA_FLOOR` is not refined (flagged by the caller: at δ ~ 1e-12 floating-point
    noise of the composition is ~1 % of δ, so the width cannot be met and six passes cost seconds; at δ ~ 5e-15 the
    ends cross)."""
    from dpsampling.engine import allocation

    if quantity == "epsilon":
        return allocation.epsilon_interval(target, sigma, steps_per_epoch=steps, epochs=epochs, rel_width=rel_width)
    return _allocation_delta_curve((target,), sigma, steps, epochs, rel_width)[0]


@functools.lru_cache(maxsize=64)
def _allocation_delta_curve(epsilons, sigma, steps, epochs, rel_width):
    """(lower, upper, info) at each ε of the tuple ``epsilons`` (:func:`dpsampling.engine.allocation.delta_curve`:
    one set of compositions for all; cached: the pipeline asks each end separately).  A first pass whose upper
    end is below :data:`RELIABLE_DELTA_FLOOR` is not refined (flagged by the caller: at δ ~ 1e-12 floating-point
    noise of the composition is ~1 % of δ, so the width cannot be met and six passes cost seconds; at δ ~ 5e-15
    the ends cross)."""
    from dpsampling.engine import allocation

    return allocation.delta_curve(epsilons, sigma, steps_per_epoch=steps, epochs=epochs, rel_width=rel_width,
                                  refine_from=RELIABLE_DELTA_FLOOR)


def _allocation_result(quantity, target, sigma, steps, epochs, bound, options, interval=None):
    """ε(δ) or δ(ε) by method allocation: the certified interval of :mod:`dpsampling.engine.allocation` (upper end
    from a dominating convex-order spread, lower end from a dominated merge; that module argues each side), the
    lower end raised to the max-statistic lower bound where that is larger (:func:`_max_statistic_floor`, also a
    certified lower bound, so the max of the two is one: at small σ with one epoch its threshold events are nearly
    tight, e.g. σ = 0.8, T = 20, δ = 1e-5: 2.74660 vs the merge's 2.74387); value = the end ``bound`` asks for, both
    ends filled, each end's method in ``accuracy``; one step per epoch: exact.  ``interval``: its (lower, upper,
    info) if already computed (:func:`delta_curve`)."""
    from dpsampling.engine.allocation import LOWER_METHOD, UPPER_METHOD

    accuracy, rel_width = _allocation_options(options)
    if steps == 1:
        return deterministic.one_batch_per_epoch(quantity, target, sigma, epochs)
    if interval is None:
        interval = _allocation_interval(quantity, float(target), float(sigma), steps, epochs, rel_width)
    lo, up, info = interval
    lo, up = float(lo), float(up)
    floor = _max_statistic_floor(quantity, float(target), float(sigma), steps, epochs)
    lower_method = floor.method if floor.method is not None and floor.value > lo else LOWER_METHOD
    lo_merge, lo = lo, max(lo, floor.value)
    width = (up - lo) / up if up > 0 else 0.0
    flags = () if width <= rel_width else (WIDTH_NOT_MET_FLAG,)
    if quantity == "delta" and up < RELIABLE_DELTA_FLOOR:  # not refined: flagged, the width not claimed
        flags = (BELOW_FLOOR_FLAG,)
    acc = {"accuracy": accuracy, "rel_width_target": rel_width, "rel_width": width,
           "grid_step": float(info["step"]), "loss_step": float(info["loss_step"]), "passes": len(info["passes"]),
           "upper_method": UPPER_METHOD, "lower_method": lower_method, "lower_merge": lo_merge,
           "lower_max_statistic": floor.value if floor.method else None}
    return AccountingResult(value=up if bound == "upper" else lo, kind=bound, method=_allocation_method(lower_method),
                            accuracy=acc, lower=lo, upper=up, flags=flags)


def _allocation_sigma(epsilon, delta, steps, epochs, rel_tol, options):
    """σ by method allocation (kind ``upper``): value = upper = a σ whose certified upper ε(δ) is ≤ ``epsilon``
    (sufficient), lower = a σ whose certified lower ε(δ) is > ``epsilon`` (provably insufficient; 0 if none
    was found), :func:`dpsampling.engine.allocation.sigma_interval`; one step per epoch: exact."""
    from dpsampling.engine import allocation

    accuracy, rel_width = _allocation_options(options)
    if steps == 1:
        return deterministic.one_batch_per_epoch("sigma", (epsilon, delta), None, epochs)
    lo, up, info = allocation.sigma_interval(float(epsilon), float(delta), steps_per_epoch=steps, epochs=epochs,
                                             rel_width=rel_width, rel_tol=rel_tol)
    lo, up = float(lo), float(up)
    acc = {"accuracy": accuracy, "rel_width_target": rel_width, "rel_tol": rel_tol,
           "upper_method": info["method_sufficient"], "lower_method": info["method_insufficient"],
           "evaluations": info["evaluations"], "epsilon_upper_at_sufficient": info["epsilon_upper_at_sufficient"],
           "epsilon_lower_at_insufficient": info["epsilon_lower_at_insufficient"]}
    return AccountingResult(value=up, kind="upper", method=_allocation_method(), accuracy=acc, lower=lo,
                            upper=up)


def _config(accuracy, loss_discretization, tail_truncation, eps_scale):
    lazy.require("PLD_accounting", "balls_and_bins method 'pld'")  # --- core install (epochs) ---
    from PLD_accounting import AllocationSchemeConfig, ConvolutionMethod

    check_choice("accuracy", accuracy, tuple(ACCURACY))
    a = ACCURACY[accuracy]
    s = {"accuracy": accuracy,
         "loss_discretization": max(_MIN_LOSS_DISCRETIZATION, a["rel_loss_discretization"] * eps_scale),
         "tail_truncation": a["tail_truncation"]}
    if loss_discretization is not None:
        s["loss_discretization"] = float(check_positive("loss_discretization", loss_discretization))
    if tail_truncation is not None:
        s["tail_truncation"] = float(check_positive("tail_truncation", tail_truncation))
    cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM,
                                 loss_discretization=s["loss_discretization"], tail_truncation=s["tail_truncation"])
    return cfg, s


def allocation_pld(sigma, steps, epochs=1, bound="upper", *, accuracy="default",
                   loss_discretization=None, tail_truncation=None, eps_scale=1.0):
    """dp_accounting PLD (add and remove) of E epochs of balls-and-bins; (pld, settings).

    ``bound="upper"``: dominating PLD (valid upper bound); ``"lower"``: dominated.
    """
    lazy.require("PLD_accounting", "balls_and_bins method 'pld'")  # --- core install (epochs) ---
    from PLD_accounting import BoundType, PrivacyParams, gaussian_allocation_pld

    steps, epochs = _check(sigma, steps, epochs, bound, "pld")
    cfg, s = _config(accuracy, loss_discretization, tail_truncation, eps_scale)
    params = PrivacyParams(sigma=float(sigma), num_steps=steps, num_epochs=epochs)
    bt = BoundType.DOMINATES if bound == "upper" else BoundType.IS_DOMINATED
    with geometric_kernel():
        return gaussian_allocation_pld(params=params, config=cfg, bound_type=bt), s


def _query_options(sigma, steps, epochs, bound, method, options):
    """The checks ``delta`` and ``epsilon`` share: pops q, direction and both_ends from ``options`` (q must
    be 1/steps or absent, direction add_remove) and returns (steps, epochs, both_ends)."""
    q, direction, both_ends = (options.pop(k, d) for k, d in (("q", None), ("direction", "add_remove"),
                                                               ("both_ends", False)))
    steps, epochs = _check(sigma, steps, epochs, bound, method, q, direction)
    return steps, epochs, both_ends


def delta(epsilon, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """δ(ε) of E epochs of balls-and-bins with ``steps`` batches per epoch (max over add/remove).

    method="allocation" (default): the certified interval of :func:`_allocation_result` (option ``accuracy``
    "default" / "fine" = relative width 1e-2 / 1e-3); kind = ``bound``, both ends filled.  method="pld": options
    ``accuracy`` ("default"/"fine"), ``loss_discretization``, ``tail_truncation``; kind = ``bound``.  method="montecarlo": options of
    :func:`dpsampling.samplers.balls_and_bins_mc.mc_delta` (mc_samples, mc_seed, mc_failure_prob, mc_half_width, ...);
    kind = ``estimate`` with its confidence interval in lower/upper.
    """
    steps, epochs, both_ends = _query_options(sigma, steps, epochs, bound, method, options)
    check_epsilon(epsilon)
    if method == "montecarlo":
        from .balls_and_bins_mc import mc_delta

        return mc_delta(float(epsilon), sigma=float(sigma), steps=steps, epochs=epochs, **options)
    if method == "max_statistic":
        return _max_statistic_lower("delta", epsilon, sigma, steps, epochs, bound, options)
    if method == "allocation":
        return _allocation_result("delta", epsilon, sigma, steps, epochs, bound, options)
    r = delta_curve([epsilon], sigma=sigma, steps=steps, epochs=epochs, bound=bound, method="pld", **options)[0]
    if both_ends:
        other = delta_curve([epsilon], sigma=sigma, steps=steps, epochs=epochs, bound=_OTHER[bound], method="pld",
                            **options)[0]
        low = r if bound == "lower" else other
        r = _bracket(r, other)
        r = dataclasses.replace(r, accuracy={**r.accuracy, **{k: low.accuracy[k] for k in _LOWER_LABEL_KEYS}})
    return r


#: accuracy entries of a lower end that say which certified lower bound gave it (:func:`_lower_label`)
_LOWER_LABEL_KEYS = ("lower_method", "lower_pld", "lower_max_statistic")


def delta_curve(epsilons, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """δ(ε) at each ε of ``epsilons``; a list of AccountingResult.

    method "allocation" (default): the same results as :func:`delta` at each ε, from one set of compositions
    (:func:`dpsampling.engine.allocation.delta_curve`).  method "pld": from one PLD;
    ``bound="lower"``: each value is max(PLD lower, max-statistic lower bound), both certified lower bounds
    (module doc), labelled in ``accuracy`` (lower_method, lower_pld, lower_max_statistic) as in
    :func:`delta`; ``bound="upper"``: the dominating PLD's δ."""
    steps, epochs = _check(sigma, steps, epochs, bound, method)
    for e in epsilons:
        check_epsilon(e)
    if method == "allocation":
        _allocation_options(dict(options))
        if steps == 1:
            return [delta(e, sigma=sigma, steps=steps, epochs=epochs, bound=bound, **options) for e in epsilons]
        rel_width = ALLOCATION_REL_WIDTH[options.get("accuracy", "default")]
        intervals = _allocation_delta_curve(tuple(float(e) for e in epsilons), float(sigma), steps, epochs, rel_width)
        return [_allocation_result("delta", e, sigma, steps, epochs, bound, dict(options), iv)
                for e, iv in zip(epsilons, intervals)]
    if method != "pld":
        raise ParameterError("method", "allocation or pld for delta_curve", method)
    pld, s = allocation_pld(sigma, steps, epochs, bound, **options)
    out = []
    for e in epsilons:
        d = float(pld.get_delta_for_epsilon(float(e)))
        acc = s
        if bound == "lower":  # the lower end: the larger of the two certified lower bounds
            floor = _max_statistic_floor("delta", float(e), float(sigma), steps, epochs)
            acc = {**s, **_lower_label(d, floor)}
            d = max(d, floor.value)
        flags = (BELOW_FLOOR_FLAG,) if d < RELIABLE_DELTA_FLOOR else ()
        out.append(AccountingResult(value=d, kind=bound, method="pld_accounting", accuracy=acc,
                                    lower=d if bound == "lower" else None,
                                    upper=d if bound == "upper" else None, flags=flags))
    return out


#: the two directions of the add/remove pair (PLD_accounting's Direction members)
DIRECTIONS = ("remove", "add")


@functools.lru_cache(maxsize=256)
def _directional_pmf(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, route="geom"):
    """dp_accounting PMF of one direction (PLD_accounting), cached: one PLD serves every δ query.

    DOMINATES / IS_DOMINATED make its ε(δ) an upper / lower bound for that direction (module doc); ε(δ) of
    the pair is the max over the two directions, so max of per-direction upper (lower) bounds is an upper
    (lower) bound.  ``route``: PLD_accounting's convolution method, "geom" (GEOM: exp-space geometric grids,
    both bound types, O(n²) in the grid) or "fft" (FFT: linear exp-space grid, DOMINATES only, O(n log n);
    ``loss_discretization`` is then its linear step, ``max_grid_fft`` = ``_FFT_MAX_GRID``)."""
    lazy.require("PLD_accounting", "balls_and_bins method 'pld'")  # --- core install (epochs) ---
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        Direction,
        PrivacyParams,
        gaussian_allocation_directional_pld,
    )
    from PLD_accounting.dp_accounting_support import linear_dist_to_dp_accounting_pmf

    bt = BoundType.DOMINATES if bound == "upper" else BoundType.IS_DOMINATED
    if route == "fft":
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.FFT, loss_discretization=loss_discretization,
                                     tail_truncation=tail_truncation, max_grid_fft=_FFT_MAX_GRID)
    else:
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM,
                                     loss_discretization=loss_discretization, tail_truncation=tail_truncation)
    with geometric_kernel():
        dist = gaussian_allocation_directional_pld(
            params=PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs), config=cfg,
            direction=Direction.REMOVE if direction == "remove" else Direction.ADD, bound_type=bt)
    return linear_dist_to_dp_accounting_pmf(dist=dist, bound_type=bt)


def _eps_one(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, delta, route="geom"):
    pmf = _directional_pmf(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, route)
    return max(0.0, float(pmf.get_epsilon_for_delta(delta)))


def _fft_upper(sigma, steps, epochs, direction, h, tail_truncation, delta):
    """Upper bound on one direction's ε(δ) from PLD_accounting's FFT route at linear step ``h``; inf where the
    route does not apply (T = 1: REMOVE needs two steps) or PLD_accounting refuses (its mass-conservation
    check).  An upper bound by the same argument as the GEOM one (DOMINATES), so min(FFT, GEOM) is one too."""
    if steps < 2:
        return math.inf
    try:
        return _eps_one(sigma, steps, epochs, "upper", direction, h, tail_truncation, delta, "fft")
    except (ValueError, MemoryError):
        return math.inf


def _fft_error_floor(sigma, steps, epochs, fft_err):
    """Predicted error of the FFT upper that no step removes: PLD_accounting caps one step's linear grid at
    _FFT_MAX_GRID / T points over a lognormal factor whose range is ≈ e^{1/(2σ²) + 8/σ} / T, so its step is
    ≥ e^{1/(2σ²) + 8/σ} / _FFT_MAX_GRID, error ≈ fft_err·T·step (σ = 1, T = 1000: predicted 0.015, measured
    ε_FFT − ε ≈ 0.01 at every h ≤ 4e-6; σ = 2: 2e-4).  E epochs compose E capped epochs, so the floor is E×
    (σ = 1.5, T = 1000, E = 10: predicted 7.8e-3, measured FFT upper 0.30228 at every h from 5e-6 to 2e-5 against
    a GEOM bracket [0.2847, 0.2985]; without the factor E the bracket trusted it and spent 65 CPU-s).  Only picks
    whether the FFT route is tried."""
    return epochs * fft_err * steps * math.exp(0.5 / sigma**2 + 8.0 / sigma) / _FFT_MAX_GRID


class Interval(NamedTuple):
    """A certified interval [lower, upper] on ε(δ)."""
    lower: float
    upper: float


class EpsilonBracket:
    """Certified ends of ε(δ) per direction (remove, add) and their max-over-directions interval.

    Why each end is a bound (the one place this is argued; nothing else in the bracket decides a side):

    * ``upper(d)`` = min of every upper bound on direction d's ε(δ) added so far: PLD_accounting's dominating
      PLDs (DOMINATES: every loss rounded up in each stage, truncated tail mass moved to +∞) by the GEOM
      route (``geom_upper``) and the FFT route (``fft_upper``, DOMINATES only); E dominating epoch PLDs compose
      to one dominating the E-epoch pair (losses add; dominating pairs compose: Zhu, Dong & Wang, AISTATS
      2022).  A min of upper bounds is an upper bound.
    * ``lower[d]`` = max of the lower bounds added: PLD_accounting's dominated PLDs (IS_DOMINATED, GEOM only:
      losses rounded down, truncated tail mass dropped; composed likewise).  A max of lower bounds is one.
    * ``floor``: another certified lower bound on the pair's ε (the max statistic, :func:`_max_statistic_floor`).
    * :meth:`combine`: the pair's ε(δ) is the max over the two directions, so max_d upper(d) bounds it from
      above and max(floor, max_d lower[d]) from below (a lower bound on one direction's ε is one on the max).

    Each end records the loss step it came from (``fft_step``, ``lower_step``); the steps change the width,
    never the side of an end.
    """

    def __init__(self, floor=0.0):
        self.floor = floor
        self.geom_upper = dict.fromkeys(DIRECTIONS, math.inf)  # per direction: the GEOM upper alone
        self.fft_upper = dict.fromkeys(DIRECTIONS, math.inf)  # and the FFT one alone
        self.fft_step = dict.fromkeys(DIRECTIONS, None)  # linear step of the last FFT upper tried
        self.lower = dict.fromkeys(DIRECTIONS, 0.0)
        self.lower_step = dict.fromkeys(DIRECTIONS, None)  # step of the last GEOM lower

    def upper(self, d):
        return min(self.geom_upper[d], self.fft_upper[d])

    def add_geom_upper(self, d, value):
        self.geom_upper[d] = min(self.geom_upper[d], value)

    def add_fft_upper(self, d, value, h):
        self.fft_upper[d] = min(self.fft_upper[d], value)
        self.fft_step[d] = h

    def add_lower(self, d, value, step):
        self.lower[d] = max(self.lower[d], value)
        self.lower_step[d] = step

    def combine(self) -> Interval:
        """[max(floor, max_d lower), max_d upper]: the certified interval on the pair's ε(δ)."""
        return Interval(max(self.floor, *self.lower.values()), max(self.upper(d) for d in DIRECTIONS))

    @property
    def width(self):
        lo, up = self.combine()
        return up - lo

    def top(self, directions=DIRECTIONS):
        """The direction (of ``directions``) with the largest upper end (the first one on a tie)."""
        return max(directions, key=self.upper)

    def upper_route(self):
        """Which route ("geom" or "fft") gave the bracket's upper end."""
        d = self.top()
        return "geom" if self.upper(d) == self.geom_upper[d] else "fft"


@dataclasses.dataclass(frozen=True)
class StepPolicy:
    """The cost policy of the ε(δ) bracket: which loss step, route and direction the next pass computes.

    Every field is a tuned constant (measured in bench/bench_balls_and_bins.py); none of them can move an end
    to the wrong side (:class:`EpsilonBracket` argues the sides), they change only the cost and the width.

    PLD_accounting's cost grows as loss_discretization⁻² (its geometric convolutions are O(n²) in the grid
    size) while the width of [lower, upper] shrinks ∝ the step (measured: width ≈ 0.64 × loss_discretization at
    σ = 2, T = 1000, exactly linear over a 4× range).  So: one coarse pass at ``coarse`` × the width target,
    then one pass at the step that the coarse pass's own measured width predicts, aiming at ``aim`` × the
    target; a further pass only if still too wide (at most ``max_passes``).  With E epochs PLD_accounting uses
    the step / E per epoch, so steps are chosen from the E-epoch ε.
    """

    coarse: float = 4.0
    aim: float = 0.92
    max_passes: int = 4
    #: FFT upper (PLD_accounting's FFT route, :func:`_fft_upper`): linear step h = fft_step × (width aimed at) / T;
    #: its error ε_FFT − ε ≈ fft_err·T·h (measured σ = 2, T = 1000: 0.3·T·h at E = 1, 0.1–0.2·T·h at E = 5, 10)
    fft_step: float = 0.4
    fft_err: float = 0.3
    #: the FFT upper of a direction replaces GEOM's refinement of it only where it is below
    #: lower + fft_trust × (GEOM upper − lower) of that direction (:meth:`trusts_fft`)
    fft_trust: float = 0.7
    #: with the FFT upper, the GEOM lower aims at aim_fft × the width target; relative GEOM cost per direction
    #: (measured: REMOVE ≈ 2.4× ADD at σ = 2, T = 1000, E = 1 and 10); constants, so the result is reproducible
    aim_fft: float = 0.92
    geom_cost_remove: float = 2.4
    geom_cost_add: float = 1.0
    #: σ from which the bracket starts with the FFT uppers and ONE GEOM lower (of the direction whose predicted
    #: step is cheapest, usually ADD) at a step from the model  ε − GEOM lower ≈ geom_lower_err × loss_discretization
    #: (measured ADD, σ = 2, T = 1000: 0.48–0.55 at E = 1, 5, 10), skipping the coarse GEOM pass of both ends and
    #: directions (at σ = 2, T = 1000, E = 10 it cost 10 of 42 CPU-s and only fixed the step).  Below it the FFT
    #: upper is loose (σ ≲ 0.7) and the coarse pass is kept.
    fft_first_sigma: float = 1.0
    geom_lower_err: float = 0.5
    min_loss_discretization: float = _MIN_LOSS_DISCRETIZATION

    def geom_cost(self, d):
        return self.geom_cost_remove if d == "remove" else self.geom_cost_add

    def coarse_step(self, guess, rel_width):
        """The first GEOM pass's step: ``coarse`` × the width target at the Poisson estimate of ε."""
        return max(self.min_loss_discretization, self.coarse * rel_width * max(1e-3, guess))

    def fft_first_step(self, guess, sigma, steps, epochs, rel_width):
        """Linear step of the FFT uppers the bracket starts from (σ ≥ ``fft_first_sigma``), or None (coarse GEOM
        pass first): below that σ, at T = 1 (REMOVE needs two steps) or where the FFT grid cap's error is too
        large."""
        if sigma < self.fft_first_sigma or steps < 2:
            return None
        if _fft_error_floor(sigma, steps, epochs, self.fft_err) > 0.25 * rel_width * guess:
            return None
        return self.fft_step * rel_width * guess / steps

    def first_lower(self, fft_uppers, h, rel_width, steps):
        """(step, direction) of the GEOM lower that the error models predict to close the width (``aim_fft`` ×
        target) next to the FFT uppers at the least cost; None where no lower can close it.

        Allowed error b of direction d's lower: the aimed width less the FFT error allowance and d's gap to the
        max; its step b/geom_lower_err costs ∝ geom_cost(d)/step²: the cheaper direction is taken (ADD, unless its
        ε is well below REMOVE's: σ = 1.25, T = 100, E = 10 took ADD's lower at a 10× smaller step, 48 CPU-s)."""
        e_up = max(fft_uppers.values())
        best = None
        for d in DIRECTIONS:
            b = self.aim_fft * rel_width * e_up - self.fft_err * steps * h - (e_up - fft_uppers[d])
            if b > 0:
                ld = max(self.min_loss_discretization, b / self.geom_lower_err)
                if best is None or self.geom_cost(d) / ld**2 < best[0]:
                    best = (self.geom_cost(d) / ld**2, ld, d)
        return None if best is None else best[1:]

    def trusts_fft(self, br, d):
        """Whether d's FFT upper is trusted, so that GEOM does not refine d's upper: where GEOM has bracketed d,
        only if the FFT upper is below lower + fft_trust·(GEOM upper − lower) (its error grows as σ falls: at
        σ = 1, T = 1000 it sits at 96 % of that bracket, at σ = 2 at 53 %; refining the GEOM upper there took
        σ = 1, T = 1000, E = 1 from 67 CPU-s with the width missed to 7 s); with only d's GEOM lower, at step s,
        the GEOM upper is taken as lower + 2·s (measured GEOM widths: ≈ 0.6–1.0·s): at T = 4 ADD's FFT upper is
        27·s above its lower.  Untrusted, GEOM refines the upper too (both are upper bounds)."""
        lo, geom = br.lower[d], br.geom_upper[d]
        if not math.isfinite(geom):
            geom = lo + 2 * br.lower_step[d] if br.lower_step[d] else math.inf
        return br.fft_upper[d] < lo + self.fft_trust * (geom - lo)

    def fft_retry_step(self, br, d, e_lo, rel_width, sigma, steps, epochs):
        """Linear step of a further FFT upper of d, or None.  h = fft_step·W/T for the absolute width
        W = rel_width·(lower end) aimed at (error ≈ fft_err·T·h ≈ 0.16·W); tried again at h/4 only when that
        error allowance exceeds a quarter of the width aimed at (the lower end rose or fell a lot).  Cheap
        (O(n log n)) where the per-step privacy loss is light-tailed (σ ≳ 1); where it is not, it comes out above
        GEOM's and is not used."""
        if _fft_error_floor(sigma, steps, epochs, self.fft_err) > 0.25 * rel_width * e_lo:
            return None
        h = self.fft_step * rel_width * e_lo / steps
        if br.fft_step[d] is not None:
            if not self.trusts_fft(br, d) or self.fft_err * steps * br.fft_step[d] <= 0.25 * rel_width * e_lo:
                return None
            h = min(h, br.fft_step[d] / 4)
        return h

    def next_pass(self, br, active, ld, rel_width, steps):
        """(upper directions, lower directions, step) of the next GEOM pass.  GEOM refines the uppers not given
        by FFT, and the lower of ONE direction (a lower bound of any one direction bounds the pair's ε from
        below).  The factors are guesses that only pick the step: the loop checks the achieved width."""
        e_lo, e_up = br.combine()
        width = e_up - e_lo
        upper_dirs = [d for d in active if not self.trusts_fft(br, d)]
        top = br.top(active)
        if all(self.trusts_fft(br, d) for d in active):
            # only lowers shrink with the GEOM step.  Direction d's lower can reach ≈ its ε ≈ upper(d) − u
            # (u = fft_err·T·h, the FFT upper's error allowance), so it must close lower gap g_d = upper(d) − u −
            # lower(d) to b_d = a·e_up − u − (e_up − upper(d)) (a = aim_fft·rel_width): step factor b_d/g_d,
            # GEOM cost ∝ geom_cost(d)·(g_d/b_d)²; the cheapest direction is refined
            a = self.aim_fft * rel_width
            best = None
            for d in active:
                u = self.fft_err * steps * br.fft_step[d]
                g, b = br.upper(d) - u - br.lower[d], a * e_up - u - (e_up - br.upper(d))
                if g > 0 and b > 0 and (best is None or self.geom_cost(d) * (g / b) ** 2 < best[0]):
                    best = (self.geom_cost(d) * (g / b) ** 2, d, b / g)
            lower_dirs, factor = ([best[1]], best[2]) if best is not None else ([top], 0.5)
        else:
            # next width w' = width·f; the ends sit about symmetrically around ε, so the next upper is
            # ≈ mid + w'/2 and w' ≤ a·(mid + w'/2) with a = aim·rel_width gives f
            lower_dirs = [top]
            a = self.aim * rel_width
            factor = (a * 0.5 * (e_lo + e_up) / ((1 - 0.5 * a) * width) if math.isfinite(width) and width > 0
                      else 0.1)
        return upper_dirs, lower_dirs, max(self.min_loss_discretization, ld * min(0.9, max(0.1, factor)))


#: the step policy the samplers use
DEFAULT_STEP_POLICY = StepPolicy()


class BracketResult(NamedTuple):
    """What :func:`_epsilon_bracket` returns: the certified ends, how they were reached, and flags."""
    lower: float
    upper: float
    info: dict
    flags: tuple


@functools.lru_cache(maxsize=256)
def _epsilon_bracket(delta, sigma, steps, epochs, rel_width, tail_truncation, loss_discretization=None, floor=0.0,
                     policy=DEFAULT_STEP_POLICY) -> BracketResult:
    """Certified [lower, upper] on ε(δ), refined until (upper − lower)/upper ≤ ``rel_width``.

    Each pass builds, per direction, PLD_accounting's dominating and/or dominated PLD at one loss step and adds
    it to an :class:`EpsilonBracket` (which keeps, per direction, the smallest upper and the largest lower: each
    a bound); ``policy`` (:class:`StepPolicy`) picks the steps, routes and directions.  ``floor``: another
    certified lower bound on ε(δ) (the max-statistic one, :func:`_max_statistic_floor`).  A direction whose
    upper is ≤ the bracket's lower cannot move either end and is not refined.  ``loss_discretization`` given:
    one GEOM pass of both ends and directions at that step.
    """
    br = EpsilonBracket(floor)
    upper_dirs = lower_dirs = list(DIRECTIONS)
    if loss_discretization is None:
        guess = _poisson_guess(delta, sigma, steps, epochs)
        ld = policy.coarse_step(guess, rel_width)
        h = policy.fft_first_step(guess, sigma, steps, epochs, rel_width)
        if h is not None:
            f = {d: _fft_upper(sigma, steps, epochs, d, h, tail_truncation, delta) for d in DIRECTIONS}
            if all(math.isfinite(v) for v in f.values()):
                for d in DIRECTIONS:
                    br.add_fft_upper(d, f[d], h)
                start = policy.first_lower(f, h, rel_width, steps)
                if start is not None:
                    ld, upper_dirs, lower_dirs = start[0], [], [start[1]]
    else:
        ld = loss_discretization
    passes = 0
    while True:
        refined = -math.inf  # largest upper refined in this pass: a direction below it cannot be the max
        for d in sorted(upper_dirs, key=lambda d: -br.upper(d)):
            if br.upper(d) > refined:
                br.add_geom_upper(d, _eps_one(sigma, steps, epochs, "upper", d, ld, tail_truncation, delta))
                refined = max(refined, br.upper(d))
        for d in lower_dirs:
            br.add_lower(d, _eps_one(sigma, steps, epochs, "lower", d, ld, tail_truncation, delta), ld)
        passes += 1
        e_lo, e_up = br.combine()
        reached = br.width <= rel_width * e_up
        if (reached or loss_discretization is not None or passes == policy.max_passes
                or ld <= policy.min_loss_discretization):
            break
        active = [d for d in DIRECTIONS if br.upper(d) > e_lo]
        for d in active:
            h = policy.fft_retry_step(br, d, e_lo, rel_width, sigma, steps, epochs)
            if h is not None:
                br.add_fft_upper(d, _fft_upper(sigma, steps, epochs, d, h, tail_truncation, delta), h)
        e_lo, e_up = br.combine()
        reached = br.width <= rel_width * e_up
        if reached:
            break
        upper_dirs, lower_dirs, ld = policy.next_pass(br, active, ld, rel_width, steps)
    e_lo, e_up = br.combine()
    info = {"loss_discretization": ld, "tail_truncation": tail_truncation, "rel_width_target": rel_width,
            "rel_width": br.width / e_up if e_up > 0 else 0.0, "passes": passes,
            "lower_pld": max(br.lower.values()),
            "upper_route": br.upper_route(),
            "fft_step": min((h for h in br.fft_step.values() if h is not None), default=None)}
    flags = () if reached or loss_discretization is not None else (WIDTH_NOT_MET_FLAG,)
    return BracketResult(e_lo, e_up, info, flags)


def epsilon(delta, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """ε(δ) of E epochs of balls-and-bins (max over add/remove).

    method "allocation" (default): the certified interval of :func:`_allocation_result` (option ``accuracy``
    "default" / "fine" = relative width 1e-2 / 1e-3; flag ``rel_width_not_reached`` where it was not met); kind
    = ``bound``, both ends filled; one step per epoch exact.  method "pld": the certified bracket of :func:`_epsilon_bracket` (options ``accuracy`` "default" /
    "fine" = relative width 5e-2 / 1e-2, or a fixed ``loss_discretization``; ``tail_truncation``); the
    end asked for by ``bound`` is returned, with both ends in lower/upper.  method "montecarlo": the
    estimate with its (1 − β) interval, by inverting the δ(ε) estimate and its band
    (:func:`dpsampling.samplers.balls_and_bins_mc.mc_epsilon`; options mc_samples, mc_seed, mc_failure_prob,
    importance, eps0).
    method "max_statistic": the Chua et al. lower bound."""
    steps, epochs, both_ends = _query_options(sigma, steps, epochs, bound, method, options)
    check_delta(delta)
    if method == "montecarlo":
        from .balls_and_bins_mc import mc_epsilon

        return mc_epsilon(float(delta), sigma=float(sigma), steps=steps, epochs=epochs, **options)
    if method == "max_statistic":
        return _max_statistic_lower("epsilon", delta, sigma, steps, epochs, bound, options)
    if method == "allocation":
        return _allocation_result("epsilon", delta, sigma, steps, epochs, bound, options)
    accuracy = options.pop("accuracy", "default")
    check_choice("accuracy", accuracy, tuple(ACCURACY))
    ld, tail = options.pop("loss_discretization", None), options.pop("tail_truncation", None)
    if options:
        raise ValueError(f"options {sorted(options)} do not apply to method 'pld' with sampler '{NAME}' "
                         "(allowed: accuracy, loss_discretization, tail_truncation)")
    if ld is not None:
        ld = float(check_positive("loss_discretization", ld))
    tail = (float(check_positive("tail_truncation", tail)) if tail is not None
            else min(1e-7, ACCURACY[accuracy]["tail_per_delta"] * float(delta)))
    floor = _max_statistic_floor("epsilon", float(delta), float(sigma), steps, epochs)
    lo, up, info, flags = _epsilon_bracket(float(delta), float(sigma), steps, epochs,
                                           ACCURACY[accuracy]["rel_width"], tail, ld, floor.value)
    info = {**info, **_lower_label(info["lower_pld"], floor)}  # (info is cached: not mutated)
    return AccountingResult(value=up if bound == "upper" else lo, kind=bound, method="pld_accounting",
                            accuracy={"accuracy": accuracy, **info}, lower=lo if both_ends or bound == "lower" else None,
                            upper=up if both_ends or bound == "upper" else None, flags=flags)


def epsilon_range(delta, *, sigma, steps, epochs=1, **options):
    """Certified interval (lower, upper) on ε(δ) (:func:`_epsilon_bracket`); kind ``upper``."""
    return epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="upper", both_ends=True, **options)


def sigma(epsilon, delta, *, steps, epochs=1, rel_tol=1e-3, q=None, direction="add_remove", bound=None,
          method=None, **options):
    """Smallest σ (to ``rel_tol``) whose certified upper ε(δ) is ≤ ``epsilon``; kind ``upper``.

    method "allocation" (default, :func:`_allocation_sigma`): value = upper = a certifiably sufficient σ, lower =
    a certifiably insufficient one.  method "pld": bisection in log σ on PLD_accounting's upper bound (monotone
    in σ): the returned σ is the upper end of the final bracket, so its upper-bound ε is ≤ the target.
    """
    if bound not in (None, "upper"):
        raise ParameterError("bound", "'upper' for sigma", bound, message=
                             f"bound must be 'upper' for sigma with sampler '{NAME}' (got {bound!r}): a sufficient σ comes "
                         "from the certified upper bound only")
    if method not in (None, "allocation", "pld"):
        raise ValueError(f"method must be 'allocation' or 'pld' for sigma with sampler '{NAME}' (got {method!r}): "
                         "Monte Carlo and the max statistic cannot certify a σ")
    steps, epochs = _check(1.0, steps, epochs, "upper", "pld", q, direction)
    check_positive("epsilon", epsilon)
    check_delta(delta)
    check_positive("rel_tol", rel_tol)
    if method in (None, "allocation"):
        return _allocation_sigma(epsilon, delta, steps, epochs, rel_tol, options)

    def eps_at(s):
        return epsilon_fn(delta, sigma=s, steps=steps, epochs=epochs, bound="upper", method="pld", **options).value

    lo, hi = 0.05, 1.0
    while eps_at(hi) > epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            raise ValueError(f"epsilon={epsilon!r} needs sigma > 1e4; ask for a larger epsilon")
    # the engine's bisection, in log σ, until hi/lo ≤ 1 + rel_tol (200 halvings: never the limit)
    log_lo, log_hi = bisect(lambda x: eps_at(math.exp(x)) > epsilon, math.log(lo), math.log(hi), 200,
                            width=math.log1p(rel_tol))
    lo, hi = math.exp(float(log_lo)), math.exp(float(log_hi))
    return AccountingResult(value=hi, kind="upper", method="pld_accounting",
                            accuracy={"rel_tol": rel_tol, **options}, lower=lo, upper=hi)


epsilon_fn = epsilon


__all__ = ["ACCURACY", "ALLOCATION_REL_WIDTH", "BOUNDS", "NAME", "allocation_pld", "delta", "delta_curve", "epsilon", "epsilon_range", "sigma"]


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
#: cost model of the certified bracket (method pld): CPU seconds ≈ 0.5 + _PLD_SECONDS · (T/1000)^a · E^_PLD_E_EXP,
#: a = _PLD_T_EXP up to 1000 steps per epoch and _PLD_T_EXP_LARGE beyond (fitted to bench/bench_cost_model.py on 2
#: cores, σ ∈ {0.5, 1, 2, 3} × T ∈ {100, 235, 1000} × E ∈ {1, 5, 60}, and 10 000 steps × 2 epochs at σ = 3 ≈ 300 s;
#: the cost varies about 5× with σ, the model takes the dearer σ ≈ 1);
#: Monte Carlo: MC_DRAWS_PER_SECOND normal draws per direction; σ: about SIGMA_EVALUATIONS brackets (bisection)
_PLD_SECONDS = 3.5
_PLD_T_EXP = 1.2
_PLD_T_EXP_LARGE = 1.8
_PLD_E_EXP = 0.8
MC_DRAWS_PER_SECOND = 10**10 / 60
#: cost model of method allocation, CPU seconds of one ε interval at accuracy default: ALLOC_SECONDS +
#: ALLOC_PER_STEP · T + ALLOC_PER_EPOCH · E (fitted to bench/bench_cost_model.py, σ ∈ {0.5, 1, 2, 3} × T ∈ {100, 235,
#: 1000, 5005} × E ∈ {1, 10, 60, 90} × δ ∈ {1e-5, 1e-6}: measured 0.01-0.72 s, at most 1.0× the model; T = 1000,
#: E = 1000: 1.6 s); × ALLOC_FINE_FACTOR at accuracy fine (measured 11-17×); a δ(ε) interval × (1 + ALLOC_DELTA_PER_EPOCH
#: · E) (its lower end's loss step shrinks with the slope of log δ and with E: MNIST-like δ(2) 19 s); σ: about
#: ALLOC_SIGMA_EVALUATIONS intervals (two bisections; MNIST-like: 18)
ALLOC_SECONDS = 0.1
ALLOC_PER_STEP = 1e-4
ALLOC_PER_EPOCH = 1.5e-3
ALLOC_FINE_FACTOR = 15.0
ALLOC_DELTA_PER_EPOCH = 2.0
ALLOC_SIGMA_EVALUATIONS = 30
SIGMA_EVALUATIONS = 15
#: Monte Carlo samples per direction when neither mc_samples nor mc_half_width is given; the budget with mc_half_width
MC_SAMPLES = 100_000
MC_MAX_SAMPLES = 10**9  # as balls_and_bins_mc (not imported here: it loads scipy)


def _cost(question):
    """Predicted seconds of one question (see the constants above)."""
    from .spec import Cost

    t, e = float(question.steps), float(question.epochs)
    if question.method == "montecarlo":
        n = question.options.get("mc_samples") or MC_SAMPLES
        return Cost(0.5 + 2 * n * t * e / MC_DRAWS_PER_SECOND)
    if question.method == "max_statistic":
        return Cost(0.3 if e == 1 else 1.5)
    if question.method == "allocation":
        return Cost(_allocation_seconds(question))
    one = 0.5 + _PLD_SECONDS * (t / 1000.0) ** (_PLD_T_EXP if t <= 1000 else _PLD_T_EXP_LARGE) * e ** _PLD_E_EXP
    if question.options.get("accuracy") == "fine":
        one *= 5.0
    return Cost(one * (SIGMA_EVALUATIONS if question.quantity == "sigma" else 1))


def _allocation_seconds(question):
    """Predicted CPU seconds of method allocation (constants above)."""
    t, e = float(question.steps), float(question.epochs)
    if t == 1:
        return 0.05  # closed form
    one = ALLOC_SECONDS + ALLOC_PER_STEP * t + ALLOC_PER_EPOCH * e
    if question.options.get("accuracy") == "fine":
        one *= ALLOC_FINE_FACTOR
    if question.quantity == "delta":
        one *= 1 + ALLOC_DELTA_PER_EPOCH * e
    return one * (ALLOC_SIGMA_EVALUATIONS if question.quantity == "sigma" else 1)


def _spec():
    from . import _allocation_epochs
    from .spec import Option, SamplerSpec

    mc, pld, certified = ("montecarlo",), ("pld",), ("allocation", "pld")
    return SamplerSpec(
        name=NAME, summary="balls-and-bins: every record goes to one uniformly random step of each epoch",
        pair_add="(N(0,σ²I_T), MoG(1)) per epoch, MoG(1) = (1/T) Σ_t N(e_t, σ²I_T)",
        pair_remove="(MoG(1), N(0,σ²I_T)) per epoch", batch="one_per_step",
        bounds={"allocation": ("upper", "lower"), "pld": ("upper", "lower"), "montecarlo": ("upper", "lower"),
                "max_statistic": ("lower",)},
        sigma_bounds=("upper",), methods=METHODS, default_method="allocation", bracket_methods=certified,
        quantities={"montecarlo": ("epsilon", "delta"), "max_statistic": ("epsilon", "delta")},
        options=(
            Option("accuracy", "accuracy", str, "certified interval: default (relative width ≤ 1e-2; method pld: "
                   "≤ 5e-2) or fine (≤ 1e-3; method pld: ≤ 1e-2)", default="default", choices=tuple(ACCURACY),
                   methods=certified),
            Option("loss_discretization", "loss-discretization", float, "fixed PLD_accounting step", low=0.0,
                   low_open=True, methods=pld, cli=False),
            Option("tail_truncation", "tail-truncation", float, "PLD_accounting tail mass", low=0.0, low_open=True,
                   methods=pld, cli=False),
            Option("rel_tol", "rel-tol", float, "σ bisection relative width", low=0.0, low_open=True,
                   methods=certified, quantities=("sigma",), cli=False),
            Option("mc_samples", "mc-samples", int, f"samples per direction (default {MC_SAMPLES:g}); with "
                   "--mc-half-width, the sample budget", default=MC_SAMPLES, low=1, high=MC_MAX_SAMPLES, methods=mc,
                   fill_unless="mc_half_width"),
            Option("mc_seed", "mc-seed", int, "seed (default 0)", default=0, low=0, methods=mc),
            Option("mc_failure_prob", "mc-failure-prob", float, "probability β that the band misses the true value "
                   "(default 0.01)", default=0.01, low=0.0, high=1.0, low_open=True, high_open=True, methods=mc),
            Option("mc_half_width", "mc-half-width", float, "requested half-width of the band on δ; the sample size "
                   "is computed (exit 1 if it exceeds --mc-samples)", low=0.0, low_open=True, methods=mc,
                   quantities=("delta",)),
            Option("c_grid", "c-grid", object, "threshold grid", methods=("max_statistic",), cli=False),
            Option("discretization", "discretization", float, "max-statistic PLD step", low=0.0, low_open=True,
                   methods=("max_statistic",), cli=False),
        ),
        audit_kind="upper", audit_optional=True, cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma,
        relation="zero_out", loader="balls_and_bins", epsilon_epochs=_allocation_epochs.epsilon_epochs,
        drawn="balls-and-bins (each epoch every example in one uniformly random step)")


SPEC = _spec()
