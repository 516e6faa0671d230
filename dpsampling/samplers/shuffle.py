"""Shuffle batching: T batches per epoch from a random permutation, E epochs (Chua et al. ICML 2024, NeurIPS 2024).

Dominating pair: none is known (add or remove).  Per epoch we use the pair of Chua ICML 2024 eqs. (1)-(2),
P_S = MoG(2), Q_S = MoG(1) (below), the exact output law on one concrete query method and adjacent pair.

Bounds, and why each is one:

* ``lower``: any post-processing of that pair gives δ_S(ε) ≥ P(S) − e^ε Q(S) for every event S.
  E = 1: the sets E_C = {max_t w_t ≥ C} (Chua §4.3).  E > 1, ``mode="dynamic"`` (a fresh permutation
  every epoch): the epochs are independent, so the output is P^⊗E vs Q^⊗E; each epoch reduced to its max
  coordinate, the optimistic (rounded-down) PLD of that statistic composed E times
  (:mod:`._max_statistic`) is a lower bound by the data-processing inequality.  ``mode="persistent"`` (one
  permutation reused every epoch): the differing record sits in the same batch index every epoch, so
  averaging the E answers of each batch (post-processing) gives one epoch at σ/√E: the E_C bound at σ/√E.
* ``upper`` (``value``): shuffling a fixed partition before the mechanism cannot degrade privacy (Chua et al. ICML
  2024 Thm 4.1, under zero-out adjacency), so shuffle is dominated by deterministic batching, and E epochs by the
  Gaussian at σ/√E (:mod:`.deterministic`): a certified upper end, the best known (not claimed tight).  Results
  are ``kind="interval"`` (both ends certified), ``value`` = ``upper`` = the deterministic value,
  ``upper_best_known=True``; the true ε (δ) lies in [lower, upper].  ``bound`` "upper" or "lower" give the same
  interval.
* σ: the interval (lower, upper] of the smallest sufficient σ: ``lower`` the σ below which ε provably exceeds the
  target, ``upper`` = ``value`` = the deterministic σ, sufficient.  An insufficient σ is never the answer.
"""

from __future__ import annotations

import math


from dpsampling.engine import lazy
from dpsampling.engine.errors import InternalError, ParameterError
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_positive

from . import _max_statistic as ms
from . import deterministic
from ._ec_sets import DEFAULT_C_GRID, c_grid_from_spec, describe_c_grid, shuffle_result  # noqa: F401 - c_grid option

log_ndtr = lazy.function("scipy.special", "log_ndtr")  # heavy modules load on first use
log1mexp = lazy.function("dpsampling.engine.numerics", "log1mexp")

NAME = "shuffle"
#: either bound gives the interval [E_C sets / max-statistic lower bound, deterministic value]
BOUNDS = ("upper", "lower")

# --------------------------------------------------------------------------- E epochs (Chua et al. NeurIPS 2024)

#: dynamic = a fresh permutation every epoch (default); persistent = one permutation reused every epoch
SHUFFLE_MODES = ("dynamic", "persistent")
#: Method label of the E-epoch dynamic lower bound (optimistic PLD of the per-epoch max statistic).
PLD_METHOD = ms.PLD_METHOD
_UPPER_METHOD = "deterministic (Chua Thm 4.1)"


def _lower(quantity, target, sigma, steps, epochs, mode, c_grid, discretization):
    """The lower bound on ε(δ) / δ(ε) of E epochs (``upper`` filled by the caller).

    E = 1 (either mode): the single-epoch E_C value (:func:`._ec_sets.shuffle_result`), bit for bit.
    persistent, E > 1: the same differing record sits in the same batch index in every epoch, so the
    E noisy answers of each batch have the same mean and their average (a post-processing) is one epoch
    of the pair (1)-(2) at σ/√E; the E_C bound at σ/√E is therefore a lower bound.
    dynamic, E > 1: the epochs use independent permutations, so the output law is P^⊗E vs Q^⊗E;
    each epoch is post-processed to its max coordinate and the optimistic (rounded-down) PLD of that
    statistic is composed E times (:mod:`._max_statistic`), a lower bound by the data-processing inequality.
    """
    if epochs == 1:
        return shuffle_result(quantity, target, sigma, steps, c_grid)
    if mode == "persistent":
        r = shuffle_result(quantity, target, sigma / math.sqrt(epochs), steps, c_grid)
        acc = {**r.accuracy, "epochs": epochs, "mode": mode, "upper_method": _UPPER_METHOD}
        return AccountingResult(r.value, "lower", r.method, acc, r.lower, None, r.flags)
    nbytes = _max_statistic_bytes(sigma, steps, epochs)
    if nbytes is not None:  # beyond the memory limit: not attempted (spec.max_statistic_cost), one epoch's end instead
        from .spec import memory_why

        why = f"{memory_why(nbytes)}; raise sigma, or fewer steps or epochs, for the {epochs}-epoch lower end"
        return _one_epoch_lower(quantity, target, sigma, steps, epochs, mode, c_grid, why)
    try:
        r = ms.lower_bound_result(quantity, target, 2.0, 1.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                                  discretization=discretization)
    except (ParameterError, MemoryError) as e:  # σ was checked above: a ParameterError on σ or the discretisation
        if isinstance(e, ParameterError) and e.param not in ("sigma", "discretization"):  # here is the slice limit
            raise
        return _one_epoch_lower(quantity, target, sigma, steps, epochs, mode, c_grid, e)
    acc = {**r.accuracy, "mode": mode, "upper_method": _UPPER_METHOD}
    return AccountingResult(r.value, "lower", r.method, acc, r.lower, None, r.flags)


def _max_statistic_bytes(sigma, steps, epochs):
    """The predicted peak memory of the E-epoch max-statistic PLD where it exceeds ``spec.MEMORY_LIMIT`` (then it is
    not built: the lower end is one epoch's, :func:`_one_epoch_lower`), else None."""
    from .spec import MEMORY_LIMIT, max_statistic_cost

    nbytes = max_statistic_cost(float(sigma), int(steps), int(epochs), 2.0, 1.0)[1]
    return nbytes if nbytes > MEMORY_LIMIT else None


#: the flag of a dynamic E-epoch lower end that is one epoch's (the max-statistic PLD could not be built)
ONE_EPOCH_LOWER_FLAG = "lower_end_of_one_epoch"


def _one_epoch_lower(quantity, target, sigma, steps, epochs, mode, c_grid, why):
    """The lower end where the E-epoch max-statistic PLD cannot be built (too many slices at this σ, or beyond
    memory): one epoch's E_C bound, valid for E epochs because the first epoch's output is a post-processing of all
    E epochs' (drop the others), so no E-epoch pair is more private than the one-epoch pair.  Flagged, with why."""
    r = shuffle_result(quantity, target, sigma, steps, c_grid)
    reason = (f"one epoch's E_C bound (E epochs are at least as revealing as one); the {epochs}-epoch max-statistic "
              f"PLD was not computed: {why}")
    acc = {**r.accuracy, "epochs": epochs, "mode": mode, "upper_method": _UPPER_METHOD, "lower_reason": reason}
    return AccountingResult(r.value, "lower", f"{r.method} (one epoch)", acc, r.lower, None,
                            r.flags + (ONE_EPOCH_LOWER_FLAG,))


def _with_upper(res, upper):
    """The interval [lower, upper]: ``upper`` = the deterministic value (Chua Thm 4.1: shuffling a fixed
    partition before a mechanism cannot degrade privacy, so shuffle is dominated by deterministic batching,
    for one epoch and — epochs composing adaptively — for E).  Every lower end is a proven one (the E_C events in
    closed form; the max-statistic PLD read by :mod:`dpsampling.engine.reading`, whose readings are lower bounds by
    construction, less the proven rounding of its composition), so a lower end above that exact value cannot occur:
    if one did, an invariant is broken (InternalError, never printed; tests/samplers/test_shuffle.py injects one)."""
    if res.lower is not None and res.lower > upper:
        raise InternalError(f"the shuffle lower end {res.lower!r} ({res.method}) exceeds the exact deterministic value "
                            f"{upper!r}, an upper bound by Chua et al. Thm 4.1: a proven lower end cannot, so an "
                            f"invariant of the lower bound's computation is broken")
    return AccountingResult(upper, "interval", f"{res.method} / {_UPPER_METHOD}", res.accuracy, res.lower, upper,
                            res.flags, lower_method=res.method, upper_method=_UPPER_METHOD, upper_best_known=True)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", direction="add_remove", c_grid=None,
          mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """δ_S(ε) of E epochs ∈ [lower, upper], kind ``interval``: ``lower`` from the E_C sets / max-statistic PLD,
    ``upper`` = ``value`` = the deterministic δ (Chua Thm 4.1, the best known upper end).
    ``mode``: dynamic (fresh permutation per epoch) or persistent."""
    sigma, steps, epochs = float(sigma), int(steps), int(epochs)
    res = _lower("delta", epsilon, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.delta(epsilon, sigma=sigma, steps=steps, epochs=epochs).value)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", direction="add_remove", c_grid=None,
            mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """ε_S(δ) of E epochs ∈ [lower, upper]; see :func:`delta`."""
    sigma, steps, epochs = float(sigma), int(steps), int(epochs)
    res = _lower("epsilon", delta, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.epsilon(delta, sigma=sigma, steps=steps, epochs=epochs).value)


def _eps_lower(delta, sigma, steps, epochs, mode, options):
    return epsilon_fn(delta, sigma=sigma, steps=steps, epochs=epochs, mode=mode, **options).lower


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, direction="add_remove", mode="dynamic",
          rel_tol=1e-3, **options) -> AccountingResult:
    """The smallest sufficient σ of shuffle batching lies in (lower, upper], kind ``interval``.

    ``upper`` = ``value`` = the deterministic σ, sufficient by Chua Thm 4.1 (the best known, ``upper_best_known``):
    the answer, never an insufficient σ.  ``lower`` = σ_lo at which the lower bound on ε(δ) still exceeds ε
    (checked at σ_lo itself); since adding noise is post-processing, ε(δ) is non-increasing in σ, so every
    σ ≤ σ_lo is provably insufficient.  Bisection on log σ to relative width ``rel_tol``.  ``bound`` None, "upper"
    or "lower" give the same interval (``bound="lower"`` asks for its lower end, which it carries).
    """
    steps, epochs = int(steps), int(epochs)  # checked by samplers.account (bound: spec.sigma_bounds)
    check_positive("epsilon", epsilon)
    up = deterministic.sigma(epsilon, delta, steps=steps, epochs=epochs).value

    hi, lo = up, up / 2.0  # ε_low(up) ≤ ε_D(up) = ε
    while _eps_lower(delta, lo, steps, epochs, mode, options) <= epsilon:
        lo /= 2.0
        if lo < 1e-6 * up:
            raise ArithmeticError("no σ found at which the shuffle lower bound exceeds the target epsilon")
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _eps_lower(delta, mid, steps, epochs, mode, options) > epsilon else (lo, mid)
    acc = {"epochs": epochs, "mode": mode, "rel_tol": rel_tol, "upper_method": _UPPER_METHOD}
    return AccountingResult(up, "interval", f"max-statistic bisection / {_UPPER_METHOD}", acc, lo, up,
                            lower_method="max-statistic bisection (provably insufficient σ)",
                            upper_method=_UPPER_METHOD + " (sufficient σ)", upper_best_known=True)


epsilon_fn = epsilon


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
def _cost(question):
    """Predicted seconds (and bytes): one epoch is closed form over the C grid; E > 1 dynamic epochs compose the
    max-statistic PLD, whose slices grow as 1/σ² (spec.max_statistic_cost); σ is a bisection of about 15 lower
    bounds."""
    from .spec import MEMORY_LIMIT, Cost, max_statistic_cost

    if question.epochs == 1 or question.options.get("mode") == "persistent":
        return Cost(0.3 * (15 if question.quantity == "sigma" else 1))
    if question.quantity == "sigma" or not isinstance(question.sigma, (int, float)) or question.sigma <= 0:
        return Cost(1.5 * 15)
    # the max-statistic PLD of MoG(2) vs MoG(1) over slices of M: its time and memory (spec.max_statistic_cost);
    # beyond the memory limit it is not built and the lower end is one epoch's (closed form, _one_epoch_lower)
    seconds, nbytes = max_statistic_cost(float(question.sigma), int(question.steps), int(question.epochs), 2.0, 1.0)
    if nbytes > MEMORY_LIMIT:
        return Cost(0.3)
    return Cost(seconds, drivers=("sigma", "steps", "epochs"), bytes=nbytes)


def _spec():
    from . import _shuffle_epochs
    from .spec import Option, SamplerSpec

    return SamplerSpec(
        name=NAME, summary="shuffling: a random permutation cut into steps batches (certified interval: the Chua et al. "
                           "lower bound, and the deterministic value as the best known upper end, Chua Thm 4.1)",
        pair_add="none known (lower bound from the pair MoG(2) vs MoG(1), Chua ICML 2024 eqs. (1)-(2))",
        pair_remove="none known (same pair)", batch="one_per_step",
        bounds={None: ("upper", "lower")}, sigma_bounds=("upper", "lower"), methods=(),
        options=(Option("mode", "shuffle-mode", str, "a fresh permutation every epoch (dynamic, default) or one "
                        "reused (persistent)", default="dynamic", choices=SHUFFLE_MODES),
                 Option("c_grid", "c-grid", object, "threshold grid of the E_C events", cli=False),
                 Option("discretization", "discretization", float, "max-statistic PLD step", low=0.0,
                        low_open=True, cli=False),
                 Option("rel_tol", "rel-tol", float, "σ bisection relative width", low=0.0, low_open=True,
                        quantities=("sigma",), cli=False)),
        audit_kind="interval", cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma, relation="zero_out",
        drawn="shuffling (a fresh random permutation each epoch, cut into batches of B)", loader="shuffle",
        upper_best_known=True, label="shuffling", run_words="a shuffled run", lower_source="Chua et al. 2024",
        upper_source="the once-per-epoch value (Chua et al. 2024, Thm 4.1)", upper_method="deterministic",
        epsilon_epochs=_shuffle_epochs.epsilon_epochs, reference="shuffle_ec_lower",
        audit_options={"sigma": {"bound": "lower"}})


SPEC = _spec()
