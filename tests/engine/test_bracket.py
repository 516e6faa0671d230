import math

import pytest

from dpsampling.engine.bracket import gdp_sigma, log_bracket


class Unreachable(Exception):
    pass


def _raise():
    raise Unreachable


def _counted(f):
    calls = []

    def g(x):
        calls.append(x)
        return f(x)

    return g, calls


@pytest.mark.parametrize("root", [-3.0, -0.04, 0.0, 0.7, 5.0])
@pytest.mark.parametrize("x0", [-1.0, 0.0, 2.0])
def test_bracket_holds_the_crossing_of_a_smooth_curve(root, x0):
    # ε(σ) ∝ 1/σ-like: f(x) = e^{root − x} − 1 crosses 0 at x = root exactly
    tol = math.log1p(1e-3)
    f, calls = _counted(lambda x: math.exp(root - x) - 1.0)
    lo, hi = log_bracket(f, x0, tol, (math.log(1e-3), math.log(1e4)), _raise)
    assert f(lo) > 0 >= f(hi) and lo < root <= hi and hi - lo <= tol * (1 + 1e-9)
    assert lo in calls and hi in calls  # both sides were evaluated
    # bisection from a ratio-2 bracket alone takes 10 inside it; a start far off adds a step per unit of log σ
    assert len(set(calls)) <= (10 if abs(x0 - root) <= 1 else 12 + 2 * abs(x0 - root))


def test_bracket_on_a_step_function_and_known_points():
    # a staircase (a discretised bound): still a bracket of width ≤ tol around its crossing, both sides evaluated
    tol = 0.01
    f = lambda x: 3.0 - 0.05 * math.floor(x / 0.003) - 2.0  # noqa: E731 - ≤ 0 from x = 0.06 on
    lo, hi = log_bracket(f, 0.5, tol, (-7.0, 9.0), _raise, known=[(0.2, f(0.2))])
    assert f(lo) > 0 >= f(hi) and hi - lo <= tol * (1 + 1e-9) and lo < 0.06 <= hi


def test_bracket_ends_of_the_span():
    tol = 1e-3
    lo, hi = log_bracket(lambda x: -1.0, 0.0, tol, (-2.0, 2.0), _raise)  # everything passes: nothing fails
    assert lo == -math.inf and hi <= -2.0 + 1.0 + 4 * tol
    with pytest.raises(Unreachable):
        log_bracket(lambda x: 1.0, 0.0, tol, (-2.0, 2.0), _raise)


def test_gdp_sigma_solves_its_defining_equation():
    # μ = q·√(T(e^{1/σ²} − 1)) at the returned σ is the μ of the Gaussian mechanism with (ε, δ): 1/σ_gauss, where
    # σ_gauss solves the analytic Gaussian curve δ(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)) (Balle & Wang 2018)
    from statistics import NormalDist

    q, steps, epsilon, delta = 1 / 235, 14100, 3.0, 1e-5
    s = gdp_sigma(epsilon, delta, q, steps)
    s_gauss = 1 / (q * math.sqrt(steps * math.expm1(1 / s**2)))
    phi = NormalDist().cdf
    half = 1 / (2 * s_gauss)
    curve = phi(-epsilon * s_gauss + half) - math.exp(epsilon) * phi(-epsilon * s_gauss - half)
    assert curve == pytest.approx(delta, rel=1e-6)
