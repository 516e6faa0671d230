"""Balls-and-bins batches (random allocation): certified bounds and Monte Carlo.

Each epoch every record goes to one uniformly random step out of ``steps``
(Chua et al., AISTATS 2025, arXiv 2412.16802; the random-allocation scheme of
Feldman & Shenfeld).  With MoG(1) := (1/T) Σ_t N(e_t, σ² I_T), one epoch's
dominating pair is (Chua et al. 2025, §3; Feldman & Shenfeld):

    remove:  P = MoG(1),  Q = N(0, σ² I_T),   L_R(x) = log Σ_t e^{x_t/σ²} − log T − 1/(2σ²)
    add:     P = N(0, σ² I_T),  Q = MoG(1),   L_A(x) = −L_R(x)

E epochs compose (losses add), and δ(ε) is the max of the two directions.

Bounds and why each is one:
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
* ``method="montecarlo"``: an ``estimate`` of δ(ε) with a two-sided
  Chernoff–KL confidence interval (``lower``/``upper`` of the result) that holds
  with probability ≥ 1 − ``beta`` for both directions together (β/4 per side
  and direction, union bound).  The Monte Carlo code lives in
  :mod:`dpsampling.samplers.balls_and_bins_mc`.
* ``method="max_statistic"`` (kind ``lower``): the Chua et al. (AISTATS 2025) lower bound.  The pair
  above is the exact output law of one epoch on one adjacent pair, and reducing each epoch to its
  max coordinate (threshold events for E = 1; sliced, losses rounded down and composed over the
  independent epochs for E > 1) is post-processing, so its divergence is ≤ the true one
  (:mod:`dpsampling.samplers._max_statistic`).

Through :func:`dpsampling.samplers.account` the certified bounds come with both ends of the bracket
filled (``lower`` and ``upper``; ``value`` = the end asked for by ``bound``).
"""

from __future__ import annotations

import math

from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice, check_delta, check_epsilon, check_int, check_positive

NAME = "balls_and_bins"
BOUNDS = ("upper", "lower")
#: pld: certified bracket (PLD_accounting); montecarlo: estimate of δ(ε) with its band;
#: max_statistic: the Chua et al. lower bound (threshold events / optimistic PLD of the max coordinate)
METHODS = ("pld", "montecarlo", "max_statistic")

#: PLD_accounting settings.  ``rel_loss_discretization`` r sets loss_discretization = r·ε̂ (the
#: final loss-grid step summed over compositions, PLD_accounting's meaning), with ε̂ the ε of the
#: query (delta) or a Poisson (q = 1/T) PLD estimate of it (epsilon), as PLD_accounting's own adaptive
#: search seeds itself; the width of [lower, upper] scales with it.  ``tail_truncation``: mass
#: dropped (lower) or moved to +∞ (upper), ≤ 0.1·δ for epsilon queries.  Measured in
#: bench/bench_balls_and_bins.py: "default" gives relative width ≤ 5e-2, "fine" ≤ 1e-2.
ACCURACY = {
    "default": {"rel_loss_discretization": 6e-2, "tail_truncation": 1e-10},
    "fine": {"rel_loss_discretization": 1.5e-2, "tail_truncation": 1e-11},
}
_MIN_LOSS_DISCRETIZATION = 1e-4


def _poisson_guess(delta, sigma, steps, epochs):
    """ε(δ) of Poisson q = 1/T over T·E steps (dp_accounting, coarse): only sets the PLD grid step."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    pld = pldm.from_gaussian_mechanism(float(sigma), sampling_prob=1.0 / steps,
                                       value_discretization_interval=1e-3).self_compose(steps * epochs)
    return float(pld.get_epsilon_for_delta(delta))


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
        raise ValueError(f"direction must be add_remove for sampler '{NAME}' (every method takes the max of add and "
                         f"remove) (got {direction!r})")
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
        raise ValueError(f"bound must be 'lower' for method 'max_statistic' with sampler '{NAME}' (got {bound!r}): "
                         "the max statistic gives only a lower bound; use method 'pld' for a certified upper bound")
    unknown = sorted(set(options) - {"c_grid", "discretization"})
    if unknown:
        raise ValueError(f"options {unknown} do not apply to method 'max_statistic' (allowed: c_grid, discretization)")
    r = ms.lower_bound_result(quantity, target, 1.0, 0.0, float(sigma), steps, epochs=epochs, **options)
    method = MAX_STATISTIC_METHOD if r.method == ms.EVENTS_METHOD else r.method
    return AccountingResult(r.value, r.kind, method, r.accuracy, r.lower, r.upper, r.flags)


#: method label of the one-epoch max-statistic lower bound (threshold events {M ≥ C}, {M < C})
MAX_STATISTIC_METHOD = "max-statistic events"


def _config(accuracy, loss_discretization, tail_truncation, eps_scale):
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
    from PLD_accounting import BoundType, PrivacyParams, gaussian_allocation_pld

    steps, epochs = _check(sigma, steps, epochs, bound, "pld")
    cfg, s = _config(accuracy, loss_discretization, tail_truncation, eps_scale)
    params = PrivacyParams(sigma=float(sigma), num_steps=steps, num_epochs=epochs)
    bt = BoundType.DOMINATES if bound == "upper" else BoundType.IS_DOMINATED
    return gaussian_allocation_pld(params=params, config=cfg, bound_type=bt), s


def delta(epsilon, *, sigma, steps, epochs=1, bound="upper", method="pld", **options):
    """δ(ε) of E epochs of balls-and-bins with ``steps`` batches per epoch (max over add/remove).

    method="pld": options ``accuracy`` ("default"/"fine"), ``loss_discretization``,
    ``tail_truncation``; kind = ``bound``.  method="montecarlo": options of
    :func:`dpsampling.samplers.balls_and_bins_mc.mc_delta` (n, seed, beta, half_width, ...);
    kind = ``estimate`` with its confidence interval in lower/upper.
    """
    q, direction, both_ends = (options.pop(k, d) for k, d in (("q", None), ("direction", "add_remove"),
                                                               ("both_ends", False)))
    steps, epochs = _check(sigma, steps, epochs, bound, method, q, direction)
    check_epsilon(epsilon)
    if method == "montecarlo":
        from .balls_and_bins_mc import mc_delta

        return mc_delta(float(epsilon), sigma=float(sigma), steps=steps, epochs=epochs, **options)
    if method == "max_statistic":
        return _max_statistic_lower("delta", epsilon, sigma, steps, epochs, bound, options)
    r = delta_curve([epsilon], sigma=sigma, steps=steps, epochs=epochs, bound=bound, **options)[0]
    if not both_ends:
        return r
    other = delta_curve([epsilon], sigma=sigma, steps=steps, epochs=epochs, bound=_OTHER[bound], **options)[0]
    return _bracket(r, other)


def delta_curve(epsilons, *, sigma, steps, epochs=1, bound="upper", **options):
    """δ(ε) at each ε of ``epsilons`` from one PLD (method "pld"); a list of AccountingResult."""
    steps, epochs = _check(sigma, steps, epochs, bound, "pld")
    for e in epsilons:
        check_epsilon(e)
    pld, s = allocation_pld(sigma, steps, epochs, bound, **options)
    out = []
    for e in epsilons:
        d = float(pld.get_delta_for_epsilon(float(e)))
        flags = ("delta_below_1e-12",) if d < 1e-12 else ()
        out.append(AccountingResult(value=d, kind=bound, method="pld_accounting", accuracy=s,
                                    lower=d if bound == "lower" else None,
                                    upper=d if bound == "upper" else None, flags=flags))
    return out


def epsilon(delta, *, sigma, steps, epochs=1, bound="upper", method="pld", **options):
    """ε(δ) of E epochs of balls-and-bins (max over add/remove); method "pld" only."""
    q, direction, both_ends = (options.pop(k, d) for k, d in (("q", None), ("direction", "add_remove"),
                                                               ("both_ends", False)))
    steps, epochs = _check(sigma, steps, epochs, bound, method, q, direction)
    check_delta(delta)
    if method == "montecarlo":
        raise ValueError("method 'montecarlo' answers delta(epsilon) only; use method 'pld' (certified bounds) or "
                         "'max_statistic' (lower bound) for epsilon")
    if method == "max_statistic":
        return _max_statistic_lower("epsilon", delta, sigma, steps, epochs, bound, options)
    if both_ends:
        r = epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound=bound, **options)
        return _bracket(r, epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound=_OTHER[bound], **options))
    if "loss_discretization" not in options or "tail_truncation" not in options:
        options.setdefault("eps_scale", max(1e-3, _poisson_guess(float(delta), sigma, steps, epochs)))
        options.setdefault("tail_truncation", min(ACCURACY[options.get("accuracy", "default")]["tail_truncation"]
                                                  * 1e3, 0.1 * float(delta)))
    pld, s = allocation_pld(sigma, steps, epochs, bound, **options)
    e = max(0.0, float(pld.get_epsilon_for_delta(float(delta))))
    return AccountingResult(value=e, kind=bound, method="pld_accounting", accuracy=s,
                            lower=e if bound == "lower" else None,
                            upper=e if bound == "upper" else None)


def epsilon_range(delta, *, sigma, steps, epochs=1, **options):
    """Certified interval (lower, upper) on ε(δ): both PLD_accounting bounds at one setting."""
    lo = epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="lower", **options)
    up = epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="upper", **options)
    return AccountingResult(value=up.value, kind="upper", method="pld_accounting", accuracy=up.accuracy,
                            lower=lo.value, upper=up.value)


def sigma(epsilon, delta, *, steps, epochs=1, rel_tol=1e-3, q=None, direction="add_remove", bound=None,
          method=None, **options):
    """Smallest σ (to ``rel_tol``) whose certified upper ε(δ) is ≤ ``epsilon``; kind ``upper``.

    Bisection in log σ on the upper bound (monotone in σ): the returned σ is the upper
    end of the final bracket, so its upper-bound ε is ≤ the target.
    """
    if bound not in (None, "upper"):
        raise ValueError(f"bound must be 'upper' for sigma with sampler '{NAME}' (got {bound!r}): a sufficient σ comes "
                         "from the certified upper bound only")
    if method not in (None, "pld"):
        raise ValueError(f"method must be 'pld' for sigma with sampler '{NAME}' (got {method!r}): Monte Carlo and the "
                         "max statistic cannot certify a σ")
    _check(1.0, steps, epochs, "upper", "pld", q, direction)
    check_positive("epsilon", epsilon)
    check_delta(delta)
    check_positive("rel_tol", rel_tol)

    def eps_at(s):
        return epsilon_fn(delta, sigma=s, steps=steps, epochs=epochs, bound="upper", **options).value

    lo, hi = 0.05, 1.0
    while eps_at(hi) > epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            raise ValueError(f"epsilon={epsilon!r} needs sigma > 1e4; ask for a larger epsilon")
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return AccountingResult(value=hi, kind="upper", method="pld_accounting",
                            accuracy={"rel_tol": rel_tol, **options}, lower=lo, upper=hi)


epsilon_fn = epsilon


def not_worse_than_poisson(delta=1e-6, sigma=1.0, steps=100, epochs=1):
    """Chua et al. 2025 abstract: balls-and-bins has "similar-or-better privacy amplification as
    compared to Poisson subsampling in practical regimes".  True iff the certified balls-and-bins
    upper bound on ε(δ) is ≤ the Poisson (q = 1/T, T·E steps) PLD lower bound, i.e. better for certain.
    """
    from dpsampling.engine import accountant

    up = epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="upper").value
    poisson_lower = accountant.epsilon(delta, sigma=sigma, q=1.0 / steps, steps=steps * epochs,
                                       sampler="poisson", direction="add_remove", method="pld",
                                       bound="lower", rel_tol=1e-3).value
    return bool(up <= poisson_lower)


__all__ = ["ACCURACY", "BOUNDS", "NAME", "allocation_pld", "delta", "delta_curve", "epsilon", "epsilon_range", "not_worse_than_poisson", "sigma"]
