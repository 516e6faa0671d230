"""The numpy pair kernels (the core install, without numba) against the numba kernels of engine.allocation."""

import numpy as np
import pytest

from dpsampling.engine import _allocation_numpy as npk
from dpsampling.engine import allocation as al

numba = pytest.importorskip("numba")


STEP = 0.02


def _inputs(rng, n, same):
    """Two random pmfs (the second the first itself when ``same``: a self-sum) and the grid offsets at STEP."""
    a = rng.random(n) * (rng.random(n) > 0.2)
    b = rng.random(n + 3) * (rng.random(n + 3) > 0.2)
    off, omega = al._offsets(STEP, 4 * n + 16)
    return a / a.sum(), (a / a.sum() if same else b / b.sum()), off, omega


@pytest.mark.parametrize("same", [False, True])
def test_upper_kernel_matches_numba(same):
    a, b, off, omega = _inputs(np.random.default_rng(1), 300, same)
    ka, kb = -40, -35 if not same else -40
    k0 = min(ka, kb) - 2
    out_n, out_p = np.zeros(4 * 310), np.zeros(4 * 310)
    al._conv_upper(a, ka, b, kb, same, off, omega, out_n, k0)  # numba (this environment has it)
    npk._conv_upper(a, ka, b, kb, same, off, omega, out_p, k0)
    assert np.allclose(out_p, out_n, rtol=1e-12, atol=1e-300) and out_n.sum() > 0.99


@pytest.mark.parametrize("same", [False, True])
def test_lower_kernel_matches_numba(same):
    rng = np.random.default_rng(2)
    a, b, off, _ = _inputs(rng, 250, same)
    ka = kb = -30
    k0 = ka - 2
    n = 4 * 260
    grid = np.exp((k0 + np.arange(n + 1)) * STEP)
    xa = np.exp((ka + np.arange(len(a)) + rng.random(len(a))) * STEP)
    xb = xa if same else np.exp((kb + np.arange(len(b)) + rng.random(len(b))) * STEP)
    res = []
    for kern in (al._conv_lower, npk._conv_lower):
        mass, mom = np.zeros(n), np.zeros(n)
        kern(a, xa, ka, b, xb, kb, same, off, grid, mass, mom, k0)
        res.append((mass, mom))
    assert np.allclose(res[1][0], res[0][0], rtol=1e-12, atol=1e-300)
    assert np.allclose(res[1][1], res[0][1], rtol=1e-12, atol=1e-300)
