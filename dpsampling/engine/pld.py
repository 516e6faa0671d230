"""Thin adapter over dp_accounting's privacy loss distributions (PLD).

dp_accounting is the trusted engine; this module only (a) builds and caches
the T-fold composed PLD of the Poisson subsampled Gaussian, and (b) exposes one
neighbouring direction at a time.

Directions follow dp_accounting and Lebeda et al. Prop. 9 / Zhu et al. Thm 11:
``remove`` is (M(D ∪ {x}), M(D)) = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)) and
``add`` is the reverse pair.  dp_accounting 0.6 keeps the two directions in the
private attributes ``_pmf_remove`` / ``_pmf_add`` and exposes only their
maximum publicly; reading one direction therefore needs the private attribute.
``tests/engine/test_accountant.py`` checks that the max of the two equals the public value,
so a change inside dp_accounting would fail loudly rather than silently.

Speed (the one thing written by hand here): dp_accounting 0.6 builds a
pessimistic connect-the-dots PLD by evaluating the hockey-stick divergence at
every grid point ε_i = i·d, and inverts the subsampled privacy loss there in a
Python loop, one ε_i at a time (``AdditiveNoisePrivacyLoss.get_delta_for_epsilon``).
At d = 1e-4 and q ≈ 0.03 that is ~10^5 scalar calls, most of the time of a
σ calibration.  :class:`_VectorisedGaussianPrivacyLoss` overrides only that
method with the same formulas evaluated by numpy on the whole array; everything
else (grid, connect-the-dots pmf, tails, composition, δ) is dp_accounting's.
Composition likewise: dp_accounting's ``DensePLDPmf.self_compose`` spends most of
its time (70-85% of a calibration once the pmf is built fast) choosing the FFT
window: 40 separate ``scipy.special.logsumexp`` calls (Chernoff bounds at 40
orders), each paying scipy's per-call overhead.  :func:`_self_compose` makes the
same 40 calls as one batched call, then runs dp_accounting's FFT steps.
``tests/engine/test_pld.py`` checks that both the one-step and the composed pmfs are
bit-for-bit equal to dp_accounting's own (``np.array_equal``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting.pld import pld_pmf as _pmflib
from dp_accounting.pld import privacy_loss_distribution as _pldlib
from dp_accounting.pld import privacy_loss_mechanism as _plm
from scipy import fft, special

from .numerics import fft_error, norm2



def _inverse_privacy_loss(loss, pl):
    """dp_accounting 0.6's ``loss.inverse_privacy_loss`` (a ``GaussianPrivacyLoss``, add or remove) on an array.

    The same arithmetic, elementwise: the privacy loss without subsampling is
    ±``common.log_a_times_exp_b_plus_c(1/q, ±pl, 1 - 1/q)`` (a > 0, c < 0: b' + log1p(-exp(log(-c) - b'))
    with b' = ±pl + log a; b = 0 is its special case log(a + c)), ±inf where ``math.isclose(pl, ∓log(1 - q))``
    (where dp_accounting takes the inverse at ±inf), and the Gaussian's inverse of that; q = 1 skips the first step.
    Losses beyond ∓log(1 - q), where dp_accounting raises, are the caller's to exclude.
    """
    q, add = loss.sampling_prob, loss.adjacency_type == _plm.AdjacencyType.ADD
    if q == 1.0:
        unsub = np.asarray(pl, dtype=float)
    else:
        a, c = 1 / q, 1 - 1 / q
        b = (-pl if add else pl) + np.log(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            unsub = b + np.log1p(-np.exp(np.log(-c) - b))
        unsub[pl == 0] = np.log(a + c)  # dp_accounting's special case b = 0
        if add:
            unsub = -unsub
        edge = -math.log(1 - q) if add else math.log(1 - q)
        near = np.abs(pl - edge) <= 1e-9 * np.maximum(np.abs(pl), abs(edge))  # math.isclose
        unsub[near] = math.inf if add else -math.inf
    s, sd = loss.sensitivity, loss._standard_deviation  # noqa: SLF001
    x = -0.5 * s - unsub * (sd**2) / s
    return s + x if add else x


class _Normal:
    """N(0, sd²) as dp_accounting's ``GaussianPrivacyLoss`` uses it (``scipy.stats.norm(scale=sd)``: cdf, logcdf
    and ppf), by the special functions scipy's norm evaluates, with the same arithmetic.

    For scale sd > 0 and loc 0, scipy 1.x's ``rv_continuous.cdf`` standardises x as (x − 0)/sd (= x/sd, also
    for ±0, ±inf and NaN), returns 1 at +inf, 0 at −inf, NaN at NaN and ``ndtr`` of the finite values: exactly
    ``ndtr(x/sd)`` everywhere (ndtr(±inf) = 1, 0; ndtr(NaN) = NaN); ``logcdf`` likewise ``log_ndtr(x/sd)``
    (0 at +inf, −inf at −inf), ``ppf`` on (0, 1) ``ndtri(p)·sd + 0``.  A frozen ``stats.norm`` would cost a
    new distribution instance (docstring formatting included) for each of the two pmfs of every PLD built, and
    each call scipy's argument handling: most of the time of a small PLD.  tests/engine/test_pld.py compares
    these values and the PLDs built with them to dp_accounting's, bit for bit.
    """

    __slots__ = ("scale",)

    def __init__(self, scale):
        self.scale = scale

    def cdf(self, x):
        return special.ndtr(np.divide(x, self.scale))

    def logcdf(self, x):
        return special.log_ndtr(np.divide(x, self.scale))

    def ppf(self, p):
        return special.ndtri(p) * self.scale + 0.0


class _VectorisedGaussianPrivacyLoss(_plm.GaussianPrivacyLoss):
    """dp_accounting's subsampled Gaussian privacy loss; ``get_delta_for_epsilon`` vectorised.

    Same arithmetic as dp_accounting 0.6 (``_inverse_privacy_loss_add/remove``,
    ``common.log_a_times_exp_b_plus_c`` with a = 1/q > 0, c = 1 - 1/q < 0, and the
    Gaussian's inverse without subsampling), applied to arrays.  Scalars,
    q = 1 and the replace relation go to dp_accounting unchanged.  The noise distribution is
    :class:`_Normal` (scipy's norm's values without a frozen distribution per loss).
    """

    def __init__(self, standard_deviation, sensitivity=1, pessimistic_estimate=True, log_mass_truncation_bound=-50,
                 sampling_prob=1.0, adjacency_type=_plm.AdjacencyType.REMOVE):
        """dp_accounting 0.6's ``GaussianPrivacyLoss.__init__`` (same checks and attributes), the noise a
        :class:`_Normal` instead of ``stats.norm(scale=standard_deviation)``."""
        if standard_deviation <= 0:
            raise ValueError(f"Standard deviation is not a positive real number: {standard_deviation}")
        if log_mass_truncation_bound > 0:
            raise ValueError(f"Log mass truncation bound is not a non-positive real number: "
                             f"{log_mass_truncation_bound}")
        self._standard_deviation = standard_deviation
        self._gaussian_random_variable = _Normal(standard_deviation)
        self._pessimistic_estimate = pessimistic_estimate
        self._log_mass_truncation_bound = log_mass_truncation_bound
        _plm.AdditiveNoisePrivacyLoss.__init__(self, sensitivity, False, sampling_prob, adjacency_type)

    def get_delta_for_epsilon(self, epsilon):
        q = self.sampling_prob
        if isinstance(epsilon, (int, float)) or q == 1.0 or self.adjacency_type not in (
                _plm.AdjacencyType.ADD, _plm.AdjacencyType.REMOVE):
            return super().get_delta_for_epsilon(epsilon)
        eps = np.asarray(epsilon, dtype=float)
        deltas = np.zeros_like(eps)
        add = self.adjacency_type == _plm.AdjacencyType.ADD
        if add:
            inv = eps < -math.log1p(-q)
            pl = eps[inv]
        else:
            inv = eps > math.log1p(-q)
            deltas[~inv] = -np.expm1(eps[~inv])
            pl = eps[inv]
        x = _inverse_privacy_loss(self, pl)
        deltas[inv] = self.mu_upper_cdf(x) - np.exp(pl + self.mu_lower_log_cdf(x))
        return np.clip(deltas, 0, 1)


def pessimistic_pld(sigma: float, q: float, discretization: float, sensitivity: float = 1.0):
    """= ``from_gaussian_mechanism(σ, sensitivity, pessimistic, d, sampling_prob=q, use_connect_dots=True)``.

    Built with dp_accounting's own (private) connect-the-dots constructor and
    the vectorised privacy loss above; see the module docstring.
    """
    if q == 1.0:
        return _pldlib.from_gaussian_mechanism(sigma, sensitivity=sensitivity, pessimistic_estimate=True,
                                               value_discretization_interval=discretization,
                                               use_connect_dots=True)

    def pmf(adjacency):
        loss = _VectorisedGaussianPrivacyLoss(sigma, sensitivity=sensitivity, pessimistic_estimate=True,
                                              sampling_prob=q, adjacency_type=adjacency)
        return _connect_dots_pmf(loss, discretization)

    return _pldlib.PrivacyLossDistribution(pmf(_plm.AdjacencyType.REMOVE), pmf(_plm.AdjacencyType.ADD))


def _connect_dots_pmf(loss, d):
    """= dp_accounting 0.6's ``_create_pld_pmf_from_monotone_privacy_loss(loss, True, d, use_connect_dots=True)``
    for a continuous (Gaussian) privacy loss: the hockey-stick δ at every ε_i = i·d between the connect-the-dots
    bounds, turned into masses by ``create_pmf_pessimistic_connect_dots_fixed_gap``'s formulas.

    dp_accounting then stores the masses in a dict keyed by i and converts it back into a list in a Python loop
    (``create_pmf`` → ``common.dictionary_to_list``), two passes over ~10^5-10^6 entries; here a large pmf
    gets the same array directly (values copied, not recomputed).  Small pmfs (dp_accounting makes them sparse)
    and inputs dp_accounting rejects go to dp_accounting's function unchanged.
    """
    bounds = loss.connect_dots_bounds()
    if bounds.epsilon_upper is None or bounds.epsilon_lower is None:  # dp_accounting raises its own error
        return _pldlib._create_pld_pmf_from_monotone_privacy_loss(  # noqa: SLF001
            loss, pessimistic_estimate=True, value_discretization_interval=d, use_connect_dots=True)
    upper = math.ceil(bounds.epsilon_upper / d)
    lower = math.floor(bounds.epsilon_lower / d)
    deltas = np.asarray(loss.get_delta_for_epsilon(np.arange(lower, upper + 1) * d), dtype=np.float64)
    n = upper - lower + 1
    if (n <= _pmflib._MAX_PMF_SPARSE_SIZE or deltas.size != n or np.any(deltas < 0) or np.any(deltas > 1)  # noqa: SLF001
            or np.any(np.diff(deltas) > _pmflib._DELTA_DIFF_TOLERANCE)):  # noqa: SLF001
        return _pmflib.create_pmf_pessimistic_connect_dots_fixed_gap(d, lower, upper, deltas)
    deltas = np.minimum.accumulate(deltas)  # from here on dp_accounting's arithmetic, line for line
    delta_diffs = np.diff(deltas)
    probs = np.zeros_like(deltas)
    probs[0] = 1 - deltas[0] + delta_diffs[0] / math.expm1(d)
    probs[1:-1] = (delta_diffs[1:] - delta_diffs[:-1] * math.exp(d)) / math.expm1(d)
    probs[-1] = delta_diffs[-1] / math.expm1(-d)
    probs = np.maximum(0.0, probs)
    return _pmflib.DensePLDPmf(d, lower, probs, deltas[-1], True)


def _privacy_buckets_pmf(loss, discretization: float, pessimistic_estimate: bool):
    """= dp_accounting 0.6's ``_create_pld_pmf_from_monotone_privacy_loss(loss, pessimistic_estimate, d,
    use_connect_dots=False)`` (the privacy-buckets algorithm) for a subsampled ``GaussianPrivacyLoss``.

    dp_accounting walks the buckets in a Python loop, one ``inverse_privacy_loss`` call per bucket
    (x_j = inverse(d·r_j), r_j = r_0, r_0 − 1, ... until d·r_j ≤ loss(upper_x), where x_j = upper_x; it stops
    after the first x_j ≥ upper_x): ~(loss range)/d scalar calls, most of a Conjecture 12 point.  Here the same
    r_j and x_j come from :func:`_inverse_privacy_loss` on the whole array; the masses (μ_upper CDF
    differences), the tail entry and the pmf (sparse dict in dp_accounting's insertion order, or dense
    array) are built as dp_accounting builds them.  Losses where dp_accounting would raise go to it unchanged.
    """
    d = discretization
    tail = loss.privacy_loss_tail()
    lower_x, upper_x = tail.lower_x_truncation, tail.upper_x_truncation
    first = math.floor(loss.privacy_loss(lower_x) / d)
    upper_loss = loss.privacy_loss(upper_x)
    last = min(first, math.floor(upper_loss / d) - 2)  # d·last ≤ upper_loss with a margin of 2 buckets
    r = np.arange(first, last - 1, -1)
    values = d * r
    n = int(np.argmax(values <= upper_loss)) if lower_x < upper_x else -1  # first bucket mapped to upper_x
    q, add = loss.sampling_prob, loss.adjacency_type == _plm.AdjacencyType.ADD
    if q < 1.0 and n > 0:
        edge = -math.log(1 - q) if add else math.log(1 - q)
        beyond = values[:n] > edge if add else values[:n] <= edge
        if np.any(beyond & ~(np.abs(values[:n] - edge) <= 1e-9 * np.maximum(np.abs(values[:n]), abs(edge)))):
            return _pldlib._create_pld_pmf_from_monotone_privacy_loss(  # noqa: SLF001 - dp_accounting raises there
                loss, pessimistic_estimate, d, use_connect_dots=False)
    xs = np.empty(max(n + 1, 0) + 1)
    xs[0] = lower_x
    if n >= 0:
        xs[1:n + 1] = _inverse_privacy_loss(loss, values[:n])
        xs[n + 1] = upper_x
        stop = int(np.argmax(~(xs[1:] < upper_x)))  # dp_accounting's `while x < upper_x`
        xs, r = xs[:stop + 2], r[:stop + 1]
    else:
        r = r[:0]
    masses = np.diff(loss.mu_upper_cdf(xs)) if len(xs) > 1 else np.empty(0)
    keys = r + 1 if pessimistic_estimate else r  # round_fn(r + 0.5)
    round_fn = math.ceil if pessimistic_estimate else math.floor
    tail_pmf = tail.tail_probability_mass_function
    infinity_mass = tail_pmf.get(math.inf, 0)
    tail_entries = [(round_fn(loss_ / d), m) for loss_, m in tail_pmf.items() if loss_ != math.inf]
    outside = {k for k, _ in tail_entries if not (len(keys) and keys[-1] <= k <= keys[0])}
    n_keys = len(keys) + len(outside)  # bucket keys are one contiguous descending run
    if n_keys <= _pmflib._MAX_PMF_SPARSE_SIZE:  # noqa: SLF001 - dp_accounting's create_pmf threshold
        pmf = {}
        for k, m in tail_entries:
            pmf[k] = pmf.get(k, 0) + m
        for k, m in zip(keys.tolist(), masses):
            pmf[k] = pmf.get(k, 0) + m
        return _pmflib.SparsePLDPmf(pmf, d, infinity_mass, pessimistic_estimate)
    lo = min([int(keys.min())] + [k for k, _ in tail_entries])
    hi = max([int(keys.max())] + [k for k, _ in tail_entries])
    probs = np.zeros(hi - lo + 1)
    for k, m in tail_entries:  # inserted first in dp_accounting's dict; x + y = y + x exactly
        probs[k - lo] += m
    probs[keys - lo] += masses  # bucket keys are distinct
    return _pmflib.DensePLDPmf(d, lo, probs, infinity_mass, pessimistic_estimate)


def optimistic_pld(sigma: float, q: float, discretization: float, sensitivity: float = 1.0):
    """= ``from_gaussian_mechanism(σ, sensitivity, pessimistic_estimate=False, d, sampling_prob=q,
    use_connect_dots=False)`` (privacy buckets: connect-the-dots is pessimistic-only in dp_accounting 0.6),
    with the bucket loop vectorised (:func:`_privacy_buckets_pmf`)."""

    def pmf(adjacency):
        loss = _plm.GaussianPrivacyLoss(sigma, sensitivity=sensitivity, pessimistic_estimate=False,
                                        sampling_prob=q, adjacency_type=adjacency)
        return _privacy_buckets_pmf(loss, discretization, pessimistic_estimate=False)

    if q == 1.0:  # dp_accounting: one pmf for both directions
        return _pldlib.PrivacyLossDistribution(pmf(_plm.AdjacencyType.REMOVE))
    return _pldlib.PrivacyLossDistribution(pmf(_plm.AdjacencyType.REMOVE), pmf(_plm.AdjacencyType.ADD))


#: dp_accounting's default tail mass dropped when composing
TAIL_MASS_TRUNCATION = 1e-15


def _self_convolve_bounds(probs, num_times, tail_mass_truncation):
    """= ``dp_accounting.pld.common.compute_self_convolve_bounds`` (default orders): the same integers.

    dp_accounting takes, over 40 orders λ = ±1..±20 / n, the tightest Chernoff bound
    ⌈(T·log M(λ) + log(2/τ))/λ⌉ (log M(λ) = logsumexp(λ·i, b=probs)): 40 exponentials per pmf entry, most of a
    composition's time on large pmfs.  Here a screen (:func:`_screen`) computes every bound from M(λ) as dot
    products with the powers exp(i/n)^k (one exponential per entry), each known to within a margin far above
    the rounding error of either computation.  Where those intervals settle both integers (the optimum's
    interval holds no integer boundary, :func:`_settled_window`: nearly always) they are dp_accounting's
    integers; otherwise only the orders whose bound can reach the optimum are evaluated with dp_accounting's
    own arithmetic (the same ``logsumexp`` rows), so the integers are exactly dp_accounting's (checked in
    tests/engine/test_pld.py).
    """
    n = len(probs)
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / n
    screen = _screen(probs, num_times, tail_mass_truncation)
    if screen is not None:
        settled = _settled_window(*screen, n, num_times)
        if settled is not None:
            return settled
    rows = np.arange(40) if screen is None or n < _SCREEN_MIN_SIZE else _kept_orders(*screen)
    idx = np.arange(n)
    block = max(1, min(len(rows), 4_000_000 // max(n, 1)))  # ≤ 32 MB per block
    # scipy's logsumexp divides the other terms' sum by the largest term's weight b; where that weight is tiny (a
    # tail mass near the underflow) the quotient overflows and the row's log M(λ) is +inf: harmless, that order's
    # Chernoff bound is then vacuous and the window is taken from the other orders (dp_accounting's own call gives
    # the same floats and the same warning), so it is silenced here rather than shown to the user
    with np.errstate(over="ignore", divide="ignore"):
        log_mgfs = np.concatenate([special.logsumexp(np.outer(orders[rows[i:i + block]], idx), b=probs, axis=1)
                                   for i in range(0, len(rows), block)])
    return mgf_window(orders[rows], log_mgfs, n, num_times, tail_mass_truncation)


def mgf_window(orders, log_mgfs, n, num_times, tail_mass_truncation):
    """[lower, upper] support of ``num_times`` self-compositions of a pmf on 0 … n − 1 outside which at most
    ``tail_mass_truncation`` of mass lies, from its log-MGFs at ``orders`` (Chernoff's bound on each side, as
    dp_accounting's own truncation)."""
    lower, upper = 0, (n - 1) * num_times
    for order, log_mgf in zip(orders, log_mgfs):
        bound = (num_times * float(log_mgf) + math.log(2 / tail_mass_truncation)) / order
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper = min(upper, math.ceil(bound))
        else:
            lower = max(lower, math.floor(bound))
    return lower, upper


#: below this pmf size an unsettled window evaluates all 40 orders exactly (choosing among them would save little)
_SCREEN_MIN_SIZE = 2000


def _screen(probs, num_times, tail_mass_truncation):
    """(orders, bounds, margins) of the 40 Chernoff bounds of :func:`_self_convolve_bounds` from a cheap M(λ),
    or None where the screen does not apply (non-finite, negative or empty inputs, a non-finite bound).

    M(k/n) ≈ Σ p_i·e_i^k with e_i = exp(i/n) (k = ±1..±20: no overflow, e^20 < 1e9), by repeated products
    and dot products.  Both this and dp_accounting's logsumexp are sums of n positive terms with a few
    rounded factors each (the powers: ≤ 20 products and one exponential; logsumexp: the product λ·i and one
    exponential), so their log M differ by at most ~(n + 2·20)·2⁻⁵³ plus a few hundred 2⁻⁵³ for the
    exponentials; the margin allows 4(n + 100)·2⁻⁵³ in log M, i.e. T·that/|λ| in the bound, plus 1e-9 relative
    for the few operations of the bound itself; the returned margin adds one unit for the rounding to an
    integer (what :func:`_kept_orders` needs; :func:`_settled_window` takes it off again).
    """
    log_mgf = _screen_log_mgf(probs)
    return None if log_mgf is None else _screen_bounds(log_mgf, len(probs), num_times, tail_mass_truncation)


def _screen_log_mgf(probs):
    """The screen's log M(λ) at the 40 orders of :func:`_screen` (independent of T), or None where the screen does
    not apply (non-finite, negative or empty inputs)."""
    n = len(probs)
    probs = np.asarray(probs, dtype=float)
    if n == 0 or not np.all(np.isfinite(probs)) or np.any(probs < 0) or not probs.sum() > 0:
        return None
    x = np.arange(n) / n
    mgf = np.empty(40)
    for sign, first in ((1, 20), (-1, 19)):  # row 19 + k holds order k, row 20 - k order -k
        e = np.exp(sign * x)
        power = e.copy()
        for k in range(1, 21):
            mgf[first + sign * (k - 1)] = np.add.reduce(probs * power)  # not BLAS dot: threads, slower here
            power *= e
    with np.errstate(divide="ignore"):
        return np.log(mgf)


def _screen_bounds(log_mgf, n, num_times, tail_mass_truncation):
    """(orders, bounds, margins) of :func:`_screen` from its log M(λ) (:func:`_screen_log_mgf`), or None where a
    bound is not finite."""
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / n
    bound = (num_times * log_mgf + math.log(2 / tail_mass_truncation)) / orders
    if not np.all(np.isfinite(bound)):
        return None
    margin = num_times * 4 * (n + 100) * 2.0**-53 / np.abs(orders) + 1e-9 * np.abs(bound) + 1.0
    return orders, bound, margin


def _kept_orders(orders, bound, margin):
    """Indices of the orders whose bound, moved by its margin towards the optimum, can still be the optimum
    moved the other way (the others cannot be dp_accounting's min (upper) / max (lower))."""
    pos, neg = orders > 0, orders < 0
    best_upper = np.min((bound + margin)[pos])
    best_lower = np.max((bound - margin)[neg])
    keep = (pos & (bound - margin <= best_upper)) | (neg & (bound + margin >= best_lower))
    return np.arange(40)[keep]


def _settled_window(orders, bound, margin, n, num_times):
    """(lower, upper) = dp_accounting's window when the screen settles it, else None.

    dp_accounting's bound at each order lies within the margin (without its unit for the rounding) of the
    screen's, so its ⌈·⌉ (upper side) lies between ⌈bound − m⌉ and ⌈bound + m⌉, and the min over the orders
    (and the start value (n − 1)·T, as in :func:`mgf_window`) between the mins of those; likewise ⌊·⌋ and the
    max (start 0) on the lower side.  When both ends of both ranges agree, that is the window."""
    m = margin - 1.0
    pos, neg = orders > 0, orders < 0
    top = (n - 1) * num_times
    upper = [min(top, int(np.min(np.ceil(bound[pos] + s * m[pos])))) for s in (-1, 1)]
    lower = [max(0, int(np.max(np.floor(bound[neg] + s * m[neg])))) for s in (-1, 1)]
    if upper[0] != upper[1] or lower[0] != lower[1]:
        return None
    return lower[0], upper[0]


#: from this exponent on numpy's complex power calls the C library's ``cpow`` (= cexp(T·clog z)) per entry
_CPOW_MIN_EXPONENT = 100


def _power(spectrum, num_times):
    """= ``spectrum ** num_times`` as the FFT composition uses it, computed only where the result is not 0.

    For T ≥ 100 numpy evaluates z**T by the C library's ``cpow`` = exp(T·log|z|)·(cos, sin)(T·arg z), ~80 ns per
    entry: most of a composition's time at large T, although nearly every entry's result underflows to 0 (the
    transform of a pmf spanning many bins decays fast away from frequency 0: at T = 10^4 typically all but
    0.01-0.1% of the entries).  Where |z|² < exp(−1520/T), T·log|z| < −760 (to within ~1e-11), far below −745.2
    where exp underflows, so ``cpow`` returns ±0 there; those entries are set to +0 without calling it, the
    others are numpy's own power.  Only the sign of those zeros can differ, and a signed zero added to or
    multiplied into the inverse FFT's sums leaves every nonzero value as it was (only an exact 0 of the output
    could change sign): the composed pmf is dp_accounting's (tests/engine/test_pld.py compares the bits).
    Hand-written: no library skips the entries whose power is 0.
    """
    if num_times < _CPOW_MIN_EXPONENT:  # numpy multiplies by repeated squaring: cheap, left alone
        return spectrum ** num_times
    abs2 = np.square(spectrum.real)
    abs2 += np.square(spectrum.imag)
    live = np.flatnonzero(~(abs2 < math.exp(-1520.0 / num_times)))  # NaN and inf entries stay live
    out = np.zeros_like(spectrum)
    out[live] = spectrum[live] ** num_times
    return out


def _self_compose(pmf, num_times, tail_mass_truncation=TAIL_MASS_TRUNCATION):
    """= ``pmf.self_compose(num_times)`` of dp_accounting 0.6, with the window bounds batched.

    Follows ``DensePLDPmf.self_compose`` and ``common.self_convolve`` step for
    step; small sparse pmfs whose composition stays sparse go to dp_accounting.
    """
    if num_times == 1:
        return pmf
    if isinstance(pmf, _pmflib.SparsePLDPmf):
        if pmf.size**num_times <= _pmflib._MAX_PMF_SPARSE_SIZE:  # noqa: SLF001 - dp_accounting's own threshold
            return pmf.self_compose(num_times, tail_mass_truncation)
        pmf = _to_dense(pmf)
    probs = pmf._probs  # noqa: SLF001
    lower, upper = _self_convolve_bounds(probs, num_times, tail_mass_truncation)
    out_len = upper - lower + 1
    fast_len = fft.next_fast_len(max(out_len, len(probs)))
    out = np.real(fft.ifft(_power(fft.fft(probs, fast_len), num_times)))
    start = lower % fast_len  # = np.roll(out, -lower)[:out_len], without rolling the whole array
    out = np.concatenate((out[start:start + out_len], out[:max(0, out_len - (fast_len - start))]))
    inf_mass = tail_mass_truncation - math.expm1(num_times * math.log1p(-pmf._infinity_mass))  # noqa: SLF001
    return _pmflib.DensePLDPmf(pmf._discretization, pmf._lower_loss * num_times + lower,  # noqa: SLF001
                               out, inf_mass, pmf._pessimistic_estimate)  # noqa: SLF001


def composition_error(probs, total_steps, out):
    """A bound on the 2-norm of the rounding error of the masses ``out`` (its window) of :func:`_self_compose`'s
    ``total_steps``-fold composition of ``probs`` (≥ 0): one complex transform of length
    next_fast_len(max(len(out), len(probs))), raised to the power T (numpy: by squaring below T = 100, by cpow
    from there), transformed back (:func:`.numerics.fft_error`; the circular result's 2-norm is that of the
    window plus at most the mass τ it leaves out)."""
    probs = np.asarray(probs, dtype=float)
    n = fft.next_fast_len(max(len(out), len(probs)))
    return fft_error([(math.fsum(probs), norm2(probs), int(total_steps))], len(out), n,
                     out_norm2=norm2(out) + TAIL_MASS_TRUNCATION, norm=2,
                     power="cpow" if total_steps >= _CPOW_MIN_EXPONENT else "multiply")


def rounding_at(pmf, err2, epsilon):
    """What a composed pmf's δ(ε) = Σ_ℓ>ε (1 − e^{ε−ℓ})·p_ℓ may be off by when its masses p carry a rounding
    error of 2-norm ≤ ``err2``: ≤ ‖w‖₂·err2 by Cauchy–Schwarz, with the weights w = (1 − e^{ε−ℓ})_+ ∈ [0, 1)
    (so the bound is nonincreasing in ε).

    The losses (lower + i)·d increase with i, so those > ε are a suffix i ≥ k (:func:`_first_above`); only that
    suffix is formed, with the values the whole array would hold.  At ε = −∞ every weight is −expm1(−∞) = 1
    exactly, and ‖w‖₂ = √n (the dot product of n ones is the integer n, exact)."""
    epsilon, n = float(epsilon), len(pmf._probs)
    if epsilon == -math.inf:
        return math.sqrt(n) * float(err2)
    k = _first_above(pmf._lower_loss, pmf._discretization, n, epsilon)
    losses = (np.arange(k, n) + pmf._lower_loss) * pmf._discretization
    w = -np.expm1(epsilon - losses)
    return norm2(w) * float(err2)


def _first_above(lower, d, size, eps):
    """The first i in 0 … size with float((i + lower)·d) > ε (size if none): from ε/d, checked with the same
    float expression at its neighbours (the losses increase with i)."""
    loss = lambda i: float(i + lower) * d  # one entry of (np.arange(size) + lower) * d

    k = min(size, max(0, math.floor(eps / d) - lower)) if math.isfinite(eps / d) else (0 if eps < 0 else size)
    while k > 0 and loss(k - 1) > eps:
        k -= 1
    while k < size and not loss(k) > eps:
        k += 1
    return k


def _sparse_result_fits(size: int, steps: int) -> bool:
    """``size**steps <= _MAX_PMF_SPARSE_SIZE`` (dp_accounting's test whether a composed sparse pmf stays sparse),
    without the big integer: size**steps has ~steps·log2(size) bits (~85 million at 363 entries, T = 1e7:
    seconds of integer arithmetic for a yes/no).  size ≥ 2 and steps ≥ 10 give ≥ 1024 > 1000, so only
    steps < 10 needs the power, which is then small."""
    return size <= 1 or (steps < 10 and size**steps <= _pmflib._MAX_PMF_SPARSE_SIZE)  # noqa: SLF001


def _to_dense(pmf):
    """= ``pmf.to_dense_pmf()`` of a dp_accounting ``SparsePLDPmf``: the same offset, probabilities and masses.

    dp_accounting lists the masses in a Python loop over every loss index from the smallest to the largest key
    (``common.dictionary_to_list``: the mass, or 0 where a key is missing) and makes an array of the list; here
    the same masses are placed into a zero array by numpy.  Where that array would not be float64 (no float
    mass at all: numpy would make integers of the list) or the pmf is empty, dp_accounting's conversion runs.
    """
    loss_probs = pmf._loss_probs
    masses = np.array(list(loss_probs.values()))
    if masses.dtype != np.float64 or masses.size == 0:
        return pmf.to_dense_pmf()
    keys = np.fromiter(loss_probs.keys(), dtype=np.int64, count=len(loss_probs))
    lowest = int(keys.min())
    probs = np.zeros(int(keys.max()) - lowest + 1)
    probs[keys - lowest] = masses
    return _pmflib.DensePLDPmf(pmf._discretization, lowest, probs, pmf._infinity_mass,
                               pmf._pessimistic_estimate)


def _dense_unless_sparse_result(pmf, steps: int):
    """The pmf :func:`_self_compose` would compose: a sparse one too large to stay sparse made dense here
    (``to_dense_pmf``, as there), so that its ``size**steps`` test is never reached with a large T."""
    if isinstance(pmf, _pmflib.SparsePLDPmf) and not _sparse_result_fits(pmf.size, steps):
        return _to_dense(pmf)
    return pmf


def self_compose(pld, total_steps: int):
    """= ``pld.self_compose(total_steps)`` (dp_accounting), with :func:`_self_compose` per direction."""
    if total_steps == 1:
        return pld
    total_steps = int(total_steps)
    remove = _self_compose(_dense_unless_sparse_result(pld._pmf_remove, total_steps), total_steps)  # noqa: SLF001 - see module docstring
    if pld._symmetric:  # noqa: SLF001 - e.g. q = 1: dp_accounting keeps one pmf for both directions
        return _pldlib.PrivacyLossDistribution(remove)
    return _pldlib.PrivacyLossDistribution(
        remove, _self_compose(_dense_unless_sparse_result(pld._pmf_add, total_steps), total_steps))  # noqa: SLF001


@lru_cache(maxsize=8)
def one_step(sigma: float, q: float, pessimistic: bool, discretization: float, mechanism: str = "gaussian",
             sensitivity: float = 1.0):
    """The one-step dp_accounting PLD that :func:`composed` composes, kept so that compositions of the same step
    to several T (and :func:`_upper_pmfs`) build it once (treat as immutable)."""
    if mechanism == "gaussian":
        build = pessimistic_pld if pessimistic else optimistic_pld  # vectorised, bit-for-bit dp_accounting
        return build(float(sigma), float(q), float(discretization), sensitivity=float(sensitivity))
    # Laplace: dp_accounting's builder (connect-the-dots exists only for pessimistic estimates)
    return _pldlib.from_laplace_mechanism(float(sigma), sensitivity=float(sensitivity),
                                          pessimistic_estimate=bool(pessimistic),
                                          value_discretization_interval=float(discretization),
                                          sampling_prob=float(q), use_connect_dots=bool(pessimistic))


@lru_cache(maxsize=32)
def composed(sigma: float, q: float, total_steps: int, pessimistic: bool, discretization: float,
             mechanism: str = "gaussian", sensitivity: float = 1.0):
    """dp_accounting PLD of ``total_steps`` compositions of the q-subsampled Gaussian (or Laplace with scale
    ``sigma``) of the given sensitivity: the one composed-PLD cache of the package (treat as immutable)."""
    pld = one_step(float(sigma), float(q), bool(pessimistic), float(discretization), str(mechanism),
                   float(sensitivity))
    return self_compose(pld, int(total_steps))


def direction_pmfs(pld, direction: str):
    """The dp_accounting pmfs that make up ``direction`` (max is taken over them)."""
    pmfs = {"remove": [pld._pmf_remove], "add": [pld._pmf_add]}  # noqa: SLF001 - see module docstring
    pmfs["add_remove"] = pmfs["remove"] + pmfs["add"]
    return pmfs[direction]


def delta(epsilon, sigma, q, total_steps, direction, pessimistic, discretization):
    """δ(ε) from the composed PLD; ``epsilon`` may be an array."""
    pld = composed(float(sigma), float(q), int(total_steps), bool(pessimistic), float(discretization))
    vals = [np.asarray(delta_for_epsilon(p, epsilon), dtype=float) for p in direction_pmfs(pld, direction)]
    return np.maximum.reduce(vals)


def delta_for_epsilon(pmf, epsilon):
    """= ``pmf.get_delta_for_epsilon(ε)`` of dp_accounting 0.6, the same float, for a dense pmf and a scalar ε.

    dp_accounting forms every loss (i + lower)·d, masks those > ε and takes np.dot(−expm1(ε − loss), p) over
    them.  The losses increase with i (exact integers times d > 0, rounded monotonically), so the mask is a
    suffix i ≥ k: here k is found from ε/d and checked with the same float expression at its neighbours, and
    only the suffix's losses are formed (the same values) and copied into fresh arrays as the mask's indexing
    does, for the same dot.  On a composed pmf at small δ the suffix is a small part.  Sparse pmfs and
    arrays of ε go to dp_accounting unchanged.
    """
    if not isinstance(pmf, _pmflib.DensePLDPmf) or not isinstance(epsilon, (int, float)):
        return pmf.get_delta_for_epsilon(epsilon)
    lower, d, probs = pmf._lower_loss, pmf._discretization, pmf._probs
    size = len(probs)
    k = _first_above(lower, d, size, epsilon)
    losses = (np.arange(k, size) + lower) * d
    return pmf._infinity_mass + np.dot(-np.expm1(epsilon - losses), probs[k:].copy())


def delta_for_epsilons(pmf, epsilon):
    """= ``pmf.get_delta_for_epsilon(epsilon)`` of dp_accounting 0.6 for an array of ε sorted ascending, the same floats.

    Hand-written because dp_accounting reads an array in a Python loop, one loss per step (with an
    ``np.isposinf`` each): ~50 ms for one ε on a 15 000-entry pmf.  Its loop keeps two running sums from the
    largest loss down, mu_upper = inf_mass + Σ_{ℓ>ε} p_ℓ and mu_lower = Σ_{ℓ>ε} p_ℓ·e^{−ℓ}, and reads
    δ(ε) = mu_upper − e^ε·mu_lower when the next loss is ≤ ε (δ(+∞) = inf_mass); here the same sums are formed
    by ``np.cumsum`` (a sequential sum: the same additions in the same order) over the losses above the smallest
    ε, and read at each ε's count of losses above it.  Sparse pmfs, scalars and arrays dp_accounting refuses
    (not sorted by its test, np.diff ≥ 0, which a repeated ±∞ fails) go to dp_accounting unchanged.
    """
    e = np.asarray(epsilon, dtype=float)
    with np.errstate(invalid="ignore"):  # ∞ − ∞ in a repeated ±∞: nan, not sorted
        sorted_ = e.ndim == 1 and e.size and not np.isnan(e).any() and np.all(np.diff(e) >= 0)
    if not isinstance(pmf, _pmflib.DensePLDPmf) or not sorted_:
        return pmf.get_delta_for_epsilon(epsilon)
    probs = pmf._probs
    losses = (np.arange(probs.size) + pmf._lower_loss) * pmf._discretization
    start = int(np.searchsorted(losses, e[0], side="right"))  # losses > the smallest ε: the only ones summed
    tail_l, tail_p = losses[start:][::-1], probs[start:][::-1]
    upper = np.cumsum(np.concatenate([[pmf._infinity_mass], tail_p]))
    lower = np.cumsum(np.concatenate([[0.0], tail_p * np.exp(-tail_l)]))
    above = losses.size - np.searchsorted(losses, e, side="right")  # how many losses are > ε
    with np.errstate(over="ignore", invalid="ignore"):  # e^ε = inf times 0 is nan in dp_accounting's loop too
        out = upper[above] - np.exp(e) * lower[above]
    out[np.isposinf(e)] = pmf._infinity_mass
    return out


def epsilon(delta, sigma, q, total_steps, direction, pessimistic, discretization):
    """ε(δ) from the composed PLD (inf when δ is below the infinity mass)."""
    pld = composed(float(sigma), float(q), int(total_steps), bool(pessimistic), float(discretization))
    return pld_epsilon(pld, delta, direction)


def pld_epsilon(pld, delta, direction="add_remove"):
    """ε(δ) of a dp_accounting PLD (max over ``direction``'s pmfs), read off by :func:`epsilon_for_delta`."""
    return max(float(epsilon_for_delta(p, float(delta))) for p in direction_pmfs(pld, direction))


@lru_cache(maxsize=32)
def _upper_pmfs(sigma, q, total_steps, direction, discretization):
    """((composed pessimistic pmf, err2, flat), …) over ``direction``: the δ error the pmf may carry at ε is at
    most ``rounding_at(pmf, err2, ε) + flat`` (cached with the composition, treat as immutable).

    The composition's rounding (:func:`composition_error`, :func:`rounding_at`) where the FFT composed it; a
    composition that stayed sparse (``size**T ≤ 1000`` products, T < 10) is dp_accounting's direct one, whose
    pairwise sums of nonnegative products are off by at most (terms + T)·u relative each, ≤ 1.01·(T − 1)·
    (size**T + T)·u in all (``flat``); one step has no composition.  The tail mass the window leaves out is
    already in the pmf's +∞ mass (dp_accounting's pessimistic composition), so it needs nothing more."""
    one = one_step(float(sigma), float(q), True, float(discretization), "gaussian", 1.0)
    comp = composed(float(sigma), float(q), int(total_steps), True, float(discretization))
    out = []
    for one_pmf, pmf in zip(direction_pmfs(one, direction), direction_pmfs(comp, direction)):
        if total_steps == 1:
            out.append((pmf, 0.0, 0.0))
        elif isinstance(pmf, _pmflib.DensePLDPmf):
            dense = _dense_unless_sparse_result(one_pmf, int(total_steps))
            dense = dense if isinstance(dense, _pmflib.DensePLDPmf) else dense.to_dense_pmf()
            out.append((pmf, composition_error(dense._probs, int(total_steps), pmf._probs), 0.0))  # noqa: SLF001
        else:
            size, t = one_pmf.size, int(total_steps)
            out.append((pmf, 0.0, 1.01 * (t - 1) * (size**t + t) * np.finfo(float).eps / 2))
    return tuple(out)


def _upper_error(pmf, err2, flat, eps):
    return (rounding_at(pmf, err2, eps) if err2 else 0.0) + flat


def certified_delta(epsilon, sigma, q, total_steps, direction, discretization):
    """An upper bound on δ(ε) of the Poisson-subsampled Gaussian after ``total_steps`` compositions: the
    pessimistic (connect-the-dots) pmf's δ(ε) plus a bound on its composition's rounding, max over
    ``direction`` (the pessimistic pair dominates the true one; the rounding bound covers the arithmetic)."""
    return max(float(delta_for_epsilon(pmf, float(epsilon))) + _upper_error(pmf, err2, flat, float(epsilon))
               for pmf, err2, flat in _upper_pmfs(float(sigma), float(q), int(total_steps), direction,
                                                  float(discretization)))


def certified_epsilon(delta, sigma, q, total_steps, direction, discretization):
    """An upper bound on ε(δ) after ``total_steps`` compositions: per direction ε₁ = ε̂(δ − E(ε₀)) with
    ε₀ = ε̂(δ) the pessimistic pmf's reading and E the rounding bound of :func:`certified_delta`; ε₁ ≥ ε₀ and E
    is nonincreasing, so δ̂(ε₁) + E(ε₁) ≤ δ: the dominating pair's δ(ε₁) ≤ δ.  Max over ``direction``.  ε₁ is read
    for an upper bound by construction (:func:`.reading.epsilon_for_delta_upper`: a proven δ_pmf(ε₁) ≤ δ − E(ε₀),
    the float walk only says where to look), and the larger of ε₀ and ε₁ is kept (δ_pmf and E are nonincreasing,
    so either way δ_pmf + E ≤ δ there)."""
    from .reading import epsilon_for_delta_upper

    out = []
    for pmf, err2, flat in _upper_pmfs(float(sigma), float(q), int(total_steps), direction, float(discretization)):
        reader = EpsilonReader(pmf)
        eps0 = float(reader(float(delta)))
        target = float(delta) - _upper_error(pmf, err2, flat, eps0) if math.isfinite(eps0) else 0.0
        out.append(max(eps0, epsilon_for_delta_upper(pmf, target, reader.read)) if target > 0 else math.inf)
    return max(out)


#: first block of :func:`epsilon_for_delta` (doubled at every block, up to :data:`_EPS_BLOCK_MAX`)
_EPS_BLOCK, _EPS_BLOCK_MAX = 4096, 1 << 18


def epsilon_for_delta(pmf, delta: float):
    """= ``pmf.get_epsilon_for_delta(δ)`` of dp_accounting 0.6, the same float, for a dense pmf.

    dp_accounting walks the pmf from its largest loss down in a Python loop (``pld_pmf._get_epsilon_for_delta``:
    per entry a ``math.log`` test, two additions and a ``math.exp``) until ε is passed: ~(largest loss − ε)/d
    iterations, up to ~10^6 on a composed PLD at d = 1e-5, 20-30% of an ε(δ) query.  Here the same running
    sums come from ``np.cumsum`` (sequential, so the same additions in the same order), in blocks from the top
    until the stop is found (:class:`EpsilonReader`); the terms use ``math.exp`` itself; the stop test is screened
    with ``np.log`` and decided with ``math.log`` wherever the two could disagree.  One difference: the losses are
    the grid's own, (lower + i)·d (an integer times d, one rounding each), where dp_accounting subtracts d
    repeatedly from the largest (``itertools.count``), which drifts (≈ 3.8e-9 at a loss of 280 after 10⁶ steps);
    so the float is dp_accounting's to that drift.  Sparse pmfs, losses where ``math.exp`` would overflow and
    degenerate ends go to dp_accounting unchanged.  A lower end is not read here: :mod:`.reading` reads it with a
    proven guard.
    """
    return EpsilonReader(pmf)(delta)


class EpsilonReader:
    """:func:`epsilon_for_delta` of one pmf at any number of δ, each reading that function's float: the walk's
    blocks (losses and running sums from the largest loss down, computed on first use, each block continuing the
    last) are kept, so a second reading of the same pmf (a certified reading takes two: at δ and at δ less a
    rounding bound) walks only what the first did not.  The sums are sequential, so keeping them changes no bit."""

    def __init__(self, pmf):
        self.pmf = pmf
        self.blocks = []  # (losses, ups, lows) per block; ups / lows: the running masses before and after each entry
        self.dense = isinstance(pmf, _pmflib.DensePLDPmf)
        if self.dense:
            d, n = pmf._discretization, len(pmf._probs)  # noqa: SLF001 - see the module docstring
            self.probs = np.flip(pmf._probs)  # noqa: SLF001 - largest loss first, as dp_accounting iterates
            # next block: (start, masses before it (dp_accounting's mass_upper / mass_lower), size); entry j (from the
            # top) has the loss (lower + n − 1 − j)·d: an integer times d, no drift
            self._next = (0, pmf._infinity_mass, 0, _EPS_BLOCK)  # noqa: SLF001
        self.below_700 = False  # a block's losses went below −700: math.exp(−loss) could overflow there

    def _block(self, i):
        """The i-th block of the walk (computed on first use), or None past the pmf's end or below −700."""
        while len(self.blocks) <= i:
            start, upper, lower, block = self._next
            n, d = len(self.probs), self.pmf._discretization
            if start >= n or self.below_700:
                return None
            stop = min(n, start + block)
            losses = (self.pmf._lower_loss + n - 1 - np.arange(start, stop)) * d  # noqa: SLF001 - the grid's own
            if losses[-1] < -700:  # dp_accounting raises only if it gets there: it reads this pmf itself
                self.below_700 = True
                return None
            p = self.probs[start:stop]
            terms = np.fromiter(map(math.exp, (-losses).tolist()), dtype=float, count=len(losses)) * p
            ups = np.cumsum(np.concatenate(([upper], p)))  # ups[k]: before entry k of the block, ups[k + 1]: after
            lows = np.cumsum(np.concatenate(([lower], terms)))
            self.blocks.append((losses, ups, lows))
            self._next = (stop, ups[-1], lows[-1], min(2 * block, _EPS_BLOCK_MAX))
        return self.blocks[i]

    def __call__(self, delta):
        pmf = self.pmf
        if not self.dense:
            return pmf.get_epsilon_for_delta(delta)
        if pmf._infinity_mass > delta:  # noqa: SLF001
            return math.inf
        i, upper, lower = 0, pmf._infinity_mass, 0
        while (blk := self._block(i)) is not None:
            losses, ups, lows = blk
            u_before, l_before = ups[:-1], lows[:-1]
            valid = (u_before > delta) & (l_before > 0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a quotient past 1.8e308: +∞, as
                logs = np.log((u_before - delta) / l_before)  # in dp_accounting's walk (a hint, or under a proven end)
                brk = valid & (logs >= losses)
                close = valid & (np.abs(logs - losses) <= 1e-12 * np.maximum(np.abs(logs), np.abs(losses)) + 1e-300)
                for k in np.flatnonzero(close):  # np.log and math.log may differ in the last bits: math.log decides
                    brk[k] = math.log((u_before[k] - delta) / l_before[k]) >= losses[k]
            ret = (ups[1:] >= delta) & (lows[1:] == 0)  # checked after adding entry k, so after brk[k]
            kb = int(np.argmax(brk)) if brk.any() else len(losses)
            kr = int(np.argmax(ret)) if ret.any() else len(losses)
            if kr < kb:
                return max(0, losses[kr])
            if kb < len(losses):
                upper, lower = ups[kb], lows[kb]
                break
            upper, lower, i = ups[-1], lows[-1], i + 1
        else:
            if self.below_700:
                return pmf.get_epsilon_for_delta(delta)
        if upper <= lower + delta:
            return 0
        if not lower > 0:  # degenerate (no finite loss mass): dp_accounting's own arithmetic and errors
            return pmf.get_epsilon_for_delta(delta)
        return math.log((upper - delta) / lower)

    def read(self, pmf, delta):
        """``read(pmf, δ)`` for :func:`.reading.epsilon_for_delta_lower`: this reader's pmf from the kept walk, any
        other (a shifted copy) by :func:`epsilon_for_delta` afresh."""
        return self(delta) if pmf is self.pmf else epsilon_for_delta(pmf, delta)
