"""Balls-and-bins batches (random allocation): certified bounds and Monte Carlo.

Each epoch every record goes to one uniformly random step out of ``steps`` (Chua et al., AISTATS 2025, arXiv
2412.16802; the random-allocation scheme of Feldman & Shenfeld).  With MoG(1) := (1/T) Σ_t N(e_t, σ² I_T), one
epoch's dominating pair is (Chua et al. 2025, §3; Feldman & Shenfeld):

    remove:  P = MoG(1),  Q = N(0, σ² I_T),   L_R(x) = log Σ_t e^{x_t/σ²} − log T − 1/(2σ²)
    add:     P = N(0, σ² I_T),  Q = MoG(1),   L_A(x) = −L_R(x)

E epochs compose (losses add), and δ(ε) is the max of the two directions.

Bounds and why each is one (the engine modules named argue each side):
* ``method="allocation"`` (the default): :mod:`dpsampling.engine.allocation`, a certified interval from a
  convex-order spread (upper end: a pair that dominates one epoch) and merge (lower end: a dominated pair) of
  the likelihood ratio dP/dQ of the pair above, composed over the E epochs, refined to the relative width
  :data:`ALLOCATION_REL_WIDTH` of the ``accuracy`` setting (else flagged ``rel_width_not_reached``).  σ: a
  certifiably sufficient σ (value, upper) and a certifiably insufficient one (lower).  One step per epoch:
  exactly the Gaussian at σ/√E (kind ``exact``).
* ``method="pld"``: PLD_accounting's dominating (upper) and dominated (lower) PLDs of the pair above and the
  certified ε(δ) interval refined from them, :mod:`dpsampling.engine.allocation_pld`.  Needs the ``pipeline``
  extra.
* Both: the lower end is the larger of the method's and the max-statistic lower bound below; the upper end is the
  smaller of the method's and the exact deterministic value (the Gaussian at σ/√E; by joint convexity, as Chua et
  al. Thm 4.1 for shuffling: :func:`_at_most_deterministic`), named ``deterministic (joint convexity)`` where used.
* ``method="montecarlo"``: an ``estimate`` of δ(ε) (or of ε(δ), by inverting δ(ε) and its band) with a
  two-sided Chernoff–KL confidence interval (``lower``/``upper`` of the result) that holds with probability
  ≥ 1 − ``mc_failure_prob`` for both directions together, :mod:`dpsampling.samplers.balls_and_bins_mc`.
* ``method="max_statistic"`` (kind ``lower``): the Chua et al. (AISTATS 2025) lower bound.  The pair above is
  the exact output law of one epoch on one adjacent pair, and reducing each epoch to its max coordinate
  (threshold events for E = 1; sliced, losses rounded down and composed over the independent epochs for E > 1)
  is post-processing, so its divergence is ≤ the true one (:mod:`dpsampling.samplers._max_statistic`).

Through :func:`dpsampling.samplers.account` the certified bounds come with both ends of the interval filled
(``lower`` and ``upper``, kind ``interval``, ``value`` = the upper end whatever ``bound`` asks, the method of each
end in ``lower_method``/``upper_method``); called directly, this module's ``value`` is the end asked for by
``bound`` (the pipeline's one-sided curves).
"""

from __future__ import annotations

import functools
import math

from dpsampling.engine import allocation_pld as pld_alloc
from dpsampling.engine.errors import InternalError
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, AccountingResult
from dpsampling.engine.validation import check_choice, check_epsilon

from . import deterministic

NAME = "balls_and_bins"
BOUNDS = ("upper", "lower")
#: allocation: certified interval by convex order (default); pld: certified interval (PLD_accounting);
#: montecarlo: estimate of δ(ε) with its band; max_statistic: the Chua et al. lower bound
METHODS = ("allocation", "pld", "montecarlo", "max_statistic")
#: method allocation: relative width (upper − lower)/upper aimed at per accuracy setting
ALLOCATION_REL_WIDTH = {"default": 1e-2, "fine": 1e-3}
#: method pld: PLD_accounting's settings per accuracy setting (:data:`dpsampling.engine.allocation_pld.ACCURACY`)
ACCURACY = pld_alloc.ACCURACY


def _max_statistic_lower(quantity, target, sigma, steps, epochs, bound, options):
    """The Chua et al. (AISTATS 2025) lower bound from the max coordinate, kind ``lower``: valid because the pair
    above is the exact output law of one epoch on one adjacent pair and the max coordinate (sliced, rounded down,
    composed over independent epochs) is a post-processing (:mod:`._max_statistic`)."""
    from . import _max_statistic as ms

    r = ms.lower_bound_result(quantity, target, 1.0, 0.0, float(sigma), steps, epochs=epochs, **options)
    method = MAX_STATISTIC_METHOD if r.method == ms.EVENTS_METHOD else r.method
    return AccountingResult(r.value, r.kind, method, r.accuracy, r.lower, r.upper, r.flags)


#: method label of the one-epoch max-statistic lower bound (threshold events {M ≥ C}, {M < C})
MAX_STATISTIC_METHOD = "max-statistic events"


def _max_statistic_floor(quantity, target, sigma, steps, epochs) -> pld_alloc.Floor:
    """The max-statistic lower bound (:func:`_max_statistic_lower`) at default settings, value and method; value
    0.0 and method None where it is flagged (δ below the PLD floor) or nan."""
    r = _max_statistic_lower(quantity, target, sigma, steps, epochs, "lower", {})
    if BELOW_FLOOR_FLAG in r.flags or not math.isfinite(r.value):
        return pld_alloc.Floor(value=0.0, method=None)
    return pld_alloc.Floor(value=float(r.value), method=r.method)


def _allocation_options(options):
    """(accuracy setting, its relative width) of method allocation (the options :func:`dpsampling.samplers.account`
    checked)."""
    accuracy = options.pop("accuracy", "default")
    return accuracy, ALLOCATION_REL_WIDTH[accuracy]


@functools.lru_cache(maxsize=512)
def _allocation_interval(quantity, target, sigma, steps, epochs, rel_width):
    """(lower, upper, info) of :func:`dpsampling.engine.allocation.epsilon_interval` (cached: the pipeline asks
    each end separately; ``info`` is not mutated) or :func:`_allocation_delta_curve` at one ε."""
    from dpsampling.engine import allocation

    if quantity == "epsilon":
        return allocation.epsilon_interval(target, sigma, steps=steps, epochs=epochs, rel_width=rel_width)
    return _allocation_delta_curve((target,), sigma, steps, epochs, rel_width)[0]


@functools.lru_cache(maxsize=64)
def _allocation_delta_curve(epsilons, sigma, steps, epochs, rel_width):
    """(lower, upper, info) at each ε of the tuple ``epsilons`` (:func:`dpsampling.engine.allocation.delta_curve`,
    cached); a first pass whose upper end is below :data:`RELIABLE_DELTA_FLOOR` is not refined (and is flagged)."""
    from dpsampling.engine import allocation

    return allocation.delta_curve(epsilons, sigma, steps=steps, epochs=epochs, rel_width=rel_width,
                                  refine_from=RELIABLE_DELTA_FLOOR)


def _allocation_result(quantity, target, sigma, steps, epochs, bound, options, interval=None):
    """ε(δ) or δ(ε) by method allocation: the certified interval of :mod:`dpsampling.engine.allocation` (that module
    argues each side), its lower end raised to the max-statistic lower bound where that is larger
    (:func:`dpsampling.engine.allocation.interval_result`); one step per epoch: exact.  ``interval``: its (lower,
    upper, info) if already computed (:func:`delta_curve`)."""
    from dpsampling.engine import allocation

    accuracy, rel_width = _allocation_options(options)
    if steps == 1:
        return deterministic.one_batch_per_epoch(quantity, target, sigma, epochs)
    if interval is None:
        interval = _allocation_interval(quantity, float(target), float(sigma), steps, epochs, rel_width)
    interval = _at_most_deterministic(quantity, float(target), float(sigma), steps, epochs, interval)
    floor = _max_statistic_floor(quantity, float(target), float(sigma), steps, epochs)
    if floor.value > interval[1]:  # a lower bound above a certified upper end is broken: never printed
        raise InternalError(f"the max-statistic lower end {floor.value!r} exceeds the certified upper end "
                            f"{interval[1]!r}: not valid at σ = {sigma!r}, {epochs} epochs; not reported")
    return allocation.interval_result(quantity, interval, floor, bound, accuracy, rel_width)


#: the name of an upper end that is the deterministic value (:func:`_at_most_deterministic`)
DETERMINISTIC_UPPER_METHOD = "deterministic (joint convexity)"


def _deterministic_value(quantity, target, sigma, steps, epochs):
    """The exact deterministic ε(δ) or δ(ε) (the Gaussian at σ/√E, :mod:`.deterministic`)."""
    f = deterministic.epsilon if quantity == "epsilon" else deterministic.delta
    return float(f(float(target), sigma=float(sigma), steps=steps, epochs=epochs).value)


def _looser(upper, det):
    """Whether an upper end is infinite, nan or above the deterministic value by more than float noise (1e-9
    relative: at one epoch the allocation's closed form is the same Gaussian, computed otherwise)."""
    return not upper <= det * (1 + 1e-9)


def _at_most_deterministic(quantity, target, sigma, steps, epochs, interval):
    """``interval`` (lower, upper, info) with its upper end replaced by the deterministic value where that is smaller
    (:func:`_looser`: or the upper end is infinite or nan), named :data:`DETERMINISTIC_UPPER_METHOD` in
    ``info["method_upper"]``.

    Valid: given where every record lands (the other records' steps and the differing record's), one epoch is
    deterministic batching with the differing record in exactly one step, so E epochs are the Gaussian at σ/√E
    whatever the batch sizes; balls-and-bins is the mixture of these over the placement, with the same mixing law
    in both neighbours, and the hockey-stick divergence is jointly convex, so its δ(ε) is at most the mixture of
    equal deterministic δ(ε), at every ε (hence its ε(δ) too): Chua et al. Thm 4.1's argument for shuffling."""
    lo, up, info = interval
    det = _deterministic_value(quantity, target, sigma, steps, epochs)
    if not _looser(up, det):
        return interval
    return lo, det, {**info, "method_upper": DETERMINISTIC_UPPER_METHOD}


def _result_at_most_deterministic(quantity, target, sigma, steps, epochs, r):
    """A result's upper end (and value, for kind ``upper``) replaced by the deterministic value where that is smaller,
    named in ``upper_method`` and ``accuracy["upper_method"]`` (valid: :func:`_at_most_deterministic`); results
    without an upper end unchanged."""
    import dataclasses

    if r.upper is None:
        return r
    det = _deterministic_value(quantity, target, sigma, steps, epochs)
    if not _looser(r.upper, det):
        return r
    method = f"{r.method.split(' / ')[0]} / {DETERMINISTIC_UPPER_METHOD}" if " / " in (r.method or "") else r.method
    safe = r.kind in ("upper", "interval") and r.value is not None  # value: the safe end, the upper one
    return dataclasses.replace(r, value=det if safe else r.value, upper=det, method=method,
                               accuracy={**r.accuracy, "upper_method": DETERMINISTIC_UPPER_METHOD},
                               upper_method=DETERMINISTIC_UPPER_METHOD)


def _allocation_sigma(epsilon, delta, steps, epochs, rel_tol, options):
    """σ by method allocation (kind ``upper``): a certifiably sufficient σ (value, upper) and a certifiably
    insufficient one (lower), :func:`dpsampling.engine.allocation.sigma_result`; one step per epoch: exact."""
    from dpsampling.engine import allocation

    accuracy, rel_width = _allocation_options(options)
    if steps == 1:
        return deterministic.one_batch_per_epoch("sigma", (epsilon, delta), None, epochs)
    return allocation.sigma_result(epsilon, delta, steps, epochs, accuracy, rel_width, rel_tol)


def _query_options(sigma, steps, epochs, bound, method, options):
    """Pops q, direction and both_ends from ``options`` (checked by :func:`dpsampling.samplers.account`: q = 1/steps
    or absent, direction add_remove) and returns (steps, epochs, both_ends)."""
    both_ends = options.pop("both_ends", False)
    options.pop("q", None), options.pop("direction", None)
    return int(steps), int(epochs), both_ends


def _floor(quantity, sigma, steps, epochs):
    """target ↦ :func:`_max_statistic_floor` at it: method pld's second lower end."""
    return lambda target: _max_statistic_floor(quantity, float(target), float(sigma), steps, epochs)


def _answer(quantity, target, sigma, steps, epochs, bound, method, options):
    """ε(δ) or δ(ε) by method montecarlo, max_statistic or allocation; None for method pld."""
    if method == "montecarlo":
        from . import balls_and_bins_mc as mc

        run = mc.mc_epsilon if quantity == "epsilon" else mc.mc_delta
        return run(float(target), sigma=float(sigma), steps=steps, epochs=epochs,
                   **options)
    if method == "max_statistic":
        return _max_statistic_lower(quantity, target, sigma, steps, epochs, bound, options)
    if method == "allocation":
        return _allocation_result(quantity, target, sigma, steps, epochs, bound, options)
    pld_alloc.require(f"method 'pld' of sampler '{NAME}'")
    return None


def delta(epsilon, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """δ(ε) of E epochs of balls-and-bins with ``steps`` batches per epoch (max over add/remove).

    Methods and options as :func:`epsilon`; method "pld": :func:`dpsampling.engine.allocation_pld.delta_result`;
    method "montecarlo": :func:`dpsampling.samplers.balls_and_bins_mc.mc_delta` (kind ``estimate``)."""
    steps, epochs, both_ends = _query_options(sigma, steps, epochs, bound, method, options)
    r = _answer("delta", epsilon, sigma, steps, epochs, bound, method, options)
    if r is not None:
        return r
    r = pld_alloc.delta_result(epsilon, sigma, steps, epochs, bound, _floor("delta", sigma, steps, epochs), both_ends,
                               **options)
    return _result_at_most_deterministic("delta", epsilon, sigma, steps, epochs, r)


def delta_curve(epsilons, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """δ(ε) at each ε of ``epsilons``; a list of AccountingResult.

    method "allocation" (default): the same results as :func:`delta` at each ε, from one set of compositions
    (:func:`dpsampling.engine.allocation.delta_curve`).  method "pld": from one PLD
    (:func:`dpsampling.engine.allocation_pld.delta_results`)."""
    check_choice("method", method, ("allocation", "pld"))
    steps, epochs = int(steps), int(epochs)
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
    pld_alloc.require(f"method 'pld' of sampler '{NAME}'")
    rs = pld_alloc.delta_results(epsilons, sigma, steps, epochs, bound, _floor("delta", sigma, steps, epochs),
                                 **options)
    return [_result_at_most_deterministic("delta", e, sigma, steps, epochs, r) for e, r in zip(epsilons, rs)]


def epsilon(delta, *, sigma, steps, epochs=1, bound="upper", method="allocation", **options):
    """ε(δ) of E epochs of balls-and-bins (max over add/remove).

    method "allocation" (default): the certified interval of :func:`_allocation_result` (option ``accuracy``);
    kind = ``bound``, both ends filled.  method "pld": :func:`dpsampling.engine.allocation_pld.epsilon_result`
    (options ``accuracy``, ``loss_discretization``, ``tail_truncation``).  method "montecarlo": the estimate
    with its (1 − β) interval (:func:`dpsampling.samplers.balls_and_bins_mc.mc_epsilon`).  method
    "max_statistic": the Chua et al. lower bound."""
    steps, epochs, both_ends = _query_options(sigma, steps, epochs, bound, method, options)
    r = _answer("epsilon", delta, sigma, steps, epochs, bound, method, options)
    if r is not None:
        return r
    floor = _floor("epsilon", sigma, steps, epochs)
    r = pld_alloc.epsilon_result(delta, sigma, steps, epochs, bound, lambda: floor(delta), both_ends, **options)
    return _result_at_most_deterministic("epsilon", delta, sigma, steps, epochs, r)


def epsilon_range(delta, *, sigma, steps, epochs=1, **options):
    """:func:`epsilon` with both ends of the certified interval filled; kind ``upper``."""
    return epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="upper", both_ends=True, **options)


def sigma(epsilon, delta, *, steps, epochs=1, rel_tol=1e-3, q=None, direction="add_remove", bound=None,
          method=None, **options):
    """Smallest σ (to ``rel_tol``) whose certified upper ε(δ) is ≤ ``epsilon``; kind ``upper``.

    method "allocation" (default, :func:`_allocation_sigma`): value = upper = a certifiably sufficient σ, lower =
    a certifiably insufficient one.  method "pld": :func:`dpsampling.engine.allocation_pld.sigma_search` on the
    certified upper end: value = upper = a σ whose upper ε is ≤ the target."""
    steps, epochs = int(steps), int(epochs)
    if method in (None, "allocation"):
        return _allocation_sigma(epsilon, delta, steps, epochs, rel_tol, options)
    pld_alloc.require(f"method 'pld' of sampler '{NAME}'")

    def eps_at(s):
        return epsilon_fn(delta, sigma=s, steps=steps, epochs=epochs, bound="upper", method="pld", **options).value

    lo, hi = pld_alloc.sigma_search(epsilon, rel_tol, eps_at)
    return AccountingResult(value=hi, kind="upper", method=pld_alloc.METHOD,
                            accuracy={"rel_tol": rel_tol, **options}, lower=lo, upper=hi,
                            lower_method="bisection bracket (not certified insufficient)",
                            upper_method=pld_alloc.METHOD + " (sufficient σ)")


epsilon_fn = epsilon


__all__ = ["ACCURACY", "ALLOCATION_REL_WIDTH", "BOUNDS", "NAME", "delta", "delta_curve", "epsilon", "epsilon_range",
           "sigma"]


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
#: cost model of method pld: CPU seconds ≈ 0.5 + _PLD_SECONDS · (T/1000)^a · E^_PLD_E_EXP, a = _PLD_T_EXP up to 1000
#: steps per epoch and _PLD_T_EXP_LARGE beyond, at the dearer σ ≈ 1 (fitted by bench/bench_cost_model.py; the fits
#: are in docs/benchmarks.md); Monte Carlo: MC_DRAWS_PER_SECOND draws per direction; σ: SIGMA_EVALUATIONS brackets
_PLD_SECONDS = 3.5
_PLD_T_EXP = 1.2
_PLD_T_EXP_LARGE = 1.8
_PLD_E_EXP = 0.8
MC_DRAWS_PER_SECOND = 10**10 / 60
#: cost model of method allocation, CPU seconds of one ε interval at accuracy default: ALLOC_SECONDS +
#: ALLOC_PER_STEP · T + ALLOC_PER_EPOCH · E (fitted by bench/bench_cost_model.py); × ALLOC_FINE_FACTOR at accuracy
#: fine; a δ(ε) interval × (1 + ALLOC_DELTA_PER_EPOCH · E) (its lower end's loss step shrinks with the slope of
#: log δ and with E); σ: at most about ALLOC_SIGMA_EVALUATIONS intervals (a secant bracket per end, both ends read off
#: the same intervals: 7 on the MNIST run from the Gaussian-DP start, more from a poor start)
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


#: method allocation's pair sums are O(n²) per stage over the n grid points of the one-term law (engine/allocation.py
#: ``_range`` at its ``first_step``): ALLOC_PAIR_SECONDS · n² · log2(T) per pass (measured: σ 0.05, T 235, 60 epochs,
#: n ≈ 1.4e4, one pass: 7.7 CPU-s); beyond MAX_GRID_POINTS the upper end is closed form (no pair sums)
ALLOC_PAIR_SECONDS = 5.5e-9
_ALLOC_MAX_GRID_POINTS = 2**14  # = engine.allocation.MAX_GRID_POINTS (not imported here: it loads scipy)


#: its E-epoch compositions: the lower end's loss step is rel_width·ε/(4E), so the composed loss grid holds about
#: 4E²R/(rel_width·ε) points (R the one-epoch loss range, ≈ the loss range of one step of the 1/T-subsampled Gaussian;
#: ε estimated from above by the smaller of the Gaussian-DP and the deterministic value): measured σ 0.5, T 1000,
#: E 1000, δ 1e-9: R 13.1, ε 66.7, 7.6e7 points, beyond 5 GB and 100 s; COMPOSE_BYTES_PER_POINT and
#: COMPOSE_SECONDS_PER_POINT per point (and per squaring, × log2 of the length) of the FFT compositions
COMPOSE_BYTES_PER_POINT = 64.0
COMPOSE_SECONDS_PER_POINT = 2e-8
_BASE_BYTES = 150 * 2**20


def _epsilon_estimate(sigma, steps, epochs, delta):
    """An estimate from above of ε(δ): the smaller of the Gaussian-DP approximation (μ = √(E/T)·√(e^{1/σ²} − 1))
    and the deterministic (one batch per epoch) value's upper estimate E/(2σ²) + z_δ·√E/σ."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - delta) if 0 < delta < 0.5 else 0.0
    x = 1.0 / sigma**2
    log_mu = 0.5 * math.log(epochs / steps) + 0.5 * (x if x > 30 else math.log(math.expm1(x)))
    mu = math.exp(min(log_mu, 300.0))
    return max(min(z * mu + mu * mu / 2, epochs * x / 2 + z * math.sqrt(epochs) / sigma), 1e-3)


def _composition_points(question):
    """Points of the lower end's E-epoch loss grid (the constants above); 0 for one epoch or a δ question."""
    from .poisson import _step_loss_range

    sigma, t, e = float(question.sigma), int(question.steps), int(question.epochs)
    if e == 1 or question.quantity != "epsilon" or not isinstance(question.target, float):
        return 0.0
    rel_width = ALLOCATION_REL_WIDTH.get(question.options.get("accuracy") or "default", 1e-2)
    r = _step_loss_range(sigma, 1.0 / t)
    return 4.0 * e * e * r / (rel_width * _epsilon_estimate(sigma, t, e, float(question.target)))


def _allocation_grid_points(question):
    """n, the grid points of the one-term law at the first grid step (engine/allocation.py ``_range``,
    ``first_step``), with the standard library's normal quantile (no scipy here)."""
    from statistics import NormalDist

    sigma, t, e = float(question.sigma), float(question.steps), float(question.epochs)
    rel_width = ALLOCATION_REL_WIDTH.get(question.options.get("accuracy") or "default", 1e-2)
    x = 1.0 / sigma**2
    v = math.expm1(x) if x < 709.0 else math.inf
    step = min(0.05, math.sqrt(4.0 * rel_width / (2 * t / v + max(math.log2(t), 1.0))))
    target = question.target if question.quantity == "epsilon" else None
    tail = (1e-4 * float(target) / (e * (math.log2(t) + 2))) if isinstance(target, float) and 0 < target < 1 else 1e-15
    zq = -NormalDist().inv_cdf(max(tail, 1e-300))
    return (x + 2 * zq / sigma) / step


def _cost(question):
    """Predicted seconds (and, where it matters, bytes) of one question (see the constants above): method
    allocation and pld also run the max-statistic lower end (spec.max_statistic_cost over E > 1 epochs)."""
    from .spec import Cost, max_statistic_cost

    t, e = float(question.steps), float(question.epochs)
    if question.method == "montecarlo":
        n = question.options.get("mc_samples") or MC_SAMPLES
        return Cost(0.5 + 2 * n * t * e / MC_DRAWS_PER_SECOND)
    sigma_known = question.quantity != "sigma" and isinstance(question.sigma, (int, float)) and question.sigma > 0
    ms_seconds, ms_bytes = (max_statistic_cost(float(question.sigma), int(t), int(e)) if sigma_known and e > 1
                            and t > 1 else (0.3, 0.0))
    drivers = ("sigma", "steps", "epochs")
    if question.method == "max_statistic":
        return Cost(ms_seconds, drivers=drivers, bytes=ms_bytes)
    if question.method == "allocation":
        seconds = _allocation_seconds(question)
        if sigma_known and t > 1:
            n = _allocation_grid_points(question)
            if n <= _ALLOC_MAX_GRID_POINTS:
                seconds += ALLOC_PAIR_SECONDS * n * n * max(math.log2(t), 1.0) * (
                    ALLOC_FINE_FACTOR if question.options.get("accuracy") == "fine" else 1.0)
            seconds += ms_seconds
            m = _composition_points(question)
            if m > 0:
                seconds += 2 * COMPOSE_SECONDS_PER_POINT * m * math.log2(e) * math.log2(max(m, 2.0))
                ms_bytes = max(ms_bytes, _BASE_BYTES + COMPOSE_BYTES_PER_POINT * m)
        return Cost(seconds, drivers=drivers, bytes=ms_bytes)
    one = 0.5 + _PLD_SECONDS * (t / 1000.0) ** (_PLD_T_EXP if t <= 1000 else _PLD_T_EXP_LARGE) * e ** _PLD_E_EXP
    if question.options.get("accuracy") == "fine":
        one *= 5.0
    if sigma_known:
        one += ms_seconds
    return Cost(one * (SIGMA_EVALUATIONS if question.quantity == "sigma" else 1), drivers=drivers, bytes=ms_bytes)


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
            Option("rel_tol", "rel-tol", float, "σ search relative width", low=0.0, low_open=True,
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
        audit_kind="interval", audit_optional=True, cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma,
        relation="zero_out", loader="balls_and_bins", label="balls-and-bins",
        epsilon_epochs=_allocation_epochs.epsilon_epochs, reference="allocation_range",
        drawn="balls-and-bins (each epoch every example in one uniformly random step)")


SPEC = _spec()