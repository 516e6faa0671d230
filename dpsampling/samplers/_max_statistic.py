"""Lower bounds on δ(ε) and ε(δ) from the max-coordinate statistic M = max_t x_t.

Setting.  For a mean μ ≥ 0, T steps and noise σ, MoG(μ) := (1/T) Σ_t N(μ·e_t, σ² I_T)
(MoG(0) = N(0, σ² I_T)).  The pairs used by the batch samplers are

* shuffle (Chua et al. ICML 2024, eqs. (1)-(2)): P = MoG(2), Q = MoG(1) — the exact output law of
  ABLQ_S on one concrete query method and adjacent pair (no dominating pair is known);
* balls-and-bins (Chua et al. AISTATS 2025): P = MoG(1), Q = N(0, σ²I) (remove; add swaps them).

Law of M.  By symmetry over the uniform batch index, F_μ(C) := Pr_{MoG(μ)}[M ≤ C]
= Φ((C−μ)/σ)·Φ(C/σ)^(T−1); the survival 1 − F_μ(C) = Φ(−a) + Φ(a)(1 − Φ(b)^(T−1))
(a = (C−μ)/σ, b = C/σ) is a sum of non-negative terms, evaluated in log space exactly as
:func:`dpsampling.samplers._ec_sets.shuffle_log_pq` needs (that function is :func:`log_sf_max` at
μ = 2 and μ = 1; the shared helpers live here, shuffle.py imports them).

Why every value here is a valid lower bound (one sentence each):

* single epoch, threshold events: for any event S of the output space, δ(ε) ≥ P(S) − e^ε Q(S)
  on this one adjacent pair (definition of (ε, δ)-DP), and {M ≥ C}, {M < C} are such events;
  the remove (P vs Q) and add (Q vs P) directions are both differences of one adjacent pair,
  so their maximum is still a lower bound.
* several epochs: the E epochs use independent randomness and (for non-adaptive queries) the
  output is the product P^⊗E vs Q^⊗E; replacing each epoch's output by the slice of ℝ in which
  its M falls is post-processing, so the hockey-stick divergence of the sliced product pair is
  ≤ that of the output pair (data processing inequality); the sliced pair's privacy loss is
  the sum of per-epoch slice losses log(P_i/Q_i), and rounding each loss DOWN to the
  discretisation grid can only lower Σ_x P(x)(1 − e^{ε−ℓ(x)})₊ (each term is increasing in ℓ),
  as does lumping the two tails into one atom each (another post-processing) and dropping
  mass (each term is ≥ 0); no infinite-loss mass is ever added.
* the FFT composition (dp_accounting, via :func:`dpsampling.engine.pld._self_compose`) may move up to
  ``tail_mass_truncation`` of mass by wrap-around; moving mass m changes δ by at most m, so we
  subtract it from δ (and add it to the δ target of ε(δ)).

Why hand-written: dp_accounting builds PLDs only for mechanisms it knows (Gaussian, Laplace,
…, and from given (ε, δ) curves); the max statistic of a Gaussian mixture is not one of them.
We compute the per-epoch pmf (vectorised, log space) and hand it to dp_accounting's
``DensePLDPmf`` for composition and for δ(ε) / ε(δ).
"""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine.errors import ParameterError
from dpsampling.engine import lazy
from dpsampling.engine.validation import (check_choice, check_delta, check_epsilon, check_finite_list, check_grid,
                                          check_int, check_positive)

# heavy modules load on first use (the sampler descriptions are read by the command line's parser)
_pmflib = lazy.module("dp_accounting.pld.pld_pmf")
_pld = lazy.module("dpsampling.engine.pld")
_reading = lazy.module("dpsampling.engine.reading")
log_ndtr, ndtr, ndtri = (lazy.function("scipy.special", f) for f in ("log_ndtr", "ndtr", "ndtri"))
log1mexp, logsubexp = (lazy.function("dpsampling.engine.numerics", f) for f in ("log1mexp", "logsubexp"))

from dpsampling.samplers._checks import check_quantity, check_sigma_steps  # noqa: E402

DIRECTIONS = ("add", "remove", "add_remove")
#: Default PLD value discretisation Δ (the peer's default too).  The per-epoch loss is rounded
#: down by < Δ, so the E-epoch value is at most E·Δ below the exact value for the same slices.
DEFAULT_DISCRETIZATION = 1e-3
#: log of the mass lumped into each tail atom (per distribution), before the log E correction.
DEFAULT_LOG_TAIL = -40.0
#: Mass the FFT composition may misplace (dp_accounting's default tail truncation: the circular convolution folds
#: the mass outside its window, ≤ this, back in).  Its rounding is another matter: :func:`composition_rounding`.
TAIL_MASS_TRUNCATION = 1e-15
#: Below this, PLD δ is dominated by truncation / FFT round-off: flagged, not reported as a bound.
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR  # noqa: E402  (the one floor of the library)

#: Relative guard subtracted from each loss before rounding down, so floating-point error in
#: log P_i − log Q_i (≲ 1e-12 relative here) cannot round a loss up by one grid step.
_LOSS_GUARD = 1e-9


# --------------------------------------------------------------------------- shared helpers (also used by shuffle.py)

#: The paper's set 𝒞 of thresholds (Chua §4.3): 0 to 100 in steps of 0.01 (10,001 values).
DEFAULT_C_GRID = np.arange(0.0, 100.0001, 0.01)
DEFAULT_C_GRID.setflags(write=False)

# Rows of the (ε × C) work array per block, so that a block has ≲ 4e6 entries.
_BLOCK_ENTRIES = 4_000_000


def _check_c_grid(c_grid):
    if c_grid is None:
        return DEFAULT_C_GRID
    return check_grid("c_grid", check_finite_list("c_grid", c_grid))


def _blocks(n_rows, n_cols):
    step = max(1, _BLOCK_ENTRIES // max(1, n_cols))
    for i in range(0, n_rows, step):
        yield slice(i, min(n_rows, i + step))


def _log_neg_log_ndtr(x):
    """log(−log Φ(x)), accurate also where log Φ(x) underflows (x ≳ 38).

    For x > 0, −log Φ(x) = −log1p(−s) with s = Φ(−x); its log is
    log s + log(−log1p(−s)/s), and the second term is ≈ s/2 → 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = ndtr(-x)
        pos = log_ndtr(-x) + np.where(s > 1e-8, np.log(-np.log1p(-s) / np.where(s > 0, s, 1.0)), 0.5 * s)
        neg = np.log(-log_ndtr(x))
    return np.where(x > 0, pos, neg)


def _log1m_pow(log_neg_log_phi_b, steps):
    """log(1 − Φ(b)^(T−1)) from log(−log Φ(b)), accurate for tiny and huge T·Φ(−b)."""
    if steps == 1:
        return np.full(np.shape(log_neg_log_phi_b), -np.inf)
    big_l = math.log(steps - 1) + log_neg_log_phi_b  # log((T−1)·(−log Φ(b)))
    with np.errstate(over="ignore"):
        u = np.exp(big_l)
        # log(1 − e^{−u}); for u < 1e-10, log(u) − u/2 avoids exp(−u) rounding to 1.
        return np.where(big_l < -23.0, big_l - 0.5 * u, log1mexp(-u))



# --------------------------------------------------------------------------- checks


def _check_pair(mean_p, mean_q, sigma, steps):
    """The samplers' constant pair means (two different numbers >= 0) and the question's σ and steps."""
    sigma, steps = check_sigma_steps(sigma, steps)
    return float(mean_p), float(mean_q), sigma, steps


def _check_epochs(epochs):
    return check_int("epochs", epochs, 1)


# --------------------------------------------------------------------------- law of M


def log_cdf_max(c, mean, sigma, steps):
    """log Pr_{MoG(mean)}[M ≤ c] = log Φ((c−μ)/σ) + (T−1)·log Φ(c/σ) (vectorised over ``c``)."""
    c = np.asarray(c, dtype=float)
    return log_ndtr((c - mean) / sigma) + (steps - 1) * log_ndtr(c / sigma)


def log_sf_max(c, mean, sigma, steps, _l1m=None):
    """log Pr_{MoG(mean)}[M > c] = log[Φ(−a) + Φ(a)(1 − Φ(b)^(T−1))], a = (c−μ)/σ, b = c/σ.

    A sum of non-negative terms (no cancellation), with log(1 − Φ(b)^(T−1)) from
    :func:`_log1m_pow`; :func:`dpsampling.samplers._ec_sets.shuffle_log_pq` calls it at μ = 2, 1.
    """
    c = np.asarray(c, dtype=float)
    l1m = _log1m_pow(_log_neg_log_ndtr(c / sigma), steps) if _l1m is None else _l1m
    a = (c - mean) / sigma
    return np.logaddexp(log_ndtr(-a), log_ndtr(a) + l1m)


# --------------------------------------------------------------------------- single epoch: threshold events


def threshold_log_masses(mean_p, mean_q, sigma, steps, c_grid=None):
    """log-masses of the events {M ≥ C} and {M < C} under P = MoG(mean_p) and Q = MoG(mean_q).

    Returns ``(c, log_p_upper, log_q_upper, log_p_lower, log_q_lower)`` on the grid ``c``
    (default: Chua's 𝒞 = 0, 0.01, …, 100).  M is continuous, so {M ≥ C} has mass 1 − F(C).
    """
    mean_p, mean_q, sigma, steps = _check_pair(mean_p, mean_q, sigma, steps)
    c = _check_c_grid(c_grid)
    l1m = _log1m_pow(_log_neg_log_ndtr(c / sigma), steps)
    return (c, log_sf_max(c, mean_p, sigma, steps, l1m), log_sf_max(c, mean_q, sigma, steps, l1m),
            log_cdf_max(c, mean_p, sigma, steps), log_cdf_max(c, mean_q, sigma, steps))


def _best_log_hockey(log_eps_shift, lp, lq):
    """max over events of log(P − e^x Q) for each x in ``log_eps_shift`` (−inf if none positive).

    Rows of x in blocks (memory), one array operation per block; returns (best, argmax index).
    """
    x = np.asarray(log_eps_shift, dtype=float)
    best = np.full(x.shape, -np.inf)
    arg = np.full(x.shape, -1, dtype=int)
    keep = np.flatnonzero(np.isfinite(lp))
    if keep.size == 0:
        return best, arg
    lp, lq = lp[keep], lq[keep]
    for sl in _blocks(x.size, lp.size):
        diff = x[sl, None] + lq[None, :] - lp[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(diff < 0, lp[None, :] + log1mexp(np.minimum(diff, 0.0)), -np.inf)
        i = np.argmax(val, axis=1)
        best[sl] = val[np.arange(val.shape[0]), i]
        arg[sl] = np.where(np.isfinite(best[sl]), keep[i], -1)
    return best, arg


def _best_epsilon(log_delta, lp, lq):
    """max over events of log((P − δ)/Q) for each log δ in ``log_delta`` (−inf if no P > δ), with argmax index.

    Rows in blocks (memory); log P + log1mexp(log δ − log P) − log Q, one array operation per block.
    """
    best = np.full(log_delta.shape, -np.inf)
    arg = np.zeros(log_delta.shape, dtype=int)
    for sl in _blocks(log_delta.size, lp.size):
        diff = log_delta[sl, None] - lp[None, :]  # log(δ / P)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(diff < 0, lp[None, :] + log1mexp(np.minimum(diff, 0.0)) - lq[None, :], -np.inf)
        i = np.argmax(val, axis=1)
        best[sl] = val[np.arange(val.shape[0]), i]
        arg[sl] = i
    return best, arg


def _event_families(mean_p, mean_q, sigma, steps, c_grid, direction):
    """(name, log P-side masses, log Q-side masses) of the events used, per direction."""
    c, lpu, lqu, lpl, lql = threshold_log_masses(mean_p, mean_q, sigma, steps, c_grid)
    fam = []
    if direction in ("remove", "add_remove"):  # P vs Q
        fam += [("remove:M>=C", lpu, lqu), ("remove:M<C", lpl, lql)]
    if direction in ("add", "add_remove"):  # Q vs P
        fam += [("add:M>=C", lqu, lpu), ("add:M<C", lql, lpl)]
    return c, fam


def _best_over_events(c, fam, x, best_of_family, start, shape):
    """(best, c_arg, event) over the event families ``fam`` of ``best_of_family(x, lp, lq)`` -> (values,
    argmax index), starting from ``start`` (nan, "" where no family beats it); reshaped to ``shape``."""
    best = np.full(x.shape, start)
    c_arg = np.full(x.shape, np.nan)
    event = np.full(x.shape, "", dtype=object)
    for name, lp, lq in fam:
        v, i = best_of_family(x, lp, lq)
        better = v > best
        best = np.where(better, v, best)
        c_arg = np.where(better, c[np.maximum(i, 0)], c_arg)
        event = np.where(better, name, event)
    return best.reshape(shape), c_arg.reshape(shape), event.reshape(shape)


def events_log_delta_lower(epsilon, mean_p, mean_q, sigma, steps, c_grid=None, direction="add_remove"):
    """log of the best threshold-event lower bound on δ(ε) (one epoch), with the event used.

    δ(ε) ≥ max over C and the events {M ≥ C}, {M < C} of P(S) − e^ε Q(S) (remove) and
    Q(S) − e^ε P(S) (add) — each a hockey-stick difference on one adjacent pair.  Returns
    ``(log_delta, c_arg, event)`` arrays shaped like ``epsilon`` (−inf, nan, "" where no event
    gives a positive difference).
    """
    check_epsilon(epsilon)
    check_choice("direction", direction, DIRECTIONS)
    c, fam = _event_families(mean_p, mean_q, sigma, steps, c_grid, direction)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float)).ravel()
    return _best_over_events(c, fam, eps, _best_log_hockey, -np.inf, np.shape(epsilon))


def events_epsilon_lower(delta, mean_p, mean_q, sigma, steps, c_grid=None, direction="add_remove"):
    """Best threshold-event lower bound on ε(δ) (one epoch), with the event used.

    If P(S) − e^ε Q(S) > δ the mechanism is not (ε, δ)-DP, so ε(δ) ≥ log((P(S) − δ)/Q(S))
    for every event S with P(S) > δ (and the same with P, Q swapped for add); evaluated as
    log P + log1mexp(log δ − log P) − log Q.  Returns ``(epsilon, c_arg, event)`` (0, nan, "").
    """
    check_delta(delta)
    check_choice("direction", direction, DIRECTIONS)
    c, fam = _event_families(mean_p, mean_q, sigma, steps, c_grid, direction)
    ld = np.log(np.atleast_1d(np.asarray(delta, dtype=float)).ravel())
    return _best_over_events(c, fam, ld, _best_epsilon, 0.0, np.shape(delta))


# --------------------------------------------------------------------------- several epochs: optimistic PLD of M


def slice_edges(mean_p, mean_q, sigma, steps, *, discretization=DEFAULT_DISCRETIZATION, epochs=1,
                log_tail=DEFAULT_LOG_TAIL, grid_step=None):
    """Edges c_0 < … < c_K of the slices of M (the partition is any; these choices only affect tightness).

    Caps: below c_0 = σΦ⁻¹(e^{τ/T}) both laws have mass ≤ e^τ (F_μ(c) ≤ Φ(c/σ)^T for μ ≥ 0);
    above c_K = max(μ) + σΦ̄⁻¹(1 − (1 − e^τ)^{1/T}) mass ≤ e^τ; τ = ``log_tail`` − log(2E).
    Step: Δσ²/|μ_P − μ_Q| (``grid_step``), about one loss grid step Δ per slice, since
    the loss of M grows like (μ_P − μ_Q)·M/σ² in the upper tail.
    """
    mean_p, mean_q, sigma, steps = _check_pair(mean_p, mean_q, sigma, steps)
    tau = float(log_tail) - math.log(2.0 * epochs)
    lo = sigma * float(ndtri(math.exp(tau / steps)))
    tail_per_coord = -math.expm1(math.log1p(-math.exp(tau)) / steps)  # 1 − (1 − e^τ)^{1/T}
    hi = max(mean_p, mean_q) - sigma * float(ndtri(tail_per_coord))
    step = discretization * sigma**2 / abs(mean_p - mean_q) if grid_step is None else float(grid_step)
    check_positive("grid_step", step)
    n = int(math.ceil((hi - lo) / step))
    if n > 20_000_000:  # the slices grow as 1/(discretization·σ²): name what the caller set, else σ
        name = "grid_step" if grid_step is not None else (
            "sigma" if discretization == DEFAULT_DISCRETIZATION else "discretization")
        got = {"grid_step": grid_step, "sigma": sigma, "discretization": discretization}[name]
        raise ParameterError(name, "large enough for at most 20,000,000 slices", got,
                             message=f"{name} is too small for the max-statistic lower bound: {n:,} slices of its "
                                     f"PLD (at most 20,000,000); raise {name}")
    return lo + step * np.arange(n + 1, dtype=float)


def slice_log_masses(edges, mean, sigma, steps):
    """log masses of the K + 2 cells (−∞, c_0), [c_0, c_1), …, [c_K, ∞) of M under MoG(mean).

    Each cell mass is a difference of CDFs where F ≤ 1/2 and of survivals elsewhere (so the
    difference never cancels against 1), in log space.
    """
    lf = log_cdf_max(edges, mean, sigma, steps)
    ls = log_sf_max(edges, mean, sigma, steps)
    with np.errstate(invalid="ignore", divide="ignore"):
        from_cdf = logsubexp(lf[1:], lf[:-1])
        from_sf = logsubexp(ls[:-1], ls[1:])
    mid = np.where(lf[1:] <= math.log(0.5), from_cdf, from_sf)
    return np.concatenate([[lf[0]], mid, [ls[-1]]])


def _optimistic_pmf(log_mass_x, log_mass_y, discretization):
    """dp_accounting DensePLDPmf of the pair (X, Y) on cells: loss ⌊log(X_i/Y_i)/Δ⌋·Δ, X-mass; no ∞ mass."""
    keep = np.isfinite(log_mass_x)
    lx, ly = log_mass_x[keep], log_mass_y[keep]
    if not np.all(np.isfinite(ly)):
        raise ArithmeticError("a cell has mass under one law only (underflow); raise log_tail")
    loss = lx - ly
    k = np.floor((loss - _LOSS_GUARD * np.maximum(1.0, np.abs(loss))) / discretization).astype(np.int64)
    kmin = int(k.min())
    probs = np.bincount(k - kmin, weights=np.exp(lx))
    return _pmflib.DensePLDPmf(discretization, kmin, probs, 0.0, False)


def optimistic_pmfs(mean_p, mean_q, sigma, steps, *, epochs=1, discretization=DEFAULT_DISCRETIZATION,
                    direction="add_remove", log_tail=DEFAULT_LOG_TAIL, grid_step=None):
    """The E-fold composed optimistic pmfs of M, per direction: ``{"remove": pmf, "add": pmf}``.

    remove: the pair (P, Q) = (MoG(mean_p), MoG(mean_q)); add: (Q, P).  Composition by FFT
    (dp_accounting's ``self_compose`` arithmetic via :func:`dpsampling.engine.pld._self_compose`), then the
    infinity mass it adds (its tail-truncation allowance) is removed again: for an optimistic pmf the
    truncated mass is simply dropped or wrapped, which the callers account for by
    ``TAIL_MASS_TRUNCATION``.
    """
    mean_p, mean_q, sigma, steps = _check_pair(mean_p, mean_q, sigma, steps)
    epochs = _check_epochs(epochs)
    check_positive("discretization", discretization)
    check_choice("direction", direction, DIRECTIONS)
    edges = slice_edges(mean_p, mean_q, sigma, steps, discretization=discretization, epochs=epochs,
                        log_tail=log_tail, grid_step=grid_step)
    lp = slice_log_masses(edges, mean_p, sigma, steps)
    lq = slice_log_masses(edges, mean_q, sigma, steps)
    pairs = {"remove": (lp, lq), "add": (lq, lp)}
    names = ("remove", "add") if direction == "add_remove" else (direction,)
    out = {}
    for name in names:
        pmf = _optimistic_pmf(*pairs[name], float(discretization))
        if epochs > 1:
            one = pmf
            pmf = _pld._self_compose(pmf, epochs, TAIL_MASS_TRUNCATION)
            pmf = _pmflib.DensePLDPmf(pmf._discretization, pmf._lower_loss, pmf._probs, 0.0, False)  # noqa: SLF001
            # the proven bound on the 2-norm of the composed masses' rounding (numerics.fft_error), kept with them
            pmf.rounding_err2 = _pld.composition_error(one._probs, epochs, pmf._probs)  # noqa: SLF001
        out[name] = pmf
    return out


def composition_rounding(pmf, epsilon, epochs):
    """What the composed pmf's δ(ε) may exceed the composed pair's by: 0 for one epoch (no composition), else the
    folded mass ``TAIL_MASS_TRUNCATION`` plus the composition's rounding at ε
    (:func:`dpsampling.engine.pld.rounding_at`:
    ‖w_ε‖₂ times the proven 2-norm bound :func:`dpsampling.engine.pld.composition_error` of the FFT power, kept on
    the pmf by :func:`optimistic_pmfs`; Cauchy–Schwarz, the weights w_ε = (1 − e^{ε−ℓ})₊ ≤ 1).  ε = −∞ gives the
    bound at every ε (nonincreasing in ε)."""
    if epochs <= 1:
        return 0.0
    err2 = getattr(pmf, "rounding_err2", None)
    if err2 is None:
        from dpsampling.engine.errors import InternalError

        raise InternalError("a composed max-statistic pmf without its rounding bound (build it by optimistic_pmfs)")
    return TAIL_MASS_TRUNCATION + _pld.rounding_at(pmf, err2, float(epsilon))


def pld_delta_lower(epsilon, mean_p, mean_q, sigma, steps, *, epochs=1, discretization=DEFAULT_DISCRETIZATION,
                    direction="add_remove", log_tail=DEFAULT_LOG_TAIL, grid_step=None, pmfs=None):
    """Lower bound on δ(ε) for E epochs from the optimistic PLD of M (max over directions).

    δ = max_dir [δ_pmf(ε) − :func:`composition_rounding`] (≥ 0): for E > 1 the mass the FFT may have folded
    (``TAIL_MASS_TRUNCATION``) and its proven rounding bound at ε, 0 for E = 1.  Returns ``(delta, per_direction)``
    (floats or arrays like
    ``epsilon``; ``per_direction`` a dict).  Values below :data:`RELIABLE_DELTA_FLOOR` are valid
    only up to FFT round-off: callers flag them.
    """
    check_epsilon(epsilon)
    if pmfs is None:
        pmfs = optimistic_pmfs(mean_p, mean_q, sigma, steps, epochs=epochs, discretization=discretization,
                               direction=direction, log_tail=log_tail, grid_step=grid_step)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float)).ravel()
    per = {}
    for name, pmf in pmfs.items():
        # a lower bound on the pmf's δ at any ε, no e^ε formed (engine/reading.py: at ε ≥ 709.78 e^ε overflows)
        d = np.atleast_1d(np.asarray(_reading.delta_lower(pmf, eps), dtype=float))
        d = np.maximum(d - np.array([composition_rounding(pmf, e, epochs) for e in eps]), 0.0)
        per[name] = float(d[0]) if np.ndim(epsilon) == 0 else d.reshape(np.shape(epsilon))
    best = np.max(np.stack([np.atleast_1d(v) for v in per.values()]), axis=0)
    best = float(best[0]) if np.ndim(epsilon) == 0 else best.reshape(np.shape(epsilon))
    return best, per


def pld_epsilon_lower(delta, mean_p, mean_q, sigma, steps, *, epochs=1, discretization=DEFAULT_DISCRETIZATION,
                      direction="add_remove", log_tail=DEFAULT_LOG_TAIL, grid_step=None, pmfs=None):
    """Lower bound on ε(δ) for E epochs from the optimistic PLD of M (max over directions).

    ε_low = smallest ε with δ_pmf(ε) ≤ δ + err (err: :func:`composition_rounding`, first over all ε, then at the
    first reading ε₀, which bounds it on [ε₀, ∞)): for every ε < ε_low, δ(ε) ≥ δ_pmf(ε) − err > δ, so the
    mechanism is not (ε, δ)-DP.  dp_accounting solves δ_pmf(ε) = δ exactly on the
    piecewise-exponential curve of a discrete pmf.  Returns ``(epsilon, per_direction)``.
    """
    check_quantity("epsilon", delta)
    if pmfs is None:
        pmfs = optimistic_pmfs(mean_p, mean_q, sigma, steps, epochs=epochs, discretization=discretization,
                               direction=direction, log_tail=log_tail, grid_step=grid_step)
    per = {}
    for name, pmf in pmfs.items():  # two readings, as dominated_pld.epsilon: at the bound over all ε, then at ε₀'s
        eps0 = _reading.epsilon_for_delta_lower(pmf, float(delta) + composition_rounding(pmf, -math.inf, epochs))
        eps1 = _reading.epsilon_for_delta_lower(pmf, float(delta) + composition_rounding(pmf, eps0, epochs))
        per[name] = max(0.0, eps0, eps1)
    return max(per.values()), per


__all__ = [
    "DEFAULT_C_GRID", "DEFAULT_DISCRETIZATION", "RELIABLE_DELTA_FLOOR", "TAIL_MASS_TRUNCATION",
    "log_cdf_max", "log_sf_max", "threshold_log_masses", "events_log_delta_lower", "events_epsilon_lower",
    "slice_edges", "slice_log_masses", "optimistic_pmfs", "pld_delta_lower", "pld_epsilon_lower",
]


# --------------------------------------------------------------------------- results (E = 1: events; E > 1: PLD)

#: Method labels: one epoch uses Chua's threshold sets E_C (same label as dpsampling.samplers._ec_sets.EC_METHOD).
EVENTS_METHOD = "E_C sets"
PLD_METHOD = "max-statistic PLD"


def lower_bound_result(quantity, target, mean_p, mean_q, sigma, steps, *, epochs=1, c_grid=None,
                       discretization=DEFAULT_DISCRETIZATION, direction="add_remove", upper=None):
    """ε(δ) (``quantity="epsilon"``, target δ) or δ(ε) (``"delta"``, target ε) lower bound as an AccountingResult.

    E = 1: threshold events {M ≥ C}, {M < C} over ``c_grid`` (Chua ICML 2024 §4.3; method "E_C sets").
    E > 1: the optimistic PLD of M composed E times (method "max-statistic PLD"; accuracy records Δ and
    the guaranteed slack: the E-epoch loss is rounded down by < E·Δ).  ``kind="lower"``; ``upper`` is
    passed through (e.g. the deterministic value for shuffle, Chua Thm 4.1).  Flags:
    ``argmax_c_at_grid_end`` (a wider C grid might do better), ``BELOW_FLOOR_FLAG`` (PLD δ below the
    reliability floor: not presented as a bound, value set to nan).
    """
    from dpsampling.engine.result import AccountingResult

    check_quantity(quantity, target)
    epochs = _check_epochs(epochs)
    flags = []
    if epochs == 1:
        c = _check_c_grid(c_grid)
        if quantity == "epsilon":
            v, arg, ev = events_epsilon_lower(float(target), mean_p, mean_q, sigma, steps, c, direction)
        else:
            lv, arg, ev = events_log_delta_lower(float(target), mean_p, mean_q, sigma, steps, c, direction)
            v = np.exp(lv)
        arg = float(arg)
        if math.isfinite(arg) and c.size > 1 and arg in (c[0], c[-1]):
            flags.append("argmax_c_at_grid_end")
        acc = {"c_grid": f"{c[0]:g}..{c[-1]:g} ({c.size} values)", "argmax_c": arg if math.isfinite(arg) else None,
               "event": str(ev) or None, "epochs": 1}
        v = float(v)
        return AccountingResult(v, "lower", EVENTS_METHOD, acc, v, upper, tuple(flags))
    f = pld_epsilon_lower if quantity == "epsilon" else pld_delta_lower
    v, per = f(float(target), mean_p, mean_q, sigma, steps, epochs=epochs, discretization=discretization,
               direction=direction)
    acc = {"discretization": float(discretization), "epochs": epochs,
           "max_rounding_slack": epochs * float(discretization),
           **{f"value_{k}": float(x) for k, x in per.items()}}
    if quantity == "delta" and v < RELIABLE_DELTA_FLOOR:
        flags.append(BELOW_FLOOR_FLAG)
        v = math.nan
    if quantity == "epsilon" and float(target) < RELIABLE_DELTA_FLOOR:  # δ target below the PLD floor
        flags.append(BELOW_FLOOR_FLAG)
    return AccountingResult(float(v), "lower", PLD_METHOD, acc, float(v), upper, tuple(flags))


def balls_and_bins_delta_lower(epsilon, sigma, steps, epochs=1, *, c_grid=None,
                               discretization=DEFAULT_DISCRETIZATION, direction="add_remove"):
    """Lower bound on δ(ε) for balls-and-bins batching (Chua et al. AISTATS 2025), as an AccountingResult.

    Pair per epoch: remove P = MoG(1) vs Q = N(0, σ²I_T) (each record in one uniformly random batch
    of T; its dominating pair, [C]), add the swap; the max of both.  E = 1: threshold events;
    E > 1: the epochs are independent, optimistic PLD of M composed E times.  Valid because the pair
    is the exact output law on one adjacent pair and M is a post-processing (see the module docstring).
    """
    return lower_bound_result("delta", epsilon, 1.0, 0.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                              discretization=discretization, direction=direction)


def balls_and_bins_epsilon_lower(delta, sigma, steps, epochs=1, *, c_grid=None,
                                 discretization=DEFAULT_DISCRETIZATION, direction="add_remove"):
    """Lower bound on ε(δ) for balls-and-bins batching; see :func:`balls_and_bins_delta_lower`."""
    return lower_bound_result("epsilon", delta, 1.0, 0.0, sigma, steps, epochs=epochs, c_grid=c_grid,
                              discretization=discretization, direction=direction)


__all__ += ["EVENTS_METHOD", "PLD_METHOD", "lower_bound_result", "balls_and_bins_delta_lower",
            "balls_and_bins_epsilon_lower"]
