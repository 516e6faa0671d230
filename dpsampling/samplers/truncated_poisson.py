"""Truncated Poisson subsampling: each record joins each batch with probability q, and a batch of more than
``max_batch_size`` records is cut to that many, chosen uniformly (JAX Privacy's
``CyclicPoissonSampling(truncated_batch_size=B)``, accounted there by dp_accounting's
``TruncatedSubsampledGaussianDpEvent``).

Neighbouring relation: add or remove one record, the larger dataset of the pair holding ``dataset_size``
records, as dp_accounting's event assumes (its truncation probability counts ``dataset_size`` − 1 others).
Each answer is a certified interval (:mod:`dpsampling.engine.truncated`):

* upper end: per step, one pair dominating three dominating pairs at once (the greatest convex minorant of the
  minimum of their privacy profiles): with K ~ Bin(n − 1, q) the others drawn and p = P[K ≥ B], (a) the
  mixture (weight 1 − p) of Poisson's pair (σ, q) and (weight p) of the subsampled Gaussian at rate
  q' = P[Bin(n, q) > B]·B/(n·p) with sensitivity 2 (revealing {K ≥ B}, the kept set and the displaced record
  only helps the adversary; dp_accounting's analysis, sharpened), and (b) the pair obtained by revealing the
  set of others kept (per count a subsampled Gaussian with its own rate and mass ratio), and (c) R₁: the count
  of others kept revealed only below B − 1 (Poisson's pair there; above, a one-dimensional three-atom pair, the
  supremum over the angle between the differing record's gradient and the B-th other's proved to lie at 0 or
  π); composed by PLD with a proven rounding bound; where that is above dp_accounting's value for the same
  question (its ``TruncatedSubsampledGaussianDpEvent``, also at a cap ≥ n, where ours is Poisson's certified end), or
  infinite, dp_accounting's value, named ``dp_accounting TruncatedSubsampledGaussianDpEvent``: of two upper bounds
  the smaller is one.  That value is certified too (its one-step PLD composed with our proven FFT rounding bound,
  read for an upper bound: engine/truncated_event.py); where the bound reaches δ it is ∞ and not used.
* the limit of this route, and the conjecture: every pair above reveals the order of the other records, and no
  such argument certifies below the "folded path" (the first B − 1 others' gradients along the differing
  record's, the B-th opposite): about 6.72 at MNIST (n = 60000, q = 256/60000, σ 1.1, 14100 steps, δ 1e-5) cap
  256, where the upper end is 7.04 and the lower 3.12.  The true value is conjectured, not proved, to be near the
  lower end (about 3.13 there): all other records sharing one gradient would be the worst case (proved for
  B = 1 by joint convexity; no counterexample in exhaustive small searches; issue 40).
* lower end: the exact output law of one adjacent pair and query (the differing record's gradient along one
  axis, every other record's along a second, which then counts the batch), coarsened to cells (a
  post-processing), composed as a dominated PLD.
* a cap at or above the dataset size never truncates: the Poisson sampler's interval, flagged
  ``cap_at_or_above_dataset_size_is_poisson``.

:func:`smallest_cap` answers the practitioner's question: the smallest cap whose certified ε is within a
factor of Poisson's.
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling.engine import lazy
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_positive

truncated = lazy.module("dpsampling.engine.truncated")  # heavy (dp_accounting, scipy): loaded on first use

NAME = "truncated_poisson"
#: default relative width asked of the interval (reported, flagged ``not_converged`` beyond)
DEFAULT_REL_TOL = 1e-2


def _check_cap(q, dataset_size):
    """(q, n) with n >= 1/q (at least one record expected per batch): the one rule between two options that
    :func:`dpsampling.samplers.account` leaves to the sampler (each option alone is checked there)."""
    low = max(2, math.ceil(1.0 / float(q) - 1e-9))
    if dataset_size < low:
        raise ParameterError("dataset_size", f"an integer >= {low} (= 1/q: q·dataset_size ≥ 1 expected records "
                                             f"per batch)", dataset_size)
    return float(q), int(dataset_size)


def _kw(q, steps, epochs, rel_tol, direction, options):
    q, n = _check_cap(q, options["dataset_size"])
    rel_tol = DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    return dict(q=q, dataset_size=n, max_batch_size=int(options["max_batch_size"]),
                total_steps=int(steps) * int(epochs), rel_tol=rel_tol)


def _bounded(r, bound):
    return r  # bound="lower": the same interval, its lower end in ``lower``


#: the name of an upper end that is dp_accounting's value for the same question (:func:`_at_most_dp_accounting`)
DP_ACCOUNTING_UPPER_METHOD = "dp_accounting TruncatedSubsampledGaussianDpEvent"


def dp_accounting_value(quantity, target, *, sigma, q, dataset_size, max_batch_size, total_steps):
    """dp_accounting's ε(δ) (``quantity="epsilon"``, target δ) or δ(ε) of ``total_steps`` self-composed
    ``TruncatedSubsampledGaussianDpEvent``\ s, certified: its own one-step PLD (its ``PLDAccountant``'s, at its
    default discretisation 1e-4, pessimistic estimate), composed as it composes it, plus the proven bound on that
    composition's FFT rounding, read for an upper bound by construction (:mod:`dpsampling.engine.truncated_event`):
    the analysis JAX Privacy's truncated sampler is accounted by, an upper bound under the same neighbouring relation
    (add or remove one record, the larger dataset of ``dataset_size``), at or above dp_accounting's float."""
    from dpsampling.engine import truncated_event

    fn = truncated_event.certified_epsilon if quantity == "epsilon" else truncated_event.certified_delta
    return float(fn(float(target), sigma=float(sigma), q=float(q), dataset_size=int(dataset_size),
                    max_batch_size=int(max_batch_size), total_steps=int(total_steps)))


def _at_most_dp_accounting(quantity, target, sigma, kw, r):
    """``r`` with its upper end (and value, kind ``upper``) replaced by dp_accounting's value for the same question
    (:func:`dp_accounting_value`) where ours is larger, infinite, nan or missing — two upper bounds, the smaller is
    one — named :data:`DP_ACCOUNTING_UPPER_METHOD` in ``upper_method`` and ``accuracy["upper_method"]`` (ours kept as
    ``accuracy["upper_ours"]``)."""
    theirs = dp_accounting_value(quantity, target, sigma=sigma, q=kw["q"], dataset_size=kw["dataset_size"],
                                 max_batch_size=kw["max_batch_size"], total_steps=kw["total_steps"])
    if r.upper is not None and r.upper <= theirs:
        return r
    acc = {**r.accuracy, "upper_method": DP_ACCOUNTING_UPPER_METHOD, "upper_ours": r.upper}
    method = f"{r.method.split(' / ')[0]} / {DP_ACCOUNTING_UPPER_METHOD}" if " / " in (r.method or "") else r.method
    safe = r.kind in ("upper", "interval") and r.value is not None  # value: the safe end, the upper one
    return dataclasses.replace(r, value=theirs if safe else r.value, upper=theirs, method=method, accuracy=acc,
                               upper_method=DP_ACCOUNTING_UPPER_METHOD)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", direction="add_remove", rel_tol=None,
          **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps, a certified interval (value = upper end; ``bound="lower"``: the same interval); the
    upper end at most dp_accounting's (:func:`_at_most_dp_accounting`)."""
    kw = _kw(q, steps, epochs, rel_tol, direction, options)
    r = _at_most_dp_accounting("delta", epsilon, float(sigma), kw, truncated.delta(epsilon, sigma=float(sigma), **kw))
    return _bounded(r, bound)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", direction="add_remove", rel_tol=None,
            **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps, a certified interval (value = upper end; ``bound="lower"``: the same interval); the
    upper end at most dp_accounting's (:func:`_at_most_dp_accounting`)."""
    kw = _kw(q, steps, epochs, rel_tol, direction, options)
    r = _at_most_dp_accounting("epsilon", delta, float(sigma), kw, truncated.epsilon(delta, sigma=float(sigma), **kw))
    return _bounded(r, bound)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, bound=None, direction="add_remove", rel_tol=None,
          **options) -> AccountingResult:
    """Smallest σ for (ε, δ): ``value`` = ``upper`` a sufficient σ, ``lower`` a provably insufficient one."""
    kw = _kw(q, steps, epochs, rel_tol, direction, options)
    return truncated.sigma(epsilon, delta, **kw)


@dataclasses.dataclass(frozen=True)
class SmallestCap:
    """The smallest cap ``max_batch_size`` whose certified upper ε(δ) ``epsilon`` is ≤ (1 + ``factor``) ×
    Poisson's certified upper ε(δ) ``poisson_epsilon`` (same discretisation)."""

    max_batch_size: int
    epsilon: float
    poisson_epsilon: float
    factor: float
    mean_batch_size: float


def smallest_cap(delta, *, sigma, steps, epochs=1, q, dataset_size, factor=0.01) -> SmallestCap:
    """The smallest cap B whose certified upper ε(δ) after steps·epochs steps is within ``factor`` (relative) of
    Poisson's certified upper ε(δ) (:func:`dpsampling.engine.truncated.smallest_cap`)."""
    q, n = _check_cap(q, dataset_size)
    check_positive("factor", factor)
    cap, eps, pois = truncated.smallest_cap(delta, sigma=float(sigma), q=q, dataset_size=n,
                                            total_steps=int(steps) * int(epochs), factor=float(factor))
    return SmallestCap(int(cap), float(eps), float(pois), float(factor), q * n)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
# The cost model, measured on the shared 2-core machine (CPU s, bench/bench_truncated.py): one ε or δ interval is the
# upper end's dominating pmf (three subsampled-Gaussian PLDs combined) and the lower end's cell pmfs (one or two
# adversaries), each composed T times at d = 1e-4: 0.7-1.4 s at T = 14 100 (MNIST, caps from the mean to
# mean + 4 sd), 0.7-1.2 s at T = 50 050 (ImageNet-like, 10 epochs: a smaller rate, a narrower loss support),
# 3.4-3.5 s there where the interval is refined once to a finer discretisation (caps ≥ mean + 3 sd); about 0.4 s
# more in the query during which the process first imports numba for the hulls.
# σ: a bisection of about 10 upper-end and 10 lower-end evaluations.  dp_accounting's value of the same question
# (the upper end's second bound, _at_most_dp_accounting) adds 2.2-2.4 CPU s at T = 14 100 and 141 000 (MNIST, cap
# +2 sd), 0.2 s at T = 6151 (σ 2.29), 7.6 s at σ 0.414, T = 23 (measured on the shared machine).
_SECONDS_PER_QUERY = 3.5
_DP_ACCOUNTING_SECONDS = 2.5
_REFERENCE_STEPS = 14_100


#: its PLDs are built at d = 1e-4 (DEFAULT_DISCRETIZATION of engine/truncated.py), and the widest of them is the
#: sensitivity-2 pair (Poisson's at σ/2): beyond the measured MNIST-like grids the time and memory grow with its
#: grid (samplers/poisson.py's estimate at σ/2, d = 1e-4): _BYTES_PER_POINT bytes and _SECONDS_PER_WORK seconds per
#: point × log2 T over the three pairs and the lower end's adversaries (measured: σ 0.0528, q 1.22e-3, 377 steps,
#: cap 9 asked 30 GB; σ 0.07225, q 6.8e-5, 156 steps, cap 12: 21 CPU-s)
_DISCRETIZATION = 1e-4
_BASE_BYTES = 150 * 2**20
_BYTES_PER_POINT = 600.0
_SECONDS_PER_WORK = 1.5e-6
_SPREAD_SECONDS_PER_WORK = 3.5e-7


def _truncation_estimate(q, n, cap):
    """P(a batch exceeds the cap) ≈ the Poisson(n·q) tail above ``cap`` (standard library only; normal beyond a
    mean of 1000)."""
    m = n * q
    if cap >= n:
        return 0.0
    if m > 1000:
        from statistics import NormalDist

        return 1.0 - NormalDist(m, math.sqrt(m)).cdf(cap + 0.5)
    k, log_p, total = cap + 1, -m + (cap + 1) * math.log(m) - math.lgamma(cap + 2), 0.0
    while k < cap + 200 + 20 * math.sqrt(m):
        total += math.exp(log_p)
        k += 1
        log_p += math.log(m) - math.log(k)
    return min(1.0, total)


def cost(question):
    """Predicted seconds and bytes: ~3.5 s per ε/δ query at 14 100 steps (a refined one included), growing like √T
    at most, and with the sensitivity-2 pair's PLD grid; ×15 for σ; plus ~2.5 s for dp_accounting's value of an ε/δ
    question (the upper end is at most it).  With the cap at or above the dataset size the question is Poisson's (its
    cost model) plus dp_accounting's."""
    import dataclasses

    from . import poisson
    from .spec import Cost

    n, cap = question.options.get("dataset_size"), question.options.get("max_batch_size")
    if isinstance(n, int) and isinstance(cap, int) and cap >= n:
        c = poisson.cost(question)
        extra = _DP_ACCOUNTING_SECONDS if question.quantity != "sigma" else 0.0
        return dataclasses.replace(c, seconds=c.seconds + extra)
    steps = max(1, int(question.steps)) * max(1, int(question.epochs))
    seconds = _SECONDS_PER_QUERY * max(1.0, math.sqrt(steps / _REFERENCE_STEPS))
    nbytes = 0.0
    if question.quantity != "sigma" and isinstance(question.sigma, (int, float)) and question.sigma > 0 \
            and isinstance(question.q, (int, float)) and 0 < question.q <= 1:
        # Poisson's pair at σ, mixed with weight p (the truncation probability) with the sensitivity-2 pair (Poisson's
        # at σ/2): its loss support is reached as often as a truncated batch holds the record (rate p·q)
        p = _truncation_estimate(question.q, n, cap) if isinstance(n, int) and isinstance(cap, int) else 1.0
        sizes = [poisson.pld_size_estimate(question.sigma, question.q, steps, _DISCRETIZATION)]
        if p > 0:
            sizes.append(poisson.pld_size_estimate(question.sigma / 2, max(question.q * p, 1e-300), steps,
                                                   _DISCRETIZATION))
        points, work = max(sizes)
        # rare batches: the one-step loss support sets the grid; else its spread, at MNIST's 3.5 s per 1e7
        seconds = max(seconds, (_SECONDS_PER_WORK if steps * question.q < poisson._RARE_RATE
                                else _SPREAD_SECONDS_PER_WORK) * work)
        nbytes = _BASE_BYTES + _BYTES_PER_POINT * points
    if question.quantity != "sigma":
        seconds += _DP_ACCOUNTING_SECONDS
    if question.quantity == "sigma":
        seconds *= 15
    return Cost(seconds, drivers=("sigma", "steps", "epochs", "max_batch_size"), bytes=nbytes)


def _options():
    from .spec import Option

    return (
        Option("dataset_size", "dataset-size", int, "number of records n (required with --max-batch-size)",
               low=2, required=True),
        Option("max_batch_size", "max-batch-size", int, "the cap B: a batch of more than B records is cut to B",
               low=1, required=True),
        Option("rel_tol", "rel-tol", float, "relative width asked of the interval (default 1e-2; reported)",
               default=DEFAULT_REL_TOL, low=0.0, high=0.5, low_open=True),
    )


def _spec():
    from .spec import SamplerSpec

    return SamplerSpec(
        name=NAME, summary="truncated Poisson: each record joins with probability q, a batch above "
                           "max_batch_size is cut to it",
        pair_add="mixture: (1 − p)·Poisson's add pair (σ, q) + p·the add pair at rate q' with sensitivity 2",
        pair_remove="mixture: (1 − p)·Poisson's remove pair (σ, q) + p·the remove pair at rate q' with "
                    "sensitivity 2",
        batch="capped", bounds={None: ("upper", "lower")}, sigma_bounds=("upper",), methods=(),
        options=_options(), audit_kind="interval", cost=cost, delta=delta, epsilon=epsilon, sigma=sigma,
        relation="add_remove", loader="truncated_poisson", label="truncated Poisson", cap_search=smallest_cap,
        drawn="truncated Poisson sampling (each example in each step independently with probability B/N, a batch "
              "larger than the cap cut to the cap uniformly)",
        directions=("add_remove",))


SPEC = _spec()
