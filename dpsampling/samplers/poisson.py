"""Poisson subsampling with rate q (each record joins each batch independently with probability q).

Dominating pairs (Zhu et al. 2022 Thm 11; Lebeda et al. 2024 Prop. 9), one step, sensitivity 1:
remove = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)), add = (N(0,σ²), (1-q)N(0,σ²) + qN(1,σ²)); the run is
their T-fold composition, accounted by :mod:`dpsampling.engine.accountant` (dp_accounting PLD/RDP).
Bounds: ``upper`` (pessimistic PLD: connect-the-dots discretisation rounds privacy loss up; RDP is an
upper bound by conversion) and ``lower`` (optimistic PLD rounds it down); ``exact`` at q = 1.
One epoch of Chua et al. (q = 1/T): :func:`dpsampling.papers.chua.poisson_epoch_result`.
"""

from __future__ import annotations

import dataclasses

from dpsampling.engine import lazy
from dpsampling.engine.result import RELIABLE_DELTA_FLOOR, AccountingResult
from dpsampling.engine.validation import METHODS

accountant = lazy.module("dpsampling.engine.accountant")  # heavy (dp_accounting): loaded on first use
poisson_interval = lazy.module("dpsampling.engine.poisson_interval")
epochs_engine = lazy.module("dpsampling.engine.epochs")

NAME = "poisson"
BOUNDS = ("upper", "lower")


#: the default method: the certified interval of :mod:`dpsampling.engine.poisson_interval`
INTERVAL = "certified"


def _kw(q, steps, epochs, sampler, method, rel_tol, options):
    """The engine's keyword arguments for steps·epochs compositions at rate q (shared with :mod:`.wor`); the inputs
    are those :func:`dpsampling.samplers.account` checked."""
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    method = INTERVAL if method is None else method
    kw = dict(q=q, total_steps=int(steps) * int(epochs), method=method, rel_tol=rel_tol)
    for k in ("discretization", "finest_discretization"):
        if options.get(k) is not None:
            kw[k] = options[k]
    return kw


def answer(quantity, target, sigma, bound, direction, kw):
    """ε(δ) (``quantity="epsilon"``) or δ(ε) of the Poisson-subsampled Gaussian at ``sigma`` for the engine's
    keyword arguments ``kw`` (:func:`_kw`; shared with :mod:`.wor`, which passes σ/2).  Default method: the
    certified interval of :mod:`dpsampling.engine.poisson_interval` (value = its upper end; ``bound="lower"``
    gives the same interval: its lower end is ``lower``); ``method`` pld/rdp/analytic/cf: :mod:`dpsampling.engine.accountant`."""
    if kw["method"] != INTERVAL:
        call = accountant.epsilon if quantity == "epsilon" else accountant.delta
        return call(target, sigma=sigma, bound=bound, direction=direction, **kw)
    fn = poisson_interval.epsilon if quantity == "epsilon" else poisson_interval.delta
    extra = {k: kw[k] for k in ("discretization", "finest_discretization") if k in kw}
    r = fn(target, sigma=float(sigma), q=float(kw["q"]), total_steps=int(kw["total_steps"]), direction=direction,
           rel_tol=kw["rel_tol"], **extra)
    return r  # bound="lower": the same interval (account answers its lower end beside the safe upper end)


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
          rel_tol=None, **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps: :func:`answer` (by default the certified interval)."""
    return answer("delta", epsilon, sigma, bound, direction, _kw(q, steps, epochs, NAME, method, rel_tol, options))


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
            rel_tol=None, **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps: :func:`answer` (by default the certified interval)."""
    return answer("epsilon", delta, sigma, bound, direction, _kw(q, steps, epochs, NAME, method, rel_tol, options))


def sigma(epsilon, delta, *, steps, epochs=1, q=None, method=None, direction="add_remove", rel_tol=None,
          **options) -> AccountingResult:
    """Smallest σ: :func:`dpsampling.engine.accountant.calibrate_sigma` gives a sufficient σ (``value`` =
    ``upper``); by default (method certified) ``lower`` is a provably insufficient σ
    (:func:`dpsampling.engine.poisson_interval.insufficient_sigma`, the dominated PLD at the calibration's
    discretisation), so the smallest sufficient σ lies in (lower, upper]."""
    kw = _kw(q, steps, epochs, NAME, method, rel_tol, options)
    return calibrate(epsilon, delta, direction, kw)


def calibrate(epsilon, delta, direction, kw, scale=1.0):
    """σ for the engine's keyword arguments ``kw`` (:func:`_kw`); ``scale`` multiplies both ends (WOR: 2, since
    WOR at σ has Poisson's curves at σ/2, Lebeda Prop. 9)."""
    interval = kw["method"] == INTERVAL
    if interval:
        kw = dict(kw, method="pld")
    r = accountant.calibrate_sigma(epsilon, delta, direction=direction, **kw)
    low = None
    if interval and r.kind == "upper" and r.method == "pld":
        low = poisson_interval.insufficient_sigma(epsilon, delta, q=float(kw["q"]), total_steps=int(kw["total_steps"]),
                                                  sigma_sufficient=r.value,
                                                  discretization=r.accuracy["discretization"], direction=direction,
                                                  rel_tol=kw["rel_tol"])
        acc = dict(r.accuracy, lower_method=poisson_interval.LOWER_PLD + " (provably insufficient σ)",
                   upper_method=poisson_interval.UPPER_PLD + " (sufficient σ)")
        r = dataclasses.replace(r, lower=low, accuracy=acc,
                                method=f"{poisson_interval.LOWER_PLD} / {poisson_interval.UPPER_PLD}")
    if scale == 1.0:
        return r
    up = None if r.upper is None else r.upper * scale
    lo = None if r.lower is None else r.lower * scale
    return dataclasses.replace(r, value=r.value * scale, lower=lo, upper=up)


def answer_epochs(delta, sigma, direction, kw, epochs, last):
    """ε(δ) at the default method (the certified interval) after each epoch of ``epochs`` (epoch numbers before the
    last, in order, or the last itself with ``last=None``), ``kw`` as for :func:`answer`, ``last`` the last epoch's
    answer: one epoch is :func:`answer`'s result there (the one-step PLDs kept between calls); several are certified
    intervals at ``last``'s discretisation from one transform per end
    (:func:`dpsampling.engine.epochs.interval_epsilon_each_epoch`), or :func:`answer`'s where ``last`` has none."""
    extra = {k: kw[k] for k in ("discretization", "finest_discretization") if k in kw}
    steps = kw["total_steps"]
    d = None if last is None else last.accuracy.get("discretization")
    if len(epochs) > 1 and d is not None and float(kw["q"]) < 1.0 and float(delta) >= RELIABLE_DELTA_FLOOR:
        rows = epochs_engine.interval_epsilon_each_epoch(delta, sigma=float(sigma), q=float(kw["q"]), steps=steps,
                                                         epochs=max(epochs), discretization=d, direction=direction,
                                                         rel_tol=kw["rel_tol"], wanted=epochs)
        return [rows[e - 1] for e in epochs]
    return epochs_engine.interval_epsilon_epochs(delta, sigma=float(sigma), q=float(kw["q"]), steps=steps,
                                                 epochs=epochs, direction=direction, rel_tol=kw["rel_tol"], **extra)


def epsilon_epochs(delta, *, sigma, steps, epochs, last_epoch, last, q=None, direction="add_remove", rel_tol=None,
                   **options):
    """ε(δ) after each epoch of ``epochs`` (before ``last_epoch``, whose answer is ``last``) at the default method:
    :func:`answer_epochs`."""
    kw = _kw(q, steps, 1, NAME, None, rel_tol, options)
    return answer_epochs(delta, sigma, direction, kw, list(epochs), last)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
# The cost model: a PLD of a composed subsampled Gaussian needs about (width of its privacy-loss support) / d grid
# points, and self-composition costs about that many points times log2(T).  Its peak memory grows with the points
# (_BYTES_PER_POINT below; spec.MEMORY_LIMIT refuses beyond it; FEASIBLE_POINTS, where the old limit was, is the
# size a typical question stays well under: σ = 1e-3, q = 0.5, T = 1e3 took > 5 GB); the time
# grows with points × log2(T) (FEASIBLE_WORK ≈ TIME_LIMIT: σ = 0.8, q = 1e-3, T = 1e9 and σ = 100, q = 1, T = 1e9 ran
# > 60 s) and with T itself, as the accountant refines its discretisation until the composed error meets rel_tol
# (MAX_PLD_STEPS ≈ TIME_LIMIT: σ = 1.5, q = 1e-3, T = 1e6, rel_tol 0.01 lands at d = 1e-5; T = 1e7 ran > 100 s).
FEASIBLE_POINTS = 2e6
FEASIBLE_WORK = 2e7
MAX_PLD_STEPS = 10**6
_TAIL_SDS = 8.0  # the PLD keeps the loss support within about ±8 standard deviations (tail mass ~1e-15)
_ESTIMATE_DISCRETIZATION = 1e-3  # the accountant refines from 1e-2; 1e-3 is where rel_tol 1e-3 usually lands
_RANGE_SDS = 9.5  # the one-step loss support spans x in [−9.5σ, 1 + 9.5σ] (measured: 8.6e4 points at σ 0.138)
_RARE_RATE = 1.0  # T·q below which rare batches with the record set the composed support
_LOG_TRUNCATION = -34.5  # log 1e-15
#: peak memory of the certified interval's first level (d = 1e-3; the pessimistic and dominated PLDs, both directions,
#: the FFT buffers): bytes per composed grid point beyond the interpreter's (measured: 2.5e6 points at d = 1e-3, one
#: PLD 317 MiB; 1.5e6 at 1e-4, 301 MiB); finer levels are taken only within engine.poisson_interval's budget
_BASE_BYTES = 150 * 2**20
#: CPU seconds per point × log2(T) where the rare batches set the support (measured: σ 0.0331, q 4.8e-4, 10 steps,
#: 4.4e6 points predicted: 5.1 CPU-s for the interval)
_RARE_SECONDS_PER_WORK = 4e-7
#: … and where the loss spread sets it (FEASIBLE_WORK's 3e-6 = TIME_LIMIT / FEASIBLE_WORK was measured where the
#: steps dominate, now MAX_PLD_STEPS's term; measured: WOR σ 0.3652, q 0.06, 1110 steps, 3.3e7 work: 2.4 CPU-s; Poisson
#: σ 0.2, q 0.5, 60 steps, δ(700): 2.5 CPU-s)
_SPREAD_SECONDS_PER_WORK = 2.5e-7
#: where ε is small the interval falls back on the φ accountant (engine/poisson_interval.py _with_cf): ~_CF_SECONDS more
#: (measured: σ 4.567, q 2.66e-4, 90 steps, δ 2.4e-7: 8.4 of 9.7 CPU-s in the φ accountant; σ 1e3 rows: ~1 s)
_CF_EPSILON = 0.1
_CF_SECONDS = 4.0
#: = engine.poisson_interval.REFINE_MAX_POINTS / REFINE_MAX_WORK (not imported here: it loads dp_accounting)
_REFINE_MAX_POINTS = 5e6
_REFINE_MAX_WORK = 3e7
_BYTES_PER_POINT = 200.0
#: CPU seconds per point of the second level (d = 1e-4) of a rare-batch question, both ends, the two
#: directions' points counted (measured: σ 0.1538, q 6.03e-5, 2 steps: 2.6e6 points, 1.4 CPU-s; σ 0.1, 1 step:
#: 2.75e6, 1.75 CPU-s with its first level)
_SECOND_LEVEL_SECONDS_PER_POINT = 6e-7
#: T·q below which the first level's interval does not converge (measured at q = 6.03e-5, 1–18 steps, σ 0.1–0.15:
#: level 2 always taken; at q ≥ 0.01 level 1 converged: bench/bench_cost_model.py --edge --fresh)
_VERY_RARE_RATE = 2e-3


def _log_step_loss_sd(sigma, q):
    """log of (an upper estimate of) the per-step privacy-loss spread of a q-subsampled Gaussian:
    min(1/σ, q·sqrt(e^{1/σ²} − 1)) (the exact spread for q = 1; the χ²-divergence scale for small q)."""
    import math

    log_x = -2.0 * math.log(sigma)  # x = 1/σ², kept in log space (σ may be 1e-300 or 1e300)
    if log_x < -230:  # e^x − 1 = x to double precision
        log_expm1 = log_x
    elif log_x < math.log(700):
        log_expm1 = math.log(math.expm1(math.exp(log_x)))
    else:  # log(e^x − 1) = x for x ≥ 700 (and x may overflow to inf: then the PLD is infeasible anyway)
        log_expm1 = math.exp(min(log_x, 709.0))
    return min(-math.log(sigma), math.log(q) + 0.5 * log_expm1)


def _log_loss_at(log_q, log1m_q, a):
    """log(1 − q + q·e^a): the privacy loss of the remove pair at a point with exponent a = (x − 1/2)/σ²."""
    import math

    u, v = log1m_q, log_q + a
    if u == -math.inf:
        return v
    m = max(u, v)
    return m + math.log1p(math.exp(min(u, v) - m))


def _step_loss_range(sigma, q):
    """The width of one step's privacy-loss support on the PLD grid: the loss of the remove pair from x = −zσ to
    x = 1 + zσ (z = _RANGE_SDS, where the Gaussian's tail mass is below dp_accounting's truncation).  For small q
    and σ the support is far wider than the loss spread: a rare batch with the record has a loss of ≈ 1/(2σ²)."""
    import math

    log_q = math.log(q)
    log1m_q = math.log1p(-q) if q < 1 else -math.inf
    z = _RANGE_SDS
    hi = min((0.5 + z * sigma) / sigma**2, 1e300) if sigma > 1e-150 else 1e300
    lo = max((-z * sigma - 0.5) / sigma**2, -1e300) if sigma > 1e-150 else -1e300
    return _log_loss_at(log_q, log1m_q, hi) - _log_loss_at(log_q, log1m_q, lo)


def _rare_hits(rate):
    """How many of the steps can hold the record before their probability falls below the truncation (1e-15): the
    upper tail of Poisson(``rate``), for a rate below _RARE_RATE (beyond it the loss spread describes the width)."""
    import math

    if rate <= 0:
        return 0
    k, log_p = 0, -rate
    while log_p > _LOG_TRUNCATION and k < 200:
        k += 1
        log_p += math.log(rate) - math.log(k)
    return k


def pld_size_estimate(sigma, q, steps, discretization=_ESTIMATE_DISCRETIZATION):
    """(grid points, points × log2 T) of the composed PLD: a cheap estimate, no PLD is built.  The composed
    support is ±_TAIL_SDS loss spreads or, where the record's batches are rare (T·q below _RARE_RATE), the
    one-step loss support times the number of steps that can hold it (measured: σ 0.0331,
    q 4.8e-4, 10 steps: 7.4e5 points per step at d = 1e-3, 2.5e6 composed)."""
    import math

    rare = steps * q < _RARE_RATE
    points = (_rare_width(sigma, q, steps) if rare else _spread_width(sigma, q, steps)) / discretization
    return points, points * max(1.0, math.log2(steps))


def _spread_width(sigma, q, steps):
    """±_TAIL_SDS composed loss spreads."""
    import math

    return 2 * _TAIL_SDS * (math.exp(min(_log_step_loss_sd(sigma, q) + 0.5 * math.log(steps), 700.0))
                            + math.exp(min(-math.log(sigma), 700.0)))


def _rare_width(sigma, q, steps):
    """The one-step loss support times the number of steps that can hold the record (rare batches)."""
    return _step_loss_range(sigma, q) * min(steps, _rare_hits(steps * q))


def _sigma_for_gdp_mu(epsilon, delta, q, steps):
    """σ at which the composed loss spread sqrt(T)·s(σ, q) equals the Gaussian-DP μ of (ε, δ):
    μ solves ε = z_δ μ + μ²/2 (z_δ the standard normal quantile of 1 − δ); bisection in log σ."""
    import math
    from statistics import NormalDist

    from dpsampling.engine.numerics import bisect

    z = NormalDist().inv_cdf(1 - delta) if delta < 0.5 else 0.0
    mu = -z + math.sqrt(z * z + 2 * epsilon) if epsilon > 0 else 1e-300
    target = math.log(mu) - 0.5 * math.log(steps)
    _, hi = bisect(lambda m: _log_step_loss_sd(math.exp(m), q) > target, -700.0, 700.0, 200)  # in log σ
    return math.exp(hi)


def cost(question):
    """Predicted seconds and peak bytes of a PLD question (the other accountants: well under a second); beyond
    spec.MEMORY_LIMIT bytes check_cost refuses it, naming σ, q and the steps."""
    import math

    from .spec import TIME_LIMIT, Cost

    if question.method not in (None, INTERVAL, "pld"):
        return Cost(0.5)
    steps = question.steps * question.epochs
    q = question.q
    if question.quantity == "sigma":
        eps, dlt = question.target
        if not (0 < dlt < 1 and 0 <= eps < math.inf):
            return Cost(0.0)  # out of range: the library names the parameter
        sigma = _sigma_for_gdp_mu(eps, dlt, q, steps)
    else:
        sigma = question.sigma
    points, work = pld_size_estimate(sigma, q, steps)
    rare = steps * q < _RARE_RATE
    per_work = _RARE_SECONDS_PER_WORK if rare else _SPREAD_SECONDS_PER_WORK
    seconds = per_work * work
    # memory: where rare batches set the support the second level (d = 1e-4, 10× the grid) is taken where the
    # engine's refinement bound admits it (the peak measured 0.3-2.2× this over σ 0.0587-0.1538, 1-18 steps,
    # q 6e-5-0.275: bench/bench_cost_model.py --edge --fresh; at most 788 MiB where 1.75 GiB was predicted)
    mem_points = points
    if rare and 10 * points <= _REFINE_MAX_POINTS and 10 * work <= _REFINE_MAX_WORK:
        mem_points = 10 * points
        seconds = 8 * seconds  # ~8× the first level's time (measured: WOR σ 0.2757, q 1.37e-5, 18 steps: 3.3 CPU-s;
        # σ 0.4457, q 3.55e-4, 114 steps: 3.2 CPU-s)
    if steps * q < _VERY_RARE_RATE:
        # time: both directions' PLDs are built and composed, each over the rare batches' support, and the second
        # level is taken when the engine's own count of the first level's points × 10 is within
        # REFINE_MAX_POINTS/WORK, a count up to ~2× off this estimate (dp_accounting truncates the rare multi-hit
        # tails), so it is predicted wherever the estimate is within 3× of the bound, at the size the engine admits;
        # below T·q = _VERY_RARE_RATE the first level's lower end is 0 at these σ, so the second level is taken
        # (measured: σ 0.1, q 6.03e-5, 4 steps: 5.4e5 points estimated, 4.9e5 counted, refined: 3.2 CPU-s where
        # 0.5 s was predicted; σ 0.1538, 2 steps: 1.4e5 estimated, 2.6e5 counted (two directions), 2.1 CPU-s)
        both = 2 if (question.options or {}).get("direction", "add_remove") == "add_remove" else 1
        if 10 * points <= 3 * _REFINE_MAX_POINTS and 10 * work <= 3 * _REFINE_MAX_WORK:
            second = min(10 * both * points, _REFINE_MAX_POINTS)
            seconds = max(seconds, per_work * work + _SECOND_LEVEL_SECONDS_PER_POINT * second)
    seconds = max(0.5, seconds, TIME_LIMIT * steps / MAX_PLD_STEPS)
    if question.quantity == "epsilon" and question.method in (None, INTERVAL) and (
            _small_epsilon(sigma, q, steps, question.target) or _below_floor(question.target)):
        seconds += _CF_SECONDS  # below the PLD floor the φ accountant is asked first (measured: WOR σ 0.9107,
        # q 0.0164, 1107 steps, δ 8.49e-11: 3.1 CPU-s in a fresh child where 0.5 s was predicted)
    return Cost(seconds, drivers=("sigma", "q", "steps", "epochs", "method"),
                bytes=_BASE_BYTES + _BYTES_PER_POINT * mem_points)


def _below_floor(delta):
    """Whether δ is below engine.result.RELIABLE_DELTA_FLOOR (1e-10; not imported: the registry loads this module)."""
    return isinstance(delta, float) and 0 < delta < 1e-10


def _small_epsilon(sigma, q, steps, delta):
    """Whether ε(δ) is below _CF_EPSILON (the Gaussian-DP estimate z_δ·μ + μ²/2, μ = q·√T·√(e^{1/σ²} − 1)): there
    the PLD pair's width stays above rel_tol at its finest discretisation and the interval asks the φ accountant."""
    import math
    from statistics import NormalDist

    if not isinstance(delta, float) or not 0 < delta < 0.5 or sigma < 0.05:
        return False
    mu = q * math.sqrt(steps) * math.sqrt(math.expm1(min(1.0 / sigma**2, 700.0)))
    if delta >= 0.4 * mu:  # δ(0) = 2Φ(μ/2) − 1 ≤ 0.4μ: ε = 0, read off the first level
        return False
    return NormalDist().inv_cdf(1 - delta) * mu + mu * mu / 2 < _CF_EPSILON


def _options():
    from .spec import Option

    return (
        Option("rel_tol", "rel-tol", float, "relative accuracy of PLD results (default 1e-3)", default=1e-3,
               low=0.0, high=0.1, low_open=True),
        Option("discretization", "discretization", float, "PLD value discretisation (None: refined to rel_tol)",
               low=0.0, low_open=True, cli=False),
        Option("finest_discretization", "finest-discretization", float, "PLD refinement stops here",
               low=0.0, low_open=True, cli=False),
    )


def _spec(name, summary, pair_add, pair_remove, delta, epsilon, sigma, *, relation, drawn, loader, cost=cost,
          **words):
    """The description of a rate sampler whose curves are a subsampled Gaussian's (poisson, wor)."""
    from .spec import SamplerSpec

    def sigma_entry(epsilon, delta, *, bound=None, **kw):  # the calibrated σ is sufficient: an upper bound
        return sigma(epsilon, delta, **kw)

    return SamplerSpec(
        name=name, summary=summary, pair_add=pair_add, pair_remove=pair_remove, batch="rate",
        bounds={INTERVAL: ("upper", "lower"), "pld": ("upper", "lower"), "rdp": ("upper",),
                "analytic": ("upper", "lower"), "cf": ("upper", "lower")},
        sigma_bounds=("upper",), methods=(INTERVAL, *METHODS), default_method=INTERVAL, options=_options(), audit_kind="interval",
        cost=cost, delta=delta, epsilon=epsilon, sigma=sigma_entry, relation=relation, drawn=drawn, loader=loader,
        quantities={"cf": ("epsilon", "delta")}, directions=("add_remove", "add", "remove"), reference="pld_pair",
        **words)


SPEC = _spec(NAME, "Poisson subsampling: each record joins each batch with probability q",
             "(N(0,σ²), (1-q)N(0,σ²) + qN(1,σ²))", "((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²))", delta, epsilon, sigma,
             relation="add_remove", loader="poisson", role="baseline", label="Poisson",
             epsilon_epochs=epsilon_epochs,
             drawn="Poisson sampling (each example in each step independently with probability B/N)")
