"""Independent references for R₁ (issue 40), shared by tests/engine/test_truncated.py and test_truncated_r1.py:
normal densities, one-dimensional hockey-stick integrals by quadrature between sign changes, and R₁'s local pair's
masses from its definition (π_{B−1}, p, q' computed with scipy.stats, not the package)."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats


def npdf(y, mu, sigma):
    return np.exp(-0.5 * ((y - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


def hockey_1d(f, lo, hi, scan=4000):
    """∫_lo^hi f₊ by quadrature between the sign changes of f (found on a scan, then by brentq); f takes arrays."""
    from scipy import optimize

    ys = np.linspace(lo, hi, scan + 1)
    vals = f(ys)
    cuts = [lo] + [optimize.brentq(f, ys[i], ys[i + 1], xtol=1e-15, rtol=1e-15)
                   for i in range(scan) if (vals[i] > 0) != (vals[i + 1] > 0)] + [hi]
    return sum(integrate.quad(lambda y: max(f(y), 0.0), a, b, limit=200, epsabs=1e-16, epsrel=1e-12)[0]
               for a, b in zip(cuts[:-1], cuts[1:]) if f(0.5 * (a + b)) > 0)


def r1_atoms(q, n, cap, theta):
    """R₁'s local pair's masses (not normalised) at the positions −1, 0, 1 along v: (P, Q), from the issue's
    definition (π_{B−1}, p, q' by stats directly)."""
    pi = stats.binom.pmf(cap - 1, n - 1, q)
    p = stats.binom.sf(cap - 1, n - 1, q)
    qq = stats.binom.sf(cap, n, q) * cap / (n * p)
    s = q * pi + p * qq
    e = -1.0 if theta == "pi" else 1.0
    pmass = {0.0: (1 - q) * pi, 1.0: s}
    pmass[e] = pmass.get(e, 0.0) + p * (1 - qq)
    qmass = {0.0: pi, e: p}
    return pmass, qmass
