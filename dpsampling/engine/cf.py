"""Characteristic-function (φ) privacy accountant (Zhu, Dong & Wang, AISTATS 2022).

Notation.  For a dominating pair (P, Q) the privacy loss is L = log(dP/dQ)(o),
o ~ P.  We work with the moment generating function on the complex plane,

    M(s) = E_P[exp(s L)],        s = c + iu,

so that Zhu's φ-function (Definition 12) is φ(t) = M(it) and the dual one is
φ'(t) = E_Q[exp(it log(q/p))] = M(-1 - it).  Composition multiplies M
(Proposition 13 / Theorem 10); we add log M, count times, per mechanism.

Conversion to δ(ε).  δ(ε) = H_{e^ε}(P‖Q) = E_P[(1 - e^{ε-L})_+] (Lemma 5,
Lemma 19).  The two-sided Laplace transform of g(x) = (1 - e^{ε-x})_+ is
e^{-sε}/(s(s+1)) for Re s > 0, hence (Bromwich / Lévy inversion)

    δ(ε) = (1/π) ∫_0^∞ Re[ M(c+iu) e^{-(c+iu)ε} / ((c+iu)(c+1+iu)) ] du     (c > 0)

and for c < 0 (c < -1) the residues M(0) (and -e^ε M(-1)) are added.  With
c → 0 this is the Gil-Pelaez / Lévy formula of Lemma 18 combined with
Lemma 19 (δ = P[L>ε] - e^ε Q[L>ε]); shifting the contour to the saddle
point c* of log M(c) - cε removes the cancellation of the c = 0 version
(the integrand at u = 0 is then the Chernoff/RDP bound on δ and the integral
is computed with *relative* accuracy, so tiny δ are fine).  The CDF of L
(Lemma 18) uses the kernel 1/s instead.

Numerical error that is controlled and returned (absolute error on δ):
  * discretisation of the u-integral: trapezoid rule with step h (spectrally
    accurate for integrands analytic in a strip); estimated by |T_h - T_{2h}|.
  * truncation of the u-integral at U: bounded by ∫_U^∞ B(u) |kernel| du with
    B(u) an upper bound on |M(c+iu)|: exact for Gaussian factors, TV/u for
    the continuous part of Laplace, and for quadrature-based factors
    (Poisson-subsampled Gaussian) a Lipschitz march (|d/du M| ≤ E_P|L|e^{cL})
    up to the point where the total-variation bound TV/u takes over.
  * the one-step φ of subsampled mechanisms by trapezoid quadrature in the
    output space (Zhu App. E "double quadrature"): estimated by comparing the
    final δ with the one obtained from every second output node.
  * point masses (randomized response, the two atoms of the Laplace PLD) are
    never integrated: the purely atomic part of a composition is enumerated
    exactly and only the remainder (which has no atoms) is inverted.
If the requested budget cannot be met within the work caps a CFAccuracyError
is raised; no silent number is ever returned.

Conventions (same as dp_accounting): direction "remove" is the pair
(M(D ∪ {x}), M(D)) and "add" is (M(D), M(D ∪ {x})).  Poisson subsampling
follows Theorem 11 of Zhu et al.: add = (P, (1-γ)P + γQ), remove =
((1-γ)Q + γP, Q) for the base pair (P, Q); for the Gaussian this is
remove = ((1-γ)N(0,σ²) + γN(1,σ²), N(0,σ²)), add = the reverse mixture.

Size (~1.2k lines, over the project's ~600): mechanisms, pairs, contour inversion and the API share
private pair/term structures; splitting it into an engine/cf/ package (mechanisms, atoms/pairs,
inversion, api) is planned (issue 13) and was not done in the layering step to keep the diff a move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
from scipy import optimize
from scipy.special import gammaln

from .numerics import log1mexp, logsumexp
from .validation import DIRECTIONS, check_int

__all__ = [
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "PoissonSubsampled",
    "CFAccuracyError",
    "cf_delta",
    "cf_epsilon",
    "cf_cdf",
    "phi",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_C_MAX = 2000.0          # largest contour abscissa we use
_MAX_ATOMS = 2_000_000   # cap on the support of the exactly enumerated atomic part
_MAX_WORK = 60_000_000   # cap on (#u nodes × #output nodes) per δ evaluation


class CFAccuracyError(RuntimeError):
    """The φ-inversion cannot certify the requested error budget."""


# --------------------------------------------------------------------------
# Mechanism descriptors (all with sensitivity 1)
# --------------------------------------------------------------------------
def _check_pos(name, value):
    if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value)
            and value > 0):
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")


@dataclass(frozen=True)
class Gaussian:
    """Gaussian mechanism N(f(D), σ²), sensitivity 1 (Table 2, Lemma 35)."""

    sigma: float

    def __post_init__(self):
        _check_pos("sigma", self.sigma)


@dataclass(frozen=True)
class Laplace:
    """Laplace mechanism f(D) + Lap(b), sensitivity 1 (Table 2, Lemma 34)."""

    b: float

    def __post_init__(self):
        _check_pos("b", self.b)


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomized response, truthful with probability p (Table 2, Lemma 33)."""

    p: float

    def __post_init__(self):
        if not (isinstance(self.p, (int, float, np.floating)) and 0.0 < self.p < 1.0):
            raise ValueError(f"p must be in (0, 1) (got {self.p!r})")


@dataclass(frozen=True)
class PoissonSubsampled:
    """Poisson subsampling with rate γ of a base mechanism (Theorem 11).

    Supported bases: Gaussian (φ by output-space quadrature) and
    RandomizedResponse (exact, finite support).
    """

    base: object
    gamma: float

    def __post_init__(self):
        if not isinstance(self.base, (Gaussian, RandomizedResponse)):
            raise ValueError("base must be Gaussian or RandomizedResponse "
                             f"(got {type(self.base).__name__}; Laplace is not supported)")
        if not (isinstance(self.gamma, (int, float, np.floating)) and 0.0 < self.gamma <= 1.0):
            raise ValueError(f"gamma must be in (0, 1] (got {self.gamma!r})")


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
            raise ValueError("discrete pair has privacy loss +inf (q = 0 where p > 0)")
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


class _SubsampledGaussianPair(_Pair):
    """Poisson-subsampled Gaussian (Theorem 11), φ by output-space quadrature.

    r(o) = 1 - γ + γ exp((2o-1)/(2σ²)),  remove: L = log r, M(s) = E_{N(0,σ²)}[r^{1+s}];
    add: L = -log r, M(s) = E_{N(0,σ²)}[r^{-s}].
    """

    quadrature = True
    symmetric = False

    def __init__(self, sigma, gamma, direction):
        self.sigma = sigma
        self.gamma = gamma
        self.sign = 1.0 if direction == "remove" else -1.0
        self.l1mg = math.log1p(-gamma)
        self.lg = math.log(gamma)
        self.support = (self.l1mg, math.inf) if self.sign > 0 else (-math.inf, -self.l1mg)

    def _kappa_r(self, c):
        return 1.0 + c if self.sign > 0 else -c

    def _grid(self, c, umax, refine=1.0):
        sig = self.sigma
        kr = self._kappa_r(c)
        lo, hi = min(0.0, kr) - 13.0 * sig, max(0.0, kr) + 13.0 * sig
        # the factor 1/2 keeps the every-second-node rule (error estimate) resolved too
        h = 0.5 * min(sig / 4.0, 0.5 * sig * sig,
                      2 * math.pi / (abs(umax) / sig**2 + 9.0 / sig)) / refine
        n = int(math.ceil((hi - lo) / h))
        n += n % 2
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
        chunk = 64
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
        return K, m1, float(np.sum(w * (L - m1) ** 2)), float(np.sum(w * np.abs(L)))

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
        g = mech.gamma
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
    raise ValueError(f"unsupported mechanism descriptor {mech!r}")


def _normalize(mechanisms):
    """Accept a descriptor, a list of descriptors, or a list of (descriptor, count)."""
    if isinstance(mechanisms, (Gaussian, Laplace, RandomizedResponse, PoissonSubsampled)):
        mechanisms = [(mechanisms, 1)]
    if not isinstance(mechanisms, Iterable):
        raise ValueError("mechanisms must be a descriptor or a list of (descriptor, count)")
    merged = {}
    for item in mechanisms:
        if isinstance(item, tuple):
            mech, count = item
        else:
            mech, count = item, 1
        if not (isinstance(count, (int, np.integer)) and count >= 1):
            raise ValueError(f"count must be an integer >= 1 (got {count!r})")
        if not isinstance(mech, (Gaussian, Laplace, RandomizedResponse, PoissonSubsampled)):
            raise ValueError(f"unsupported mechanism descriptor {mech!r}")
        merged[mech] = merged.get(mech, 0) + int(count)
    if not merged:
        raise ValueError("mechanisms must not be empty")
    return list(merged.items())


def _check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS} (got {direction!r})")


def _check_err(err):
    if not (isinstance(err, (int, float, np.floating)) and math.isfinite(err) and err > 0):
        raise ValueError(f"err must be a finite number > 0 (got {err!r})")


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


# --------------------------------------------------------------------------
# contour inversion
# --------------------------------------------------------------------------
def _total_cumulants(terms, c):
    K = K1 = K2 = 0.0
    for pair, n in terms:
        k, k1, k2, _ = pair.cumulants(c)
        K += n * k
        K1 += n * k1
        K2 += n * k2
    return K, K1, K2


def _saddle(terms, x):
    """c* solving K'(c) = x (K = total CGF, convex), clipped to [-_C_MAX, _C_MAX]."""
    k1 = lambda c: _total_cumulants(terms, c)[1] - x  # noqa: E731
    f0, fm1 = k1(0.0), k1(-1.0)
    if not (math.isfinite(f0) and math.isfinite(fm1)):
        raise CFAccuracyError("non-finite cumulant generating function at the saddle search")
    if f0 <= 0.0 <= fm1 or (fm1 <= 0.0 <= f0):
        a, b = -1.0, 0.0
    elif f0 < 0:
        a, b = 0.0, 1.0
        while k1(b) < 0:
            a, b = b, 2 * b
            if b > _C_MAX:
                return _C_MAX
    else:
        a, b = -2.0, -1.0
        while k1(a) > 0:
            a, b = 2 * a, a
            if a < -_C_MAX:
                return -_C_MAX
    if k1(a) * k1(b) > 0:
        return 0.5 * (a + b)
    return optimize.brentq(k1, a, b, xtol=1e-6 * (1 + abs(a) + abs(b)), maxiter=200)


def _choose_c(c_star, kernel):
    """Keep the contour at least 0.25 away from the poles s = 0 (and s = -1)."""
    c = c_star
    if kernel == "hockey":
        if abs(c) < 0.25:
            c = 0.25 if c >= 0 else -0.25
        if abs(c + 1.0) < 0.25:
            c = -0.75 if c > -1.0 else -1.25
    else:
        if abs(c) < 0.25:
            c = 0.25 if c >= 0 else -0.25
    return c


def _grid_plan(x, c, terms, kernel, err):
    """Cumulants at c and the initial u-step h and truncation U of the inversion."""
    Kc, _, K2c = _total_cumulants(terms, c)
    logA = Kc - c * x  # log of the scale of the integrand
    kern0 = abs(_kernel(c, kernel))
    s_u = 1.0 / math.sqrt(max(K2c, 1e-300))
    L_rel = max(math.log(max(16.0 * math.exp(min(logA, 700.0)) * kern0 / err, 10.0)), 3.0)
    h = min(0.7 * math.pi * s_u * math.sqrt(2.0 / L_rel), 1e6)
    d_pole = abs(c) if kernel == "tail" else min(abs(c), abs(1.0 + c))
    res_mag = max(1.0, math.exp(min(x, 700.0))) if kernel == "hockey" else 1.0
    h = min(h, 2 * math.pi * d_pole / math.log(max(64.0 * res_mag / err, 10.0)))
    D = _alias_distance(x, c, terms, kernel, err / 8.0)
    if math.isfinite(D):
        h = min(h, 2 * math.pi / D)
    U = max(s_u * math.sqrt(2.0 * L_rel) + 4 * h, 8 * h)
    return Kc, K2c, logA, kern0, s_u, L_rel, h, U


def _pick_contour(x, c_star, terms, kernel, err):
    """Contour abscissa c (and its grid plan) with the least estimated work.

    Any c > 0 gives the exact value; the saddle point c* minimises the integrand's scale
    (relative accuracy for tiny δ), but far in the tail the tilted law can be multimodal
    (e.g. single "hits" of a subsampled Gaussian), which forces a fine u-step (see
    :func:`_alias_distance`).  With an absolute error budget a smaller c is often much
    cheaper, so c*/2^k (k ≤ 6, c ≥ 0.25) are tried and the one with the fewest estimated
    node evaluations (U/h × output-grid size) is used.
    """
    cands = [c_star]
    if c_star > 0.25:
        cands += [c_star / 2**k for k in range(1, 7) if c_star / 2**k >= 0.25]
    plans = [_grid_plan(x, c, terms, kernel, err) for c in cands]
    # the truncation point is set later by the tail bound and depends mostly on the slowest
    # decaying part of φ, common to all c (the variance-based U of a multimodal tilted law
    # underestimates it): compare the candidates at a common U
    U = max(p[7] for p in plans)
    best = None
    for c, plan in zip(cands, plans):
        h = plan[6]
        w = (U / h + 1) * sum(1 + (p._grid(c, U)[0].size if p.quadrature else 0) for p, _ in terms)
        if best is None or w < 0.5 * best[0]:  # prefer c closer to the saddle unless 2× cheaper
            best = (w, c, plan)
    return best[1], best[2]


def _alias_distance(x, c, terms, kernel, budget):
    """Shift D beyond which the trapezoid aliases on the side the poles do not cover are < budget.

    The trapezoid rule with step h in u returns Σ_k ψ(x + kD) e^{-cx}, D = 2π/h, where
    ψ(y) = f(y) e^{cy} and f is the function being inverted (δ, or the tail, minus the
    residues / exactly handled parts).  For c > 0 the aliases k ≥ 1 are f(x+kD) e^{ckD}:
    δ decays but e^{ckD} grows, and for a multimodal tilted law (e.g. a subsampled
    Gaussian tilted so far that single "hits" carry visible mass) a remote mode can sit at
    a multiple of both D and D/2, which the |T_h - T_2h| estimate cannot see.  Chernoff at
    c' > c bounds them: f(y) ≤ 3κ(c') e^{K(c') - c'y}, κ(t) = t^t/(1+t)^{1+t} (hockey
    kernel; 1 for the tail), so alias_k ≤ 3κ e^{K(c') - c'x} e^{-(c'-c)kD}.  Symmetrically
    for c < -1 (lower side, c' < c, κ at t = -c'-1).  For -1 ≤ c ≤ 0 both sides decay like
    the pole distance, handled by the caller.  Returns the smallest such D over a set of c'.
    """
    if -1.0 <= c <= 0.0:
        return math.inf
    sign = 1.0 if c > 0 else -1.0
    best = math.inf
    for step in (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0):
        cp = c + sign * step * max(1.0, abs(c)) ** 0.5
        if abs(cp) > 2 * _C_MAX:
            break
        try:
            Kp = _total_cumulants(terms, cp)[0]
        except (FloatingPointError, OverflowError, ValueError):
            continue
        if not math.isfinite(Kp):
            continue
        t = cp if sign > 0 else -cp - 1.0
        log_kappa = (t * math.log(t) - (1 + t) * math.log1p(t)) if (kernel == "hockey" and t > 0) else 0.0
        gap = abs(cp - c)
        need = (math.log(3.0) + log_kappa + Kp - cp * x - math.log(budget / 2.0)) / gap
        best = min(best, max(need, math.log(2.0) / gap, 1e-12))
    return best


def _kernel(s, kernel):
    return 1.0 / (s * (s + 1.0)) if kernel == "hockey" else 1.0 / s


def _invert(x, terms, kernel, err, want_cdf=False, info=None):
    """Value of E_P[g(L)] for the composition `terms`; g = (1-e^{x-L})_+ or 1{L>x}.

    Returns (value, error_bound).  Raises CFAccuracyError if err is not reachable.
    """
    all_atoms = all(p.atoms is not None for p, _ in terms)
    any_cont = any(p.has_cont for p, _ in terms)
    lo_sup = sum(n * p.support[0] for p, n in terms)
    hi_sup = sum(n * p.support[1] for p, n in terms)
    if info is not None:
        info["deriv"] = None
    if x >= hi_sup:  # nothing above x: δ = 0, Pr[L ≤ x] = 1 exactly
        return (1.0, 0.0) if want_cdf else (0.0, 0.0)
    if want_cdf and x < lo_sup:
        return 0.0, 0.0

    atomic = atomic_le = 0.0
    deriv = 0.0  # d/dx of the hockey-stick value (used by cf_epsilon's Newton steps)
    if all_atoms:
        vals, lws = _compose_atoms(terms)
        atomic = _atomic_value(x, vals, lws, kernel)
        if np.any(vals > x):
            deriv -= math.exp(x) * float(np.exp(logsumexp(lws[vals > x] - vals[vals > x])))
        # rounding: each log-weight / loss carries an absolute error ~ eps·|value|
        atom_rnd = 8 * 2.2e-16 * (1.0 + float(np.max(np.abs(lws))) + float(np.max(np.abs(vals)))
                                  + abs(x) + math.log(vals.size + 1.0)) * max(atomic, 1e-300)
        if want_cdf:
            atomic_le = float(np.exp(logsumexp(lws[vals <= x]))) if np.any(vals <= x) else 0.0
        if not any_cont:
            if want_cdf:
                return atomic_le, 1e-15 + atom_rnd
            if info is not None:
                info["deriv"] = deriv
            return atomic, atom_rnd
    split = all_atoms
    # first-order continuous terms n_i A_i^{n_i-1} C_i Π_{k≠i} A_k^{n_k} decay only like 1/u;
    # when the continuous parts are exponential densities (Laplace) they are evaluated
    # in closed form and subtracted from the integrand.
    first = [i for i, (p, n) in enumerate(terms) if p.has_cont]
    if not (split and all(terms[i][0].cont_exp is not None for i in first)):
        first = []
    first_val = first_le = 0.0
    for i in first:
        sub_terms = [(p, n - 1 if j == i else n) for j, (p, n) in enumerate(terms)
                     if not (j == i and n == 1)]
        if sub_terms:
            v1, lw1 = _compose_atoms(sub_terms)
        else:
            v1, lw1 = np.zeros(1), np.zeros(1)
        lw1 = lw1 + math.log(terms[i][1])
        fv, fl, fd = _exp_density_expect(x, v1, lw1, terms[i][0].cont_exp, kernel)
        first_val += fv
        first_le += fl
        deriv += fd
    if first and len(first) == 1 and terms[first[0]][1] == 1:
        # a single continuous factor: the remainder beyond first order is identically 0
        e0 = 1e-15 * (atomic + first_val + 1e-300)
        if want_cdf:
            return atomic_le + first_le, 1e-15
        if info is not None:
            info["deriv"] = deriv
        return atomic + first_val, e0

    c = _choose_c(_saddle(terms, x), kernel)
    # Chernoff shortcut (at the saddle point, where it is tightest): the remainder is below
    # the budget altogether.
    if kernel == "hockey" and c > 0 and not want_cdf:
        cb = _total_cumulants(terms, c)[0] - c * x + c * math.log(c) - (1 + c) * math.log1p(c)
        if cb < math.log(err / 2.0):
            bound = math.exp(cb)
            return atomic + first_val + bound / 2.0, bound / 2.0 + 1e-15 * (atomic + first_val)
    c, (Kc, K2c, logA, kern0, s_u, L_rel, h, U) = _pick_contour(x, c, terms, kernel, err)
    # residues (contour to the left of poles)
    residue = 0.0
    if c < 0:
        m0, m1 = 0.0, 0.0  # log M(0), log M(-1) of the total law; 0 for probability pairs
        for pair, n in terms:
            m0 += n * pair.cumulants(0.0)[0]
            m1 += n * pair.cumulants(-1.0)[0]
        a0 = a1 = -np.inf
        if split:
            a0 = sum(n * float(logsumexp(p.atoms[1])) for p, n in terms)
            a1 = sum(n * float(logsumexp(p.atoms[1] - p.atoms[0])) for p, n in terms)
        j0 = float(np.exp(_first_order_log(0.0, np.zeros(1), terms, first)[0]).real)
        j1 = float(np.exp(_first_order_log(-1.0, np.zeros(1), terms, first)[0]).real)
        residue = math.exp(m0) - math.exp(a0) - j0
        if kernel == "hockey" and c < -1:
            residue -= math.exp(x) * (math.exp(m1) - math.exp(a1) - j1)
            deriv -= math.exp(x) * (math.exp(m1) - math.exp(a1) - j1)


    budget = err / 4.0
    scale = math.exp(logA) if logA < 700 else float("inf")
    quad = any(p.quadrature for p, _ in terms)

    def work(U_, h_, refine_):
        n_ = U_ / h_ + 1
        return n_ * sum(1 + (p._grid(c, U_)[0].size * refine_ if p.quadrature else 0)
                        for p, _ in terms)

    def too_much(U_, h_, refine_):
        w = work(U_, h_, refine_)
        if w > _MAX_WORK:
            raise CFAccuracyError(
                f"φ inversion would need {w:.3g} node evaluations (cap {_MAX_WORK:.3g}) "
                f"to reach err={err:g} (u-range {U_:.3g}, step {h_:.3g}); "
                "cannot meet the error budget")

    # phase 1: truncation point U, certified by the tail bound (independent of h)
    march_work = [0]
    for _ in range(60):
        tail_ok, tail_err, U_new = _tail_bound(x, c, U, terms, kernel, Kc, split, budget, first,
                                               march_work)
        if tail_ok:
            break
        U = U_new
        too_much(U, h, 1.0)
    else:
        raise CFAccuracyError(f"could not certify the u-truncation error for err={err:g}")

    # phase 2: trapezoid on [0, U]; halve h (reusing the nodes) / refine output grid
    refine = 1.0
    n_nodes = int(math.ceil(U / h))
    n_nodes += n_nodes % 2
    too_much(n_nodes * h, h, refine)
    u = h * np.arange(n_nodes + 1)
    F, Fe, D = _integrand(x, c, u, terms, kernel, Kc, split, refine, first)
    last_phi = np.inf
    for _ in range(16):
        val_f = h * (0.5 * F[0] + F[1:].sum())
        val_c = 2 * h * (0.5 * F[0] + F[2::2].sum())
        trap_err = abs(val_f - val_c)  # |T_h - T_2h| (bounds the error of T_h)
        phi_err = h * (0.5 * Fe[0] + Fe[1:].sum())  # output quadrature + rounding
        if quad and scale * phi_err / math.pi > budget:
            if refine >= 4.0 and phi_err > 0.5 * last_phi:
                raise CFAccuracyError(
                    f"output-space quadrature error of the one-step φ is at its rounding "
                    f"floor ({scale * phi_err / math.pi:.3g} after {len(terms)}-term "
                    f"composition) above the budget err/4={budget:g}; cannot meet err={err:g}")
            last_phi = phi_err
            refine *= 2.0
            too_much(u[-1], h, refine)
            F, Fe, D = _integrand(x, c, u, terms, kernel, Kc, split, refine, first)
            continue
        if scale * trap_err / math.pi > budget:
            too_much(u[-1], h / 2, refine)
            um = u[:-1] + 0.5 * h
            Fm, Fem, Dm = _integrand(x, c, um, terms, kernel, Kc, split, refine, first)
            u2 = np.empty(2 * u.size - 1)
            F2, Fe2, D2 = np.empty_like(u2), np.empty_like(u2), np.empty_like(u2)
            u2[::2], u2[1::2] = u, um
            F2[::2], F2[1::2] = F, Fm
            Fe2[::2], Fe2[1::2] = Fe, Fem
            D2[::2], D2[1::2] = D, Dm
            u, F, Fe, D, h = u2, F2, Fe2, D2, h / 2
            continue
        break
    else:
        raise CFAccuracyError(
            f"φ inversion did not reach err={err:g} after refinement (h={h:.3g}, U={U:.3g})")
    value = residue + scale * val_f / math.pi
    rounding = 64 * 2.2e-16 * (abs(residue) + scale * abs(val_f) / math.pi)
    total_err = scale * (trap_err + phi_err) / math.pi + tail_err + rounding
    if total_err > err:
        raise CFAccuracyError(
            f"φ inversion reached error {total_err:.3g} > requested err={err:g}")
    if info is not None and kernel == "hockey":
        info["deriv"] = deriv + scale * h * (0.5 * D[0] + D[1:].sum()) / math.pi
    if want_cdf:  # Pr[L <= x] without the 1 - (1 - small) cancellation
        if c < 0:
            return atomic_le + first_le - scale * val_f / math.pi, total_err + 1e-15
        return 1.0 - atomic - first_val - value, total_err + 1e-15
    return atomic + first_val + value, total_err + 1e-15 * (atomic + abs(first_val))


def _composed_log_mgf(c, u, terms, refine, coarse=False):
    tot = np.zeros(u.shape, dtype=complex)
    atom = np.zeros(u.shape, dtype=complex)
    perr = np.zeros(u.shape)
    for pair, n in terms:
        if pair.quadrature:
            lm, e = pair.log_mgf(c, u, refine=refine)
            k = pair.cumulants(c)[0]
            perr += n * e * np.exp(k - lm.real)  # relative error of M^n ≈ n |ΔM|/|M|
        else:
            lm, _ = pair.log_mgf(c, u)
        tot += n * lm
        if pair.atoms is not None:
            atom += n * pair.log_mgf_atoms(c, u)
    return tot, atom, perr


def _first_order_log(c, u, terms, first):
    """log Σ_i n_i A_i^{n_i-1} C_i Π_{k≠i} A_k^{n_k} at s = c+iu (complex; -inf if empty)."""
    u = np.asarray(u, dtype=float)
    if not first:
        return np.full(u.shape, -np.inf + 0j)
    la = [p.log_mgf_atoms(c, u) for p, _ in terms]
    tot_a = sum(n * a for (p, n), a in zip(terms, la))
    parts = [math.log(terms[i][1]) + tot_a - la[i] + terms[i][0].log_mgf_cont(c, u) for i in first]
    return _clogsumexp(parts)


def _exp_density_expect(x, v, lw, cont_exp, kernel):
    """Σ_k e^{lw_k} E[g(v_k + Y)] for Y with density e^{k0 + r y} on (lo, hi), and
    Σ_k e^{lw_k} Pr[v_k + Y ≤ x] (for the CDF)."""
    lo, hi, r, k0 = cont_exp
    t = np.maximum(lo, x - v)
    live = t < hi
    val = tail_mass = deriv = 0.0
    if np.any(live):
        tt, vv, ww = t[live], v[live], lw[live]
        base = np.exp(ww + k0 + r * tt)
        tail = np.expm1(r * (hi - tt)) / r
        tail_mass = float(np.sum(base * tail))
        q_tail = np.exp(x - vv - tt) * np.expm1((r - 1) * (hi - tt)) / (r - 1)
        if kernel == "hockey":
            val = float(np.sum(base * (tail - q_tail)))
            deriv = -float(np.sum(base * q_tail))
        else:
            val = tail_mass
    mass = float(np.sum(np.exp(lw + k0 + r * lo) * np.expm1(r * (hi - lo)) / r))
    return val, mass - tail_mass, deriv


def _integrand(x, c, u, terms, kernel, Kc, split, refine, first=()):
    """Re F(u) scaled by exp(-(K(c) - c x)), and a bound on its output-quadrature error."""
    tot, atom, perr = _composed_log_mgf(c, u, terms, refine)
    s = c + 1j * u
    ph = -1j * u * x
    R = np.exp(tot - Kc + ph)
    kabs = np.abs(_kernel(s, kernel))
    # floating-point error of the terms (exponent error ≈ eps |log term|)
    big = 1.0 + abs(Kc) + np.abs(u * x)
    rnd = np.abs(R) * (big + np.abs(tot))
    if split:
        Ra = np.exp(atom - Kc + ph)
        rnd = rnd + np.abs(Ra) * (big + np.abs(atom))
        R = R - Ra
    if first:
        lf = _first_order_log(c, u, terms, first)
        Rf = np.exp(lf - Kc + ph)
        rnd = rnd + np.abs(Rf) * (big + np.abs(lf))
        R = R - Rf
    G = R * _kernel(s, kernel)
    D = (-R / (s + 1.0)).real  # integrand of dδ/dx (hockey kernel)
    # propagated output-quadrature error: |ΔR| ≲ perr |R|; rounding error bound
    return G.real, np.minimum(perr, 1.0) * np.abs(G) + 8 * 2.2e-16 * rnd * kabs, D


def _tail_bound(x, c, U, terms, kernel, Kc, split, budget, first=(), work=None):
    """Bound on (1/π)|∫_U^∞ F| in absolute units.  Returns (ok, bound, new_U).

    ``work`` (a one-element list) accumulates the output-quadrature nodes spent
    by the Lipschitz marches; see :func:`_march`."""
    logA = Kc - c * x
    # ratio bounds b_i(u) ≥ |M_i(c+iu)|/M_i(c), valid and non-increasing for u ≥ U
    atom_frac = []
    for pair, n in terms:
        if pair.atoms is not None:
            k = pair.cumulants(c)[0]
            atom_frac.append(math.exp(float(logsumexp(pair.atoms[1] + c * pair.atoms[0])) - k))
        else:
            atom_frac.append(0.0)
    u_grid = U * np.exp2(np.arange(0, 61))
    log_b = np.zeros(u_grid.shape)  # log Π (a_i + b_i)^{n_i}
    log_a = 0.0
    n_quad = sum(n for p, n in terms if p.quadrature)
    other = np.zeros(u_grid.shape)
    for (pair, n), a in zip(terms, atom_frac):
        if pair.quadrature:
            continue
        with np.errstate(divide="ignore"):
            other += n * np.log(np.minimum(a + pair.cont_bound(c, u_grid), 1.0 + 1e-12))
        log_a += n * (math.log(a) if a > 0 else -np.inf)
    if n_quad:
        # target ratio for each quadrature factor so that the tail is within budget
        kern_int = 1.0 / U if kernel == "hockey" else 60 * math.log(2.0)
        log_target = (math.log(budget * math.pi / 2) - logA - other[0]
                      - math.log(kern_int)) / n_quad
        log_target = min(log_target, math.log(1 - 1e-9))
        for pair, n in terms:
            if not pair.quadrature:
                continue
            ok, blog, u_fail = _march(pair, c, U, log_target, work)
            if not ok:
                return False, np.inf, max(2 * U, 1.2 * u_fail)
            other += n * blog(u_grid)
    log_b = other
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        B = np.exp(log_b)
        if split and np.isfinite(log_a):
            B = B - math.exp(log_a)
            for i in first:  # remove the first-order terms (handled exactly)
                pair, n = terms[i]
                B = B - n * pair.cont_bound(c, u_grid) * math.exp(log_a) / atom_frac[i]
        B = np.maximum(B, 0.0)
    if kernel == "hockey":
        seg = 1.0 / u_grid[:-1] - 1.0 / u_grid[1:]
        last = 1.0 / u_grid[-1]
    else:
        seg = np.full(u_grid.size - 1, math.log(2.0))
        last = 1.0  # assumes ≥ 1/u decay of the bound beyond the last point
    tail = (np.sum(B[:-1] * seg) + B[-1] * last) * math.exp(min(logA, 700.0)) / math.pi
    if tail > budget:
        return False, tail, 2 * U
    return True, tail, U


def _march(pair, c, U, log_target, work=None):
    """Certify |M(c+iu)|/M(c) ≤ target for all u ≥ U (quadrature pairs).

    Lipschitz march: |d/du M(c+iu)| ≤ E_P[|L| e^{cL}] = λ M(c); probes until the
    total-variation bound TV/u is below the target.  Returns (ok, log_bound_fn, u_fail).
    Each probe at u costs an output grid of O(u) nodes; ``work`` (a one-element
    list, shared by all marches of one inversion) counts them, and once it exceeds
    _MAX_WORK a CFAccuracyError is raised (near-lattice privacy losses, e.g. very
    small γ·√T with small σ, whose φ decays too slowly to certify the budget).
    """
    if work is None:
        work = [0]
    target = math.exp(log_target)
    lam = pair.cumulants(c)[3]
    tv = pair.tv_bound(c)
    u_tv = tv / target
    u = U
    for _ in range(400):
        if u >= u_tv:
            break
        work[0] += pair._grid(c, u)[0].size
        if work[0] > _MAX_WORK:
            raise CFAccuracyError(
                f"certifying the φ tail beyond u={u:.3g} (up to {u_tv:.3g}) exceeds the work cap "
                f"({_MAX_WORK:.3g} output-quadrature nodes): φ decays too slowly; "
                "cannot meet the error budget")
        lm, e = pair.log_mgf(c, np.array([u]))
        rho = math.exp(lm[0].real - pair.cumulants(c)[0]) + e[0] + 1e-13
        if rho >= target:
            return False, None, u
        # |M(u')| ≤ |M(u)| + λ|u'-u| M(c): the bound stays below the target up to u + step
        step = (target - rho) / max(lam, 1e-300)
        u = u + max(step, 1e-9 * (1 + u))
    else:
        return False, None, u

    def log_bound(uu, tv=tv, target=target):
        uu = np.asarray(uu, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(np.minimum(target, np.maximum(tv / uu, 0.0)))

    return True, log_bound, u


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def _terms(mechanisms, direction):
    return [(_make_pair(m, direction), n) for m, n in _normalize(mechanisms)]


def _is_symmetric(mechanisms):
    return all(_make_pair(m, "remove").symmetric for m, _ in _normalize(mechanisms))


def cf_delta(epsilon, mechanisms, direction="add_remove", err=1e-10):
    """δ(ε) of the composition by inverting the φ-function (Lemma 5 / Lemma 19).

    Parameters
    ----------
    epsilon : float (may be negative: H_{e^ε} for α = e^ε < 1)
    mechanisms : descriptor, list of descriptors, or list of (descriptor, count)
    direction : "add", "remove" or "add_remove" (pointwise max of the two, §4.1)
    err : absolute error budget on δ

    Returns (delta, error_bound); raises CFAccuracyError if err is not reachable.
    """
    if not (isinstance(epsilon, (int, float, np.floating)) and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite real number (got {epsilon!r})")
    _check_direction(direction)
    _check_err(err)
    if direction == "add_remove":
        if _is_symmetric(mechanisms):
            return cf_delta(epsilon, mechanisms, "remove", err)
        a = cf_delta(epsilon, mechanisms, "add", err)
        r = cf_delta(epsilon, mechanisms, "remove", err)
        return (a[0], a[1]) if a[0] >= r[0] else (r[0], r[1])
    val, e = _invert(float(epsilon), _terms(mechanisms, direction), "hockey", err)
    return max(val, 0.0), e


def cf_cdf(x, mechanisms, direction="remove", under="P", err=1e-10):
    """CDF of the composed privacy loss, Pr[L ≤ x], by Lévy inversion (Lemma 18).

    under="P": L ~ P (Zhu's F up to the sign convention L = log p/q);
    under="Q": L evaluated at o ~ Q (uses M_Q(s) = M(s-1)).
    Returns (value, error_bound).
    """
    _check_direction(direction)
    if direction == "add_remove":
        raise ValueError("direction must be 'add' or 'remove' for cf_cdf (got 'add_remove')")
    if under not in ("P", "Q"):
        raise ValueError(f"under must be 'P' or 'Q' (got {under!r})")
    _check_err(err)
    terms = _terms(mechanisms, direction)
    if under == "Q":
        terms = [(_ShiftedPair(p), n) for p, n in terms]
    val, e = _invert(float(x), terms, "tail", err, want_cdf=True)
    return min(max(val, 0.0), 1.0), e


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

    def _grid(self, c, umax, refine=1.0):
        return self.p._grid(c - 1.0, umax, refine)


def _chernoff_epsilon(delta, terms):
    """ε such that the Chernoff/RDP-type bound δ(ε) ≤ e^{K(c)-cε} c^c/(1+c)^{1+c} equals δ,
    minimised over c > 0 (a guaranteed upper bracket for ε(δ))."""
    def eps_of(logc):
        c = math.exp(logc)
        K = _total_cumulants(terms, c)[0]
        return (K + c * math.log(c) - (1 + c) * math.log1p(c) - math.log(delta)) / c
    res = optimize.minimize_scalar(eps_of, bounds=(math.log(1e-3), math.log(_C_MAX)),
                                   method="bounded", options={"xatol": 1e-3})
    return max(float(res.fun), 0.0)


def cf_epsilon(delta, mechanisms, direction="add_remove", err=None):
    """ε(δ) by root finding on δ(ε) (Algorithm 1 uses bisection; here Brent + Newton).

    err is the absolute budget for each δ(ε) evaluation near the root (default δ·1e-6).
    Returns (epsilon, error_bound): the true ε(δ) of the dominating pair lies in
    [epsilon - error_bound, epsilon + error_bound] (δ-inversion error propagated).
    """
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    _check_direction(direction)
    if err is None:
        err = delta * 1e-6
    _check_err(err)
    if err >= delta:
        raise ValueError(f"err must be < delta (got err={err}, delta={delta})")
    if direction == "add_remove" and not _is_symmetric(mechanisms):
        # ε_add_remove = max(ε_add, ε_remove).  Remove usually dominates for ε ≥ 0 (Zhu Prop. 30;
        # after composition this is Lebeda's Conjecture 12, so it is checked, not assumed): if
        # δ_add(ε_remove) + its error ≤ δ then ε_add ≤ ε_remove and one δ evaluation settles it.
        r = cf_epsilon(delta, mechanisms, "remove", err)
        v, e = cf_delta(r[0], mechanisms, "add", err)
        if v + e <= delta:
            return r
        a = cf_epsilon(delta, mechanisms, "add", err)
        return a if a[0] >= r[0] else r
    d = "remove" if direction == "add_remove" else direction
    terms = _terms(mechanisms, d)
    memo = {}

    def ev(e):
        e = float(e)
        if e not in memo:
            info = {}
            v, er = _invert(e, terms, "hockey", err, info=info)
            memo[e] = (v, er, info.get("deriv"))
        return memo[e]

    # bracket: hi from the Chernoff bound (δ(hi) ≤ delta), lo by halving
    hi = _chernoff_epsilon(delta, terms)
    lo = 0.5 * hi
    while True:
        if lo < 1e-3 * max(hi, 1e-3):
            d0, e0, _ = ev(0.0)
            if d0 + e0 <= delta:
                return 0.0, 0.0
            lo = 0.0
            break
        if ev(lo)[0] > delta:
            break
        hi, lo = lo, 0.5 * lo
    while ev(hi)[0] > delta:  # bound and inversion disagree: widen
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            raise CFAccuracyError("epsilon(delta) exceeds 1e4; no bracket found")
    # safeguarded Newton on log δ(ε) with the exact derivative of the inversion,
    # started at the log-linear interpolation between the bracket ends
    lv, hv = ev(lo)[0], ev(hi)[0]
    if lo > 0 and lv > 0 and hv > 0:
        x = lo + (math.log(lv / delta)) / (math.log(lv / hv)) * (hi - lo)
    else:
        x = hi
    for _ in range(60):
        v, er, dv = ev(x)
        if v > delta:
            lo = x
        else:
            hi = x
        g = math.log(max(v, 1e-300)) - math.log(delta)
        if dv is not None and dv < 0 and v > 0:
            xn = x - g * v / dv
        else:
            xn = 0.5 * (lo + hi)
        if not (lo < xn < hi):
            xn = 0.5 * (lo + hi)
        if abs(v - delta) <= 0.25 * er:  # converged to within the inversion error
            break
        if abs(xn - x) < 1e-11 * (1 + x) or hi - lo < 1e-11 * (1 + x):
            x = xn
            break
        x = xn
    root = x
    # error on ε: an interval on which δ ± err brackets the target
    dr, er, dv = ev(root)
    slope = -dv if (dv is not None and dv < 0) else max(
        (dr - ev(root + 1e-6 * (1 + root))[0]) / (1e-6 * (1 + root)), 1e-300)
    de = 1.5 * (er + abs(dr - delta)) / slope + 1e-12 * (1 + root)
    for _ in range(60):
        up, eu, _ = ev(root + de)
        if root - de <= 0:
            lower_ok = True
        else:
            dn, ed, _ = ev(root - de)
            lower_ok = dn - ed >= delta
        if up + eu <= delta and lower_ok:
            return root, de
        de *= 2.0
    raise CFAccuracyError("could not bracket epsilon within the δ error budget")


def phi(t, mechanisms, direction="remove", dual=False):
    """Zhu's φ-function of the composition (Definition 12, Proposition 13).

    dual=False: φ(t) = E_P[e^{it log(p/q)}] = M(it);
    dual=True:  φ'(t) = E_Q[e^{it log(q/p)}] = M(-1-it).
    """
    _check_direction(direction)
    if direction == "add_remove":
        raise ValueError("direction must be 'add' or 'remove' for phi (got 'add_remove')")
    t = np.atleast_1d(np.asarray(t, dtype=float))
    c, u = (-1.0, -t) if dual else (0.0, t)
    tot = np.zeros(t.shape, dtype=complex)
    for pair, n in _terms(mechanisms, direction):
        tot += n * pair.log_mgf(c, u)[0]
    return np.exp(tot)


# --------------------------------------------------------------------------
# the common accountant interface (dpsampling.engine.accountant, method="cf")
# --------------------------------------------------------------------------
def _subsampled(sigma, q, steps):
    return [(PoissonSubsampled(Gaussian(float(sigma)), float(q)), check_int("steps", steps))]


def _with_context(exc, what, sigma, q, steps, direction):
    return CFAccuracyError(f"φ accountant ({what}, Poisson σ={sigma:g}, q={q:g}, T={int(steps)}, "
                           f"{direction}) failed its error budget: {exc}")


def accounting_delta(epsilon, sigma, q, steps, direction="add_remove", rel_tol=1e-3):
    """δ(ε) of T-fold Poisson-subsampled Gaussian (σ, q) as AccountingResult keyword arguments.

    Used by :func:`dpsampling.engine.accountant.delta` (method "cf"); WOR callers pass σ/2
    (Lebeda Prop. 9).  Error budget: absolute err = 1e-3·rel_tol·δ (first pass at 1e-10,
    tightened once the size of δ is known).  ``kind`` is "estimate": ``value`` is the φ
    inversion, ``lower``/``upper`` = value ∓ its certified error bound (accuracy["err"]).
    Raises CFAccuracyError (saying so) if even the first budget cannot be met.
    """
    m = _subsampled(sigma, q, steps)
    target = 1e-10
    try:
        v, e = cf_delta(float(epsilon), m, direction, err=target)
    except CFAccuracyError as exc:
        raise _with_context(exc, f"δ at ε={float(epsilon):g}", sigma, q, steps, direction) from exc
    want = 1e-3 * rel_tol * v
    if v > 0 and e > want:
        # tighten; if the budget is below what the inversion can certify (e.g. the rounding
        # floor of the output quadrature for δ ≈ 1e-24), relax it 100× at a time
        t = max(want, 1e-300)
        while t < target:
            try:
                v, e = cf_delta(float(epsilon), m, direction, err=t)
                target = t
                break
            except CFAccuracyError:
                t *= 100.0
    flags = ("rel_tol_not_met",) if e > rel_tol * v else ()
    acc = {"err": float(e), "err_budget": float(target), "rel_tol": rel_tol,
           "est_rel_error": float(e / v) if v > 0 else 0.0}
    return dict(value=float(v), kind="estimate", method="cf", accuracy=acc,
                lower=max(float(v - e), 0.0), upper=float(v + e), flags=flags)


def accounting_epsilon(delta, sigma, q, steps, direction="add_remove", rel_tol=1e-3):
    """ε(δ) counterpart of :func:`accounting_delta`: δ-inversions with absolute budget
    1e-3·rel_tol·δ near the root, relaxed once to rel_tol·δ if that cannot be certified;
    ``accuracy["err"]`` is the certified half-width on ε (flag "rel_tol_not_met" if > rel_tol·ε)."""
    m = _subsampled(sigma, q, steps)
    for budget in (1e-3 * rel_tol * float(delta), rel_tol * float(delta)):
        try:
            v, e = cf_epsilon(float(delta), m, direction, err=budget)
            break
        except CFAccuracyError as exc:
            last = exc
    else:
        raise _with_context(last, f"ε at δ={float(delta):g}", sigma, q, steps, direction) from last
    acc = {"err": float(e), "delta_err_budget": budget, "rel_tol": rel_tol,
           "est_rel_error": float(e / v) if v > 0 else 0.0}
    flags = ("rel_tol_not_met",) if e > rel_tol * v else ()
    return dict(value=float(v), kind="estimate", method="cf", accuracy=acc,
                lower=max(float(v - e), 0.0), upper=float(v + e), flags=flags)
