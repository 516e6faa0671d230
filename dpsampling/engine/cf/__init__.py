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
is raised; no silent number is ever returned.  Where a necessary condition for
certifying the u-truncation within the caps already fails (read off the march's
largest step and grid sizes, see inversion._tail_out_of_reach) it is raised before
any march, with the same outcome in microseconds instead of seconds.

Conventions (same as dp_accounting): direction "remove" is the pair
(M(D ∪ {x}), M(D)) and "add" is (M(D), M(D ∪ {x})).  Poisson subsampling (rate q, Zhu's γ)
follows Theorem 11 of Zhu et al.: add = (P, (1-q)P + qQ), remove =
((1-q)Q + qP, Q) for the base pair (P, Q); for the Gaussian this is
remove = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)), add = the reverse mixture.

Package layout: :mod:`.mechanisms` (descriptors, CFAccuracyError), :mod:`.pairs` (one-step
M(s) per mechanism and direction, exact atomic part), :mod:`.inversion` (contour inversion and its
error certificate), :mod:`.api` (cf_delta, cf_epsilon, cf_cdf, phi and the accountant interface).
"""

from .api import accounting_delta, accounting_epsilon, cf_cdf, cf_delta, cf_epsilon, phi
from .mechanisms import CFAccuracyError, Gaussian, Laplace, PoissonSubsampled, RandomizedResponse

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
    "accounting_delta",
    "accounting_epsilon",
]
