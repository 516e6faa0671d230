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
