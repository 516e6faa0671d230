"""Random allocation through PLD_accounting: the FFT and GEOM routes' bounds, the per-direction interval and its
swappable step policy."""

import math

import pytest

from dpsampling.engine import allocation_pld as pa
from dpsampling.samplers import balls_and_bins as bnb

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_fft_upper_is_between_geom_bounds_and_tightens():
    # PLD_accounting's FFT route (used for the upper end) against its GEOM route at a point where both run:
    # each FFT upper is ≥ the GEOM lower, and it decreases towards it as the linear step shrinks (σ = 2, T = 100)
    kw = {"sigma": 2.0, "steps": 100, "epochs": 1}
    geom_lo = max(pa.epsilon_one(2.0, 100, 1, "lower", d, 0.02, 1e-9, 1e-6) for d in pa.DIRECTIONS)
    geom_up = max(pa.epsilon_one(2.0, 100, 1, "upper", d, 0.02, 1e-9, 1e-6) for d in pa.DIRECTIONS)
    fft = [max(pa.fft_upper(2.0, 100, 1, d, h, 1e-9, 1e-6) for d in pa.DIRECTIONS) for h in (2e-4, 5e-5)]
    assert geom_lo <= fft[1] < fft[0]
    assert fft[1] < geom_up  # and tighter than GEOM's upper at a step costing more
    r = bnb.epsilon_range(1e-6, **kw, method="pld")
    assert r.accuracy["upper_route"] == "fft" and geom_lo <= r.upper and r.lower <= geom_up
    assert (r.upper - r.lower) / r.upper <= pa.ACCURACY["default"]["rel_width"]
    assert pa.fft_upper(2.0, 1, 1, "remove", 1e-4, 1e-9, 1e-6) == math.inf  # T = 1: route not applicable


def test_epsilon_bracket_combines_per_direction_ends():
    """The certified object alone: the interval is [max(floor, max lower), max over directions of min(GEOM, FFT)]."""
    br = pa.EpsilonInterval(floor=0.3)
    br.add_geom_upper("remove", 1.0)
    br.add_fft_upper("remove", 0.9, 1e-3)
    br.add_geom_upper("add", 0.8)
    br.add_lower("add", 0.5, 1e-2)
    br.add_lower("remove", 0.2, 1e-2)
    assert br.combine() == (0.5, 0.9) and br.width == pytest.approx(0.4)
    assert br.top() == "remove" and br.upper_route() == "fft"
    br.add_lower("add", 0.4, 1e-3)  # a looser lower bound never loosens the end
    assert br.combine().lower == 0.5 and br.lower_step["add"] == 1e-3


def test_step_policy_is_swappable_and_changes_only_the_width():
    """Another step policy (one coarse GEOM pass, no FFT start) gives another certified interval: both contain
    the true ε(δ), so they intersect, and the default's (refined) is the narrower."""
    import math

    args = (1e-5, 1.5, 10, 1, 5e-2, 1e-8)
    default = pa.epsilon_interval(*args)
    coarse = pa.epsilon_interval(*args, None, 0.0, pa.StepPolicy(coarse=16.0, max_passes=1,
                                                                   fft_first_sigma=math.inf))
    assert coarse.info["passes"] == 1 and coarse.info["upper_route"] == "geom"
    assert coarse.lower <= default.upper and default.lower <= coarse.upper
    assert default.upper - default.lower < coarse.upper - coarse.lower
