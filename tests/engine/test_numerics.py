"""engine/numerics.py: the log-space helpers against mpmath at 50 digits, the root finders against known roots."""

import math

import mpmath
import numpy as np
import pytest

from dpsampling.engine import numerics as nu

mpmath.mp.dps = 50

# from -800 (exp underflows to 0) through the branch point -log 2 to just below 0 (cancellation in 1 - e^x)
XS = [-800.0, -745.0, -100.0, -37.0, -20.0, -1.0, -0.7, -math.log(2.0), -0.69, -0.1, -1e-5, -1e-12, -1e-300]


def _ref_log1mexp(x):
    """log(1 - e^x) in mpmath at 450 digits (1 - e^-800 needs ~350 of them)."""
    with mpmath.workdps(450):
        return +mpmath.log(-mpmath.expm1(mpmath.mpf(x)))


def _close(ours, ref, rel):
    """|ours - ref| <= rel·|ref| (plus the smallest normal double, for results that underflow)."""
    return abs(ours - float(ref)) <= rel * abs(float(ref)) + np.finfo(float).tiny


@pytest.mark.parametrize("x", XS)
def test_log1mexp_against_mpmath(x):
    ref = _ref_log1mexp(x)
    assert _close(float(nu.log1mexp(x)), ref, 4e-16)


def test_log1mexp_edges_and_arrays():
    assert nu.log1mexp(0.0) == -np.inf
    assert np.isnan(nu.log1mexp(1e-3))
    out = nu.log1mexp(np.array(XS))
    assert out.shape == (len(XS),)
    ref = [float(_ref_log1mexp(x)) for x in XS]
    np.testing.assert_allclose(out, ref, rtol=4e-16, atol=np.finfo(float).tiny)


@pytest.mark.parametrize("a,b", [(0.0, -1e-12), (0.0, -1.0), (-5.0, -5.000001), (-700.0, -800.0), (10.0, 9.0),
                                 (-1e-3, -2e-3), (3.0, -np.inf)])
def test_logsubexp_against_mpmath(a, b):
    ref = mpmath.log(mpmath.exp(mpmath.mpf(a)) - (0 if b == -np.inf else mpmath.exp(mpmath.mpf(b))))
    assert _close(float(nu.logsubexp(a, b)), ref, 1e-15)


def test_logsubexp_equal_arguments_is_minus_infinity():
    assert nu.logsubexp(-3.0, -3.0) == -np.inf
    np.testing.assert_array_equal(nu.logsubexp(np.array([1.0, 2.0]), np.array([1.0, -np.inf])), [-np.inf, 2.0])


@pytest.mark.parametrize("x", [-40.0, -10.0, -1.0, 0.0, 1.0, 8.0, 30.0])
def test_log_norm_cdf_and_sf_against_mpmath(x):
    with mpmath.workdps(450):  # Φ(30) = 1 - 5e-198: the log needs ~200 digits
        log_cdf, log_sf = +mpmath.log(mpmath.ncdf(mpmath.mpf(x))), +mpmath.log(mpmath.ncdf(-mpmath.mpf(x)))
    # scipy's log_ndtr: ~6e-14 relative in the far tail of log Φ ≈ -Φ(-x) (x = 30), ≤ 1e-15 elsewhere
    assert _close(float(nu.log_norm_cdf(x)), log_cdf, 1e-13)
    assert _close(float(nu.log_norm_sf(x)), log_sf, 1e-13)


def test_log_half():
    assert nu.LOG_HALF == float(mpmath.log(mpmath.mpf(1) / 2))


def test_find_root_against_known_root():
    root = nu.find_root(lambda s: s * s - 2.0, 0.0, 2.0)
    assert abs(root - float(mpmath.sqrt(2))) <= 2e-12 + 4 * np.finfo(float).eps * math.sqrt(2)
    with pytest.raises(ValueError):
        nu.find_root(lambda s: s * s + 1.0, 0.0, 2.0)  # no sign change


def test_bisect_vectorised_brackets_each_root():
    targets = np.array([0.1, 0.5, 0.9])
    lo, hi = nu.bisect(lambda x: x < targets, np.zeros(3), np.ones(3), 40)
    assert np.all((lo <= targets) & (targets <= hi)) and np.all(hi - lo <= 2.0**-40)
    lo, hi = nu.bisect(lambda x: x < targets, np.zeros(3), np.ones(3), 60, width=1e-3)
    assert np.all(hi - lo < 1e-3) and np.all(hi - lo >= 5e-4)  # stopped once every width was below 1e-3


# --- fft_error: the FFT convolution's rounding bound against an exact composition ---------------------------------


def _exact_self_convolution(probs, times):
    """The ``times``-fold linear self-convolution of float64 masses, by direct convolution in extended precision
    (np.longdouble: u ≈ 5e-20, the float64 masses converted exactly), by repeated squaring."""
    base = np.asarray(probs, dtype=np.longdouble)
    out = None
    while True:
        if times & 1:
            out = base if out is None else np.convolve(out, base)
        times >>= 1
        if not times:
            return out
        base = np.convolve(base, base)


def _spiky_probs(n, seed):
    """A pmf with a wide dynamic range (masses from ~1e-12 to ~1e-1): rounding is relative to the large ones."""
    rng = np.random.default_rng(seed)
    p = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 8)) ** 2) * 10.0 ** rng.uniform(-3, 0, n)
    return p / p.sum()


@pytest.mark.parametrize("times", [3, 7, 150])
def test_fft_error_bounds_the_power_composition(times):
    """pld._self_compose's T-fold FFT power (squaring below T = 100, cpow from there) differs from the exact
    circular composition by at most fft_error's bound, in the 1-norm and the 2-norm."""
    from dp_accounting.pld import pld_pmf
    from scipy import fft as sp_fft

    from dpsampling.engine import pld

    probs = _spiky_probs(61, times)
    pmf = pld_pmf.DensePLDPmf(1e-2, -20, probs, 0.0, False)
    out = pld._self_compose(pmf, times)
    got = out._probs.astype(np.longdouble)
    lower = out._lower_loss - pmf._lower_loss * times
    n = sp_fft.next_fast_len(max(len(got), len(probs)))
    full = _exact_self_convolution(probs, times)
    circ = np.zeros(n, dtype=np.longdouble)
    np.add.at(circ, np.arange(len(full)) % n, full)
    exact = circ[(lower + np.arange(len(got))) % n]
    err1, err2 = float(np.sum(np.abs(got - exact))), float(np.sqrt(np.sum((got - exact) ** 2)))
    power = "cpow" if times >= pld._CPOW_MIN_EXPONENT else "multiply"
    factors = [(math.fsum(probs), float(np.linalg.norm(probs)), times)]
    bound1 = nu.fft_error(factors, len(got), n, out_norm2=float(np.linalg.norm(out._probs)), power=power)
    bound2 = pld.composition_error(probs, times, out._probs)
    assert 0 < err1 <= bound1, (err1, bound1)
    assert 0 < err2 <= bound2, (err2, bound2)


def test_fft_error_bounds_a_convolution_of_two():
    """scipy's fftconvolve of two different pmfs (the allocation accountant's composition) against the exact
    linear convolution."""
    from scipy import fft as sp_fft
    from scipy import signal

    a, b = _spiky_probs(3000, 1), _spiky_probs(1700, 2) * 0.7
    c = signal.fftconvolve(a, b)
    exact = np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))
    err = float(np.sum(np.abs(c.astype(np.longdouble) - exact)))
    bound = nu.fft_error([(a.sum(), np.linalg.norm(a), 1), (b.sum(), np.linalg.norm(b), 1)], len(c),
                         sp_fft.next_fast_len(len(c), real=True), out_norm2=np.linalg.norm(c))
    assert 0 < err <= bound, (err, bound)


def test_fft_error_rejects_bad_input():
    """fft_error is the engine's own helper, called with the engine's constants: a bad call is a broken invariant."""
    from dpsampling.engine.errors import InternalError

    with pytest.raises(InternalError, match="power"):
        nu.fft_error([(1.0, 0.5, 2)], 10, 16, power="fast")
    with pytest.raises(InternalError, match="2 factors"):
        nu.fft_error([(1.0, 0.5, 1)], 10, 16)


@pytest.mark.parametrize("n", [1, 7, 1000, 300_001])
def test_norm2_matches_an_exactly_rounded_sum(n):
    # reference: math.fsum of the squares (exactly rounded sum of the float squares), then sqrt; and numpy's BLAS norm
    a = np.random.default_rng(n).exponential(size=n) * 1e-3
    exact = math.sqrt(math.fsum((a * a).tolist()))
    assert nu.norm2(a) == pytest.approx(exact, rel=4 * np.finfo(float).eps * math.log2(n + 1))
    assert nu.norm2(a) == pytest.approx(float(np.linalg.norm(a)), rel=1e-12)
    assert nu.norm2(np.zeros(3)) == 0.0
