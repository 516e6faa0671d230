"""dpsampling.engine.pld builds dp_accounting's pessimistic PLD with a vectorised privacy loss: it must be
dp_accounting's PLD, bit for bit (see the module docstring of dpsampling.engine.pld)."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib
from dp_accounting.pld import privacy_loss_mechanism as plm

from dpsampling.engine import pld
from dpsampling.engine.numerics import norm2


def _entries(pmf):
    """(type, lowest loss index, probabilities, infinity mass) of a dense or sparse dp_accounting pmf."""
    if hasattr(pmf, "_probs"):
        return type(pmf), pmf._lower_loss, np.asarray(pmf._probs), pmf._infinity_mass
    keys = sorted(pmf._loss_probs)
    return type(pmf), keys[0], np.array([pmf._loss_probs[k] for k in keys]), pmf._infinity_mass


# (σ, q, d): small / moderate / large q, q near 1, fine and coarse grids, sparse (few-entry) and dense pmfs
CASES = [(0.7, 0.03, 1e-4), (2.0, 1e-3, 1e-4), (5.0, 0.5, 1e-3), (0.5, 0.9999, 1e-3), (30.0, 1e-3, 1e-5),
         (1.0, 0.2, 1e-2), (0.3, 1e-3, 1e-4), (1.2, 0.01, 1e-5)]


@pytest.mark.parametrize("sigma,q,d,sens", [(*c, 1.0) for c in CASES] + [(1.5, 0.3, 1e-4, 2.0), (0.5, 0.01, 1e-3, 2.0)])
def test_vectorised_builder_is_dp_accountings_pld_bit_for_bit(sigma, q, d, sens):
    ref = pldlib.from_gaussian_mechanism(sigma, sensitivity=sens, pessimistic_estimate=True,
                                         value_discretization_interval=d, sampling_prob=q, use_connect_dots=True)
    ours = pld.pessimistic_pld(sigma, q, d, sensitivity=sens)
    for attr in ("_pmf_remove", "_pmf_add"):
        t_r, lo_r, p_r, inf_r = _entries(getattr(ref, attr))
        t_o, lo_o, p_o, inf_o = _entries(getattr(ours, attr))
        assert (t_o, lo_o, inf_o) == (t_r, lo_r, inf_r)
        assert np.array_equal(p_o, p_r)


@pytest.mark.parametrize("adjacency", [plm.AdjacencyType.ADD, plm.AdjacencyType.REMOVE])
def test_vectorised_hockey_stick_equals_scalar_loop_including_edges(adjacency):
    """Grid through ε = 0 (dp_accounting's b = 0 branch) and the ±log(1-q) edges (its isclose branch)."""
    q, sigma = 0.03, 0.8
    edge = -np.log1p(-q) if adjacency == plm.AdjacencyType.ADD else np.log1p(-q)
    eps = np.concatenate([np.linspace(-0.2, 3.0, 2001), [0.0, -0.0, edge, edge * (1 + 1e-12), edge * (1 - 1e-12)]])
    ref = plm.GaussianPrivacyLoss(sigma, sampling_prob=q, adjacency_type=adjacency)
    ours = pld._VectorisedGaussianPrivacyLoss(sigma, sampling_prob=q, adjacency_type=adjacency)
    assert np.array_equal(ours.get_delta_for_epsilon(eps), ref.get_delta_for_epsilon(eps))
    assert ours.get_delta_for_epsilon(0.5) == ref.get_delta_for_epsilon(0.5)  # scalars go to dp_accounting


@pytest.mark.parametrize("sd", [0.3, 1.0, 3.659119505097447, 250.0])
def test_normal_is_scipys_frozen_norm_bit_for_bit(sd):
    """pld._Normal (the noise of the vectorised loss) = scipy.stats.norm(scale=sd): cdf, logcdf on arrays and
    scalars, ±0, ±inf, NaN and the far tails, and ppf at dp_accounting's truncation mass, with the same types."""
    from scipy import stats

    ref, ours = stats.norm(scale=sd), pld._Normal(sd)
    x = np.concatenate([np.linspace(-60.0, 60.0, 4001) * sd, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e300]])
    for f in ("cdf", "logcdf"):
        r, o = getattr(ref, f)(x), getattr(ours, f)(x)
        assert np.array_equal(r, o, equal_nan=True) and type(r) is type(o)
        for v in (0.25, -7.5, 0.0, -0.0, np.float64(3.0)):
            r, o = getattr(ref, f)(v), getattr(ours, f)(v)
            assert r == o and type(r) is type(o)
    for p in (0.5 * np.exp(-50), 1e-3, 0.5, 0.9):
        r, o = ref.ppf(p), ours.ppf(p)
        assert r == o and type(r) is type(o) and np.signbit(r) == np.signbit(o)


def test_composed_delta_equals_dp_accounting():
    ref = pldlib.from_gaussian_mechanism(0.9, sensitivity=1.0, value_discretization_interval=1e-3,
                                         sampling_prob=0.02).self_compose(100)
    eps = np.array([0.0, 0.3, 1.0, 2.5])
    for direction, attr in (("remove", "_pmf_remove"), ("add", "_pmf_add")):
        ours = pld.delta(eps, 0.9, 0.02, 100, direction, True, 1e-3)
        assert np.array_equal(ours, getattr(ref, attr).get_delta_for_epsilon(eps))


def _distinct_direction_pmfs(composed):
    """Both directions' pmfs of a composed PLD, each object once: a symmetric PLD (q = 1) holds one pmf for both,
    which the tests check once rather than twice over (the same object, the same results)."""
    pmfs = pld.direction_pmfs(composed, "add_remove")
    distinct = list({id(pmf): pmf for pmf in pmfs}.values())
    assert len(distinct) == 2 or (composed._symmetric and pmfs[0] is pmfs[1])
    return distinct


@pytest.mark.parametrize("sigma,q,d,steps", [(0.9, 0.02, 1e-3, 100), (2.0, 1e-3, 1e-4, 1000), (0.7, 0.03, 1e-3, 10),
                                             (5.0, 0.5, 1e-3, 1000), (1.0, 1.0, 1e-3, 50)])
def test_delta_for_epsilon_is_dp_accountings_bit_for_bit(sigma, q, d, steps):
    """pld.delta_for_epsilon (the suffix of losses > ε only) = dp_accounting's get_delta_for_epsilon: at ε on
    the loss grid itself and next to it, below and above the support, ±0, ±inf and NaN."""
    comp = pld.composed(sigma, q, steps, True, d)
    for pmf in _distinct_direction_pmfs(comp):
        losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
        grid = losses[:: max(1, len(losses) // 12)]
        eps = np.concatenate([grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf), grid + d / 3,
                              [losses[0] - 1.0, losses[-1] + 1.0, 0.0, -0.0, 0.5, 1.0, 3.0]])
        for e in eps.tolist() + [np.inf, -np.inf]:
            assert pld.delta_for_epsilon(pmf, e) == pmf.get_delta_for_epsilon(e)
        assert np.isnan(pld.delta_for_epsilon(pmf, np.nan)) == np.isnan(pmf.get_delta_for_epsilon(np.nan))
        eps = np.sort(eps)  # arrays: dp_accounting's vectorised path, sorted ε
        assert np.array_equal(pld.delta_for_epsilon(pmf, eps), pmf.get_delta_for_epsilon(eps))


def _walk(pmf, delta):
    """dp_accounting 0.6's ε(δ) walk (``pld_pmf._get_epsilon_for_delta``, its own function) over the grid's own losses
    (lower + i)·d (dp_accounting's ``get_epsilon_for_delta`` feeds it repeated subtractions of d, which drift); pmfs
    with losses below −700 (pld hands those to dp_accounting) and sparse pmfs: dp_accounting's reading itself."""
    from dp_accounting.pld import pld_pmf

    if not isinstance(pmf, pld_pmf.DensePLDPmf) or pmf._lower_loss * pmf._discretization < -700:
        return pmf.get_epsilon_for_delta(delta)
    n, d, lo = len(pmf._probs), pmf._discretization, pmf._lower_loss
    losses = ((lo + n - 1 - j) * d for j in range(n))
    return pld_pmf._get_epsilon_for_delta(pmf._infinity_mass, losses, np.flip(pmf._probs), delta)


@pytest.mark.parametrize("sigma,q,d,steps,pessimistic", [(0.9, 0.02, 1e-3, 100, True), (2.0, 1e-3, 1e-4, 1000, True),
                                                         (0.7, 0.03, 1e-3, 10, False), (1.0, 1.0, 1e-3, 50, True)])
def test_delta_for_epsilons_is_dp_accountings_vectorised_reading_bit_for_bit(sigma, q, d, steps, pessimistic):
    """pld.delta_for_epsilons (cumulative sums from the largest loss down) = dp_accounting's looped reading of a
    sorted array: ε on the loss grid and next to it, below and above the support, repeated, ±0, ±inf, one ε alone;
    pessimistic pmfs carry mass at +∞, optimistic ones none."""
    comp = pld.composed(sigma, q, steps, pessimistic, d)
    for pmf in _distinct_direction_pmfs(comp):
        losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
        grid = losses[:: max(1, len(losses) // 40)]
        eps = np.sort(np.concatenate([grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf), grid + d / 3,
                                      [losses[0] - 1.0, losses[-1] + 1.0, 0.0, -0.0, 0.5, 0.5, 1.0, 3.0,
                                       -np.inf, np.inf]]))
        for e in (eps, eps[eps >= 0.25], eps[-3:], eps[5:6], np.array([0.75])):
            ours, theirs = pld.delta_for_epsilons(pmf, e), np.asarray(pmf.get_delta_for_epsilon(e))
            assert np.array_equal(ours, theirs, equal_nan=True), np.flatnonzero(ours != theirs)[:5]
        for bad in (eps[::-1], np.array([1.0, np.inf, np.inf])):  # dp_accounting's own refusal, unchanged
            with pytest.raises(ValueError, match="sorted"):
                pld.delta_for_epsilons(pmf, bad)


def _rounding_at_whole_array(pmf, err2, eps):
    """rounding_at as first written: every loss formed, masked to those > ε (its 2-norm numerics.norm2, no BLAS, as
    rounding_at's)."""
    losses = (pmf._lower_loss + np.arange(len(pmf._probs))) * pmf._discretization
    w = -np.expm1(float(eps) - losses[losses > eps])
    return norm2(w) * float(err2)


@pytest.mark.parametrize("sigma,q,d,steps", [(0.9, 0.02, 1e-3, 100), (2.0, 1e-3, 1e-4, 1000), (1.0, 1.0, 1e-3, 50)])
def test_rounding_at_is_the_masked_whole_array_bound_bit_for_bit(sigma, q, d, steps):
    """pld.rounding_at (the suffix of losses > ε only; √n at ε = −∞) = the bound over the masked array, the same
    float: at ε on the grid and next to it, beyond both ends, ±0, ±inf and NaN."""
    comp = pld.composed(sigma, q, steps, True, d)
    for pmf in _distinct_direction_pmfs(comp):
        losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
        grid = losses[:: max(1, len(losses) // 12)]
        eps = np.concatenate([grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf), grid + d / 3,
                              [losses[0] - 1.0, losses[-1] + 1.0, 0.0, -0.0, 0.5, 3.0]])
        for e in eps.tolist() + [np.inf, -np.inf, np.nan]:
            for err2 in (1e-13, 0.7):
                assert pld.rounding_at(pmf, err2, e) == _rounding_at_whole_array(pmf, err2, e), e
        mid = float(losses[len(losses) // 2])  # losses lie above: a positive bound, below the one over every bin
        assert pld.rounding_at(pmf, 1.0, -np.inf) > pld.rounding_at(pmf, 1.0, mid) > 0


def _assert_same_pld(ours, ref):
    """Bit for bit: symmetry, and per direction the pmf type, offset, infinity mass and every probability."""
    assert ours._symmetric == ref._symmetric
    for attr in ("_pmf_remove", "_pmf_add"):
        t_r, lo_r, p_r, inf_r = _entries(getattr(ref, attr))
        t_o, lo_o, p_o, inf_o = _entries(getattr(ours, attr))
        assert (t_o, lo_o, inf_o) == (t_r, lo_r, inf_r)
        assert np.array_equal(p_o, p_r)


@pytest.mark.parametrize("sigma,q,d,steps", [(0.9, 0.02, 1e-3, 100), (2.0, 1e-3, 1e-4, 1000), (0.7, 0.03, 1e-4, 10),
                                             (5.0, 0.5, 1e-3, 1000), (30.0, 1e-3, 1e-2, 3), (1.0, 1.0, 1e-3, 50)])
def test_composition_is_dp_accountings_self_compose_bit_for_bit(sigma, q, d, steps):
    one = pldlib.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=d, sampling_prob=q)
    ref = one.self_compose(steps)
    ours = pld.composed(sigma, q, steps, True, d)
    _assert_same_pld(ours, ref)


def _memoised_reference_bounds(monkeypatch):
    """dp_accounting's own ``common.compute_self_convolve_bounds``, unchanged, except that its log-MGFs (one
    ``logsumexp`` per order over the pmf, independent of T) are computed once per pmf and order and reused for
    the other T: the same call on the same arrays, so the same floats and the same integers."""
    from dp_accounting.pld import common
    from scipy import special

    memo = {}

    def logsumexp(a, b=None, **kw):
        if b is None or kw or np.ndim(a) != 1 or len(a) < 2:
            return special.logsumexp(a, b=b, **kw)
        key = (id(b), len(a), float(a[1]))  # a = arange(n)·order; b kept alive below, so its id is not reused
        if key not in memo:
            memo[key] = (b, special.logsumexp(a, b=b))
        return memo[key][1]

    proxy = type("special", (), {"logsumexp": staticmethod(logsumexp),
                                 "__getattr__": lambda self, name: getattr(special, name)})()
    monkeypatch.setattr(common, "special", proxy)
    return common.compute_self_convolve_bounds


@pytest.mark.parametrize("sigma,q,d", [(0.97, 1e-3, 1e-5), (5.0, 0.5, 1e-4), (0.7, 0.03, 1e-4), (1.2, 0.01, 1e-5)])
def test_screened_window_bounds_are_dp_accountings_integers(sigma, q, d, monkeypatch):
    """The FFT window of a composition: the screen (M(λ) by powers of exp(i/n)) keeps the orders that can give
    the optimum, which are then evaluated as dp_accounting does, so the bounds are its integers, for T from 2
    to 10^5 and both directions; on these large pmfs it keeps few of the 40 orders."""
    reference = _memoised_reference_bounds(monkeypatch)
    one = pld.pessimistic_pld(sigma, q, d)
    for probs in (one._pmf_remove._probs, one._pmf_add._probs):
        assert len(probs) >= pld._SCREEN_MIN_SIZE
        for steps in (2, 10, 1000, 10_000, 100_000):
            assert pld._self_convolve_bounds(probs, steps, 1e-15) == reference(probs, steps, 1e-15)
        assert len(pld._kept_orders(*pld._screen(probs, 10_000, 1e-15))) <= 8
    # inputs the screen cannot handle (zeros only, a negative entry): no screen, so every order is evaluated
    assert pld._screen(np.zeros(5000), 10, 1e-15) is None
    assert pld._screen(np.r_[-1e-20, np.full(4999, 2e-4)], 10, 1e-15) is None


def test_to_dense_is_dp_accountings_to_dense_pmf():
    """pld._to_dense = SparsePLDPmf.to_dense_pmf: offset, probabilities (bits), masses; keys with gaps and out of
    order, a -0.0 mass, and integer masses only (dp_accounting's own conversion, an integer array)."""
    from dp_accounting.pld import pld_pmf

    one = pld.pessimistic_pld(1.0, 0.2, 1e-2)
    pmfs = [one._pmf_remove, one._pmf_add,
            pld_pmf.SparsePLDPmf({5: 0.25, -3: 0.5, 0: -0.0, 9: 1e-300}, 1e-3, 0.125, True),
            pld_pmf.SparsePLDPmf({2: 1, 4: 0}, 1e-2, 0.0, False)]
    for pmf in pmfs:
        assert isinstance(pmf, pld_pmf.SparsePLDPmf)
        ours, ref = pld._to_dense(pmf), pmf.to_dense_pmf()
        assert _entries(ours)[:2] == _entries(ref)[:2] and ours._infinity_mass == ref._infinity_mass
        assert ours._probs.dtype == ref._probs.dtype and np.array_equal(ours._probs, ref._probs)
        assert np.array_equal(np.signbit(ours._probs), np.signbit(ref._probs))
        assert ours._pessimistic_estimate == ref._pessimistic_estimate


def test_settled_windows_are_dp_accountings_integers(monkeypatch):
    """Where the screen's intervals settle the window (no logsumexp at all), it is dp_accounting's, on small
    (n < 2000) and large pmfs, coarse and fine grids, T from 2 to 10^5; and that is the usual case."""
    reference = _memoised_reference_bounds(monkeypatch)

    rng = np.random.default_rng(1)
    settled = total = 0
    for i in range(12):
        sigma, q, d = 10 ** rng.uniform(-0.4, 1.5), 10 ** rng.uniform(-3, -0.05), (1e-2, 1e-3, 1e-4)[i % 3]
        one = pld.pessimistic_pld(sigma, q, d)
        for pmf in (one._pmf_remove, one._pmf_add):
            probs = pmf.to_dense_pmf()._probs
            for steps in (2, 10, 100, 1000, 10_000, 100_000):
                screen = pld._screen(probs, steps, 1e-15)
                window = pld._settled_window(*screen, len(probs), steps) if screen is not None else None
                settled, total = settled + (window is not None), total + 1
                ref = reference(probs, steps, 1e-15)
                assert pld._self_convolve_bounds(probs, steps, 1e-15) == ref
                assert window is None or window == ref
    assert settled >= 0.8 * total


@pytest.mark.parametrize("sigma,q,d,sens", [(*c, 1.0) for c in CASES] + [(0.6, 0.4, 1e-3, 2.0), (1.0, 1.0, 1e-3, 1.0),
                                            (50.0, 1e-4, 1e-2, 1.0)])
def test_vectorised_privacy_buckets_are_dp_accountings_optimistic_pld_bit_for_bit(sigma, q, d, sens):
    """The optimistic builder (privacy buckets, bucket loop vectorised) = dp_accounting's: pmf type, offset,
    infinity mass, every probability, and for sparse pmfs the dict order (sparse composition sums in it)."""
    ref = pldlib.from_gaussian_mechanism(sigma, sensitivity=sens, pessimistic_estimate=False,
                                         value_discretization_interval=d, sampling_prob=q, use_connect_dots=False)
    ours = pld.optimistic_pld(sigma, q, d, sensitivity=sens)
    _assert_same_pld(ours, ref)
    for attr in ("_pmf_remove", "_pmf_add"):
        if hasattr(getattr(ref, attr), "_loss_probs"):
            assert list(getattr(ours, attr)._loss_probs) == list(getattr(ref, attr)._loss_probs)


def test_vectorised_inverse_privacy_loss_equals_dp_accountings_scalar_calls():
    """Including ε = 0 (dp_accounting's b = 0 branch) and the ∓log(1-q) edges (its isclose branch)."""
    q = 0.03
    for adjacency in (plm.AdjacencyType.ADD, plm.AdjacencyType.REMOVE):
        loss = plm.GaussianPrivacyLoss(0.8, sampling_prob=q, adjacency_type=adjacency)
        edge = -np.log1p(-q) if adjacency == plm.AdjacencyType.ADD else np.log1p(-q)
        lo, hi = (-3.0, edge) if adjacency == plm.AdjacencyType.ADD else (edge, 3.0)
        pl = np.concatenate([np.linspace(lo, hi, 501)[1:-1], [0.0, edge, edge * (1 + 1e-12)]])
        assert np.array_equal(pld._inverse_privacy_loss(loss, pl), [loss.inverse_privacy_loss(v) for v in pl])


def test_optimistic_pld_is_dp_accountings_privacy_buckets():
    ref = pldlib.from_gaussian_mechanism(0.9, sensitivity=1.0, pessimistic_estimate=False,
                                         value_discretization_interval=1e-3, sampling_prob=0.02,
                                         use_connect_dots=False).self_compose(100)
    ours = pld.composed(0.9, 0.02, 100, False, 1e-3)
    for attr in ("_pmf_remove", "_pmf_add"):
        assert np.array_equal(_entries(getattr(ours, attr))[2], _entries(getattr(ref, attr))[2])


@pytest.mark.parametrize("mechanism,sampler", [("gaussian", "wor"), ("gaussian", "poisson"), ("laplace", "wor")])
def test_directions_composed_is_dp_accountings(mechanism, sampler):
    """dpsampling.papers.lebeda.directions composes through dpsampling.engine.pld: still dp_accounting's PLD, bit for bit."""
    from dpsampling.papers.lebeda import directions
    from dpsampling.papers.lebeda.directions import SHIFT

    build = pldlib.from_gaussian_mechanism if mechanism == "gaussian" else pldlib.from_laplace_mechanism
    ref = build(1.3, sensitivity=SHIFT[sampler], value_discretization_interval=1e-3, sampling_prob=0.2).self_compose(16)
    ours = directions.composed_pld(mechanism, 1.3, 0.2, 16, sampler=sampler, discretization=1e-3)
    for attr in ("_pmf_remove", "_pmf_add"):
        assert np.array_equal(_entries(getattr(ours, attr))[2], _entries(getattr(ref, attr))[2])


@pytest.mark.parametrize("sigma,q,d,steps,pessimistic", [(0.9, 0.02, 1e-3, 100, True), (1.0, 0.0126, 1e-4, 1000, True),
                                                         (1.0, 0.0126, 1e-4, 1000, False), (0.7, 0.03, 1e-3, 10, True),
                                                         (30.0, 1e-3, 1e-2, 3, True), (1.0, 1.0, 1e-3, 50, True)])
def test_epsilon_for_delta_is_dp_accountings_walk_bit_for_bit(sigma, q, d, steps, pessimistic, monkeypatch):
    """Dense and sparse pmfs, δ from above the largest hockey-stick value (ε = 0) to below the infinity mass
    (ε = inf); small blocks so that the stop falls in a later block than the first.  The same float as
    dp_accounting's walk over the drift-free grid (:func:`_walk`), and within 1e-9 of dp_accounting's reading."""
    monkeypatch.setattr(pld, "_EPS_BLOCK", 64)
    composed = pld.composed(sigma, q, steps, pessimistic, d)
    for pmf in _distinct_direction_pmfs(composed):
        for delta in (0.999, 0.5, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-13, 1e-16):
            ours, ref = pld.epsilon_for_delta(pmf, delta), _walk(pmf, delta)
            assert ours == ref and type(ours) is type(ref) or (ours == ref == 0), (delta, ours, ref)
            assert ours == pytest.approx(pmf.get_epsilon_for_delta(delta), rel=1e-9, abs=1e-12)


def test_sparse_result_test_is_dp_accountings_power_test():
    for size in range(40):
        for steps in range(1, 40):
            assert pld._sparse_result_fits(size, steps) == (size**steps <= 1000)


@pytest.mark.parametrize("sigma,q,d,steps", [(0.5675554512, 0.4641588834, 1.03e-3, 10_000), (5.0, 0.05, 1.4e-5, 10_000),
                                             (1.0, 0.01, 1e-4, 1000), (2.0, 0.1, 1e-4, 100), (10.0, 1e-4, 1e-5, 10_000),
                                             (0.3, 1.0, 1e-3, 10_000)])
def test_composition_skipping_zero_powers_is_dp_accountings_bits(sigma, q, d, steps):
    """T ≥ 100, where _power computes z**T only on the entries whose power is not 0 (Conjecture 12 settings):
    the composed pmfs of both estimates are dp_accounting's ``self_compose`` of the same one-step pmf, compared
    as raw 64-bit patterns (signs of zeros included), and _power itself differs from ``**`` only by zeros."""
    for pessimistic in (True, False):
        one = (pld.pessimistic_pld if pessimistic else pld.optimistic_pld)(sigma, q, d)
        ref = one.self_compose(steps)
        ours = pld.self_compose(one, steps)
        for attr in ("_pmf_remove", "_pmf_add"):
            t_r, lo_r, p_r, inf_r = _entries(getattr(ref, attr))
            t_o, lo_o, p_o, inf_o = _entries(getattr(ours, attr))
            assert (t_o, lo_o, inf_o) == (t_r, lo_r, inf_r)
            assert np.array_equal(p_o.view(np.uint64), p_r.view(np.uint64))
    spectrum = np.fft.fft(one._pmf_add.to_dense_pmf()._probs, 50_000)
    fast, slow = pld._power(spectrum, steps), spectrum**steps
    assert np.array_equal(fast, slow)
    bits_differ = (fast.view(np.uint64) != slow.view(np.uint64)).reshape(-1, 2).any(axis=1)
    assert np.all(fast[bits_differ] == 0)
    assert np.count_nonzero(fast) < 0.2 * fast.size  # the skipped entries are most of them


def test_power_keeps_nonfinite_entries_and_small_exponents():
    z = np.array([np.nan + 0j, np.inf + 1j, 1.0 + 0j, 0.999 + 0.01j, 0.0 + 0j, 1e-3 + 0j])
    for steps in (2, 99, 100, 10_000):
        with np.errstate(all="ignore"):
            assert np.array_equal(pld._power(z, steps), z**steps, equal_nan=True)


def test_compositions_of_one_kept_step_are_dp_accountings():
    """Compositions to several T share the kept one-step PLD (built once, :func:`pld.one_step`), and each is still
    dp_accounting's own composition of a freshly built step, bit for bit; the pessimistic bound's rounding terms
    (:func:`pld._upper_pmfs`) use the same kept step."""
    sigma, q, d = 1.3, 0.05, 1e-3
    pld.one_step.cache_clear()
    pld.composed.cache_clear()
    pld._upper_pmfs.cache_clear()
    for steps in (1, 10, 100):
        one = pldlib.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=d, sampling_prob=q)
        _assert_same_pld(pld.composed(sigma, q, steps, True, d), one.self_compose(steps) if steps > 1 else one)
    pld._upper_pmfs(sigma, q, 1000, "add_remove", d)
    info = pld.one_step.cache_info()
    assert (info.misses, info.currsize) == (1, 1)


def _reading(read, delta):
    try:
        return read(delta)
    except (OverflowError, ValueError) as e:  # dp_accounting's own errors, where pld hands the pmf to it
        return type(e)


def test_a_reader_reads_dp_accountings_floats_at_any_sequence_of_deltas(monkeypatch):
    """EpsilonReader keeps one pmf's walk for several δ: each reading is dp_accounting's walk over the drift-free grid
    (:func:`_walk`), the same float (or the same error), for any order of δ, on composed pessimistic and optimistic
    pmfs (dominating and
    dominated ends), a one-step pmf, δ at and around the mass at infinity, δ = 0 and 1, a pmf with losses below
    −700 (handed to dp_accounting) and one without mass; small blocks, so that readings span several kept blocks.
    ``read(pmf, δ)`` reads another pmf afresh."""
    from dp_accounting.pld import pld_pmf

    monkeypatch.setattr(pld, "_EPS_BLOCK", 64)
    rng = np.random.default_rng(7)
    pmfs = [pmf for pessimistic in (True, False)
            for pmf in pld.direction_pmfs(pld.composed(1.1, 256 / 60000, 300, pessimistic, 1e-4), "add_remove")]
    pmfs += [pld.one_step(1.1, 256 / 60000, True, 1e-4)._pmf_remove,
             pld_pmf.DensePLDPmf(1e-2, -80000, rng.random(2000) / 1000, 1e-7, True),
             pld_pmf.DensePLDPmf(1e-3, -5, np.zeros(10), 0.0, True)]
    for pmf in pmfs:
        deltas = [*np.exp(rng.uniform(math.log(1e-16), math.log(0.9), 8)), 1e-5, 1e-5 * (1 - 1e-9), 0.0, 1.0,
                  pmf._infinity_mass, pmf._infinity_mass * (1 + 1e-12)]
        for order in (deltas, deltas[::-1], sorted(deltas)):
            reader = pld.EpsilonReader(pmf)
            for delta in order:
                assert _reading(reader, float(delta)) == _reading(lambda x: _walk(pmf, x), float(delta))
    other = pmfs[1]
    assert pld.EpsilonReader(pmfs[0]).read(other, 1e-5) == _walk(other, 1e-5)
