"""Shuffle batching: T batches per epoch from a random permutation, E epochs (Chua et al. ICML 2024, NeurIPS 2024).

Dominating pair: none is known (add or remove).  Per epoch we use the pair of Chua ICML 2024 eqs. (1)-(2),
P_S = MoG(2), Q_S = MoG(1) (below), the exact output law on one concrete query method and adjacent pair.

Bounds, and why each is one:

* ``lower`` (``value``): any post-processing of that pair gives δ_S(ε) ≥ P(S) − e^ε Q(S) for every event S.
  E = 1: the sets E_C = {max_t w_t ≥ C} (Chua §4.3).  E > 1, ``mode="dynamic"`` (a fresh permutation
  every epoch): the epochs are independent, so the output is P^⊗E vs Q^⊗E; each epoch reduced to its max
  coordinate, the optimistic (rounded-down) PLD of that statistic composed E times
  (:mod:`._max_statistic`) is a lower bound by the data-processing inequality.  ``mode="persistent"`` (one
  permutation reused every epoch): the differing record sits in the same batch index every epoch, so
  averaging the E answers of each batch (post-processing) gives one epoch at σ/√E: the E_C bound at σ/√E.
* ``upper`` (the interval's other end): shuffling a fixed partition before the mechanism cannot degrade
  privacy (Chua Thm 4.1), so shuffle is dominated by deterministic batching, and E epochs by the Gaussian
  at σ/√E (:mod:`.deterministic`).  Results carry ``kind="lower"``, ``lower`` = ``value``, ``upper`` =
  the deterministic value: the true ε (δ) lies in [lower, upper].
* σ: only ``bound="lower"`` — the σ below which ε provably exceeds the target (``upper`` = the
  deterministic σ, sufficient).
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
#: the E_C sets give a lower bound only (no dominating pair is known for shuffling)
BOUNDS = ("lower",)

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
    r = ms.lower_bound_result(quantity, target, 2.0, 1.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                              discretization=discretization)
    acc = {**r.accuracy, "mode": mode, "upper_method": _UPPER_METHOD}
    return AccountingResult(r.value, "lower", r.method, acc, r.lower, None, r.flags)


def _with_upper(res, upper):
    """The interval [lower, upper]: ``upper`` = the deterministic value (Chua Thm 4.1: shuffling a fixed
    partition before a mechanism cannot degrade privacy, so shuffle is dominated by deterministic batching,
    for one epoch and — epochs composing adaptively — for E).  A lower end above that exact value would be a broken
    lower bound (as the max-statistic PLD's was at σ ≲ 0.2 over tens of epochs, before its ε was read without the
    underflow of e^{−ℓ}: :mod:`dpsampling.engine.reading`): InternalError, never printed."""
    if res.lower is not None and res.lower > upper:
        raise InternalError(f"the shuffle lower end {res.lower!r} ({res.method}) exceeds the exact deterministic value "
                            f"{upper!r}, an upper bound by Chua et al. Thm 4.1: the lower bound is not valid at these "
                            f"inputs and is not reported")
    return AccountingResult(res.value, "lower", res.method, res.accuracy, res.lower, upper, res.flags)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
          mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """δ_S(ε) of E epochs ∈ [lower, upper]: ``value`` = lower (E_C sets / max-statistic PLD), ``upper`` =
    the deterministic δ (Chua Thm 4.1).  ``mode``: dynamic (fresh permutation per epoch) or persistent."""
    sigma, steps, epochs = float(sigma), int(steps), int(epochs)
    res = _lower("delta", epsilon, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.delta(epsilon, sigma=sigma, steps=steps, epochs=epochs).value)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="lower", direction="add_remove", c_grid=None,
            mode="dynamic", discretization=ms.DEFAULT_DISCRETIZATION, **options) -> AccountingResult:
    """ε_S(δ) of E epochs ∈ [lower, upper]; see :func:`delta`."""
    sigma, steps, epochs = float(sigma), int(steps), int(epochs)
    res = _lower("epsilon", delta, sigma, steps, epochs, mode, c_grid, discretization)
    return _with_upper(res, deterministic.epsilon(delta, sigma=sigma, steps=steps, epochs=epochs).value)


def _eps_lower(delta, sigma, steps, epochs, mode, options):
    return epsilon_fn(delta, sigma=sigma, steps=steps, epochs=epochs, mode=mode, **options).value


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, direction="add_remove", mode="dynamic",
          rel_tol=1e-3, **options) -> AccountingResult:
    """The σ below which shuffle batching is provably not (ε, δ)-DP (``bound="lower"`` only).

    ``value`` = σ_lo at which the lower bound on ε(δ) still exceeds ε (checked at σ_lo itself); since
    adding noise is post-processing, ε(δ) is non-increasing in σ, so every σ ≤ σ_lo is provably
    insufficient (kind ``lower``).  ``upper`` = the deterministic σ, sufficient by Chua Thm 4.1.
    Bisection on log σ to relative width ``rel_tol``.  Without ``bound="lower"`` this raises: a lower
    bound on ε cannot certify a σ.
    """
    if bound != "lower":
        raise ParameterError("bound", "'lower' for sigma with sampler 'shuffle'", bound, message=
                             f"bound must be 'lower' for sigma with sampler 'shuffle' (got {bound!r}): the E_C sets give "
                         "only a lower bound on ε, hence only the σ below which ε is provably larger than the "
                         "target; ask for bound 'lower' for that, or use sampler deterministic, whose σ suffices "
                         "for shuffling (Chua Thm 4.1)")
    steps, epochs = int(steps), int(epochs)
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
    return AccountingResult(lo, "lower", "max-statistic bisection", acc, lo, up)


epsilon_fn = epsilon


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
def _cost(question):
    """Predicted seconds (and bytes): one epoch is closed form over the C grid; E > 1 dynamic epochs compose the
    max-statistic PLD, whose slices grow as 1/σ² (spec.max_statistic_cost); σ is a bisection of about 15 lower
    bounds."""
    from .spec import Cost, max_statistic_cost

    if question.epochs == 1 or question.options.get("mode") == "persistent":
        return Cost(0.3 * (15 if question.quantity == "sigma" else 1))
    if question.quantity == "sigma" or not isinstance(question.sigma, (int, float)) or question.sigma <= 0:
        return Cost(1.5 * 15)
    # the max-statistic PLD of MoG(2) vs MoG(1) over slices of M: its time and memory (spec.max_statistic_cost)
    seconds, nbytes = max_statistic_cost(float(question.sigma), int(question.steps), int(question.epochs), 2.0, 1.0)
    return Cost(seconds, drivers=("sigma", "steps", "epochs"), bytes=nbytes)


def _spec():
    from . import _shuffle_epochs
    from .spec import Option, SamplerSpec

    return SamplerSpec(
        name=NAME, summary="shuffling: a random permutation cut into steps batches (lower bound; the deterministic "
                           "value is the upper end, Chua Thm 4.1)",
        pair_add="none known (lower bound from the pair MoG(2) vs MoG(1), Chua ICML 2024 eqs. (1)-(2))",
        pair_remove="none known (same pair)", batch="one_per_step",
        bounds={None: ("lower",)}, sigma_bounds=("lower",), methods=(),
        options=(Option("mode", "shuffle-mode", str, "a fresh permutation every epoch (dynamic, default) or one "
                        "reused (persistent)", default="dynamic", choices=SHUFFLE_MODES),
                 Option("c_grid", "c-grid", object, "threshold grid of the E_C events", cli=False),
                 Option("discretization", "discretization", float, "max-statistic PLD step", low=0.0,
                        low_open=True, cli=False),
                 Option("rel_tol", "rel-tol", float, "σ bisection relative width", low=0.0, low_open=True,
                        quantities=("sigma",), cli=False)),
        audit_kind="lower_best_upper", cost=_cost, delta=delta, epsilon=epsilon, sigma=sigma, relation="zero_out",
        drawn="shuffling (a fresh random permutation each epoch, cut into batches of B)", loader="shuffle",
        upper_certified=False, label="shuffling", run_words="a shuffled run", lower_source="Chua et al. 2024",
        upper_source="the once-per-epoch value (Chua et al. 2024, Thm 4.1)", upper_method="deterministic",
        epsilon_epochs=_shuffle_epochs.epsilon_epochs, reference="shuffle_ec_lower",
        audit_options={"sigma": {"bound": "lower"}})


SPEC = _spec()
