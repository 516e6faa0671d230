"""One-step privacy-loss pairs of the φ accountant: M(s) = E_P e^{sL} per mechanism and direction,
the exact law of their atomic parts, and the (pair, count) terms of a composition.

Each pair supplies log M(c+iu) (with an error estimate for the quadrature-based subsampled
Gaussian), the cumulants at real c, and bounds on |M| used to certify the inversion's u-truncation
(:mod:`dpsampling.engine.cf.inversion`).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from scipy.special import erfc, gammaln

from ..errors import ParameterError
from ..numerics import log1mexp, logsumexp
from ..validation import check_int
from .mechanisms import CFAccuracyError, Gaussian, Laplace, PoissonSubsampled, RandomizedResponse

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_MAX_ATOMS = 2_000_000   # cap on the support of the exactly enumerated atomic part


# --------------------------------------------------------------------------
# complex helpers
# --------------------------------------------------------------------------
def _lse(a):
    """Real log-sum-exp of a 1-d array (fast path, no scipy overhead)."""
    m = a.max()
    if not np.isfinite(m):
        return float(m)
    return float(m + math.log(np.exp(a - m).sum()))


def _clogsumexp(terms):
    """log Σ exp(z_k) for complex arrays z_k (broadcast), stable in the real part."""
    terms = [np.asarray(t, dtype=complex) for t in terms]
    m = np.max(np.stack([t.real for t in np.broadcast_arrays(*terms)]), axis=0)
    m = np.where(np.isfinite(m), m, 0.0)
    acc = sum(np.exp(t - m) for t in terms)
    with np.errstate(divide="ignore"):
        return m + np.log(acc)


# --------------------------------------------------------------------------
# one-step privacy-loss pairs
# --------------------------------------------------------------------------
class _Pair:
    """One-step dominating pair for one direction, in terms of M(s) = E_P e^{sL}.

    atoms: None or (values, log_weights) of the point masses of L under P.
    has_cont: whether L has a non-atomic part.
    """

    atoms = None
    has_cont = True
    quadrature = False
    symmetric = True
    # (lo, hi, rate, logconst): the continuous part has density e^{logconst + rate·ℓ} on (lo, hi)
    cont_exp = None
    support = (-math.inf, math.inf)  # closed hull of the support of L under P

    def log_mgf(self, c, u):  # pragma: no cover - interface
        """log M(c+iu) (complex array over u) and an abs. error estimate / M(c)."""
        raise NotImplementedError

    def log_mgf_atoms(self, c, u):
        vals, lw = self.atoms
        u = np.asarray(u, dtype=float)
        z = lw[None, :] + (c + 1j * u[:, None]) * vals[None, :]
        return _clogsumexp([z[:, k] for k in range(z.shape[1])])

    def cumulants(self, c):  # pragma: no cover - interface
        """(K, K', K'', E_ν|L|) at real c, ν the tilted law ∝ e^{cL} dP."""
        raise NotImplementedError

    def cont_bound(self, c, u):
        """Non-increasing bound on |M_cont(c+iu')| / M(c) for u' ≥ u (array u)."""
        return np.zeros_like(np.asarray(u, dtype=float))


class _GaussianPair(_Pair):
    """L ~ N(μ, 2μ), μ = 1/(2σ²): M(s) = exp(μ s(s+1)) (Lemma 35)."""

    def __init__(self, sigma):
        self.mu = 0.5 / sigma**2

    def log_mgf(self, c, u):
        s = c + 1j * np.asarray(u, dtype=float)
        return self.mu * s * (s + 1.0), np.zeros(np.shape(u))

    def cumulants(self, c):
        mu = self.mu
        return mu * c * (c + 1), mu * (2 * c + 1), 2 * mu, None

    def cont_bound(self, c, u):
        return np.exp(-self.mu * np.asarray(u, dtype=float) ** 2)


class _DiscretePair(_Pair):
    """Finite-support pair: L takes values log(p_j/q_j) with P-mass p_j (Def. 36)."""

    has_cont = False

    def __init__(self, p_masses, q_masses, symmetric=True):
        p = np.asarray(p_masses, dtype=float)
        q = np.asarray(q_masses, dtype=float)
        keep = p > 0
        if np.any(q[keep] <= 0):
            raise ParameterError("q", "> 0 wherever p > 0", q,
                                 message="discrete pair has privacy loss +inf (q = 0 where p > 0)")
        self.atoms = (np.log(p[keep]) - np.log(q[keep]), np.log(p[keep]))
        self.symmetric = symmetric
        self.support = (float(self.atoms[0].min()), float(self.atoms[0].max()))

    def log_mgf(self, c, u):
        return self.log_mgf_atoms(c, u), np.zeros(np.shape(u))

    def cumulants(self, c):
        v, lw = self.atoms
        a = lw + c * v
        K = _lse(a)
        w = np.exp(a - K)
        m1 = float(np.sum(w * v))
        return K, m1, float(np.sum(w * (v - m1) ** 2)), float(np.sum(w * np.abs(v)))


class _LaplacePair(_Pair):
    """Lap(0,b) vs Lap(1,b): atoms ±1/b (masses 1/2, e^{-1/b}/2) plus a continuous
    part on (-1/b, 1/b) with M_C(s) = e^{s/b}(1 - e^{-(2s+1)/b}) / (2(2s+1)) (Lemma 34)."""

    def __init__(self, b):
        self.b = b
        self.atoms = (np.array([1.0 / b, -1.0 / b]),
                      np.array([math.log(0.5), math.log(0.5) - 1.0 / b]))
        # continuous part: density e^{ℓ/2 - 1/(2b)}/4 on (-1/b, 1/b)
        self.cont_exp = (-1.0 / b, 1.0 / b, 0.5, -0.5 / b - math.log(4.0))
        self.support = (-1.0 / b, 1.0 / b)

    def _log_cont(self, s):
        """log M_C(s) using e^{s/b} - e^{-(s+1)/b} = e^{s/b}(1 - e^{-z/b})
        = e^{-(s+1)/b}(e^{z/b} - 1), z = 2s + 1, choosing the form that cannot overflow."""
        b = self.b
        s = np.asarray(s, dtype=complex)
        z = 2.0 * s + 1.0
        small = np.abs(z) < 1e-6
        zs = np.where(small, 1.0, z)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pos = s / b + np.log(-np.expm1(-zs / b)) - np.log(2.0 * zs)
            neg = -(s + 1.0) / b + np.log(np.expm1(zs / b)) - np.log(2.0 * zs)
        main = np.where(zs.real >= 0, pos, neg)
        # removable singularity at s = -1/2: (1/(2b)) e^{s/b} (1 - z/(2b) + z²/(6b²))
        lim = s / b - math.log(2.0 * b) + np.log1p(-z / (2 * b) + z * z / (6 * b * b))
        return np.where(small, lim, main)

    def log_mgf(self, c, u):
        s = c + 1j * np.asarray(u, dtype=float)
        return _clogsumexp([self.log_mgf_atoms(c, u), self._log_cont(s)]), np.zeros(np.shape(u))

    def log_mgf_cont(self, c, u):
        return self._log_cont(c + 1j * np.asarray(u, dtype=float))

    def cumulants(self, c):
        # numerical derivatives of the (closed-form, smooth) real CGF
        f = lambda x: float(self.log_mgf(x, np.zeros(1))[0][0].real)  # noqa: E731
        e = 1e-4 * (1 + abs(c))
        k0, kp, km = f(c), f(c + e), f(c - e)
        return k0, (kp - km) / (2 * e), max((kp - 2 * k0 + km) / e**2, 0.0), None

    def cont_bound(self, c, u):
        # tilted continuous density on ℓ ∈ (-1/b, 1/b): ψ(ℓ) = e^{(c+1/2)ℓ - 1/(2b)}/4,
        # monotone, so |M_C(c+iu)| ≤ (ψ(lo) + ψ(hi) + TV ψ)/u = 2 max ψ / u.
        b = self.b
        lpsi = max(abs(c + 0.5) / b, -(c + 0.5) / b) - 0.5 / b - math.log(4.0)
        lmc = float(self._log_cont(np.array([c + 0j]))[0].real)
        lM = self.cumulants(c)[0]
        u = np.asarray(u, dtype=float)
        with np.errstate(divide="ignore"):
            bnd = np.minimum(lmc, math.log(2.0) + lpsi - np.log(u))
        return np.exp(bnd - lM)


#: u values per output grid in :meth:`_SubsampledGaussianPair.log_mgf` (the grid is as fine as the chunk's largest
#: |u| needs): an evaluation on the first k·U_CHUNK of ascending u gives the values of the evaluation on all of them
U_CHUNK = 64
#: transition scale of the window in :meth:`_SubsampledGaussianPair.modulus_bound`, in units of σ² (the loss
#: derivative dL/do grows by a factor e every σ² in o), and how many scales past its centre the window is cut
WINDOW_SCALE, WINDOW_CUT = 0.125, 8.0


class _SubsampledGaussianPair(_Pair):
    """Poisson-subsampled Gaussian (Theorem 11), φ by output-space quadrature.

    r(o) = 1 - q + q exp((2o-1)/(2σ²)),  remove: L = log r, M(s) = E_{N(0,σ²)}[r^{1+s}];
    add: L = -log r, M(s) = E_{N(0,σ²)}[r^{-s}].
    """

    quadrature = True
    symmetric = False

    def __init__(self, sigma, q, direction):
        self.sigma = sigma
        self.q = q
        self.sign = 1.0 if direction == "remove" else -1.0
        self.l1mg = math.log1p(-q)
        self.lg = math.log(q)
        self.support = (self.l1mg, math.inf) if self.sign > 0 else (-math.inf, -self.l1mg)

    def _kappa_r(self, c):
        return 1.0 + c if self.sign > 0 else -c

    def _grid_span(self, c, umax, refine=1.0):
        """(lo, hi, n): the output grid of :meth:`_grid` is n + 1 equispaced nodes on [lo, hi]."""
        sig = self.sigma
        kr = self._kappa_r(c)
        lo, hi = min(0.0, kr) - 13.0 * sig, max(0.0, kr) + 13.0 * sig
        # the factor 1/2 keeps the every-second-node rule (error estimate) resolved too
        h = 0.5 * min(sig / 4.0, 0.5 * sig * sig,
                      2 * math.pi / (abs(umax) / sig**2 + 9.0 / sig)) / refine
        n = int(math.ceil((hi - lo) / h))
        n += n % 2
        return lo, hi, n

    def _grid_size(self, c, umax, refine=1.0):
        """Number of nodes of :meth:`_grid` (what the inversion's work counts), without building it."""
        return self._grid_span(c, umax, refine)[2] + 1

    def _grid(self, c, umax, refine=1.0):
        sig = self.sigma
        kr = self._kappa_r(c)
        lo, hi, n = self._grid_span(c, umax, refine)
        o = np.linspace(lo, hi, n + 1)
        lr = np.logaddexp(self.l1mg, self.lg + (2.0 * o - 1.0) / (2.0 * sig * sig))
        a = -0.5 * (o / sig) ** 2 - _LOG_SQRT_2PI - math.log(sig) + kr * lr
        return o, lr, a, (hi - lo) / n

    def log_mgf(self, c, u, refine=1.0):
        u = np.asarray(u, dtype=float)
        out = np.empty(u.shape, dtype=complex)
        err = np.empty(u.shape)
        # chunks of u so the output grid is only as fine as the chunk needs
        order = np.argsort(np.abs(u))
        chunk = U_CHUNK
        for i in range(0, u.size, chunk):
            idx = order[i:i + chunk]
            uc = u[idx]
            o, lr, a, h = self._grid(c, np.max(np.abs(uc)) if uc.size else 0.0, refine)
            amax = a.max()
            w = np.exp(a - amax) * h
            L = self.sign * lr
            ph = np.outer(uc, L)
            C, S = np.cos(ph), np.sin(ph)  # faster than complex exp
            # einsum, not BLAS: threaded gemv thrashes on shared cores
            mf = np.einsum("ij,j->i", C, w) + 1j * np.einsum("ij,j->i", S, w)
            w2 = 2.0 * w[::2]
            mc = (np.einsum("ij,j->i", C[:, ::2], w2)
                  + 1j * np.einsum("ij,j->i", S[:, ::2], w2))
            m0 = w.sum()
            with np.errstate(divide="ignore"):
                out[idx] = amax + np.log(mf)
            err[idx] = np.abs(mf - mc) / m0
        return out, err

    def _window_table(self, c):
        """(centres, masses): candidate window centres o_c (a step of the window scale τ apart) and, for each, the
        tilted mass ∫ φ r^κ (1 − χ) do / M(c) that :meth:`modulus_bound` bounds trivially, χ(o) = erfc((o − o_c)/τ)/2;
        on the refine-4 output grid (τ/h ≥ 2: the trapezoid sum is exact to rounding); cached per c."""
        cache = self.__dict__.setdefault("_win", {})
        if c not in cache:
            o, _, a, h = self._grid(c, 0.0, refine=4.0)
            p = np.exp(a - self.cumulants(c)[0]) * h
            tau = WINDOW_SCALE * self.sigma ** 2
            centres = np.arange(o[0], o[-1], tau)
            masses = np.array([float(np.sum(p * (0.5 * erfc((oc - o) / tau)))) for oc in centres])
            cache[c] = (centres, masses)
        return cache[c]

    def modulus_bound(self, c, u, slack):
        """An upper bound on |M(c+iu)|/M(c), up to the output quadrature's error estimate (included, as in
        :meth:`log_mgf`), for u > 0, cheaper than :meth:`log_mgf` where ``slack`` allows.

        M(c+iu) = ∫ φ r^κ χ e^{iuL} do + ∫ φ r^κ (1 − χ) e^{iuL} do for any window 0 ≤ χ ≤ 1, so |M(c+iu)| is at most
        the modulus of the first integral plus the mass ∫ φ r^κ (1 − χ) of the second (triangle inequality).  χ is
        the smooth step erfc((o − o_c)/τ)/2 with the lowest centre o_c whose mass is ≤ ``slack``·M(c)
        (:meth:`_window_table`); the first integral is cut at o_c + 8τ, where χ ≤ erfc(8)/2, which bounds its
        remainder relative to M(c) and is added too.  Below that cut |dL/do| (increasing in o) is at most its value
        there, far below its supremum 1/σ² which sets the step of :meth:`_grid`, so the trapezoid needs far fewer
        nodes (the same step rule, plus the window's bandwidth).  Without such a centre it is :meth:`log_mgf`."""
        sig, tau = self.sigma, WINDOW_SCALE * self.sigma ** 2
        lo, hi, _ = self._grid_span(c, u)
        centres, masses = self._window_table(c)
        ok = np.nonzero(masses <= slack)[0]
        K = self.cumulants(c)[0]
        if not ok.size or centres[ok[0]] + WINDOW_CUT * tau >= hi:
            lm, e = self.log_mgf(c, np.array([float(u)]))
            return math.exp(lm[0].real - K) + e[0]
        oc = centres[ok[0]]
        end = oc + WINDOW_CUT * tau
        lr_end = float(np.logaddexp(self.l1mg, self.lg + (2.0 * end - 1.0) / (2.0 * sig * sig)))
        dl_max = math.exp(self.lg + (2.0 * end - 1.0) / (2.0 * sig * sig) - lr_end) / sig ** 2
        h = 0.5 * min(sig / 4.0, 0.5 * sig * sig, 2 * math.pi / (abs(u) * dl_max + 9.0 / sig + 13.0 / tau))
        n = math.ceil((end - lo) / h)
        n += n % 2
        o = np.linspace(lo, end, n + 1)
        lr = np.logaddexp(self.l1mg, self.lg + (2.0 * o - 1.0) / (2.0 * sig * sig))
        a = -0.5 * (o / sig) ** 2 - _LOG_SQRT_2PI - math.log(sig) + self._kappa_r(c) * lr
        amax = a.max()
        w = np.exp(a - amax) * (0.5 * erfc((o - oc) / tau)) * ((end - lo) / n)
        ph = u * lr
        C, S = np.cos(ph), np.sin(ph)
        mf = complex(C @ w, S @ w)
        w2 = 2.0 * w[::2]
        mc = complex(C[::2] @ w2, S[::2] @ w2)
        scale = math.exp(amax - K)
        return (abs(mf) + abs(mf - mc)) * scale + masses[ok[0]] * (1 + 1e-6) + 0.5 * math.erfc(WINDOW_CUT)

    def cumulants(self, c):
        cache = self.__dict__.setdefault("_cum", {})
        if c in cache:
            return cache[c]
        o, lr, a, h = self._grid(c, 0.0)
        K = _lse(a) + math.log(h)
        w = np.exp(a - a.max())
        w /= w.sum()
        L = self.sign * lr
        m1 = float(np.sum(w * L))
        cache[c] = (K, m1, float(np.sum(w * (L - m1) ** 2)), float(np.sum(w * np.abs(L))))
        return cache[c]

    def tv_bound(self, c):
        """(ψ(lo)+ψ(hi)+TV ψ)/M(c) with ψ the tilted density of L in loss space."""
        o, lr, a, h = self._grid(c, 0.0, refine=4.0)
        sig2 = self.sigma ** 2
        log_dl = self.lg + (2.0 * o - 1.0) / (2.0 * sig2) - lr - math.log(sig2)  # log |dL/do|
        K = float(logsumexp(a) + math.log(h))
        lpsi = a - log_dl - K
        psi = np.exp(np.minimum(lpsi, 700.0))
        return float(psi[0] + psi[-1] + np.sum(np.abs(np.diff(psi))))


def _make_pair(mech, direction):
    if isinstance(mech, Gaussian):
        return _GaussianPair(mech.sigma)
    if isinstance(mech, Laplace):
        return _LaplacePair(mech.b)
    if isinstance(mech, RandomizedResponse):
        p = mech.p
        return _DiscretePair([p, 1 - p], [1 - p, p])
    if isinstance(mech, PoissonSubsampled):
        g = mech.q
        if g == 1.0:
            return _make_pair(mech.base, direction)
        if isinstance(mech.base, Gaussian):
            return _SubsampledGaussianPair(mech.base.sigma, g, direction)
        if isinstance(mech.base, RandomizedResponse):
            p = mech.base.p
            P = np.array([p, 1 - p])
            Q = np.array([1 - p, p])
            if direction == "add":
                return _DiscretePair(P, (1 - g) * P + g * Q, symmetric=False)
            return _DiscretePair((1 - g) * Q + g * P, Q, symmetric=False)
    raise ParameterError("mechanisms", "Gaussian, Laplace, RandomizedResponse or PoissonSubsampled descriptors", mech,
                         message=f"unsupported mechanism descriptor {mech!r}")


def _normalize(mechanisms):
    """Accept a descriptor, a list of descriptors, or a list of (descriptor, count)."""
    if isinstance(mechanisms, (Gaussian, Laplace, RandomizedResponse, PoissonSubsampled)):
        mechanisms = [(mechanisms, 1)]
    if not isinstance(mechanisms, Iterable):
        raise ParameterError("mechanisms", "a descriptor or a list of (descriptor, count)", mechanisms,
                             message="mechanisms must be a descriptor or a list of (descriptor, count)")
    merged = {}
    for item in mechanisms:
        if isinstance(item, tuple):
            mech, count = item
        else:
            mech, count = item, 1
        check_int("count", count, 1)
        if not isinstance(mech, (Gaussian, Laplace, RandomizedResponse, PoissonSubsampled)):
            raise ParameterError("mechanisms", "Gaussian, Laplace, RandomizedResponse or PoissonSubsampled descriptors",
                                 mech, message=f"unsupported mechanism descriptor {mech!r}")
        merged[mech] = merged.get(mech, 0) + int(count)
    if not merged:
        raise ParameterError("mechanisms", "not empty", mechanisms, message="mechanisms must not be empty")
    return list(merged.items())



# --------------------------------------------------------------------------
# exact atomic part
# --------------------------------------------------------------------------
def _compose_atoms(terms):
    """Exact law of the sum of the atomic parts: (values, log_weights)."""
    vals = np.zeros(1)
    lws = np.zeros(1)
    for pair, n in terms:
        v, lw = pair.atoms
        if v.size == 1:
            tv, tlw = np.array([n * v[0]]), np.array([n * lw[0]])
        elif v.size == 2:
            j = np.arange(n + 1)
            tv = j * v[0] + (n - j) * v[1]
            tlw = (gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1)
                   + j * lw[0] + (n - j) * lw[1])
        else:  # general finite support: repeated convolution
            tv, tlw = np.zeros(1), np.zeros(1)
            for _ in range(n):
                tv = (tv[:, None] + v[None, :]).ravel()
                tlw = (tlw[:, None] + lw[None, :]).ravel()
                if tv.size > _MAX_ATOMS:
                    raise CFAccuracyError("atomic part too large to enumerate exactly")
        if vals.size * tv.size > _MAX_ATOMS:
            raise CFAccuracyError(
                f"exact enumeration of the atomic part needs {vals.size * tv.size} atoms "
                f"(cap {_MAX_ATOMS}); cannot meet the error budget")
        vals = (vals[:, None] + tv[None, :]).ravel()
        lws = (lws[:, None] + tlw[None, :]).ravel()
    return vals, lws


def _atomic_value(x, vals, lws, kernel):
    if kernel == "hockey":
        sel = vals > x
        if not np.any(sel):
            return 0.0
        return float(np.exp(logsumexp(lws[sel] + log1mexp(x - vals[sel]))))
    sel = vals > x
    return float(np.exp(logsumexp(lws[sel]))) if np.any(sel) else 0.0



class _ShiftedPair(_Pair):
    """Law of L under Q: M_Q(s) = E_Q e^{sL} = M(s-1)."""

    def __init__(self, pair):
        self.p = pair
        self.quadrature = pair.quadrature
        self.has_cont = pair.has_cont
        self.symmetric = pair.symmetric
        self.support = pair.support
        if pair.atoms is not None:
            v, lw = pair.atoms
            self.atoms = (v, lw - v)
        if pair.cont_exp is not None:
            lo, hi, r, k = pair.cont_exp
            self.cont_exp = (lo, hi, r - 1.0, k)

    def log_mgf_cont(self, c, u):
        return self.p.log_mgf_cont(c - 1.0, u)

    def log_mgf(self, c, u, refine=1.0):
        if self.quadrature:
            return self.p.log_mgf(c - 1.0, u, refine=refine)
        return self.p.log_mgf(c - 1.0, u)

    def cumulants(self, c):
        return self.p.cumulants(c - 1.0)

    def cont_bound(self, c, u):
        return self.p.cont_bound(c - 1.0, u)

    def tv_bound(self, c):
        return self.p.tv_bound(c - 1.0)

    def modulus_bound(self, c, u, slack):
        return self.p.modulus_bound(c - 1.0, u, slack)

    def _grid(self, c, umax, refine=1.0):
        return self.p._grid(c - 1.0, umax, refine)

    def _grid_size(self, c, umax, refine=1.0):
        return self.p._grid_size(c - 1.0, umax, refine)


def _terms(mechanisms, direction):
    return [(_make_pair(m, direction), n) for m, n in _normalize(mechanisms)]


def _is_symmetric(mechanisms):
    return all(_make_pair(m, "remove").symmetric for m, _ in _normalize(mechanisms))
