"""σ calibration's search: a bracket in log σ around the crossing of a monotone certified bound (:func:`log_bracket`)
from a closed-form start (:func:`gdp_sigma`).

Pure functions of a callable; nothing here is a bound: every σ a caller returns was evaluated by the caller's
certified accountant, and its sign there is what certifies it.
"""

from __future__ import annotations

import math

from . import gaussian


def gdp_sigma(epsilon, delta, q, total_steps):
    """A starting σ: T compositions of the q-subsampled Gaussian as μ-GDP with μ = q·√(T·(e^{1/σ²} − 1)) (Bu et al.
    2020, the central limit), solved for σ at the μ of the Gaussian mechanism with (ε, δ) (:func:`.gaussian.sigma`).
    Only where a search starts (within a few per cent of Poisson's and balls-and-bins' σ on the MNIST run)."""
    mu = 1.0 / gaussian.sigma(epsilon, delta)
    return 1.0 / math.sqrt(math.log1p(mu * mu / (q * q * total_steps)))


def log_bracket(f, x0, tol, span, unreachable, known=()):
    """(x_fail, x_pass) with f(x_fail) > 0 ≥ f(x_pass) and x_pass − x_fail ≤ ``tol`` (to 1e-9 of it), for f
    non-increasing in x = log σ up to its discretisation (both sides are evaluated, so each side's sign holds
    whatever f does elsewhere).

    From ``x0`` (and the points ``known``: (x, f(x)) already evaluated) secant steps, at most 1 in x and overshooting by
    2·tol (a first step of 5 % where no slope is known), find a bracket; x_fail = −inf where a step would go below
    ``span[0]`` (nothing fails there), ``unreachable()`` (which raises) where it would go above ``span[1]``.  Inside the
    bracket the linear interpolation x* of the two sides is probed at x* + 0.4·tol (kept a tol inside each side) and,
    where that passes, at it − tol: a good x* closes the bracket in two evaluations; after a probe that shrank the
    bracket by less than half, or in a bracket narrower than 1.5·tol, the next is the middle.
    """
    pts = dict(known)
    if x0 not in pts:
        pts[x0] = f(x0)

    def sides():
        fails = [x for x, v in pts.items() if v > 0]
        passes = [x for x, v in pts.items() if v <= 0]
        return (max(fails) if fails else None), (min(passes) if passes else None)

    lo, hi = sides()
    h = max(0.05, 2 * tol)  # the first step where no slope is known: 5 % in σ
    while lo is None or hi is None:
        up = hi is None  # everything seen fails: go up
        near = max(pts) if up else min(pts)
        step = None
        others = sorted((x for x in pts if x != near), key=lambda y: abs(y - near))[:1]
        if others and pts[near] != pts[others[0]]:
            step = -pts[near] * (near - others[0]) / (pts[near] - pts[others[0]])
        if step is None or not math.isfinite(step) or (step > 0) != up:
            step = h if up else -h
        h *= 2
        x = near + max(-1.0, min(1.0, step)) + (2 * tol if up else -2 * tol)
        if x < span[0]:
            return -math.inf, min(pts)
        if x > span[1]:
            unreachable()
        pts[x] = f(x)
        lo, hi = sides()
    slow = False
    while hi - lo > tol * (1 + 1e-9):  # (a probe at a side − tol may land a rounding error beyond it)
        width = hi - lo
        fl, fh = pts[lo], pts[hi]
        root = lo + fl * width / (fl - fh) if math.isfinite(fl - fh) and fl != fh else (lo + hi) / 2
        x = min(max(root + 0.4 * tol, lo + tol), hi - tol)  # a probe a tol from a side may close the bracket
        if slow or width <= 1.5 * tol:
            x = (lo + hi) / 2
        pts[x] = f(x)
        if pts[x] <= 0 and x - tol > lo and not slow:  # passed: one tol below closes the bracket if it fails
            pts[x - tol] = f(x - tol)
        lo, hi = sides()
        slow = not slow and hi - lo > width / 2
    return lo, hi
