"""Monte Carlo δ(ε) of balls-and-bins batches (Chua et al., AISTATS 2025, §4).

Dominating pair per epoch (see :mod:`dpsampling.balls_and_bins`): remove
P = MoG(1), Q = N(0, σ²I_T), L_R(x) = log Σ_t e^{x_t/σ²} − log T − 1/(2σ²);
add swaps P and Q, L_A = −L_R.  δ_dir(ε) = E_P[f(L)], f(ℓ) = (1 − e^{ε−ℓ})₊ ∈ [0, 1],
with L summed over the E epochs.  By symmetry a remove sample is x = e_1 + z,
z ~ N(0, σ²I_T).

Estimators
----------
* Naive (any E): average f(L) over draws from P^{⊗E}; values in [0, 1].
* Importance sampling (E = 1, default), conditioning on the largest coordinate.
  remove: if max_t z_t < C_R = ½ + σ²(ε − log(1 + (e^{1/σ²} − 1)/T)) then
  Σ_t e^{x_t/σ²} < e^{C_R/σ²}(e^{1/σ²} + T − 1), so L_R < ε and f = 0.  Hence
  δ = p·E[f | max z ≥ C_R], p = 1 − Φ(C_R/σ)^T; we draw M = max z from its law
  Φ(m/σ)^T restricted to [C_R, ∞), the other T − 1 coordinates i.i.d.
  N(0, σ²) truncated to ≤ M, and the position of the maximum uniformly.
  add: L_R ≥ max x/σ² − log T − 1/(2σ²), so max x ≥ C_A = ½ + σ²(log T − ε)
  gives L_A ≤ ε; δ = p·E[f | max x < C_A], p = Φ(C_A/σ)^T, coordinates i.i.d.
  truncated to < C_A.  The averaged values lie in [0, p].
  (These are the conditionings of Chua et al. 2025 §4 as summarised in the
  peer notes; we checked the two thresholds above from L_R directly.)

Confidence interval
-------------------
For i.i.d. values in [0, C] with mean m and sample mean v̄, Hoeffding (1963,
Thm 1) gives Pr[v̄ ≤ q] ≤ exp(−n·KL(q/C ‖ m/C)) for q < m (KL of Bernoullis),
and symmetrically above.  So the KL upper (lower) confidence limit — the
largest (smallest) p with n·KL(v̄/C ‖ p) ≤ log(1/β') — fails with probability
≤ β'.  We use β' = β/4 per side and direction: the interval
[max_dir lower, max_dir upper] contains max(δ_add, δ_remove) with
probability ≥ 1 − β (per ε; no union over an ε grid).  Since
KL(a‖b) ≥ 2(a − b)² (Pinsker), n ≥ C²·log(4/β)/(2h²) samples guarantee both
half-widths ≤ h (``samples_needed``); that is how the sample size for a
requested half-width is computed.  In the code n is ``mc_samples``, β ``mc_failure_prob``, h
``mc_half_width`` and the seed ``mc_seed``.

Reproducibility contract
------------------------
Samples come in blocks of ``block_size(T, E)`` draws (depends on T and E only).
Direction d ∈ {0: remove, 1: add} block b draws from
``SeedSequence(seed, spawn_key=(d, b))``.  Each block's Σ f is a float computed
the same way whatever the chunking, and the block sums are added with
``math.fsum`` (correctly rounded, order-free), so the output is byte-identical
for every split of the blocks into chunks (``block_sums(..., blocks=range)``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from dpsampling.engine.allocation_pld import poisson_epsilon_guess
from dpsampling.engine.errors import ParameterError
from dpsampling.engine.numerics import bisect
from dpsampling.engine.result import AccountingResult
from dpsampling.engine.validation import check_choice, check_delta, check_epsilon, check_int, check_positive

DIRECTIONS = ("remove", "add")
_BLOCK_FLOATS = 2**20  # normal draws per RNG block (part of the reproducibility contract)


class MCAccuracyError(RuntimeError):
    """The requested half-width needs more samples than the budget allows (CLI exit 1); ``params``: the parameters
    to change."""

    def __init__(self, message, params=("mc_samples",)):
        super().__init__(message)
        self.params = params


def _check_unit_open(name, value):
    return float(check_delta(value, name))  # the one rule of a number in (0, 1)


def _count(name, value, low):
    """``check_int`` (a missing count, None, is said missing)."""
    return check_int(name, value, low)


def block_size(steps, epochs):
    """Samples per RNG block for T steps and E epochs (≥ 1; depends on T, E only)."""
    return max(1, _BLOCK_FLOATS // (steps * epochs))


# --------------------------------------------------------------------------
# Chernoff–KL bounds
# --------------------------------------------------------------------------
def _kl(a, b):
    """KL(Ber(a) ‖ Ber(b)) for a, b in [0, 1]."""
    out = 0.0
    if a > 0:
        out += a * math.log(a / b) if b > 0 else math.inf
    if a < 1:
        out += (1 - a) * math.log((1 - a) / (1 - b)) if b < 1 else math.inf
    return out


def kl_bounds(mean, mc_samples, side_failure_prob, scale=1.0):
    """(lower, upper): KL confidence limits for a mean of ``mc_samples`` values in [0, scale].

    Each side fails with probability ≤ ``side_failure_prob`` (Hoeffding 1963, Thm 1);
    bisection to 1e-12 relative to ``scale``, rounded outward.
    """
    n = check_int("mc_samples", mc_samples, 1)
    b = _check_unit_open("side_failure_prob", side_failure_prob)
    check_positive("scale", scale)
    q = min(max(mean / scale, 0.0), 1.0)
    budget = math.log(1.0 / b) / n

    def solve(lo, hi, inside_at_lo):
        # boundary of {p : KL(q‖p) ≤ budget} between lo and hi, halved until narrower than 1e-13
        lo, hi = bisect(lambda mid: (_kl(q, float(mid)) <= budget) == inside_at_lo, lo, hi, 200, width=1e-13)
        return float(lo), float(hi)

    if _kl(q, 1.0) <= budget:
        up = 1.0
    else:
        up = solve(q, 1.0, True)[1]
    if _kl(q, 0.0) <= budget:
        low = 0.0
    else:
        low = solve(0.0, q, False)[0]
    return max(0.0, low * scale - 1e-15 * scale), min(scale, up * scale + 1e-15 * scale)


def samples_needed(mc_half_width, mc_failure_prob, scale=1.0):
    """n = ⌈scale²·ln(4/β)/(2h²)⌉: enough for KL half-widths ≤ h (``mc_half_width``) on both sides (Pinsker;
    β = ``mc_failure_prob``)."""
    h = check_positive("mc_half_width", mc_half_width)
    b = _check_unit_open("mc_failure_prob", mc_failure_prob)
    check_positive("scale", scale)
    return math.ceil(scale * scale * math.log(4.0 / b) / (2.0 * h * h))


# --------------------------------------------------------------------------
# samplers of L for one block
# --------------------------------------------------------------------------
def _log_sum(x, inv_s2, steps):
    """Row-wise log Σ_t e^{x_t/σ²} − log T − 1/(2σ²) (stable: max subtracted)."""
    y = x * inv_s2
    m = y.max(axis=1)
    y -= m[:, None]
    np.exp(y, out=y)
    return m + np.log(y.sum(axis=1)) - math.log(steps) - 0.5 * inv_s2


def thresholds(epsilon, sigma, steps):
    """(C_R, log p_R, C_A, log p_A): IS thresholds and log probabilities of their events."""
    s2 = sigma * sigma
    c_r = 0.5 + s2 * (epsilon - math.log1p(math.expm1(1.0 / s2) / steps))
    log_cdf_r = float(log_ndtr(c_r / sigma)) * steps
    log_p_r = math.log(-math.expm1(log_cdf_r)) if log_cdf_r < 0 else -math.inf
    c_a = 0.5 + s2 * (math.log(steps) - epsilon)
    log_p_a = float(log_ndtr(c_a / sigma)) * steps
    return c_r, log_p_r, c_a, log_p_a


def _block_losses(rng, m, sigma, steps, epochs, direction, importance, eps):
    """Losses L (summed over epochs) of m samples from P of ``direction``."""
    inv_s2 = 1.0 / (sigma * sigma)
    if not importance:
        x = rng.standard_normal((m * epochs, steps))
        x *= sigma
        if direction == "remove":
            x[:, 0] += 1.0
        loss = _log_sum(x, inv_s2, steps).reshape(m, epochs).sum(axis=1)
        return loss if direction == "remove" else -loss
    _, log_p_r, c_a, _ = thresholds(eps, sigma, steps)
    if direction == "remove":
        u = rng.random((m, steps + 1))
        # M = max z given M ≥ C_R: U = F(M) = Φ(M/σ)^T uniform on [1 − p, 1], log U = log(1 − p·u₀)
        log_u = np.log1p(-math.exp(log_p_r) * u[:, 0])
        surv = -np.expm1(log_u / steps)  # 1 − Φ(M/σ)
        mx = -sigma * ndtri(surv)
        # all T coordinates N(0, σ²) truncated to ≤ M, then one (uniform position) set to M
        x = u[:, 1:]
        x *= ndtr(mx / sigma)[:, None]
        x = sigma * ndtri(x)
        x[np.arange(m), rng.integers(0, steps, size=m)] = mx
        x[:, 0] += 1.0
        return _log_sum(x, inv_s2, steps)
    x = sigma * ndtri(rng.random((m, steps)) * float(ndtr(c_a / sigma)))
    return -_log_sum(x, inv_s2, steps)


def _f_sum(loss, eps):
    """Σ (1 − e^{ε−L})₊ over the block."""
    v = loss[loss > eps]
    return float(np.sum(-np.expm1(eps - v)))


def block_sums(epsilon, *, sigma, steps, epochs, direction, mc_samples=None, mc_seed=None, importance, blocks=None):
    """Σ f over each RNG block in ``blocks`` (default: all blocks of ``mc_samples`` samples from seed ``mc_seed``),
    as a list.

    A pipeline chunk computes a contiguous range of blocks; ``math.fsum`` of the
    concatenated lists is the same float whatever the split (module doc).
    """
    n, seed = _count("mc_samples", mc_samples, 1), _count("mc_seed", mc_seed, 0)
    eps = float(epsilon)
    d_index = DIRECTIONS.index(direction)
    bs = block_size(steps, epochs)
    n_blocks = -(-n // bs)
    out = []
    for b in (range(n_blocks) if blocks is None else blocks):
        if not 0 <= b < n_blocks:
            raise ParameterError("blocks", f"in [0, {n_blocks})", b)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(d_index, b))))
        m = min(bs, n - b * bs)
        out.append(_f_sum(_block_losses(rng, m, sigma, steps, epochs, direction, importance, eps), eps))
    return out


@dataclass(frozen=True)
class DirectionEstimate:
    """δ_direction(ε) by Monte Carlo with its KL interval [lower, upper] (``scale``: the probability of the
    importance-sampling event, 1 without it; ``mc_samples`` samples)."""

    direction: str
    estimate: float
    lower: float
    upper: float
    scale: float
    mc_samples: int


def _check_run(sigma, steps, epochs, n, seed, beta, importance):
    """The inputs every Monte Carlo run shares, checked; importance=None means "on for one epoch"."""
    check_positive("sigma", sigma)
    steps = check_int("steps", steps, 1)
    epochs = check_int("epochs", epochs, 1)
    n = _count("mc_samples", n, 1)
    seed = _count("mc_seed", seed, 0)
    beta = _check_unit_open("mc_failure_prob", beta)
    if importance is None:
        importance = epochs == 1
    if importance and epochs != 1:
        raise ParameterError("importance", "False for epochs > 1", importance, message=
                             f"importance must be False for epochs > 1 (got epochs={epochs}); importance sampling "
                             "conditions one epoch's maximum")
    return steps, epochs, n, seed, beta, importance


def mc_direction(epsilon, *, sigma, steps, epochs=1, direction="remove", mc_samples=None, mc_seed=None,
                 mc_failure_prob=0.01, importance=None):
    """δ_direction(ε) by Monte Carlo with its KL interval (each side β/4, β = ``mc_failure_prob``) from
    ``mc_samples`` samples of seed ``mc_seed``; reproducible."""
    eps = float(check_epsilon(epsilon))
    steps, epochs, n, seed, beta, importance = _check_run(sigma, steps, epochs, mc_samples, mc_seed,
                                                          mc_failure_prob, importance)
    check_choice("direction", direction, DIRECTIONS)
    scale = 1.0
    if importance:
        scale = _importance_scale(eps, sigma, steps, direction)
    sums = block_sums(eps, sigma=sigma, steps=steps, epochs=epochs, direction=direction, mc_samples=n,
                      mc_seed=seed, importance=importance) if scale > 0 else []
    mean01 = math.fsum(sums) / n  # mean of f in [0, 1] under the (conditioned) sampler
    lo, up = kl_bounds(mean01, n, beta / 4.0, 1.0)
    return DirectionEstimate(direction, mean01 * scale, lo * scale, up * scale, scale, n)


#: the options of :func:`mc_delta` and :func:`mc_epsilon` beyond the run's parameters (σ, steps, epochs)
OPTIONS = {"delta": ("mc_samples", "mc_seed", "mc_failure_prob", "mc_half_width", "importance"),
           "epsilon": ("mc_samples", "mc_seed", "mc_failure_prob", "importance", "eps0", "eps_max", "rel_tol")}
#: samples per direction of δ(ε) when neither mc_samples nor mc_half_width is given (ε(δ) needs mc_samples given;
#: the command line gives this default); the sample budget with mc_half_width when mc_samples is not given
MC_SAMPLES = 100_000
MC_MAX_SAMPLES = 10**9


def mc_delta(epsilon, *, sigma, steps, epochs=1, mc_samples=None, mc_seed=0, mc_failure_prob=0.01, mc_half_width=None,
             importance=None):
    """Monte Carlo δ(ε) = max(δ_add, δ_remove) with a (1 − β) KL interval (β = ``mc_failure_prob``); kind ``estimate``.

    ``mc_samples`` samples per direction (default :data:`MC_SAMPLES`), or, with ``mc_half_width`` h (absolute, on
    δ), n = ``samples_needed(h, β, scale)`` per direction within the budget ``mc_samples`` (default
    :data:`MC_MAX_SAMPLES`): beyond it :class:`MCAccuracyError` is raised instead of returning a number.
    """
    beta = _check_unit_open("mc_failure_prob", mc_failure_prob)
    seed = check_int("mc_seed", mc_seed, 0)
    steps = check_int("steps", steps, 1)
    epochs = check_int("epochs", epochs, 1)
    half_width = None if mc_half_width is None else float(check_positive("mc_half_width", mc_half_width))
    if half_width is None:
        n = check_int("mc_samples", MC_SAMPLES if mc_samples is None else mc_samples, 1)
    else:
        n, max_samples = None, check_int("mc_samples", MC_MAX_SAMPLES if mc_samples is None else mc_samples, 1)
    per_dir = []
    imp = (epochs == 1) if importance is None else importance
    for direction in DIRECTIONS:
        nn = n
        if half_width is not None:
            scale = 1.0
            if imp:
                scale = _importance_scale(float(epsilon), sigma, steps, direction)
            need = samples_needed(half_width, beta, scale) if scale > 0 else 1
            if need > max_samples:
                raise MCAccuracyError(
                    f"mc_half_width={half_width!r} at mc_failure_prob={beta!r} needs {need} samples for the "
                    f"{direction} direction, more than mc_samples={max_samples}", ("mc_samples", "mc_half_width"))
            nn = need
        per_dir.append(mc_direction(epsilon, sigma=sigma, steps=steps, epochs=epochs, direction=direction,
                                    mc_samples=nn, mc_seed=seed, mc_failure_prob=beta, importance=importance))
    est = max(d.estimate for d in per_dir)
    lo = max(d.lower for d in per_dir)
    up = max(d.upper for d in per_dir)
    acc = {"mc_samples": tuple(d.mc_samples for d in per_dir), "mc_failure_prob": beta, "mc_seed": seed,
           "importance": imp, "mc_half_width": max(up - est, est - lo)}
    return AccountingResult(value=est, kind="estimate", method="montecarlo", accuracy=acc, lower=lo, upper=up,
                            flags=tuple(f"{d.direction}={d.estimate!r}" for d in per_dir))


# --------------------------------------------------------------------------
# ε(δ): inversion of the δ(ε) estimate and of its band
# --------------------------------------------------------------------------
def direction_losses(*, sigma, steps, epochs, direction, mc_samples=None, mc_seed=None, importance, eps0):
    """Losses L of all ``mc_samples`` samples of ``direction`` from seed ``mc_seed`` (same blocks and RNG streams as
    :func:`block_sums`).

    With importance sampling the conditioning threshold is the one of ``eps0``; it serves every
    ε ≥ eps0 (C_R grows and C_A falls with ε, so the conditioned region holds all samples with
    f_ε > 0: module doc), so one sample gives δ̂(ε) for all ε ≥ eps0 (common random numbers)."""
    n, seed = _count("mc_samples", mc_samples, 1), _count("mc_seed", mc_seed, 0)
    d_index = DIRECTIONS.index(direction)
    bs = block_size(steps, epochs)
    out = []
    for b in range(-(-n // bs)):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(d_index, b))))
        out.append(_block_losses(rng, min(bs, n - b * bs), sigma, steps, epochs, direction, importance, eps0))
    return np.concatenate(out)


def _importance_scale(eps, sigma, steps, direction):
    """The probability of ``direction``'s importance-sampling event at ε (:func:`thresholds`)."""
    _, log_p_r, _, log_p_a = thresholds(eps, sigma, steps)
    return math.exp(log_p_r if direction == "remove" else log_p_a)


def _sorted_losses(sigma, steps, epochs, direction, n, seed, importance, eps0):
    """(losses of ``direction``'s sample, largest first; the scale of its values, :func:`_importance_scale`)."""
    scale = _importance_scale(eps0, sigma, steps, direction) if importance else 1.0
    loss = (direction_losses(sigma=sigma, steps=steps, epochs=epochs, direction=direction, mc_samples=n,
                             mc_seed=seed, importance=importance, eps0=eps0) if scale > 0 else np.zeros(0))
    return np.sort(loss)[::-1], scale


def _curves(per_dir, n, beta, eps):
    """(δ̂, δ_lo, δ_up) at ε, each the max over directions (``per_dir``: :func:`_sorted_losses` of each)."""
    est, lo, up = [], [], []
    for loss, scale in per_dir:
        v = loss[:np.searchsorted(-loss, -eps)]  # losses > ε (sorted descending)
        mean01 = float(np.sum(-np.expm1(eps - v))) / n if v.size else 0.0
        kl_lo, kl_up = kl_bounds(mean01, n, beta / 4.0, 1.0)
        est.append(mean01 * scale)
        lo.append(kl_lo * scale)
        up.append(kl_up * scale)
    return max(est), max(lo), max(up)


def _invert(curves, k, d, eps0, eps_max, rel_tol):
    """inf{ε ≥ eps0 : curves(ε)[k] ≤ δ} as (lo, hi) with curves(hi)[k] ≤ δ < curves(lo)[k], to ``rel_tol``;
    None if beyond ``eps_max``."""
    if curves(eps0)[k] <= d:
        return eps0, eps0
    hi = max(2.0 * eps0, 0.25)
    while curves(hi)[k] > d:
        if hi >= eps_max:
            return None
        hi = min(2.0 * hi, eps_max)
    iters = max(1, math.ceil(math.log2(max(hi - eps0, 1e-300) / (rel_tol * max(hi, 1e-12)))))
    lo_, hi_ = bisect(lambda e: curves(float(e))[k] > d, eps0, hi, iters)
    return float(lo_), float(hi_)


def mc_epsilon(delta, *, sigma, steps, epochs=1, mc_samples=None, mc_seed=0, mc_failure_prob=0.01,
               importance=None, eps0=None, eps_max=64.0, rel_tol=1e-6):
    """Monte Carlo ε(δ) with a (1 − β) interval; kind ``estimate`` (``lower``/``upper`` = the interval).

    One sample of losses per direction (common random numbers, :func:`direction_losses`) gives, for
    every ε, δ̂(ε) = max over directions of the sample means of f_ε and the KL band [δ_lo(ε), δ_up(ε)]
    (β/4 per side and direction, as :func:`mc_delta`).  All three are non-increasing in ε (f_ε(ℓ) is,
    for every ℓ, and the KL limits increase with the mean).  Reported: ε̂ = inf{ε : δ̂(ε) ≤ δ},
    upper = inf{ε : δ_up(ε) ≤ δ}, lower = sup{ε : δ_lo(ε) > δ} (bisection to ``rel_tol``, each end
    rounded outward).  Why it is a (1 − β) interval: at the fixed true ε* = ε(δ), δ_up(ε*) ≥ δ(ε*) = δ and
    δ_lo(ε*) ≤ δ hold together with probability ≥ 1 − 3β/4; by monotonicity upper < ε* would force
    δ_up(ε*) ≤ δ_up(upper) ≤ δ, and lower > ε* would force δ_lo(ε*) ≥ δ_lo(lower) > δ.

    Importance sampling (E = 1, default) conditions at ``eps0`` (default: half a Poisson q = 1/T
    estimate of ε, fixed before sampling); the interval's lower end is clipped at eps0 if δ_lo(eps0) ≤ δ
    (flagged; lower = eps0 is then not certified, so lower is reported as 0).  An upper end beyond
    ``eps_max`` (δ_up stays > δ: too few samples for this δ) raises :class:`MCAccuracyError`.
    """
    d = _check_unit_open("delta", delta)
    beta = _check_unit_open("mc_failure_prob", mc_failure_prob)
    if mc_samples is None:
        raise ParameterError("mc_samples", "an integer >= 1", None, message="mc_samples (samples per direction) is "
                             "missing: it must be given for epsilon by method 'montecarlo'")
    n, seed = _count("mc_samples", mc_samples, 1), _count("mc_seed", mc_seed, 0)
    steps, epochs, n, seed, beta, importance = _check_run(sigma, steps, epochs, n, seed, beta, importance)
    if eps0 is None:
        eps0 = 0.0
        if importance:
            eps0 = 0.5 * poisson_epsilon_guess(d, sigma, steps, epochs)
    eps0 = float(check_epsilon(eps0, "eps0"))
    per_dir = [_sorted_losses(sigma, steps, epochs, direction, n, seed, importance, eps0) for direction in DIRECTIONS]
    curves = functools.partial(_curves, per_dir, n, beta)
    up_b = _invert(curves, 2, d, eps0, eps_max, rel_tol)
    if up_b is None:
        # even where every f_ε = 0 the upper band is scale·(1 − (β/4)^{1/n}) ≈ scale·ln(4/β)/n
        need = max(math.ceil(math.log(4.0 / beta) / -math.log1p(-min(d / sc, 0.5))) if sc > 0 else 1
                   for _, sc in per_dir)
        raise MCAccuracyError(f"mc_samples={n} samples per direction cannot bound delta={delta!r}: the upper band "
                              f"stays above delta up to epsilon={eps_max}; at least mc_samples={need} are needed")
    est_b, lo_b = _invert(curves, 0, d, eps0, eps_max, rel_tol), _invert(curves, 1, d, eps0, eps_max, rel_tol)
    flags = []
    lower = lo_b[0]
    if lo_b[1] <= eps0 and eps0 > 0:
        flags.append(f"lower_clipped_at_eps0={eps0!r}")
        lower = 0.0
    if est_b[1] <= eps0 and eps0 > 0:
        flags.append("estimate_at_or_below_eps0")
    estimate = 0.5 * (est_b[0] + est_b[1]) if est_b is not None else math.inf
    acc = {"mc_samples": n, "mc_failure_prob": beta, "mc_seed": seed, "importance": importance, "eps0": eps0,
           "rel_tol": rel_tol}
    return AccountingResult(value=estimate, kind="estimate", method="montecarlo", accuracy=acc, lower=lower,
                            upper=up_b[1], flags=tuple(flags))


__all__ = [
    "MCAccuracyError",
    "block_size",
    "direction_losses",
    "kl_bounds",
    "mc_delta",
    "mc_direction",
    "mc_epsilon",
    "samples_needed",
    "thresholds",
]
