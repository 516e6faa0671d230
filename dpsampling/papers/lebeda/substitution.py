"""§7 / Fig. 3: three worst-case candidates of the WOR Laplace mechanism under substitution.

Lebeda et al. (2024) §7.  Datasets of size 2, batches of size 1 (γ = 1/2; ``q`` in code, and k = 2 is ``steps``),
Laplace noise of scale 2 (density e^{-|x-μ|/2}/4, the same scale
parametrisation as Prop. 9's Lap(0, s)), 2 queries, x_1 = -1 in both:

    P = ½·Lap(-1, 2) + ½·Lap(1, 2)   (x_2 = 1 in the query),
    Q = Lap(-1, 2)                    (x_2 = -1 in the query).

Candidates for the 2-fold curve: H_{e^ε}(P×P ‖ Q×Q), H_{e^ε}(Q×Q ‖ P×P) and
the mixed pair H_{e^ε}(P×Q ‖ Q×P) (x_2 = (1, -1), x_2' = (-1, 1)).  The paper
prints the mixed pair as "H_{e^ε}(P×Q ‖ P×Q)" (both versions), which is
identically 0; its description of x_2, x_2' gives P×Q ‖ Q×P, used here.

P is Q's mixture with a component shifted by Δ = 2, so (P, Q) is the
"remove" pair and (Q, P) the "add" pair of a subsampled Laplace mechanism
with scale b = 2, weight w = ½, shift Δ = 2 (after translating by +1).  The
three candidates are the 2-fold compositions remove∘remove, add∘add and
remove∘add.

Exact values (``exact_curve``): for two factors,

    H_{e^ε}(A_1×A_2 ‖ B_1×B_2) = ∫ a_1(x) · h_2(ε - L_1(x)) dx,

where L_1 = log a_1/b_1 and h_2(t) = H_{e^t}(A_2‖B_2) has a closed form (the
one-step loss is monotone in the output, so the optimal set is a half-line).
L_1 is constant outside [0, Δ], so the integral is two closed-form tail
terms plus a smooth 1-D integral on [0, Δ] done by ``scipy.integrate.quad``
(breakpoints at the kinks of h_2; absolute error ≤ 1e-11, reported by quad).
dp_accounting PLDs (``pld_bounds``) and Monte Carlo (``mc_curve``) are
independent cross-checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import integrate

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_choice, check_epsilon, check_finite_list, check_positive, check_rate
from dpsampling.engine.montecarlo import MCCurve, Step, mc_hockey_stick
from dpsampling.engine.numerics import find_root

SECTION7 = {"scale": 2.0, "q": 0.5, "shift": 2.0, "steps": 2}
PAIRS = ("PP||QQ", "QQ||PP", "PQ||QP")
PAIR_DIRECTIONS = {"PP||QQ": ("remove", "remove"), "QQ||PP": ("add", "add"),
                   "PQ||QP": ("remove", "add")}
QUAD_EPSABS = 1e-12


# --------------------------------------------------------------------------
# one step: subsampled Laplace pair (base B = Lap(0,b), mixture M = (1-w)B + w Lap(Δ,b))
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class LaplaceStep:
    """One factor: ``remove`` is (M ‖ B), ``add`` is (B ‖ M)."""

    scale: float
    weight: float
    shift: float
    direction: str

    def __post_init__(self):
        check_positive("scale", self.scale)
        check_rate(self.weight, "q")
        check_positive("shift", self.shift)
        check_choice("direction", self.direction, ("add", "remove"))

    # --- distributions
    def _base_cdf(self, y):
        b = self.scale
        return np.where(y < 0, 0.5 * np.exp(np.minimum(y, 0) / b), 1 - 0.5 * np.exp(-np.maximum(y, 0) / b))

    def _base_sf(self, y):
        return self._base_cdf(-np.asarray(y, dtype=float))

    def _mix_cdf(self, y):
        w = self.weight
        return (1 - w) * self._base_cdf(y) + w * self._base_cdf(np.asarray(y) - self.shift)

    def _mix_sf(self, y):
        w = self.weight
        return (1 - w) * self._base_sf(y) + w * self._base_sf(np.asarray(y) - self.shift)

    def _pdf(self, mu, y):
        b = self.scale
        return np.exp(-np.abs(np.asarray(y) - mu) / b) / (2 * b)

    def a_pdf(self, y):
        """Density of the first distribution A of the pair."""
        if self.direction == "add":
            return self._pdf(0.0, y)
        return (1 - self.weight) * self._pdf(0.0, y) + self.weight * self._pdf(self.shift, y)

    def a_mass_left(self):
        """A(Y ≤ 0)."""
        return float(self._base_cdf(0.0) if self.direction == "add" else self._mix_cdf(0.0))

    def a_mass_right(self):
        """A(Y ≥ Δ)."""
        d = self.shift
        return float(self._base_sf(d) if self.direction == "add" else self._mix_sf(d))

    # --- privacy loss
    def _g(self, ell):
        w = self.weight
        return np.log((1 - w) + w * np.exp(ell))

    def loss(self, y):
        """L(y) = log a(y)/b(y): ±log((1-w) + w e^{ℓ(y)}), ℓ = clip(2y-Δ, -Δ, Δ)/b."""
        ell = np.clip(2 * np.asarray(y, dtype=float) - self.shift, -self.shift, self.shift) / self.scale
        v = self._g(ell)
        return v if self.direction == "remove" else -v

    def loss_range(self):
        c = self.shift / self.scale
        lo, hi = float(self._g(-c)), float(self._g(c))
        return (lo, hi) if self.direction == "remove" else (-hi, -lo)

    def _y_star(self, t):
        """y with L(y) = t inside (0, Δ)."""
        w = self.weight
        target = t if self.direction == "remove" else -t
        ell = math.log((math.expm1(target) + w) / w)  # g(ℓ) = target
        return (self.scale * ell + self.shift) / 2

    def hockey_stick(self, t):
        """h(t) = H_{e^t}(A‖B) for one step, closed form (scalar t)."""
        lo, hi = self.loss_range()
        if t < lo:
            return -math.expm1(t)  # whole line: 1 - e^t
        if t >= hi:
            return 0.0
        y = self._y_star(t)
        et = math.exp(t)
        if self.direction == "remove":  # S = {y > y*}, A = M, B = base
            v = float(self._mix_sf(y)) - et * float(self._base_sf(y))
        else:  # S = {y < y*}, A = base, B = M
            v = float(self._base_cdf(y)) - et * float(self._mix_cdf(y))
        return max(v, 0.0)

    def loss_inverse(self, value):
        """y ∈ (0, Δ) with L(y) = value (None if value is outside the open loss range)."""
        lo, hi = self.loss_range()
        if not (lo < value < hi):
            return None
        return self._y_star(value)


def _two_fold(eps, s1: LaplaceStep, s2: LaplaceStep):
    """H_{e^ε}(A_1×A_2 ‖ B_1×B_2) and quad's error estimate (scalar ε)."""
    d = s1.shift
    val = s1.a_mass_left() * s2.hockey_stick(eps - float(s1.loss(0.0)))
    val += s1.a_mass_right() * s2.hockey_stick(eps - float(s1.loss(d)))
    lo2, hi2 = s2.loss_range()
    pts = [y for y in (s1.loss_inverse(eps - lo2), s1.loss_inverse(eps - hi2)) if y is not None]
    mid, err = integrate.quad(lambda x: float(s1.a_pdf(x)) * s2.hockey_stick(eps - float(s1.loss(x))),
                              0.0, d, points=pts or None, epsabs=QUAD_EPSABS, epsrel=1e-12, limit=200)
    return val + mid, err


def laplace_two_fold(epsilon, scale, q, shift, directions, with_error=False):
    """Exact 2-fold hockey-stick curve of a subsampled Laplace pair per factor direction.

    ``directions`` = (dir_1, dir_2) with "add" = (B ‖ M), "remove" = (M ‖ B),
    B = Lap(0, scale), M = (1-γ)B + γLap(shift, scale).  ("remove","remove")
    at shift 2 is the k = 2 WOR remove curve of Prop. 9 / Fig. 1, etc.
    """
    if len(directions) != 2:
        raise ParameterError("directions", "of length 2", directions,
                             message=f"directions must have length 2 (got {directions!r})")
    s1, s2 = (LaplaceStep(float(scale), float(q), float(shift), dr) for dr in directions)
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    if e.size:
        check_finite_list("epsilon", e)
    vals, errs = zip(*(_two_fold(float(x), s1, s2) for x in e)) if e.size else ((), ())
    out = np.clip(np.array(vals, dtype=float), 0.0, 1.0)
    return (out, np.array(errs, dtype=float)) if with_error else out


# --------------------------------------------------------------------------
# §7 quantities
# --------------------------------------------------------------------------
def _check_pair(pair):
    return check_choice("pair", pair, PAIRS)


def exact_curve(epsilon, pair, with_error=False, *, scale=SECTION7["scale"], q=SECTION7["q"]):
    """H_{e^ε} of the §7 ``pair`` ("PP||QQ", "QQ||PP", "PQ||QP"), exact to ~1e-11 (quad).

    ``scale`` (Laplace scale b) and ``q`` (batch fraction, the paper's γ) default to §7's 2 and 1/2; the
    shift is always 2 (x_2 = 1 vs -1).
    """
    return laplace_two_fold(epsilon, scale, q, SECTION7["shift"], PAIR_DIRECTIONS[_check_pair(pair)],
                            with_error=with_error)


def pld_bounds(epsilon, pair, discretization=1e-4, *, scale=SECTION7["scale"], q=SECTION7["q"]):
    """(upper, lower) from dp_accounting PLDs composed per factor (independent cross-check)."""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from dpsampling.engine.pld import delta_for_epsilons

    LaplaceStep(float(scale), float(q), SECTION7["shift"], "add")  # validates scale, q
    dirs = PAIR_DIRECTIONS[_check_pair(pair)]
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    out = []
    for pess in (True, False):
        pld = pldlib.from_laplace_mechanism(float(scale), sensitivity=SECTION7["shift"], sampling_prob=float(q),
                                            pessimistic_estimate=pess, use_connect_dots=pess,
                                            value_discretization_interval=discretization)
        # dp_accounting REMOVE = (M ‖ B) up to mirroring, ADD = (B ‖ M) (see directions.py)
        pm = {"remove": pld._pmf_remove, "add": pld._pmf_add}
        comp = pm[dirs[0]].compose(pm[dirs[1]])
        out.append(np.asarray(delta_for_epsilons(comp, e), dtype=float))  # dp_accounting's reading, the same floats
    return out[0], out[1]


def mc_curve(epsilon, pair, mc_samples, mc_seed, *, mc_failure_prob=0.01, chunk_size=2**15, scale=SECTION7["scale"],
             q=SECTION7["q"]) -> MCCurve:
    """Monte Carlo estimate of the §7 ``pair`` with the montecarlo machinery (App. B.2): ``mc_samples`` draws from
    seed ``mc_seed``, band simultaneous over ``epsilon`` w.p. ≥ 1 - ``mc_failure_prob``."""
    steps = [Step("laplace", float(scale), float(q), SECTION7["shift"], d)
             for d in PAIR_DIRECTIONS[_check_pair(pair)]]
    return mc_hockey_stick(steps, epsilon, mc_samples, mc_seed, mc_failure_prob=mc_failure_prob,
                           chunk_size=chunk_size)


def max_loss(scale=SECTION7["scale"], q=SECTION7["q"]):
    """Largest 2-fold privacy loss of the three pairs, 2·log((1-γ) + γe^{2/b}) (≈ 1.2402 in §7);
    all three curves are 0 beyond it."""
    return 2 * LaplaceStep(float(scale), float(q), SECTION7["shift"], "remove").loss_range()[1]


def max_pair_intervals(eps_lo=0.0, eps_hi=None, n_grid=261, *, scale=SECTION7["scale"], q=SECTION7["q"]):
    """Which of the three pairs is the maximum on each ε interval (Fig. 3).

    Returns a list of (ε_start, ε_end, pair) over [eps_lo, eps_hi] (default
    upper end: the largest privacy loss ``max_loss`` ≈ 1.2402, beyond which
    all three are 0).  Interval ends are roots of the difference of the exact
    curves (brentq, xtol 1e-10); where all curves are 0 the pair is "none".
    """
    return list(_max_pair_intervals(float(eps_lo), None if eps_hi is None else float(eps_hi), int(n_grid),
                                    float(scale), float(q)))


@lru_cache(maxsize=8)
def _max_pair_intervals(eps_lo, eps_hi, n_grid, scale=SECTION7["scale"], q=SECTION7["q"]):
    """Cached worker of ``max_pair_intervals``."""
    if eps_hi is None:
        eps_hi = max_loss(scale, q)
    grid = np.linspace(eps_lo, eps_hi, n_grid)

    def curve(x, p):
        return exact_curve(x, p, scale=scale, q=q)

    curves = {p: curve(grid, p) for p in PAIRS}
    stack = np.vstack([curves[p] for p in PAIRS])

    def leader(i):
        if np.max(stack[:, i]) <= 1e-13:
            return "none"
        return PAIRS[int(np.argmax(stack[:, i]))]

    labels = [leader(i) for i in range(grid.size)]
    out = []
    start = float(grid[0])
    for i in range(1, grid.size):
        if labels[i] != labels[i - 1]:
            a, b = labels[i - 1], labels[i]
            if "none" in (a, b):  # curves reach 0 between grid points: keep the positive side
                edge = float(grid[i] if b == "none" else grid[i - 1])
            else:
                def f(x, a=a, b=b):
                    return float(curve([x], a)[0] - curve([x], b)[0])
                edge = find_root(f, grid[i - 1], grid[i], xtol=1e-10)
            out.append((start, edge, a))
            start = edge
    out.append((start, float(grid[-1]), labels[-1]))
    return tuple(iv for iv in out if iv[1] > iv[0])


def max_pair_interval_end(index, which="end"):
    """ε end (or start) of the ``index``-th interval of ``max_pair_intervals`` (claims helper)."""
    iv = max_pair_intervals()
    return iv[int(index)][1 if which == "end" else 0]


def all_three_are_max_somewhere():
    """§7: each of the three pairs is the maximum on some ε interval."""
    return {p for (_, _, p) in max_pair_intervals()} >= set(PAIRS)


def mixed_pair_exceeds_both(epsilon=None):
    """§7: max{H(P^k‖Q^k), H(Q^k‖P^k)} is not an upper bound for k = 2 — the mixed pair
    P×Q ‖ Q×P is strictly larger than both at some ε ≥ 0 (by more than quad error)."""
    e = np.linspace(0.0, 1.0, 101) if epsilon is None else np.asarray(epsilon, dtype=float)
    m = exact_curve(e, "PQ||QP")
    return bool(np.any(m > np.maximum(exact_curve(e, "PP||QQ"), exact_curve(e, "QQ||PP")) + 1e-9))


def mixed_pair_as_printed_is_zero(epsilon=(0.0, 0.5, 1.0)):
    """H_{e^ε}(P×Q ‖ P×Q) as literally printed is 0 for ε ≥ 0 (a distribution vs itself)."""
    return all(max(0.0, 1.0 - math.exp(x)) == 0.0 for x in epsilon)


def max_pair_leads(eps_lo=0.0, eps_hi=None, n_grid=261, *, scale=SECTION7["scale"], q=SECTION7["q"]):
    """``max_pair_intervals`` with, per interval, the largest lead of the maximal pair over the
    second largest (exact curves on ``n_grid`` points inside the interval): [(start, end, pair, lead)]."""
    out = []
    for a, b, pair in max_pair_intervals(eps_lo, eps_hi, n_grid, scale=scale, q=q):
        if pair == "none":
            out.append((a, b, pair, 0.0))
            continue
        x = np.linspace(a, b, 41)
        cur = {p: exact_curve(x, p, scale=scale, q=q) for p in PAIRS}
        other = np.max(np.vstack([cur[p] for p in PAIRS if p != pair]), axis=0)
        out.append((a, b, pair, float(np.max(cur[pair] - other))))
    return out


def distinct_combinations(steps=2, epsilon=(0.1, 0.3, 0.5, 0.8), tol=1e-9):
    """§7: "for k compositions, we have to consider k + 1 ways of combining P and Q".

    Counts the distinct curves among all 2^k direction assignments (exact, k = 2 only:
    remove∘add and add∘remove coincide because composition commutes).
    """
    if int(steps) != 2:
        raise ParameterError("steps", "2", steps,
                             message=f"steps must be 2 (exact two-fold curves only; got {steps!r})")
    s = SECTION7
    curves = []
    for dirs in ((a, b) for a in ("add", "remove") for b in ("add", "remove")):
        c = laplace_two_fold(epsilon, s["scale"], s["q"], s["shift"], dirs)
        if not any(np.max(np.abs(c - o)) <= tol for o in curves):
            curves.append(c)
    return len(curves)


def printed_pair_is_max_somewhere(epsilon=None):
    """§7 as printed: is H_{e^ε}(P×Q ‖ P×Q) the largest of the three on some ε interval?

    A distribution against itself has H_{e^ε} = Σ max(p - e^ε p, 0) = 0 for ε ≥ 0, so the pair as
    printed can only tie where all three vanish; it is the maximum nowhere the others are
    positive.  Returns False (the typo; ``all_three_are_max_somewhere`` checks P×Q ‖ Q×P).
    """
    e = np.linspace(0.0, max_loss(), 126) if epsilon is None else np.asarray(epsilon, dtype=float)
    check_epsilon(e, "epsilon")
    literal = np.maximum(0.0, -np.expm1(e))  # H_{e^ε}(R‖R) = (1 - e^ε)_+ = 0
    others = np.maximum(exact_curve(e, "PP||QQ"), exact_curve(e, "QQ||PP"))
    return bool(np.any(literal > others))


__all__ = [
    "PAIRS",
    "PAIR_DIRECTIONS",
    "SECTION7",
    "LaplaceStep",
    "all_three_are_max_somewhere",
    "distinct_combinations",
    "exact_curve",
    "laplace_two_fold",
    "max_loss",
    "max_pair_interval_end",
    "max_pair_intervals",
    "max_pair_leads",
    "mc_curve",
    "mixed_pair_as_printed_is_zero",
    "mixed_pair_exceeds_both",
    "pld_bounds",
    "printed_pair_is_max_somewhere",
]
