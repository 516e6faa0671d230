"""Monte Carlo privacy curves of subsampled Laplace / Gaussian mechanisms.

Lebeda et al. (2024), App. B.2.  For a pair of distributions (P, Q) the
privacy loss is L = log p(Y)/q(Y) with Y ~ P (Def. 5), the PLD of a k-fold
composition is the k-fold convolution of the one-step PLD, and

    H_{e^ε}(P^k ‖ Q^k) = E[(1 - e^{ε - (L_1 + … + L_k)})_+]            (§2)

is estimated by the sample mean over N independent draws.  (The paper's
B.2 prints the summand without the positive part, (1 - e^{ε - Y}); without
it the mean estimates 1 - e^ε, not δ(ε), so we read it as a typo.)  Each
summand lies in [0, 1], so by Hoeffding and a union bound over the |E| grid
points the estimate is within

    α = sqrt(ln(2|E|/β) / (2N))     of the truth at every ε, w.p. ≥ 1 - β,

equivalently N = ⌈ln(2|E|/β) / (2α²)⌉ (``hoeffding_samples``).  In the code N is ``mc_samples``, β
``mc_failure_prob`` and α ``mc_half_width`` (the library's Monte Carlo names).

Dominating pairs (Prop. 9, App. A; the shift Δ is the sensitivity: Δ = 1 for Poisson, Δ = 2 for WOR
because the WOR pair N(-b)/N(-b+2) is a shifted substitution pair; the caller picks Δ):

    add:    P = B(0),                       Q = (1-γ) B(0) + γ B(Δ)
    remove: P = (1-γ) B(0) + γ B(Δ),        Q = B(0)

with B(μ) = N(μ, σ²) or Lap(μ, s) (scale s: density e^{-|x-μ|/s}/(2s), as
in Prop. 9 and dp_accounting's ``from_laplace_mechanism(parameter=s)``).
With ℓ(y) = log b_Δ(y)/b_0(y) (= (Δy - Δ²/2)/σ² or (|y| - |y-Δ|)/s) the
one-step loss is ∓ log((1-γ) + γ e^{ℓ(y)}).

Reproducibility contract
------------------------
Samples are grouped in fixed blocks of ``BLOCK_SIZE`` consecutive draws
(block boundaries depend on N only).  Block b draws its noise from
``SeedSequence(seed, spawn_key=(b, 0))`` and its mixture selections from
``SeedSequence(seed, spawn_key=(b, 1))`` (the two children of the b-th child
of ``SeedSequence(seed)``), in sample-major order (sample i's k steps are
consecutive).  The per-ε sums are accumulated in exact integer arithmetic
(each summand quantised to a multiple of 2^-36 relative to a reference
grid point at most ``_WINDOW`` below ε, bias ≤ e^4·2^-37 ≈ 4e-10 per sample),
so the result depends only on the multiset of sampled losses: for a fixed
(seed, N, steps, eps grid) the output is byte-for-byte identical for every
``chunk_size`` (tested), on the same numpy version / CPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError
from .validation import (
    ONE_WAY_DIRECTIONS,
    check_choice,
    check_delta,
    check_finite_list,
    check_int,
    check_positive,
    check_rate,
)

MECHANISMS = ("laplace", "gaussian")

BLOCK_SIZE = 2**16  # samples per RNG block; part of the reproducibility contract
_QUANT_BITS = 36  # summands quantised to multiples of 2^-36 (exact float sums < 2^53)
_WINDOW = 4.0  # ε - reference ≤ 4 so quantisation error is amplified by ≤ e^4
_FAST_MIN_ARG = 1e-6  # (1-γ)+γe^ℓ ≥ this ⇒ log1p(γ·expm1(ℓ)) keeps ≥ 10 digits
_ELL_MAX = 700.0  # expm1 overflows beyond ~709


# --------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------
def _check_unit_open(name, value):
    return float(check_delta(value, name))  # the one rule of a number in (0, 1)


# --------------------------------------------------------------------------
# Hoeffding
# --------------------------------------------------------------------------
def hoeffding_samples(mc_half_width, mc_failure_prob, n_eps):
    """Samples N = ⌈ln(2|E|/β)/(2α²)⌉ for accuracy ±α (``mc_half_width``) at |E| points w.p. 1-β
    (β = ``mc_failure_prob``; App. B.2).

    With the paper's α = 0.001, β = 0.01, |E| = 40 this is 4,493,599; the
    printed N = 3,342,306 equals ⌈ln(800)/(2α²)⌉, i.e. β = 0.1 (or |E| = 4).
    """
    a = _check_unit_open("mc_half_width", mc_half_width)
    b = _check_unit_open("mc_failure_prob", mc_failure_prob)
    m = check_int("n_eps", n_eps, 1)
    return math.ceil(math.log(2.0 * m / b) / (2.0 * a * a))


def hoeffding_half_width(mc_samples, mc_failure_prob, n_eps):
    """Half-width α = sqrt(ln(2|E|/β)/(2N)) of the simultaneous 1-β band from N = ``mc_samples`` samples
    (β = ``mc_failure_prob``; App. B.2)."""
    nn = check_int("mc_samples", mc_samples, 1)
    b = _check_unit_open("mc_failure_prob", mc_failure_prob)
    m = check_int("n_eps", n_eps, 1)
    return math.sqrt(math.log(2.0 * m / b) / (2.0 * nn))


def hoeffding_confidence(mc_samples, mc_half_width, n_eps):
    """1 - β with β = 2|E|·exp(-2Nα²): simultaneous confidence of the ±α band (N = ``mc_samples``,
    α = ``mc_half_width``; App. B.2).

    For the printed N = 3,342,306, α = 0.001, |E| = 40 this is 0.900 (not 0.99).
    """
    nn = check_int("mc_samples", mc_samples, 1)
    a = _check_unit_open("mc_half_width", mc_half_width)
    m = check_int("n_eps", n_eps, 1)
    return 1.0 - 2.0 * m * math.exp(-2.0 * nn * a * a)




# --------------------------------------------------------------------------
# one composition step
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One composition step: the pair (P, Q) of Prop. 9 for one query.

    ``q`` is the sampling rate (γ in Lebeda et al.).  ``direction="add"``: P = B(0), Q = (1-γ)B(0) + γB(shift);
    ``direction="remove"``: P and Q swapped.  ``scale`` is σ (Gaussian) or the
    Laplace scale s.  The sampled loss is log p(Y)/q(Y), Y ~ P.
    """

    mechanism: str
    scale: float
    q: float
    shift: float
    direction: str

    def __post_init__(self):
        check_choice("mechanism", self.mechanism, MECHANISMS)
        check_positive("scale", self.scale)
        check_rate(self.q, name="q")
        check_positive("shift", self.shift)
        check_choice("direction", self.direction, ONE_WAY_DIRECTIONS)


def make_step(mechanism, scale, q, shift=1.0, direction="add"):
    """The Prop. 9 step with sensitivity ``shift`` (1: Poisson; 2: WOR, Lebeda et al. Prop. 9)."""
    return Step(mechanism, float(scale), float(q), float(shift), direction)


def _log_mix(ell, q, out, ell_max=None):
    """log((1-γ) + γ e^ℓ) into ``out`` (≠ ``ell``); γ scalar or per-column array.

    Fast path log((1-γ) + γ·e^min(ℓ, 700)) (two SIMD calls, ~10× cheaper
    than np.logaddexp; absolute error ≤ 1e-10 while the argument is ≥ 1e-6).
    Entries where it would overflow (ℓ > 700) or lose digits (argument
    < 1e-6, only possible for γ > 1 - 1e-6) are recomputed with np.logaddexp.
    ``ell_max`` is a known upper bound on ℓ (skips the overflow scan).
    """
    g = np.asarray(q, dtype=float)
    if ell_max is None:
        ell_max = ell.max() if ell.size else 0.0
    if ell_max > _ELL_MAX:
        arg = np.minimum(ell, _ELL_MAX, out=out)
        np.exp(arg, out=arg)
    else:
        arg = np.exp(ell, out=out)
    arg *= g
    arg += 1.0 - g
    bad = ell > _ELL_MAX if ell_max > _ELL_MAX else None
    if np.any(g > 1.0 - _FAST_MIN_ARG) and arg.size and arg.min() < _FAST_MIN_ARG:
        low = arg < _FAST_MIN_ARG
        bad = low if bad is None else (bad | low)
    res = np.log(arg, out=arg)
    if bad is not None:
        gb = np.broadcast_to(g, ell.shape)[bad]
        with np.errstate(divide="ignore"):
            res[bad] = np.logaddexp(np.log1p(-gb), np.log(gb) + ell[bad])
    return res


class _StepColumns:
    """Per-column constants of a list of steps (columns = composition steps)."""

    def __init__(self, steps: Sequence[Step]):
        mechs = {s.mechanism for s in steps}
        if len(mechs) != 1:
            raise ParameterError("steps", "Steps of one mechanism", steps,
                                 message=f"steps must share one mechanism (got {sorted(mechs)})")
        self.mechanism = mechs.pop()
        self.k = len(steps)
        self.homogeneous = len(set(steps)) == 1
        remove = np.array([s.direction == "remove" for s in steps])
        c = np.array([s.shift / s.scale for s in steps])  # Δ/σ or Δ/s
        q = np.array([s.q for s in steps])
        sign = np.where(remove, 1.0, -1.0)
        q_sel = np.where(remove, q, 0.0)  # P = B(0) for add steps
        if self.homogeneous:  # scalars broadcast faster than (k,) rows
            c, q, sign, q_sel = c[0], q[0], sign[0], q_sel[0]
        self.c, self.q, self.sign, self.q_sel = c, q, sign, q_sel
        self.any_remove = bool(remove.any())


class _Workspace:
    """Preallocated (m, k) buffers reused across chunks (no page faults)."""

    def __init__(self, m, k):
        self.x = np.empty((m, k))
        self.t = np.empty((m, k))
        self.loss = np.empty((m, k))
        self.sel = np.empty((m, k), dtype=bool)
        self.y = np.empty(m)


def _draw_losses(cols: _StepColumns, m, noise_rng, sel_rng, ws: _Workspace):
    """(m, k) view of one-step privacy losses, sample-major stream order."""
    c = cols.c
    x = ws.x[:m]
    if cols.mechanism == "gaussian":
        noise_rng.standard_normal(out=x)  # y/σ under B(0)
    else:
        # Laplace(0,1) by vectorised inversion (Generator.laplace does the
        # same inversion in a scalar loop, ~5× slower): u = j/2^53 from
        # Generator.random, t = 2u - 1 + 2^-53 is uniform on the symmetric
        # grid {±(2i+1)/2^53} (never 0, exact in float64), and
        # x = sign(t)·(-log|t|) is Laplace(0,1) up to 2^-53 discretisation.
        t = ws.t[:m]
        noise_rng.random(out=t)
        t *= 2.0
        t -= 1.0 - 2.0**-53
        np.abs(t, out=x)
        np.log(x, out=x)
        np.copysign(x, t, out=x)  # |log|t|| with the sign of t
    if cols.any_remove:
        # component at Δ chosen w.p. γ (P(u < γ) = γ up to 2^-53)
        u = ws.t[:m]
        sel_rng.random(out=u)
        sel = np.less(u, cols.q_sel, out=ws.sel[:m])
        np.multiply(sel, c, out=u)
        x += u  # y/scale under the mixture (1-γ)B(0) + γB(Δ)
    if cols.mechanism == "gaussian":
        x *= c
        x -= 0.5 * c * c  # ℓ = (Δy - Δ²/2)/σ²
        ell_max = None
    else:
        x *= 2.0
        x -= c
        np.maximum(x, -c, out=x)
        np.minimum(x, c, out=x)  # ℓ = (|y| - |y-Δ|)/s ∈ [-c, c]
        ell_max = float(np.max(c))
    loss = _log_mix(x, cols.q, ws.loss[:m], ell_max)
    if not cols.homogeneous:
        loss *= cols.sign
    return loss


def _row_sums(loss, out, negate=False):
    """Left-to-right sum over composition steps (bitwise independent of m).

    ``negate`` flips the sign of the total (homogeneous add steps: the loss
    is -log((1-γ)+γe^ℓ) and negating the sum is exact).
    """
    m, k = loss.shape
    y = out[:m]
    if k == 1:
        np.copyto(y, loss[:, 0])
    elif k <= 16:
        np.add(loss[:, 0], loss[:, 1], out=y)
        for j in range(2, k):
            y += loss[:, j]
    else:
        y[:] = np.cumsum(loss, axis=1)[:, -1]
    if negate:
        np.negative(y, out=y)
    return y


# --------------------------------------------------------------------------
# exact accumulation of Σ (1 - e^{ε-Y})_+
# --------------------------------------------------------------------------
class _Accumulator:
    """Exact integer sums per grid point ε_j (in ascending order):

    count_j = #{Y > ε_j} and qsum_j = Σ_{Y > ε_j} round(e^{r_j - Y}·2^36),
    with r_j ≤ ε_j < r_j + 4 the first grid point of ε_j's group.  Per chunk
    (≤ 2^16 samples) the suffix sums are of integers < 2^52 in float64, hence
    exact; across chunks they are added as Python ints.  So the totals depend
    only on the multiset of Y values, not on how they were chunked.
    """

    def __init__(self, eps):
        self.order = np.argsort(eps, kind="stable")
        e = eps[self.order]
        self.eps = e
        ref_idx = np.empty(e.size, dtype=np.int64)
        starts = []
        r = -np.inf
        for i, v in enumerate(e):
            if v - r >= _WINDOW:
                starts.append(i)
                r = v
            ref_idx[i] = len(starts) - 1
        self.ref_idx = ref_idx
        self.starts = starts
        self.refs = e[starts]
        self.members = [np.nonzero(ref_idx == g)[0] for g in range(len(starts))]
        self.count = np.zeros(e.size, dtype=np.int64)
        self.qsum = np.array([0] * e.size, dtype=object)  # Python ints: exact for any N
        self.scale = 2.0**_QUANT_BITS

    def add(self, y):
        e = self.eps
        ys = np.compress(y > e[0], y)
        ys.sort()
        ny = ys.size
        idx = np.searchsorted(ys, e, side="right")
        self.count += ny - idx
        q = np.zeros(e.size, dtype=np.int64)
        for g, i0 in enumerate(self.starts):
            i_r = int(idx[i0])
            if i_r >= ny:
                break
            v = np.subtract(self.refs[g], ys[i_r:])
            np.exp(v, out=v)
            v *= self.scale
            np.rint(v, out=v)
            # suffix sums, with a trailing 0 for "no sample above ε"
            csum = np.zeros(v.size + 1)
            np.cumsum(v[::-1], out=csum[1:])
            mem = self.members[g]
            q[mem] = csum[ny - idx[mem]].astype(np.int64)
        self.qsum += q.astype(object)

    def estimate(self, n):
        out = np.empty(self.eps.size)
        for j, eps in enumerate(self.eps):
            r = self.refs[self.ref_idx[j]]
            s = float(self.qsum[j]) / self.scale
            out[j] = (float(self.count[j]) - math.exp(eps - r) * s) / n
        out = np.clip(out, 0.0, 1.0)
        res = np.empty_like(out)
        res[self.order] = out
        return res


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class MCCurve:
    """Monte Carlo privacy curve with its simultaneous Hoeffding band: ``estimate`` ± ``mc_half_width`` holds at
    every ε of ``epsilon`` together with probability ≥ 1 - ``mc_failure_prob`` (``mc_samples`` draws, seed
    ``mc_seed``)."""

    epsilon: np.ndarray
    estimate: np.ndarray
    mc_half_width: float
    mc_samples: int
    mc_failure_prob: float
    mc_seed: int
    params: dict = field(default_factory=dict)

    @property
    def lower(self):
        return np.clip(self.estimate - self.mc_half_width, 0.0, 1.0)

    @property
    def upper(self):
        return np.clip(self.estimate + self.mc_half_width, 0.0, 1.0)


def mc_hockey_stick(steps, eps_grid, mc_samples, mc_seed, *, mc_failure_prob=0.01, chunk_size=2**15):
    """H_{e^ε}(P_1×…×P_k ‖ Q_1×…×Q_k) by Monte Carlo (App. B.2), one Step per factor.

    ``steps`` may mix directions (used for the §7 mixed pair P×Q ‖ Q×P) but
    not mechanisms.  ``chunk_size`` bounds the number of one-step losses held
    in memory (≥ k per chunk); it does not change the result (module doc).  ``mc_samples`` draws from
    seed ``mc_seed``; the band holds simultaneously over ``eps_grid`` w.p. ≥ 1 - ``mc_failure_prob``.
    """
    steps = list(steps)
    if not steps:
        raise ParameterError("steps", "a non-empty list of Step", steps,
                             message="steps must be a non-empty list of Step (got [])")
    eps = check_finite_list("eps_grid", eps_grid)
    n = check_int("mc_samples", mc_samples, 1)
    seed = check_int("mc_seed", mc_seed, 0)
    beta = _check_unit_open("mc_failure_prob", mc_failure_prob)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    cols = _StepColumns(steps)
    k = cols.k
    m_chunk = max(1, min(BLOCK_SIZE, chunk_size // k))
    acc = _Accumulator(eps)
    ws = _Workspace(m_chunk, k)
    negate = cols.homogeneous and cols.sign < 0
    n_blocks = -(-n // BLOCK_SIZE)
    for b in range(n_blocks):
        nb = min(BLOCK_SIZE, n - b * BLOCK_SIZE)
        noise_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(b, 0))))
        sel_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(b, 1))))
        start = 0
        while start < nb:
            m = min(m_chunk, nb - start)
            acc.add(_row_sums(_draw_losses(cols, m, noise_rng, sel_rng, ws), ws.y, negate))
            start += m
    est = acc.estimate(n)
    return MCCurve(epsilon=eps.copy(), estimate=est, mc_half_width=hoeffding_half_width(n, beta, eps.size),
                   mc_samples=n, mc_failure_prob=beta, mc_seed=seed, params={"steps": tuple(steps)})


def mc_privacy_curve(mechanism, scale, q, total_steps, eps_grid, mc_samples, mc_seed, shift=1.0,
                     direction="add", *, mc_failure_prob=0.01, chunk_size=2**15):
    """Monte Carlo δ(ε) of the ``total_steps``-fold (the paper's k) subsampled Laplace/Gaussian mechanism (App. B.2).

    Per-direction curve of Prop. 9's dominating pair: ``direction="add"``
    estimates H_{e^ε}(M(D)^k ‖ M(D')^k) with D' = D + one record, "remove"
    the reverse order; ``shift`` is the sensitivity (2: the WOR pair).  Returns an
    ``MCCurve`` (estimate, α, lower/upper = estimate ∓ α clipped to [0, 1]);
    the band holds simultaneously over ``eps_grid`` with probability 1 - β (``mc_samples`` draws from seed
    ``mc_seed``, β = ``mc_failure_prob``).
    """
    total_steps = check_int("total_steps", total_steps, 1)
    step = make_step(mechanism, scale, q, shift, direction)
    res = mc_hockey_stick([step] * total_steps, eps_grid, mc_samples, mc_seed, mc_failure_prob=mc_failure_prob,
                          chunk_size=chunk_size)
    params = {"mechanism": mechanism, "scale": float(scale), "q": float(q), "total_steps": total_steps,
              "shift": float(shift), "direction": direction}
    return MCCurve(epsilon=res.epsilon, estimate=res.estimate, mc_half_width=res.mc_half_width, mc_samples=res.mc_samples,
                   mc_failure_prob=res.mc_failure_prob, mc_seed=res.mc_seed, params=params)


__all__ = ["BLOCK_SIZE", "MCCurve", "Step", "hoeffding_confidence", "hoeffding_half_width", "hoeffding_samples",
           "make_step", "mc_hockey_stick", "mc_privacy_curve"]
