"""App. B.1: the subsampled randomized-response counterexample, in exact rationals.

Lebeda et al. (2024), Prop. 11 / App. B.1.  The mechanism outputs one bit:
b with probability 3/4 and 1-b with probability 1/4, where b = 0 iff every
record is 0.  With D = (0, …, 0) and D' = D + (1) under γ-subsampling (Poisson
or WOR: only whether the 1 is sampled matters),

    M(D)  = (3/4, 1/4),     M(D') = (1-γ)(3/4, 1/4) + γ(1/4, 3/4) = (1/2, 1/2) at γ = 1/2,

and for k = 2 the paper's P = M(D)×M(D), Q = M(D')×M(D').  H(P‖Q) is the
add direction (D → D' adds the 1), H(Q‖P) the remove direction.  Everything
here is ``fractions.Fraction``; floats appear only when ε = log α is needed.

Exact results (tested): H_{4/3}(P‖Q) = 11/48, H_{4/3}(Q‖P) = 1/6,
H_2(P‖Q) = 1/16, H_2(Q‖P) = 1/8; for k = 2 the add curve is above the remove
curve exactly on α ∈ (1, 5/3), i.e. ε ∈ (0, ln 5/3 ≈ 0.511), while for k = 1
the remove curve dominates for all α ≥ 1.

Names: γ is ``q`` (``RATE_Q``) and k is ``steps`` in code, config and CSVs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product as _iproduct

import numpy as np

from dpsampling.engine.errors import InternalError, ParameterError
from dpsampling.engine.validation import check_choice, check_epsilon, check_int

P_KEEP = Fraction(3, 4)  # probability of outputting b
RATE_Q = Fraction(1, 2)  # App. B.1 sampling rate q (the paper's γ)


def _frac(name, value):
    """Exact rational from int, Fraction, "p/q" string or float (a float is read as its
    shortest decimal repr, so 0.1 means 1/10, not the binary double)."""
    try:
        f = Fraction(repr(float(value))) if isinstance(value, float) else Fraction(value)
    except (TypeError, ValueError):
        raise ParameterError(name, "a rational number", value) from None
    return f


def _check_prob(name, value, allow_zero=False, allow_one=True):
    f = _frac(name, value)
    lo_ok = f >= 0 if allow_zero else f > 0
    hi_ok = f <= 1 if allow_one else f < 1
    if not (lo_ok and hi_ok):
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        raise ParameterError(name, f"in {lo}, {hi}", value)
    return f


def mechanism(b, p_keep=P_KEEP):
    """Output distribution {0: ·, 1: ·} of M when the indicator bit is ``b``."""
    check_choice("b", b, (0, 1))
    p = _check_prob("p_keep", p_keep)
    return {b: p, 1 - b: 1 - p}


def subsampled(contains_one, q=RATE_Q, p_keep=P_KEEP):
    """One output of the γ-subsampled mechanism on D (``False``) or D' = D + (1) (``True``)."""
    g = _check_prob("q", q)
    m0 = mechanism(0, p_keep)
    if not contains_one:
        return m0
    m1 = mechanism(1, p_keep)
    return {o: (1 - g) * m0[o] + g * m1[o] for o in (0, 1)}


def power(dist, steps):
    """k-fold product distribution over tuples of bits."""
    steps = check_int("steps", steps)
    out = {}
    for outcome in _iproduct((0, 1), repeat=steps):
        pr = Fraction(1)
        for o in outcome:
            pr *= dist[o]
        out[outcome] = pr
    return out


def paper_pair(steps=2, q=RATE_Q, p_keep=P_KEEP):
    """(P, Q) = (M(D)^k, M(D')^k) of App. B.1 (k = 2, γ = 1/2 in the paper)."""
    return power(subsampled(False, q, p_keep), steps), power(subsampled(True, q, p_keep), steps)


def hockey_stick(P, Q, alpha):
    """H_α(P‖Q) = Σ_o max(P(o) - α Q(o), 0), exact (Def. 3, discrete case)."""
    a = _frac("alpha", alpha)
    check_epsilon(float(a), "alpha")
    keys = set(P) | set(Q)
    tot = Fraction(0)
    for o in keys:
        v = P.get(o, Fraction(0)) - a * Q.get(o, Fraction(0))
        if v > 0:
            tot += v
    return tot


def curve_pieces(P, Q):
    """δ(α) = H_α(P‖Q) as exact pieces (α_lo, α_hi, A, B) with δ = A - α·B on [α_lo, α_hi).

    Breakpoints are the likelihood ratios P(o)/Q(o); α_hi = None means +∞
    (last piece is A = B = 0).  Outcomes with Q(o) = 0 contribute to A for
    every α.  In ε: δ(ε) = A - e^ε B on [ln α_lo, ln α_hi).
    """
    keys = set(P) | set(Q)
    inf_mass = sum((P.get(o, 0) for o in keys if Q.get(o, 0) == 0), Fraction(0))
    ratios = sorted({P.get(o, Fraction(0)) / Q[o] for o in keys if Q.get(o, 0) > 0})
    cuts = [Fraction(0)] + [r for r in ratios if r > 0]
    pieces = []
    for i, lo in enumerate(cuts):
        hi = cuts[i + 1] if i + 1 < len(cuts) else None
        # active outcomes on [lo, hi): ratio > α for all α in the piece ⇔ ratio ≥ hi
        act = [o for o in keys if Q.get(o, 0) > 0 and hi is not None and P.get(o, 0) / Q[o] >= hi]
        A = inf_mass + sum((P.get(o, 0) for o in act), Fraction(0))
        B = sum((Q[o] for o in act), Fraction(0))
        pieces.append((lo, hi, A, B))
    return pieces


def curve(epsilon, P, Q):
    """δ(ε) = H_{e^ε}(P‖Q) on a float grid, from the exact pieces (vectorised)."""
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    alpha = np.exp(e)
    out = np.zeros_like(alpha)
    for lo, hi, A, B in curve_pieces(P, Q):
        m = alpha >= float(lo)
        if hi is not None:
            m &= alpha < float(hi)
        out[m] = float(A) - alpha[m] * float(B)
    return np.maximum(out, 0.0)


def add_remove_curves(epsilon, steps=2, q=RATE_Q, p_keep=P_KEEP):
    """Both full curves for a small figure: (δ_add, δ_remove) = (H(P‖Q), H(Q‖P)) on ``epsilon``."""
    P, Q = paper_pair(steps, q, p_keep)
    return curve(epsilon, P, Q), curve(epsilon, Q, P)


def _linear_on(pieces, lo, hi):
    """(A, B) of the piece containing the open interval (lo, hi)."""
    mid = lo + 1 if hi is None else (lo + hi) / 2
    for plo, phi, A, B in pieces:
        if mid >= plo and (phi is None or mid < phi):
            return A, B
    raise InternalError(f"no piece contains ({lo}, {hi})")  # pragma: no cover


def add_above_remove_alpha_intervals(steps=2, q=RATE_Q, p_keep=P_KEEP, alpha_min=1):
    """Exact α intervals (Fractions; None = ∞) with α ≥ ``alpha_min`` where H(P‖Q) > H(Q‖P).

    Both curves are piecewise linear in α; on each common piece the
    difference is linear, so its sign changes at one rational root at most.
    """
    P, Q = paper_pair(steps, q, p_keep)
    pa, pr = curve_pieces(P, Q), curve_pieces(Q, P)
    a0 = Fraction(alpha_min)
    cuts = sorted({a0} | {x for pc in (pa, pr) for (lo, hi, _, _) in pc for x in (lo, hi)
                          if x is not None and x > a0})
    segs = list(zip(cuts, cuts[1:] + [None]))
    raw = []
    for lo, hi in segs:
        A1, B1 = _linear_on(pa, lo, hi)
        A2, B2 = _linear_on(pr, lo, hi)
        dA, dB = A1 - A2, B1 - B2  # diff(α) = dA - α dB
        if dB == 0:
            if dA > 0:
                raw.append((lo, hi))
            continue
        root = dA / dB
        # diff > 0 ⇔ α < root (dB > 0) or α > root (dB < 0)
        if dB > 0:
            a, b = lo, root if hi is None else min(hi, root)
        else:
            a, b = max(lo, root), hi
        if b is None or a < b:
            raw.append((a, b))
    merged = []
    for a, b in raw:
        if merged and merged[-1][1] == a:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def add_above_remove_eps_intervals(steps=2, q=RATE_Q, p_keep=P_KEEP):
    """The same intervals in ε = ln α (floats), restricted to ε ≥ 0."""
    return [(math.log(a), math.inf if b is None else math.log(b))
            for a, b in add_above_remove_alpha_intervals(steps, q, p_keep, alpha_min=1)]


def paper_values():
    """The four App. B.1 numbers as Fractions: H_{4/3}(P‖Q), H_{4/3}(Q‖P), H_2(P‖Q), H_2(Q‖P)."""
    P, Q = paper_pair()
    a = Fraction(4, 3)
    return {"H_4/3(P||Q)": hockey_stick(P, Q, a), "H_4/3(Q||P)": hockey_stick(Q, P, a),
            "H_2(P||Q)": hockey_stick(P, Q, 2), "H_2(Q||P)": hockey_stick(Q, P, 2)}


def paper_value(name):
    """One App. B.1 quantity as a float (claims helper). Names as in ``paper_values`` plus
    "P(0,0)", "P(0,1)", "P(1,0)", "P(1,1)", "Q(o)", "M(D')(0)"."""
    P, Q = paper_pair()
    extra = {"P(0,0)": P[(0, 0)], "P(0,1)": P[(0, 1)], "P(1,0)": P[(1, 0)], "P(1,1)": P[(1, 1)],
             "Q(o)": Q[(0, 0)], "M(D')(0)": subsampled(True)[0],
             "P(not 00)": 1 - P[(0, 0)], "Q(not 00)": 1 - Q[(0, 0)]}
    vals = {**paper_values(), **extra}
    check_choice("name", name, tuple(vals))
    return float(vals[name])


def k1_remove_dominates(q=RATE_Q, p_keep=P_KEEP):
    """Prop. 11 premise: for k = 1, H_α(Q‖P) ≥ H_α(P‖Q) for every α ≥ 1 (exact)."""
    return add_above_remove_alpha_intervals(1, q, p_keep) == []


def k2_crossing_both_ways():
    """Prop. 11 conclusion at k = 2: add > remove at α = 4/3 and remove > add at α = 2 (exact)."""
    v = paper_values()
    return v["H_4/3(P||Q)"] > v["H_4/3(Q||P)"] and v["H_2(P||Q)"] < v["H_2(Q||P)"]


def exact_values(steps=2, q=RATE_Q, p_keep=P_KEEP, alphas=(Fraction(4, 3), Fraction(2))):
    """H_α(P‖Q) (add) and H_α(Q‖P) (remove) as Fractions for each α in ``alphas`` (App. B.1),
    keyed ("add", α) / ("remove", α)."""
    P, Q = paper_pair(steps, q, p_keep)
    out = {}
    for a in alphas:
        a = _frac("alpha", a)
        out[("add", a)] = hockey_stick(P, Q, a)
        out[("remove", a)] = hockey_stick(Q, P, a)
    return out


def crossing_ks(steps_max=8, q=RATE_Q, p_keep=P_KEEP):
    """The k (= steps) in 1..steps_max for which H_α(P‖Q) > H_α(Q‖P) at some α ≥ 1 (add above remove somewhere), exact.

    For these k neither ordered pair realizes the ε ≥ 0 privacy curve of M^k (the remove pair
    always wins at large α: its likelihood ratio has the larger range).  App. B.1 settings give
    k = 2, 3, 5, 6, 7, 8 but not 4 (remove dominates for all α ≥ 1 at k = 4).
    """
    steps_max = check_int("steps_max", steps_max)
    return [steps for steps in range(1, steps_max + 1) if add_above_remove_alpha_intervals(steps, q, p_keep)]


def no_pair_realizes_each_k(steps_min=2, steps_max=8):
    """Prop. 11, strong reading, for the App. B.1 mechanism: for *every* k (= steps) in [steps_min, steps_max]
    no ordered pair realizes the curve of M^k (add above remove somewhere).  Exact."""
    steps_values = set(crossing_ks(steps_max))
    return all(steps in steps_values for steps in range(check_int("steps_min", steps_min), check_int("steps_max", steps_max) + 1))


__all__ = [
    "RATE_Q",
    "P_KEEP",
    "add_above_remove_alpha_intervals",
    "add_above_remove_eps_intervals",
    "add_remove_curves",
    "crossing_ks",
    "curve",
    "curve_pieces",
    "exact_values",
    "hockey_stick",
    "k1_remove_dominates",
    "k2_crossing_both_ways",
    "mechanism",
    "no_pair_realizes_each_k",
    "paper_pair",
    "paper_value",
    "paper_values",
    "power",
    "subsampled",
]
