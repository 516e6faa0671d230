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
# points, and self-composition costs about that many points times log2(T).  Beyond FEASIBLE_POINTS a laptop runs
# out of memory (measured: σ = 1e-3, q = 0.5, T = 1e3 took > 5 GB), so such a question cannot run at all; the time
# grows with points × log2(T) (FEASIBLE_WORK ≈ TIME_LIMIT: σ = 0.8, q = 1e-3, T = 1e9 and σ = 100, q = 1, T = 1e9 ran
# > 60 s) and with T itself, as the accountant refines its discretisation until the composed error meets rel_tol
# (MAX_PLD_STEPS ≈ TIME_LIMIT: σ = 1.5, q = 1e-3, T = 1e6, rel_tol 0.01 lands at d = 1e-5; T = 1e7 ran > 100 s).
FEASIBLE_POINTS = 2e6
FEASIBLE_WORK = 2e7
MAX_PLD_STEPS = 10**6
_TAIL_SDS = 8.0  # the PLD keeps the loss support within about ±8 standard deviations (tail mass ~1e-15)
_ESTIMATE_DISCRETIZATION = 1e-3  # the accountant refines from 1e-2; 1e-3 is where rel_tol 1e-3 usually lands


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


def pld_size_estimate(sigma, q, steps, discretization=_ESTIMATE_DISCRETIZATION):
    """(grid points, points × log2 T) of the composed PLD: a cheap estimate, no PLD is built."""
    import math

    width = 2 * _TAIL_SDS * (math.exp(min(_log_step_loss_sd(sigma, q) + 0.5 * math.log(steps), 700.0))
                             + math.exp(min(-math.log(sigma), 700.0)))
    points = width / discretization
    return points, points * max(1.0, math.log2(steps))


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
    """Predicted seconds of a PLD question (the other accountants: well under a second).  A PLD that does not fit
    in memory (more than FEASIBLE_POINTS grid points) cannot run: Cost(inf, why)."""
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
    if points > FEASIBLE_POINTS:
        return Cost(math.inf, f"these inputs need a PLD of about {points:.2g} grid points composed {steps} times "
                              f"(limit {FEASIBLE_POINTS:.0e} points): more memory than a laptop has",
                    ("sigma", "q", "steps", "method"))
    return Cost(max(0.5, TIME_LIMIT * work / FEASIBLE_WORK, TIME_LIMIT * steps / MAX_PLD_STEPS),
                drivers=("steps", "epochs", "method"))


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


def _spec(name, summary, pair_add, pair_remove, delta, epsilon, sigma, *, relation, drawn, loader, **words):
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
