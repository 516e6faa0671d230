"""Truncated Poisson subsampling of the Gaussian mechanism: a certified interval for ε(δ) and δ(ε).

Mechanism.  Each of the dataset's records joins a step's batch independently with probability q; a batch
of more than B records is cut down to B records chosen uniformly; the sum of the kept records' (clipped)
gradients gets N(0, σ²I) noise.  Neighbouring relation: add or remove one record, the larger dataset of the
pair having n records (n − 1 others), as dp_accounting's ``TruncatedSubsampledGaussianDpEvent`` assumes
(its truncation probability is P[Bin(n − 1, q) ≥ B]).

Let K ~ Bin(n − 1, q) be the number of the other records drawn, p = P[K ≥ B] (the differing record d, if
drawn, may be cut) and q' = E[q·B/(K + 1) | K ≥ B] = P[Bin(n, q) > B]·B/(n·p) (the rate at which d ends
in the batch when K ≥ B; q·E[1{K ≥ B}/(K + 1)] = P[Bin(n, q) ≥ B + 1]/n).

Upper end (:func:`upper_epsilon`, :func:`upper_delta`): one pair dominating three dominating pairs at once
(the greatest convex minorant of the minimum of their one-step profiles, :func:`_combined_one_step`), composed
T times (adaptive composition of per-step dominating pairs dominates the run, Zhu et al. 2022), each part a
dp_accounting pessimistic connect-the-dots PLD (:func:`.pld.pessimistic_pld`) or closed-form profile, losses
shifted up to the grid, the T-fold composition :func:`.pld._self_compose` with the proven bound on the FFT's
rounding (:func:`.pld.composition_error`, :func:`.pld.rounding_at`) added to δ, as :func:`.pld.certified_delta`
does for Poisson.  All three pairs rest on one fact: revealing more to the adversary (a variable W with the
output a function of (W, output)) can only raise the hockey-stick divergence (data processing), and the
revealed pair splits into slices by W (joint convexity).

* ``sensitivity2`` (dp_accounting's analysis, arXiv 2508.15089, sharpened): reveal {K ≥ B}, the kept set T of
  others (a uniform B-subset whatever K is) and a uniform j ∈ T.  Given K < B the record is kept iff drawn:
  Poisson's pair (σ, q).  Given K ≥ B, d replaces j with probability q' independently of (T, j), so the
  outputs are (1 − q')N(s_T) + q'N(s_T + v_d − v_j) against N(s_T), ‖v_d − v_j‖ ≤ 2: the subsampled
  Gaussian at rate q' with sensitivity 2.  Mixture weights 1 − p, p.  dp_accounting uses the replace-one pair
  at σ/2 for the second part (valid under every relation, and dominating this one), so this value is at most
  dp_accounting's.  Tight where the adversary can both see the count and displace an opposite record; loose
  near the mean batch size.
* ``kept_set``: reveal the set T_o of others in the batch.  Given |T_o| = k its members are uniform and d is
  in the batch with a probability c_k that depends on k only, so the pair is, per k, c_k-subsampled Gaussian
  against the Gaussian (sensitivity 1), with P-mass a_k and Q-mass b_k: k ≤ B − 2: a = b = π_k, c = q
  (Poisson's pair); k = B − 1: a = π_{B−1} + p·q', b = π_{B−1}, c = (π_{B−1}q + p·q')/a; k = B: a = p(1 − q'),
  b = p, c = 0 (one atom).  Seeing the exact count costs a lot where p ≫ π_{B−1} (near the mean), little
  above it, where it is much tighter than ``sensitivity2``.
* ``r1`` (issue 40, :mod:`.truncated_r1`, which states it and proves it step by step): reveal the count of
  kept others only below B − 1; above, a one-dimensional three-atom pair (the supremum over the angle between
  d's gradient and the B-th other's lies at 0 or π).  Its profile at the grid points (:func:`_r1_profiles`) joins
  the minimum of the other two pairs' before the convex minorant (the ``combined`` pair below).  At MNIST
  (n = 60000, q = 256/60000, σ 1.1, 14100 steps, δ 1e-5) it gives ε ≤ 7.04 / 4.05 / 2.66 at caps 256 / 272 /
  288, against 8.82 / 4.80 / 2.80 with the first two pairs; the limit of this route (the "folded path", about
  6.72 at cap 256) and the conjectured true value (about 3.13) are in :mod:`.truncated_r1`.

Lower end (:func:`lower_epsilon`, :func:`lower_delta`).  One explicit adjacent pair and query (the
two-axis adversary): d's gradient is e₁, every other record's is e₂ (the second coordinate counts the kept
others); where truncation is frequent also the same with the others' gradient at cosine −0.3 to d's
(:data:`ALPHAS`: a displaced record then moves the sum further, at the price of d's signal), the larger
value kept (each is a valid lower bound).  With C the number of kept others and c ∈ {0, 1} whether d is kept,
the output is N((c, C), σ²I) under a law of (c, C) computed exactly (:func:`count_laws`); with d removed it is
N((0, min(K, B)), σ²I).  The output plane is cut into rectangles (any cut: coarsening the output is a
post-processing, so the cell pair is dominated by the true one, data processing inequality); each cell's
masses under both laws are sums of products of normal CDF differences, its privacy loss log(P/Q) is rounded
down to the grid (δ of a composition, Σ P(1 − e^{ε − Σℓ})₊, only decreases), cells of negligible mass are
dropped (δ's terms are ≥ 0), and the composition is :func:`.dominated_pld._compose_pmf` (FFT) less the
folded tail mass and the proven rounding bound (:func:`.dominated_pld._error_at`).  A discrete pair with
these losses is the exact law of a post-processed output, so every ε, δ read from it is a lower bound.

Far below the cap nothing above the first coordinate depends on the second (its law is the same mixture
of counts under both inputs, to within the truncated components), so the second coordinate is cut finely
only near the cap.

An adversary may also change the angle α from step to step, adaptively (the gradients of a step may depend on the
earlier outputs); that can only raise the true value, so the fixed-α attacks above stay valid lower ends, and an
adaptive one is valid only as an actual strategy: with the per-step α a function of the privacy loss so far, the
transcript's law is that strategy's exact law, and its δ is the dynamic programme V_t(s) = max_α E_{P_α}[V_{t−1}(s −
L_α)], V_0(s) = (1 − e^s)₊.  The composition of the pair whose profile is the supremum over α of the one-step
profiles is not such a law: each step's pair is dominated by it, so it bounds every adaptive choice of angle from
above (a ceiling on this family of attacks, not a lower end).  Measured at MNIST cap 256 (the coarsened pairs
above, remove direction): at d = 1e-4 fixed α = 0, −0.15, −0.2, −0.25, −0.3, −0.35, −0.4, −0.45, −0.6, −0.9 give
ε = 2.954, 3.081, 3.105, 3.118, 3.1209, 3.113, 3.095, 3.066, 2.915, 2.350 (the best, −0.3, is the one tried) and
the supremum pair over {0, −0.3, −0.6, −0.9} gives 3.1256; at d = 5e-4 the dynamic programme over {0, −0.3, −0.6}
(14100 steps of FFT convolutions, 110 CPU s, outside the window V bounded below by 1 − e^s and 0) gives 3.1185,
the same as α = −0.3 alone (3.1185; dp_accounting's reading 3.1186) to the grid's 5e-4, while the supremum pair
gives 3.1211: adapting the angle buys nothing measurable here, and the supremum pair overstates it.
Non-adaptive splits of the steps between two angles land between their fixed values (half α = 0, half α = −0.3:
3.038).  The width near the mean is the upper end's (above).

A cap B ≥ n never truncates: the mechanism is the Poisson-subsampled Gaussian (the callers answer with
:mod:`.poisson_interval`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting.pld import pld_pmf as _pmflib
from scipy import special, stats

from . import dominated_pld, pld, truncated_r1
from .reading import epsilon_for_delta_lower, epsilon_for_delta_upper

#: end labels
UPPER = "truncated PLD (best of three dominating pairs)"
LOWER = "two-axis adversary (exact one-step pair, coarsened)"
#: relative guard subtracted from each cell loss before rounding down (float error in log P − log Q)
_LOSS_GUARD = 1e-9
#: count components with probability below this are left out of the cell masses (relative effect ≤ 1e-15 on
#: the log masses of the kept cells, covered by the guard)
_COUNT_FLOOR = 1e-40
#: cells with log P-mass below this are dropped
_LOG_CELL_FLOOR = math.log(1e-25)


# --------------------------------------------------------------------------- the truncation event


def truncation_probability(q: float, dataset_size: int, max_batch_size: int) -> float:
    """p = P[Bin(n − 1, q) ≥ B]: the others fill the cap, so the differing record, if drawn, may be cut."""
    return float(stats.binom.sf(max_batch_size - 1, dataset_size - 1, q))


def kept_rate(q: float, dataset_size: int, max_batch_size: int) -> float:
    """q' = P[d in the batch | K ≥ B] = P[Bin(n, q) > B]·B/(n·p) (module docstring); 0 if p = 0."""
    p = truncation_probability(q, dataset_size, max_batch_size)
    if p == 0.0:
        return 0.0
    return min(1.0, float(stats.binom.sf(max_batch_size, dataset_size, q)) * max_batch_size / (p * dataset_size))


# --------------------------------------------------------------------------- upper end


@lru_cache(maxsize=16)
def _upper_one_step(sigma, q, n, cap, d):
    p = truncation_probability(q, n, cap)
    base = pld.one_step(sigma, q, True, d)  # Poisson's pair: the package's cached build, shared with the kept set
    if p == 0.0:
        return base
    two = pld.pessimistic_pld(sigma, kept_rate(q, n, cap), d, sensitivity=2.0)
    return two.compute_mixture(base, p)


def _shifted(pmf, shift, d):
    """``pmf`` (dense) with every loss raised by ``shift`` rounded up to the grid (δ's terms grow with the loss)."""
    pmf = pmf if isinstance(pmf, _pmflib.DensePLDPmf) else pmf.to_dense_pmf()
    return pmf._lower_loss + math.ceil(shift / d - 1e-12), pmf._probs, pmf._infinity_mass  # noqa: SLF001


def _mixture(parts, d):
    """Σ weight·pmf of (weight, (lower index, probs, infinity mass)) parts: one dense pessimistic pmf."""
    lo = min(p[0] for _, p in parts)
    hi = max(p[0] + len(p[1]) for _, p in parts)
    probs, inf = np.zeros(hi - lo), 0.0
    for w, (low, pr, im) in parts:
        probs[low - lo:low - lo + len(pr)] += w * pr
        inf += w * im
    return _pmflib.DensePLDPmf(d, lo, probs, inf, True)


@lru_cache(maxsize=16)
def _kept_set_one_step(sigma, q, n, cap, d):
    """(remove pmf, add pmf) of the kept-set pair (module docstring): slices |T_o| ≤ B − 2 (Poisson's pair, mass
    P[K ≤ B − 2]), |T_o| = B − 1 (rate c, P-mass a = π_{B−1} + p·q', Q-mass b = π_{B−1}, losses shifted by
    ±log(a/b)) and |T_o| = B (one atom, loss log(1 − q') under P, −log(1 − q') under Q)."""
    m = n - 1
    pi = float(stats.binom.pmf(cap - 1, m, q))
    p = truncation_probability(q, n, cap)
    qq = kept_rate(q, n, cap)
    below = float(stats.binom.cdf(cap - 2, m, q))
    a = pi + p * qq
    base = pld.one_step(sigma, q, True, d)
    b_rem, b_add = (_shifted(x, 0.0, d) for x in pld.direction_pmfs(base, "add_remove"))
    if not (pi > 0 and a > 0):  # the cap is out of the others' reach (or always reached): no such slice
        return None
    c = min(1.0, (pi * q + p * qq) / a)
    sl = pld.pessimistic_pld(sigma, c, d)
    s_rem, s_add = pld.direction_pmfs(sl, "add_remove")
    shift = math.log(a) - math.log(pi)
    atom_rem = (math.ceil(math.log1p(-qq) / d - 1e-12), np.array([1.0]), 0.0)
    atom_add = (math.ceil(-math.log1p(-qq) / d - 1e-12), np.array([1.0]), 0.0)
    rem = _mixture([(below, b_rem), (a, _shifted(s_rem, shift, d)), (p * (1 - qq), atom_rem)], d)
    add = _mixture([(below, b_add), (pi, _shifted(s_add, -shift, d)), (p, atom_add)], d)
    return rem, add


def _profile_on_grid(pmf, lo, hi, d):
    """δ(ε_i) of a dense pmf at ε_i = i·d, i = lo..hi: ∞-mass + Σ_{ℓ>ε} p − e^ε Σ_{ℓ>ε} p e^{−ℓ} (suffix sums)."""
    low, p = pmf._lower_loss, pmf._probs  # noqa: SLF001
    losses = (low + np.arange(len(p))) * d
    sp = np.concatenate((np.cumsum(p[::-1])[::-1], [0.0]))
    sq = np.concatenate((np.cumsum((p * np.exp(-losses))[::-1])[::-1], [0.0]))
    j = np.clip(np.arange(lo, hi + 1) - low + 1, 0, len(p))
    return np.clip(pmf._infinity_mass + sp[j] - np.exp(np.arange(lo, hi + 1) * d) * sq[j], 0.0, 1.0)  # noqa: SLF001


#: a trailing run of equal values at least this long is passed by :func:`_chain` without visiting its points
_FLAT_RUN_MIN = 256
#: :func:`_chain_head` runs the chain this many points past the last pop of a neighbour test
_HEAD_MARGIN = 64


def _chain_head(x, y, a, b):
    """= ``dominated_pld.lower_chain(x, y, np.arange(a, b + 1))``, the chain run only up to a point m past the last
    point whose neighbour test (k − 2, k − 1, k) pops, chosen so that the stack's top then is (m − 1, m) (the margin
    past that point grown until it is): from there every test is a neighbour test that does not pop (the chain's
    own expression on the same doubles, as in lower_chain's vectorised runs), so the rest is pushed as it is."""
    if b - a < 2 * _HEAD_MARGIN:
        return dominated_pld.lower_chain(x, y, np.arange(a, b + 1))
    xa, ya = x[a:b + 1], y[a:b + 1]
    pops = np.flatnonzero((ya[1:-1] - ya[:-2]) * (xa[2:] - xa[:-2]) >= (ya[2:] - ya[:-2]) * (xa[1:-1] - xa[:-2]))
    last, margin = a + (int(pops[-1]) + 2 if pops.size else 1), _HEAD_MARGIN
    while last + margin < b:
        m = last + margin
        stack = dominated_pld.lower_chain(x, y, np.arange(a, m + 1))
        if stack[-2:] == [m - 1, m]:
            return stack + list(range(m + 1, b + 1))
        margin *= 4
    return dominated_pld.lower_chain(x, y, np.arange(a, b + 1))


def _chain(x, y, a, b):
    """= ``dominated_pld.lower_chain(x, y, np.arange(a, b + 1))``: the same tests, the same hull, with a trailing run
    of equal values y[f:b + 1] (the profile's floor, its mass at infinity, over the losses only the other pair
    reaches) decided without visiting its points one by one.

    The chain is online (its stack after point f is the hull of a..f), and inside the run a test whose two top points
    both lie in the run is (0·Δx ≥ 0·Δx): true in floating point too, so each run point pushed is popped by the next.
    Hence from f on the stack is S + [t] (+ the last point), t the latest run point to survive, and the only tests
    that can change it are those of (S[-1], t, k) for the run's points k in turn; each is the chain's own expression,
    evaluated for all k at once on the same doubles, and at the first k where it pops, the chain's loop is run on S
    as it would be and k becomes t.  Hand-written: no library runs this chain."""
    c = y[b]
    if b - a < _FLAT_RUN_MIN or np.any(y[b - _FLAT_RUN_MIN:b] != c):  # no long run
        return _chain_head(x, y, a, b)
    other = np.flatnonzero(y[a:b + 1] != c)
    f = a + int(other[-1]) + 1 if other.size else a  # the run is f..b
    stack = _chain_head(x, y, a, f) if f > a else [a]
    start, block = f + 1, 64
    while start <= b and len(stack) >= 2:
        s, t = stack[-2], stack[-1]
        stop = min(b + 1, start + block)
        ks = np.arange(start, stop)
        pops = (y[t] - y[s]) * (x[ks] - x[s]) >= (y[ks] - y[s]) * (x[t] - x[s])
        if not pops.any():
            start, block = stop, 2 * block
            continue
        k = start + int(np.argmax(pops))
        stack.pop()  # t (the run point pushed last, if any, was popped by k's first test)
        while len(stack) >= 2:
            s, t = stack[-2], stack[-1]
            if (y[t] - y[s]) * (x[k] - x[s]) >= (y[k] - y[s]) * (x[t] - x[s]):
                stack.pop()
            else:
                break
        stack.append(k)
        start, block = k + 1, 64
    if stack[-1] != b:
        stack.append(b)
    return [int(i) for i in stack]


def _convex_minorant(x, y):
    """Indices of the lower convex hull of (x, y): the monotone chain run only on windows around the non-convex
    vertices (doubled until the whole polyline is convex; the rest is convex already)."""
    n = len(x)
    bad = np.flatnonzero(np.diff(y)[:-1] * np.diff(x)[1:] >= np.diff(y)[1:] * np.diff(x)[:-1]) + 1
    if bad.size == 0:
        return np.arange(n)
    w = 64
    while True:
        a, b = max(0, int(bad[0]) - w), min(n - 1, int(bad[-1]) + w)
        idx = np.concatenate((np.arange(a), _chain(x, y, a, b),
                              np.arange(b + 1, n))).astype(int)
        sl = np.diff(y[idx]) / np.diff(x[idx])
        if np.all(np.diff(sl) >= 0) or (a == 0 and b == n - 1):
            return idx
        w *= 4


# --------------------------------------------------------------------------- the third pair, R₁


def r1_weights(q, dataset_size, max_batch_size):
    """(π_{B−1}, p, q', S, w) of the pair R₁ (:mod:`.truncated_r1`): π_{B−1} = P[K = B − 1], p = P[K ≥ B], q' the
    kept rate, S = q·π_{B−1} + p·q' (d kept with B − 1 others), w = π_{B−1} + p (the count B − 1 or more)."""
    pi = float(stats.binom.pmf(max_batch_size - 1, dataset_size - 1, q))
    p = truncation_probability(q, dataset_size, max_batch_size)
    qq = kept_rate(q, dataset_size, max_batch_size)
    return pi, p, qq, q * pi + p * qq, pi + p


def _r1_profiles(sigma, q, n, cap, lo, hi, d):
    """R₁'s profile (remove, add) at ε_i = i·d, i = lo..hi: (1 − w)·Poisson's (its pessimistic pmf's values there, as
    for the other pairs) + w·the local pair's supremum over θ (:func:`.truncated_r1.local_profile`)."""
    weights = r1_weights(q, n, cap)
    w = weights[4]
    base = pld.direction_pmfs(pld.one_step(sigma, q, True, d), "add_remove")
    gam = np.exp(np.arange(lo, hi + 1) * d)
    out = []
    for pmf, direction in zip(base, ("remove", "add")):
        pmf = pmf if isinstance(pmf, _pmflib.DensePLDPmf) else pmf.to_dense_pmf()
        prof = (1.0 - w) * _profile_on_grid(pmf, lo, hi, d) + truncated_r1.local_profile(gam, sigma, q, weights,
                                                                                          direction)
        out.append(np.clip(prof, 0.0, 1.0))
    return out


def _pmf_from_profile(m, lo, d):
    """The connect-the-dots pmf (dp_accounting's masses, pld._connect_dots_pmf) of the greatest convex minorant g of
    the values m at x_i = e^{iΔ}, i = lo, lo + 1, …: its profile is g between the grid points."""
    xs = np.exp(np.arange(lo, lo + len(m)) * d)
    keep = _convex_minorant(xs, m)
    g = np.minimum.accumulate(np.interp(xs, xs[keep], m[keep]))
    diffs = np.diff(g)
    probs = np.zeros_like(g)
    probs[0] = 1 - g[0] + diffs[0] / math.expm1(d)
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(d)) / math.expm1(d)
    probs[-1] = diffs[-1] / math.expm1(-d)
    return _pmflib.DensePLDPmf(d, lo, np.maximum(probs, 0.0), float(g[-1]), True)


@lru_cache(maxsize=16)
def _combined_one_step(sigma, q, n, cap, d, pairs=("sensitivity2", "kept_set", "r1")):
    """(remove pmf, add pmf) dominating the given pairs at once: per direction the greatest convex minorant g of
    the minimum of the pairs' one-step profiles at the grid points e^{iΔ}, as a connect-the-dots pmf (the
    chords of g).  Valid: the true profile h is convex and below each, so below every chord between grid points
    of their minimum, hence below g; g is convex, decreasing and ≥ (1 − x)₊, the profile of a pair.  The grid is
    the span of the first two pairs' pmfs (R₁'s profile is evaluated on it; beyond its end g's last value is the
    mass at infinity, ≥ the true profile there as the profile decreases)."""
    ones = [pld.direction_pmfs(_upper_one_step(sigma, q, n, cap, d), "add_remove")]
    kept = _kept_set_one_step(sigma, q, n, cap, d)
    if kept is not None:
        ones.append(kept)
    out = []
    for k, pmfs in enumerate(zip(*ones)):
        pmfs = [x if isinstance(x, _pmflib.DensePLDPmf) else x.to_dense_pmf() for x in pmfs]
        lo = min(x._lower_loss for x in pmfs) - 1  # noqa: SLF001
        hi = max(x._lower_loss + len(x._probs) for x in pmfs) + 1  # noqa: SLF001
        profiles = [_profile_on_grid(x, lo, hi, d) for x, name in zip(pmfs, PAIRS) if name in pairs]
        if "r1" in pairs and kept is not None and sigma >= truncated_r1.MIN_SIGMA:
            profiles.append(_r1_profiles(sigma, q, n, cap, lo, hi, d)[k])
        out.append(_pmf_from_profile(np.minimum.reduce(profiles), lo, d))
    return tuple(out)


@lru_cache(maxsize=32)
def _upper_pmfs(sigma, q, n, cap, total_steps, d, pair="combined"):
    """((composed pessimistic pmf, err2), …) per direction (remove, add) of one dominating pair (``pair``:
    "sensitivity2" or "kept_set"); err2 bounds the 2-norm of the composed masses' rounding error (0 for one
    step).  None if the pair does not apply."""
    if pair == "sensitivity2":
        ones = pld.direction_pmfs(_upper_one_step(sigma, q, n, cap, d), "add_remove")
    elif pair == "combined":
        ones = _combined_one_step(sigma, q, n, cap, d)
    elif pair == "r1":
        if _kept_set_one_step(sigma, q, n, cap, d) is None or sigma < truncated_r1.MIN_SIGMA:
            return None
        ones = _combined_one_step(sigma, q, n, cap, d, pairs=("r1",))
    else:
        ones = _kept_set_one_step(sigma, q, n, cap, d)
        if ones is None:
            return None
    out = []
    for one_pmf in ones:
        dense = one_pmf if isinstance(one_pmf, _pmflib.DensePLDPmf) else one_pmf.to_dense_pmf()
        if total_steps == 1:
            out.append((dense, 0.0))
            continue
        comp = pld._self_compose(dense, total_steps)  # noqa: SLF001 - the engine's composition
        out.append((comp, pld.composition_error(dense._probs, total_steps, comp._probs)))  # noqa: SLF001
    return tuple(out)


#: the three dominating pairs (module docstring); the upper end composes the pair dominating all ("combined")
PAIRS = ("sensitivity2", "kept_set", "r1")


def _args(sigma, q, n, cap, total_steps, d):
    return float(sigma), float(q), int(n), int(cap), int(total_steps), float(d)


def _pairs(a):
    p = truncation_probability(a[1], a[2], a[3])
    return [_upper_pmfs(*a, pair="combined" if p > 0 else "sensitivity2")]


def upper_delta(epsilon, *, sigma, q, dataset_size, max_batch_size, total_steps, discretization=1e-4) -> float:
    """An upper bound on δ(ε): per dominating pair its composed pessimistic PLD plus its rounding bound, max over
    the two directions; the smaller over the pairs (module docstring)."""
    a = _args(sigma, q, dataset_size, max_batch_size, total_steps, discretization)
    return min(max(float(pld.delta_for_epsilon(pmf, float(epsilon)))
                   + (pld.rounding_at(pmf, e2, epsilon) if e2 else 0.0) for pmf, e2 in comp) for comp in _pairs(a))


def upper_epsilon(delta, *, sigma, q, dataset_size, max_batch_size, total_steps, discretization=1e-4) -> float:
    """An upper bound on ε(δ): per pair and direction ε₁ = ε̂(δ − E(ε₀)), ε₀ = ε̂(δ), E the rounding bound
    (nonincreasing in ε, so the dominating pair's δ(ε₁) ≤ δ), as :func:`.pld.certified_epsilon` (ε₁ read for an
    upper bound by construction, :func:`.reading.epsilon_for_delta_upper`); max over the directions, the smaller
    over the pairs."""
    a = _args(sigma, q, dataset_size, max_batch_size, total_steps, discretization)
    best = math.inf
    for comp in _pairs(a):
        out = []
        for pmf, e2 in comp:
            read = pld.EpsilonReader(pmf)  # the two readings share one walk (pld.epsilon_for_delta's floats)
            eps0 = float(read(float(delta)))
            err = pld.rounding_at(pmf, e2, eps0) if (e2 and math.isfinite(eps0)) else 0.0
            target = float(delta) - err if math.isfinite(eps0) else 0.0
            out.append(max(eps0, epsilon_for_delta_upper(pmf, target, read.read)) if target > 0 else math.inf)
        best = min(best, max(out))
    return best


# --------------------------------------------------------------------------- lower end: the two-axis adversary


def count_laws(q: float, dataset_size: int, max_batch_size: int):
    """The exact one-step law of (c, C) (d kept, number of kept others) with d present, and of C with d removed.

    Returns ``(counts, w0, w1, v)``: ``counts`` the values of C kept (probability ≥ _COUNT_FLOOR under some
    law), w_c[k] = P[c, C = counts[k]] with d, v[k] = P[C = counts[k]] without d.  K ~ Bin(n − 1, q):
    K < B: C = K, c = 1 with probability q; K ≥ B: c = 1 with probability q·B/(K + 1) (then C = B − 1), else
    C = B; summed over K ≥ B, P[c = 1, K ≥ B] = P[Bin(n, q) > B]·B/n.  Without d, C = min(K, B).
    """
    n, cap = int(dataset_size), int(max_batch_size)
    m = n - 1
    lo = int(stats.binom.ppf(1e-45, m, q)) if m > 0 else 0
    ks = np.arange(max(0, lo - 1), cap + 1)
    pk = stats.binom.pmf(ks, m, q)
    tail = float(stats.binom.sf(cap - 1, m, q))  # P[K ≥ B]
    kept_trunc = float(stats.binom.sf(cap, n, q)) * cap / n if tail > 0 else 0.0
    w0 = np.where(ks < cap, pk * (1 - q), 0.0)
    w1 = np.where(ks < cap, pk * q, 0.0)
    v = np.where(ks < cap, pk, 0.0)
    w0[-1] = tail - kept_trunc
    v[-1] = tail
    if cap >= 1:
        w1[-2 if len(ks) > 1 else -1] += kept_trunc
    keep = (w0 >= _COUNT_FLOOR) | (w1 >= _COUNT_FLOOR) | (v >= _COUNT_FLOOR)
    return ks[keep].astype(float), w0[keep], w1[keep], v[keep]


def _log_interval_masses(edges, means, sigma):
    """log N(μ, σ²)([e_i, e_{i+1})) for every edge interval (rows) and mean (columns), without cancellation."""
    z = (edges[:, None] - means[None, :]) / sigma
    lc = special.log_ndtr(z)
    ls = special.log_ndtr(-z)
    with np.errstate(divide="ignore", invalid="ignore"):
        from_cdf = lc[1:] + np.log(-np.expm1(np.minimum(lc[:-1] - lc[1:], 0.0)))
        from_sf = ls[:-1] + np.log(-np.expm1(np.minimum(ls[1:] - ls[:-1], 0.0)))
    return np.where(lc[1:] <= math.log(0.5), from_cdf, from_sf)


def _grid(lo, hi, width):
    n = max(1, int(math.ceil((hi - lo) / width)))
    return np.concatenate(([-np.inf], lo + (hi - lo) * np.arange(n + 1) / n, [np.inf]))


def _negated_order(losses, order):
    """= ``np.argsort(-losses, kind="stable")`` from ``order`` = ``np.argsort(losses, kind="stable")``: the order
    reversed, then each run of equal losses put back in increasing index (−a = −b exactly when a = b), so the same
    permutation without a second sort."""
    rev = order[::-1]
    ls = losses[rev]
    tie = ls[1:] == ls[:-1]
    if not tie.any():
        return rev
    start = np.flatnonzero(np.concatenate(([True], ~tie)))  # first position of each run of equal losses
    end = np.append(start[1:], len(rev)) - 1
    run = np.repeat(np.arange(len(start)), end - start + 1)
    return rev[start[run] + end[run] - np.arange(len(rev))]


def _profile(losses, p_mass, q_mass, order=None):
    """ε -> (h(e^ε), Q(L > ε)) of the discrete pair with atoms (loss, P-mass, Q-mass): h(e^ε) = Σ_{ℓ>ε} P − e^ε Q;
    ``order`` the losses' stable argsort, if known."""
    order = np.argsort(losses, kind="stable") if order is None else order
    ls = losses[order]
    suf_p = np.concatenate((np.cumsum(p_mass[order][::-1])[::-1], [0.0]))
    suf_q = np.concatenate((np.cumsum(q_mass[order][::-1])[::-1], [0.0]))

    def at(eps):
        idx = np.searchsorted(ls, eps, side="right")
        tail_q = suf_q[idx]
        return np.clip(suf_p[idx] - np.exp(eps) * tail_q, 0.0, 1.0), np.clip(tail_q, 0.0, 1.0)

    return at, float(ls[0]), float(ls[-1])


def _lower_hull(x, y):
    """Indices of the lower convex hull's vertices of the points (x, y), x increasing: every point whose left slope
    is ≥ its right slope (on or above the chord of its neighbours, so no strict vertex of the hull of any subset
    holding it) is dropped, in vectorised passes until none is left; the ends stay."""
    idx = np.arange(len(x))
    while len(idx) > 2:
        xi, yi = x[idx], y[idx]
        slopes = np.diff(yi) / np.diff(xi)
        bad = np.flatnonzero(slopes[:-1] >= slopes[1:]) + 1
        if bad.size == 0:
            break
        idx = np.delete(idx, bad)
    return idx


def dominated_from_atoms(losses, p_mass, q_mass, d, order=None):
    """A grid pmf (dp_accounting ``DensePLDPmf``, no mass at infinity) whose pair is dominated by the discrete pair
    with atoms (loss, P-mass, Q-mass) (total masses 1): :func:`.dominated_pld.dominated_pmf`'s construction
    (tangents of the profile at the cell midpoints, the ends fixed on the lines 1 − x and 0, the lower convex
    hull), applied to this pair's profile instead of the subsampled Gaussian's; its error is second order in d
    (rounding each loss down instead would lose up to d per step, T·d after T steps)."""
    profile, lo_loss, hi_loss = _profile(losses, p_mass, q_mass, order)
    lo_i, hi_i = math.floor(lo_loss / d) - 2, math.ceil(hi_loss / d) + 2
    i = np.arange(lo_i, hi_i + 1)
    x = np.exp(i * d)
    u = np.exp((i[:-1] + 0.5) * d)
    hu, tu = profile(np.log(u))
    left = hu - tu * (x[:-1] - u)
    right = hu - tu * (x[1:] - u)
    g = np.empty_like(x)
    g[0], g[-1] = left[0], right[-1]
    g[1:-1] = np.minimum(right[:-1], left[1:])
    line = -np.expm1(i * d)
    g[0] = min(g[0], line[0])
    j = len(g) - 1 - int(np.argmax((g <= line)[::-1]))
    g[j] = line[j]
    if j + 1 < len(g):
        _, t_start = profile(np.array([(lo_i + j) * d]))
        g[j + 1] = min(g[j + 1], line[j] - float(t_start[0]) * (x[j + 1] - x[j]))
    g[:j] = line[:j]
    g[-1] = min(g[-1], 0.0)
    k = int(np.argmax(g <= 0.0))
    x, g = x[:k + 1], g[:k + 1]
    g[k] = 0.0
    if k >= 1:
        _, t_end = profile(np.array([(lo_i + k) * d]))
        g[k - 1] = min(g[k - 1], float(t_end[0]) * (x[k] - x[k - 1]))
    xs = np.concatenate(([0.0], x))
    ys = np.concatenate(([1.0], g))
    keep = _lower_hull(xs, ys)
    xk, yk = xs[keep], ys[keep]
    slopes = np.diff(yk) / np.diff(xk)
    q_knot = np.diff(np.concatenate((slopes, [0.0])))
    probs = np.zeros(len(x))
    probs[keep[1:] - 1] = np.maximum(q_knot, 0.0) * xk[1:]
    return _pmflib.DensePLDPmf(d, lo_i, probs, 0.0, False)


@lru_cache(maxsize=16)
def lower_one_step(sigma, q, n, cap, d, cell=0.02, span=9.0, alpha=0.0):
    """The one-step dominated pmfs {"remove": …, "add": …} of the two-axis pair on rectangles (module docstring):
    first coordinate cut every ``cell``·σ over [−span·σ, 1 + span·σ]; second cut every ``cell``·σ over
    [B − 1 − span·σ, B + span·σ] (one cell below and one above)."""
    counts, w0, w1, v = count_laws(q, n, cap)
    beta = math.sqrt(1.0 - alpha * alpha)
    e1 = _grid(-span * sigma, beta + span * sigma, cell * sigma)
    low2 = cap - 1 - span * sigma if alpha == 0.0 else counts[0] - 1 - span * sigma
    e2 = _grid(low2, cap + span * sigma, cell * sigma)
    la = _log_interval_masses(e1, np.array([0.0, beta]), sigma)  # (I, 2)
    lb = _log_interval_masses(e2, counts, sigma)  # (J, nC)
    lb1 = lb if alpha == 0.0 else _log_interval_masses(e2, counts + alpha, sigma)
    with np.errstate(divide="ignore"):
        lu0 = special.logsumexp(lb + np.log(w0)[None, :], axis=1)
        lu1 = special.logsumexp(lb1 + np.log(w1)[None, :], axis=1)
        lv = special.logsumexp(lb + np.log(v)[None, :], axis=1)
    lp = np.logaddexp(la[:, :1] + lu0[None, :], la[:, 1:] + lu1[None, :]).ravel()
    lq = (la[:, :1] + lv[None, :]).ravel()
    keep = (lp > _LOG_CELL_FLOOR) | (lq > _LOG_CELL_FLOOR)
    pm, qm = np.exp(lp[keep]), np.exp(lq[keep])
    rest_p, rest_q = float(np.exp(lp[~keep]).sum()), float(np.exp(lq[~keep]).sum())
    if rest_p > 0 and rest_q > 0:  # the negligible cells merged into one (merging is a post-processing)
        pm, qm = np.append(pm, rest_p), np.append(qm, rest_q)
    pm, qm = pm / pm.sum(), qm / qm.sum()  # totals are 1 up to the masses' float error
    lp, lq = np.log(pm), np.log(qm)
    loss = lp - lq
    order = np.argsort(loss, kind="stable")  # the add direction's losses are −loss (lq − lp = −(lp − lq) exactly)
    return {"remove": dominated_from_atoms(loss, pm, qm, d, order),
            "add": dominated_from_atoms(lq - lp, qm, pm, d, _negated_order(loss, order))}


def lower_delta(epsilon, *, sigma, q, dataset_size, max_batch_size, total_steps, discretization=1e-4) -> float:
    """A lower bound on δ(ε): the two-axis pair's composed cell pmf less the folded mass and rounding bound, max
    over the directions."""
    a = _args(sigma, q, dataset_size, max_batch_size, total_steps, discretization)
    err = dominated_pld._error_at  # noqa: SLF001
    vals = [float(pmf.get_delta_for_epsilon(float(epsilon))) - err(pmf, e2, a[4], epsilon)
            for pmf, e2 in _lower_composed(*a).values()]
    return max(0.0, max(vals))


def lower_epsilon(delta, *, sigma, q, dataset_size, max_batch_size, total_steps, discretization=1e-4) -> float:
    """A lower bound on ε(δ), read as :func:`.dominated_pld.epsilon` reads it (two readings, the error bound added
    to δ), max over the directions."""
    a = _args(sigma, q, dataset_size, max_batch_size, total_steps, discretization)
    out = []
    for pmf, e2 in _lower_composed(*a).values():
        err = dominated_pld._error_at  # noqa: SLF001
        read = pld.EpsilonReader(pmf).read  # the two readings share one walk (pld.epsilon_for_delta's floats)
        eps0 = epsilon_for_delta_lower(pmf, float(delta) + err(pmf, e2, a[4], -math.inf), read)
        out.append(max(0.0, eps0, epsilon_for_delta_lower(pmf, float(delta) + err(pmf, e2, a[4], eps0), read)))
    return max(out)


# --------------------------------------------------------------------------- the certified interval


#: the lower end also tries others' gradients at this cosine to d's (a displaced record then moves the sum by
#: more than √2, at the price of d's signal across the count axis); it helps where truncation is frequent
ALPHAS = (0.0, -0.3)
#: truncation probability above which the second angle is tried
_ALPHA_MIN_P = 0.1
#: default discretisation of both ends
DEFAULT_DISCRETIZATION = 1e-4
POISSON_FLAG = "cap_at_or_above_dataset_size_is_poisson"
#: the interval is refined once (a finer discretisation predicted from the width, at least FINEST; both ends kept
#: at their best) where its width is at most this many times rel_tol
REFINE_BELOW = 10.0
#: … and (ε) its absolute gap upper − lower at most this many times d·√T (what the two ends' discretisations can leave
#: after T steps: MNIST cap 288, ε ≈ 2.5, T = 14100, has a gap of 0.25 ≫ 4·d·√T = 0.05 that a 6× finer grid moved by
#: 1e-4 relative, in 3.5 s; ImageNet-like caps ≥ mean + 3 sd, ε ≈ 0.19, T = 50050, gaps 0.008 < 0.09 that it
#: closes from 4 % to below 1 %)
REFINE_ABS_GAP = 4.0
FINEST = 1e-5


@lru_cache(maxsize=16)
def _lower_composed(sigma, q, n, cap, total_steps, d):
    """The composed dominated pmfs (with rounding bounds) of every adversary tried, both directions."""
    p = truncation_probability(q, n, cap)
    out = []
    for alpha in ALPHAS if p > _ALPHA_MIN_P else ALPHAS[:1]:
        one = lower_one_step(sigma, q, n, cap, d, cell=0.02 if alpha == 0.0 else 0.1, alpha=alpha)
        out += [dominated_pld._compose_pmf(pmf, total_steps) for pmf in one.values()]  # noqa: SLF001
    return {i: c for i, c in enumerate(out)}


def _width(lo, up):
    return (up - lo) / up if 0 < up < math.inf else (0.0 if up == 0 else math.inf)


def _interval(quantity, target, sigma, q, n, cap, total_steps, rel_tol, d):
    from . import poisson_interval
    from .result import AccountingResult

    kw = dict(sigma=sigma, q=q, total_steps=total_steps)
    if cap >= n:  # never truncated: Poisson
        fn = poisson_interval.epsilon if quantity == "epsilon" else poisson_interval.delta
        r = fn(target, rel_tol=rel_tol, **kw)
        return AccountingResult(r.value, r.kind, "Poisson (cap ≥ dataset size: never truncated): " + r.method,
                                dict(r.accuracy, truncation_probability=0.0), r.lower, r.upper,
                                tuple(r.flags) + (POISSON_FLAG,))
    lo, up, widths = 0.0, math.inf, {}
    while True:
        tkw = dict(kw, dataset_size=n, max_batch_size=cap, discretization=d)
        if quantity == "epsilon":
            up, lo = min(up, upper_epsilon(target, **tkw)), max(lo, lower_epsilon(target, **tkw))
        else:
            up, lo = min(up, upper_delta(target, **tkw)), max(lo, lower_delta(target, **tkw))
        if lo > up * (1 + 1e-12):
            raise RuntimeError(f"crossed interval: lower {lo!r} > upper {up!r}; please report")
        width = widths[d] = _width(lo, up)
        # refine only where the discretisation can explain the gap (a few times rel_tol): a wider gap is the
        # pairs' own, which no discretisation closes
        wide = quantity == "epsilon" and up - lo > REFINE_ABS_GAP * d * math.sqrt(total_steps)
        if width <= rel_tol or width > REFINE_BELOW * rel_tol or wide or d <= FINEST * (1 + 1e-9) or len(widths) > 1:
            break
        d = max(FINEST, float(f"{d * min(0.5, math.sqrt(rel_tol / (4.0 * width))):.1e}"))
    acc = dict(discretization=d, pld_widths=widths, rel_tol=rel_tol, rel_width=width, est_rel_error=width, lower_method=LOWER,
               upper_method=UPPER, truncation_probability=truncation_probability(q, n, cap),
               kept_rate=kept_rate(q, n, cap))
    flags = ("not_converged",) if width > rel_tol else ()
    return AccountingResult(float(up), "upper", f"{LOWER} / {UPPER}", acc, float(lo), float(up), flags)


def epsilon(delta, *, sigma, q, dataset_size, max_batch_size, total_steps, rel_tol=1e-2,
            discretization=DEFAULT_DISCRETIZATION):
    """ε(δ) as a certified interval [lower, upper] (``AccountingResult``, value = upper; module docstring);
    a cap ≥ the dataset size is Poisson's certified interval, flagged :data:`POISSON_FLAG`."""
    return _interval("epsilon", float(delta), float(sigma), float(q), int(dataset_size), int(max_batch_size),
                     int(total_steps), float(rel_tol), float(discretization))


def delta(epsilon_value, *, sigma, q, dataset_size, max_batch_size, total_steps, rel_tol=1e-2,
          discretization=DEFAULT_DISCRETIZATION):
    """δ(ε) as a certified interval (as :func:`epsilon`)."""
    return _interval("delta", float(epsilon_value), float(sigma), float(q), int(dataset_size), int(max_batch_size),
                     int(total_steps), float(rel_tol), float(discretization))


def smallest_cap(delta, *, sigma, q, dataset_size, total_steps, factor=0.01, discretization=DEFAULT_DISCRETIZATION):
    """(B, ε_B, ε_Poisson): the smallest cap B whose certified upper ε(δ) is at most (1 + factor) times Poisson's
    certified upper ε(δ) (:func:`.pld.certified_epsilon`, the same discretisation; at B ≥ n the two are the same
    computation).  Assumes the upper end does not increase with B (the truncation probability falls with B):
    bisection over B at a 10× coarser discretisation (cheap; the ratio to Poisson's moves little with it),
    then single steps at ``discretization`` until ε_B meets the goal and ε_{B−1} does not."""
    s, q, n, t, d = float(sigma), float(q), int(dataset_size), int(total_steps), float(discretization)

    def checker(dd):
        goal = (1.0 + float(factor)) * pld.certified_epsilon(float(delta), s, q, t, "add_remove", dd)
        return lambda cap: cap >= n or upper_epsilon(delta, sigma=s, q=q, dataset_size=n, max_batch_size=cap,
                                                     total_steps=t, discretization=dd) <= goal

    mean, sd = n * q, math.sqrt(n * q * (1 - q))
    coarse = checker(min(10 * d, 1e-3) if d < 1e-3 else d)
    lo, hi = 0, min(n, int(math.ceil(mean + 12 * sd)) + 1)
    start = max(1, int(mean) - 1)
    if not coarse(start):
        lo = start
    while not coarse(hi):
        lo, hi = hi, min(n, 2 * hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if coarse(mid) else (mid, hi)
    fine, cap = checker(d), max(hi, 1)
    if fine(cap):
        while cap > 1 and fine(cap - 1):
            cap -= 1
    else:
        while not fine(cap):
            cap += 1
    poisson = pld.certified_epsilon(float(delta), s, q, t, "add_remove", d)
    eps_cap = poisson if cap >= n else upper_epsilon(delta, sigma=s, q=q, dataset_size=n, max_batch_size=cap,
                                                      total_steps=t, discretization=d)
    return cap, eps_cap, poisson


def sigma(epsilon_value, delta, *, q, dataset_size, max_batch_size, total_steps, rel_tol=1e-2,
          discretization=DEFAULT_DISCRETIZATION):
    """The smallest σ as a certified interval (lower, upper]: ``upper`` is sufficient (its certified upper ε(δ) is
    ≤ ε), ``lower`` provably insufficient (its certified lower ε(δ) exceeds ε; more noise is a post-processing,
    so every smaller σ is insufficient too); bisection in log σ until upper/lower − 1 ≤ ``rel_tol`` or the
    lower end stops moving.  A cap ≥ the dataset size is Poisson's (same bisection, Poisson's ends)."""
    from .result import AccountingResult

    eps, dlt = float(epsilon_value), float(delta)
    a = dict(q=float(q), dataset_size=int(dataset_size), max_batch_size=int(max_batch_size),
             total_steps=int(total_steps), discretization=float(discretization))

    def up_ok(s):  # σ sufficient by the upper end
        return upper_epsilon(dlt, sigma=s, **a) <= eps

    def low_bad(s):  # σ provably insufficient by the lower end
        return lower_epsilon(dlt, sigma=s, **a) > eps

    def bracket(pred, start):  # (x with not pred, x with pred), geometric search in σ
        s = start
        if pred(s):
            while pred(s / 2) and s > 1e-3:
                s /= 2
            return s / 2, s
        while not pred(2 * s) and s < 1e3:
            s *= 2
        return s, 2 * s

    def bisect(pred, lo, hi):  # pred False at lo, True at hi
        while hi / lo - 1 > rel_tol / 2:
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if pred(mid) else (mid, hi)
        return lo, hi

    _, s_up = bisect(up_ok, *bracket(up_ok, 1.0))
    lo_bad, _ = bracket(lambda s: not low_bad(s), s_up / 2)
    s_lo, _ = bisect(lambda s: not low_bad(s), lo_bad, s_up) if low_bad(lo_bad) else (0.0, None)
    width = (s_up - s_lo) / s_up
    acc = dict(discretization=a["discretization"], rel_tol=rel_tol, rel_width=width, est_rel_error=width,
               lower_method=LOWER + " (provably insufficient σ)", upper_method=UPPER + " (sufficient σ)")
    flags = (("not_converged",) if width > rel_tol else ()) + ((POISSON_FLAG,) if a["max_batch_size"] >= a[
        "dataset_size"] else ())
    return AccountingResult(float(s_up), "upper", f"{LOWER} / {UPPER}", acc, float(s_lo), float(s_up), flags)
