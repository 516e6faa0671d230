"""Random allocation (balls-and-bins) through PLD_accounting: dominating and dominated PLDs, and a certified
ε(δ) interval refined by a step policy.

Why this is engine code and not a reference: it is the numerics of a method a user can choose
(``method="pld"`` of :mod:`dpsampling.samplers.balls_and_bins`, the CLI's ``--method pld``, the pipeline's
``method`` setting), not only a check of another method; the sampler module keeps only its options and the
combination with its own lower bounds.  It knows no sampler: every function takes the mechanism's parameters,
σ, ``steps`` (compositions of one epoch: each record in one uniformly random step of them) and ``epochs``.
PLD_accounting and numba are imported on first use; where they are missing, :func:`require` says which
extra to install.

The pair.  One epoch's dominating pair is P = MoG(1) := (1/T) Σ_t N(e_t, σ² I_T), Q = N(0, σ² I_T) for
REMOVE and the swapped pair for ADD (Chua et al., AISTATS 2025; Feldman & Shenfeld); epochs compose.

Why each end is on its side.  PLD_accounting's ``gaussian_allocation_pld`` (Feldman & Shenfeld) gives a
dp_accounting PLD of that pair that is itself dominating (``DOMINATES``: losses rounded up, truncated tail mass
moved to +∞) or dominated (``IS_DOMINATED``: losses rounded down, tail mass dropped), so its δ(ε) / ε(δ) is an
upper resp. lower bound on the true curve; E dominating (dominated) epoch PLDs compose to one dominating
(dominated by) the E-epoch pair (losses add; Zhu, Dong & Wang, AISTATS 2022).  No well-kept library other than
PLD_accounting accounts this pair; we call it rather than re-implement it.  :class:`EpsilonInterval` argues the
ends of the refined interval in one place.

The certified ε(δ) interval (:func:`epsilon_interval`) combines, each end a max/min of valid bounds:

* upper end = min over PLD_accounting's two routes, GEOM (exp-space geometric grids, O(n²) per convolution)
  and FFT (linear exp-space grid, O(n log n), DOMINATES only; tight and cheap where the per-step loss is
  light-tailed, σ ≳ 1, loose at σ ≲ 0.7), both dominating PLDs of the pair above.
* lower end = max(GEOM lower of one direction, a given ``floor``: another certified lower bound, such as the
  sampler's max-statistic bound).  PLD_accounting's FFT route has no dominated version (its linear-grid sums
  round up); it is never used for the lower end.
* the steps (:class:`StepPolicy`): at σ ≥ ``fft_first_sigma`` the interval starts from the FFT uppers and one
  GEOM lower at the step an error model predicts; elsewhere from a coarse GEOM pass of both ends.  Steps
  change only the cost and the width, never the side of a bound.  With E epochs PLD_accounting uses the
  step / E per epoch, so the step is chosen from the E-epoch ε.

PLD_accounting's GEOM route spends nearly all of its time in one O(n²) loop over pairs of grid points; its
convolutions run in :mod:`dpsampling.engine.geometric_kernel`, the same sum by window sums (every pair in the bin
PLD_accounting assigns it, so the side of each bound is PLD_accounting's).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

from . import lazy
from .errors import ParameterError
from .result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR, WIDTH_NOT_MET_FLAG, AccountingResult
from .validation import check_choice, check_int, check_positive
from .reading import delta_lower, epsilon_for_delta_lower

geometric_kernel = lazy.function("dpsampling.engine.geometric_kernel", "geometric_kernel")
_pld_epsilon = lazy.function("dpsampling.engine.pld", "epsilon")
_bisect = lazy.function("dpsampling.engine.numerics", "bisect")

#: PLD_accounting settings.  ``rel_width``: the certified ε(δ) interval is refined until
#: (upper − lower)/upper ≤ rel_width (:func:`epsilon_interval`).  ``rel_loss_discretization`` r
#: (:func:`allocation_pld`): loss_discretization = r × ``eps_scale`` (PLD_accounting's meaning: the final
#: loss-grid step summed over compositions).  ``tail_truncation``: mass dropped (lower) or moved to +∞ (upper);
#: ``tail_per_delta``: for ε(δ), at most this × δ.  Measured in bench/bench_balls_and_bins.py.
ACCURACY = {
    "default": {"rel_width": 5e-2, "tail_per_delta": 1e-3, "rel_loss_discretization": 6e-2, "tail_truncation": 1e-10},
    "fine": {"rel_width": 1e-2, "tail_per_delta": 1e-4, "rel_loss_discretization": 1.5e-2, "tail_truncation": 1e-11},
}
#: the finest loss step any pass uses
MIN_LOSS_DISCRETIZATION = 1e-4
#: grid cap of PLD_accounting's FFT route (:func:`fft_upper`; its default 1e6 points is too coarse at T = 1000:
#: ε 0.0614 vs 0.0595 at σ = 2).  The adaptive interval's tuned constants are the fields of :class:`StepPolicy`.
FFT_MAX_GRID = 10**8
#: the largest argument of math.exp that does not overflow (e^709.78 is the largest double)
_MAX_EXP = 709.0
#: the largest ε(δ) tail mass an ε(δ) query uses by default (:func:`default_tail`)
MAX_TAIL = 1e-7


def require(what):
    """Import PLD_accounting and numba (``what`` needs them); :class:`~dpsampling.engine.lazy.MissingExtra` naming
    the extra where one is missing."""
    for module in ("numba", "PLD_accounting"):
        lazy.require(module, what)


def default_tail(accuracy, delta):
    """The tail mass of an ε(δ) query at ``accuracy``: min(:data:`MAX_TAIL`, tail_per_delta × δ)."""
    return min(MAX_TAIL, ACCURACY[accuracy]["tail_per_delta"] * float(delta))


def poisson_epsilon_guess(delta, sigma, steps, epochs):
    """ε(δ) of Poisson q = 1/T over T·E steps (the engine's composed pessimistic PLD at discretization 1e-3,
    coarse): an estimate that sets the first loss step of :func:`epsilon_interval` (and the starting point of
    the balls-and-bins Monte Carlo inversion)."""
    return _pld_epsilon(float(delta), float(sigma), 1.0 / steps, steps * epochs, "add_remove", True, 1e-3)


def _config(accuracy, loss_discretization, tail_truncation, eps_scale):
    """PLD_accounting's GEOM configuration at ``accuracy`` (or the given step and tail) and the settings used."""
    from PLD_accounting import AllocationSchemeConfig, ConvolutionMethod

    check_choice("accuracy", accuracy, tuple(ACCURACY))
    a = ACCURACY[accuracy]
    s = {"accuracy": accuracy,
         "loss_discretization": max(MIN_LOSS_DISCRETIZATION, a["rel_loss_discretization"] * eps_scale),
         "tail_truncation": a["tail_truncation"]}
    if loss_discretization is not None:
        s["loss_discretization"] = float(check_positive("loss_discretization", loss_discretization))
    if tail_truncation is not None:
        s["tail_truncation"] = float(check_positive("tail_truncation", tail_truncation))
    cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM,
                                 loss_discretization=s["loss_discretization"], tail_truncation=s["tail_truncation"])
    return cfg, s


def allocation_pld(sigma, steps, epochs=1, bound="upper", *, accuracy="default",
                   loss_discretization=None, tail_truncation=None, eps_scale=1.0):
    """dp_accounting PLD (add and remove) of E epochs of random allocation over ``steps`` steps each; (pld,
    settings).  ``bound="upper"``: dominating PLD (an upper bound on δ(ε)); ``"lower"``: dominated (module doc)."""
    from PLD_accounting import BoundType, PrivacyParams, gaussian_allocation_pld

    check_positive("sigma", sigma)
    steps, epochs = check_int("steps", steps, 1), check_int("epochs", epochs, 1)
    check_choice("bound", bound, ("upper", "lower"))
    cfg, s = _config(accuracy, loss_discretization, tail_truncation, eps_scale)
    params = PrivacyParams(sigma=float(sigma), num_steps=steps, num_epochs=epochs)
    bt = BoundType.DOMINATES if bound == "upper" else BoundType.IS_DOMINATED
    with geometric_kernel():
        return gaussian_allocation_pld(params=params, config=cfg, bound_type=bt), s


#: the two directions of the add/remove pair (PLD_accounting's Direction members)
DIRECTIONS = ("remove", "add")


@functools.lru_cache(maxsize=256)
def directional_pmf(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, route="geom"):
    """dp_accounting PMF of one direction (PLD_accounting), cached: one PLD serves every δ query.

    DOMINATES / IS_DOMINATED make its ε(δ) an upper / lower bound for that direction (module doc); ε(δ) of
    the pair is the max over the two directions, so max of per-direction upper (lower) bounds is an upper
    (lower) bound.  ``route``: PLD_accounting's convolution method, "geom" (GEOM: exp-space geometric grids,
    both bound types, O(n²) in the grid) or "fft" (FFT: linear exp-space grid, DOMINATES only, O(n log n);
    ``loss_discretization`` is then its linear step, ``max_grid_fft`` = ``FFT_MAX_GRID``)."""
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        Direction,
        PrivacyParams,
        gaussian_allocation_directional_pld,
    )
    from PLD_accounting.dp_accounting_support import linear_dist_to_dp_accounting_pmf

    bt = BoundType.DOMINATES if bound == "upper" else BoundType.IS_DOMINATED
    if route == "fft":
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.FFT, loss_discretization=loss_discretization,
                                     tail_truncation=tail_truncation, max_grid_fft=FFT_MAX_GRID)
    else:
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM,
                                     loss_discretization=loss_discretization, tail_truncation=tail_truncation)
    with geometric_kernel():
        dist = gaussian_allocation_directional_pld(
            params=PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs), config=cfg,
            direction=Direction.REMOVE if direction == "remove" else Direction.ADD, bound_type=bt)
    return linear_dist_to_dp_accounting_pmf(dist=dist, bound_type=bt)


def epsilon_one(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, delta, route="geom"):
    """One direction's ε(δ) from :func:`directional_pmf`: an upper (lower) bound on that direction's ε for
    ``bound="upper"`` (``"lower"``), clipped at 0 (ε ≥ 0 always holds)."""
    pmf = directional_pmf(sigma, steps, epochs, bound, direction, loss_discretization, tail_truncation, route)
    if bound == "lower":  # large losses: read without the underflow that can make a reading too high
        return max(0.0, epsilon_for_delta_lower(pmf, delta))
    return max(0.0, float(pmf.get_epsilon_for_delta(delta)))


def fft_upper(sigma, steps, epochs, direction, h, tail_truncation, delta):
    """Upper bound on one direction's ε(δ) from PLD_accounting's FFT route at linear step ``h``; inf where the
    route does not apply (T = 1: REMOVE needs two steps) or PLD_accounting refuses (its mass-conservation
    check).  An upper bound by the same argument as the GEOM one (DOMINATES), so min(FFT, GEOM) is one too."""
    if steps < 2:
        return math.inf
    try:
        return epsilon_one(sigma, steps, epochs, "upper", direction, h, tail_truncation, delta, "fft")
    except (ValueError, MemoryError):
        return math.inf


def fft_error_floor(sigma, steps, epochs, fft_err):
    """Predicted error of the FFT upper that no step removes: PLD_accounting caps one step's linear grid at
    FFT_MAX_GRID / T points over a lognormal factor whose range is ≈ e^{1/(2σ²) + 8/σ} / T, so its step is
    ≥ e^{1/(2σ²) + 8/σ} / FFT_MAX_GRID, error ≈ fft_err·T·step (σ = 1, T = 1000: predicted 0.015, measured
    ε_FFT − ε ≈ 0.01 at every h ≤ 4e-6; σ = 2: 2e-4).  E epochs compose E capped epochs, so the floor is E×
    (σ = 1.5, T = 1000, E = 10: predicted 7.8e-3, measured FFT upper 0.30228 at every h from 5e-6 to 2e-5 against
    a GEOM interval [0.2847, 0.2985]).  Only picks whether the FFT route is tried, never the side of an end; +∞
    where e^{1/(2σ²) + 8/σ} exceeds the largest double (tiny σ: the route is not tried)."""
    exponent = 0.5 / sigma**2 + 8.0 / sigma
    if exponent > _MAX_EXP:  # tiny σ: the FFT route's grid cannot resolve the loss at all
        return math.inf
    return epochs * fft_err * steps * math.exp(exponent) / FFT_MAX_GRID


class Interval(NamedTuple):
    """A certified interval [lower, upper] on ε(δ)."""
    lower: float
    upper: float


class EpsilonInterval:
    """Certified ends of ε(δ) per direction (remove, add) and their max-over-directions interval.

    Why each end is a bound (the one place this is argued; nothing else in the interval decides a side):

    * ``upper(d)`` = min of every upper bound on direction d's ε(δ) added so far: PLD_accounting's dominating
      PLDs (DOMINATES: every loss rounded up in each stage, truncated tail mass moved to +∞) by the GEOM
      route (``geom_upper``) and the FFT route (``fft_upper``, DOMINATES only); E dominating epoch PLDs compose
      to one dominating the E-epoch pair (losses add; dominating pairs compose: Zhu, Dong & Wang, AISTATS
      2022).  A min of upper bounds is an upper bound.
    * ``lower[d]`` = max of the lower bounds added: PLD_accounting's dominated PLDs (IS_DOMINATED, GEOM only:
      losses rounded down, truncated tail mass dropped; composed likewise).  A max of lower bounds is one.
    * ``floor``: another certified lower bound on the pair's ε (given by the caller, e.g. the max statistic).
    * :meth:`combine`: the pair's ε(δ) is the max over the two directions, so max_d upper(d) bounds it from
      above and max(floor, max_d lower[d]) from below (a lower bound on one direction's ε is one on the max).

    Each end records the loss step it came from (``fft_step``, ``lower_step``); the steps change the width,
    never the side of an end.
    """

    def __init__(self, floor=0.0):
        self.floor = floor
        self.geom_upper = dict.fromkeys(DIRECTIONS, math.inf)  # per direction: the GEOM upper alone
        self.fft_upper = dict.fromkeys(DIRECTIONS, math.inf)  # and the FFT one alone
        self.fft_step = dict.fromkeys(DIRECTIONS, None)  # linear step of the last FFT upper tried
        self.lower = dict.fromkeys(DIRECTIONS, 0.0)
        self.lower_step = dict.fromkeys(DIRECTIONS, None)  # step of the last GEOM lower

    def upper(self, d):
        return min(self.geom_upper[d], self.fft_upper[d])

    def add_geom_upper(self, d, value):
        self.geom_upper[d] = min(self.geom_upper[d], value)

    def add_fft_upper(self, d, value, h):
        self.fft_upper[d] = min(self.fft_upper[d], value)
        self.fft_step[d] = h

    def add_lower(self, d, value, step):
        self.lower[d] = max(self.lower[d], value)
        self.lower_step[d] = step

    def combine(self) -> Interval:
        """[max(floor, max_d lower), max_d upper]: the certified interval on the pair's ε(δ)."""
        return Interval(max(self.floor, *self.lower.values()), max(self.upper(d) for d in DIRECTIONS))

    @property
    def width(self):
        lo, up = self.combine()
        return up - lo

    def top(self, directions=DIRECTIONS):
        """The direction (of ``directions``) with the largest upper end (the first one on a tie)."""
        return max(directions, key=self.upper)

    def upper_route(self):
        """Which route ("geom" or "fft") gave the interval's upper end."""
        d = self.top()
        return "geom" if self.upper(d) == self.geom_upper[d] else "fft"


@dataclasses.dataclass(frozen=True)
class StepPolicy:
    """The cost policy of the ε(δ) interval: which loss step, route and direction the next pass computes.

    Every field is a tuned constant (measured in bench/bench_balls_and_bins.py); none of them can move an end
    to the wrong side (:class:`EpsilonInterval` argues the sides), they change only the cost and the width.

    PLD_accounting's cost grows as loss_discretization⁻² (its geometric convolutions are O(n²) in the grid
    size) while the width of [lower, upper] shrinks ∝ the step (measured: width ≈ 0.64 × loss_discretization at
    σ = 2, T = 1000, exactly linear over a 4× range).  So: one coarse pass at ``coarse`` × the width target,
    then one pass at the step that the coarse pass's own measured width predicts, aiming at ``aim`` × the
    target; a further pass only if still too wide (at most ``max_passes``).  With E epochs PLD_accounting uses
    the step / E per epoch, so steps are chosen from the E-epoch ε.
    """

    coarse: float = 4.0
    aim: float = 0.92
    max_passes: int = 4
    #: FFT upper (PLD_accounting's FFT route, :func:`fft_upper`): linear step h = fft_step × (width aimed at) / T;
    #: its error ε_FFT − ε ≈ fft_err·T·h (measured σ = 2, T = 1000: 0.3·T·h at E = 1, 0.1–0.2·T·h at E = 5,
    #: 10)
    fft_step: float = 0.4
    fft_err: float = 0.3
    #: the FFT upper of a direction replaces GEOM's refinement of it only where it is below
    #: lower + fft_trust × (GEOM upper − lower) of that direction (:meth:`trusts_fft`)
    fft_trust: float = 0.7
    #: with the FFT upper, the GEOM lower aims at aim_fft × the width target; relative GEOM cost per direction
    #: (measured: REMOVE ≈ 2.4× ADD at σ = 2, T = 1000, E = 1 and 10); constants, so the result is reproducible
    aim_fft: float = 0.92
    geom_cost_remove: float = 2.4
    geom_cost_add: float = 1.0
    #: σ from which the interval starts with the FFT uppers and ONE GEOM lower (of the direction whose predicted
    #: step is cheapest, usually ADD) at a step from the model ε − GEOM lower ≈ geom_lower_err ×
    #: loss_discretization
    #: (measured ADD, σ = 2, T = 1000: 0.48–0.55 at E = 1, 5, 10), skipping the coarse GEOM pass of both ends and
    #: directions (which only fixed the step).  Below it the FFT upper is loose (σ ≲ 0.7) and the coarse pass is
    #: kept.
    fft_first_sigma: float = 1.0
    geom_lower_err: float = 0.5
    min_loss_discretization: float = MIN_LOSS_DISCRETIZATION

    def geom_cost(self, d):
        return self.geom_cost_remove if d == "remove" else self.geom_cost_add

    def coarse_step(self, guess, rel_width):
        """The first GEOM pass's step: ``coarse`` × the width target at the Poisson estimate of ε."""
        return max(self.min_loss_discretization, self.coarse * rel_width * max(1e-3, guess))

    def fft_first_step(self, guess, sigma, steps, epochs, rel_width):
        """Linear step of the FFT uppers the interval starts from (σ ≥ ``fft_first_sigma``), or None (coarse GEOM
        pass first): below that σ, at T = 1 (REMOVE needs two steps) or where the FFT grid cap's error is too
        large."""
        if sigma < self.fft_first_sigma or steps < 2:
            return None
        if fft_error_floor(sigma, steps, epochs, self.fft_err) > 0.25 * rel_width * guess:
            return None
        return self.fft_step * rel_width * guess / steps

    def first_lower(self, fft_uppers, h, rel_width, steps):
        """(step, direction) of the GEOM lower that the error models predict to close the width (``aim_fft`` ×
        target) next to the FFT uppers at the least cost; None where no lower can close it.

        Allowed error b of direction d's lower: the aimed width less the FFT error allowance and d's gap to the
        max; its step b/geom_lower_err costs ∝ geom_cost(d)/step²: the cheaper direction is taken (ADD, unless its
        ε is well below REMOVE's: at σ = 1.25, T = 100, E = 10 ADD's lower would need a 10× smaller step)."""
        e_up = max(fft_uppers.values())
        best = None
        for d in DIRECTIONS:
            b = self.aim_fft * rel_width * e_up - self.fft_err * steps * h - (e_up - fft_uppers[d])
            if b > 0:
                ld = max(self.min_loss_discretization, b / self.geom_lower_err)
                if best is None or self.geom_cost(d) / ld**2 < best[0]:
                    best = (self.geom_cost(d) / ld**2, ld, d)
        return None if best is None else best[1:]

    def trusts_fft(self, br, d):
        """Whether d's FFT upper is trusted, so that GEOM does not refine d's upper: where GEOM has both ends of d,
        only if the FFT upper is below lower + fft_trust·(GEOM upper − lower) (its error grows as σ falls: at
        σ = 1, T = 1000 it sits at 96 % of that interval, at σ = 2 at 53 %, and refining the GEOM upper there is
        what meets the width); with only d's GEOM lower, at step s,
        the GEOM upper is taken as lower + 2·s (measured GEOM widths: ≈ 0.6–1.0·s): at T = 4 ADD's FFT upper is
        27·s above its lower.  Untrusted, GEOM refines the upper too (both are upper bounds)."""
        lo, geom = br.lower[d], br.geom_upper[d]
        if not math.isfinite(geom):
            geom = lo + 2 * br.lower_step[d] if br.lower_step[d] else math.inf
        return br.fft_upper[d] < lo + self.fft_trust * (geom - lo)

    def fft_retry_step(self, br, d, e_lo, rel_width, sigma, steps, epochs):
        """Linear step of a further FFT upper of d, or None.  h = fft_step·W/T for the absolute width
        W = rel_width·(lower end) aimed at (error ≈ fft_err·T·h ≈ 0.16·W); tried again at h/4 only when that
        error allowance exceeds a quarter of the width aimed at (the lower end rose or fell a lot).  Cheap
        (O(n log n)) where the per-step privacy loss is light-tailed (σ ≳ 1); where it is not, it comes out above
        GEOM's and is not used."""
        if fft_error_floor(sigma, steps, epochs, self.fft_err) > 0.25 * rel_width * e_lo:
            return None
        h = self.fft_step * rel_width * e_lo / steps
        if br.fft_step[d] is not None:
            if not self.trusts_fft(br, d) or self.fft_err * steps * br.fft_step[d] <= 0.25 * rel_width * e_lo:
                return None
            h = min(h, br.fft_step[d] / 4)
        return h

    def next_pass(self, br, active, ld, rel_width, steps):
        """(upper directions, lower directions, step) of the next GEOM pass.  GEOM refines the uppers not given
        by FFT, and the lower of ONE direction (a lower bound of any one direction bounds the pair's ε from
        below).  The factors are guesses that only pick the step: the loop checks the achieved width."""
        e_lo, e_up = br.combine()
        width = e_up - e_lo
        upper_dirs = [d for d in active if not self.trusts_fft(br, d)]
        top = br.top(active)
        if all(self.trusts_fft(br, d) for d in active):
            # only lowers shrink with the GEOM step.  Direction d's lower can reach ≈ its ε ≈ upper(d) − u
            # (u = fft_err·T·h, the FFT upper's error allowance), so it must close lower gap g_d = upper(d) − u −
            # lower(d) to b_d = a·e_up − u − (e_up − upper(d)) (a = aim_fft·rel_width): step factor b_d/g_d,
            # GEOM cost ∝ geom_cost(d)·(g_d/b_d)²; the cheapest direction is refined
            a = self.aim_fft * rel_width
            best = None
            for d in active:
                u = self.fft_err * steps * br.fft_step[d]
                g, b = br.upper(d) - u - br.lower[d], a * e_up - u - (e_up - br.upper(d))
                if g > 0 and b > 0 and (best is None or self.geom_cost(d) * (g / b) ** 2 < best[0]):
                    best = (self.geom_cost(d) * (g / b) ** 2, d, b / g)
            lower_dirs, factor = ([best[1]], best[2]) if best is not None else ([top], 0.5)
        else:
            # next width w' = width·f; the ends sit about symmetrically around ε, so the next upper is
            # ≈ mid + w'/2 and w' ≤ a·(mid + w'/2) with a = aim·rel_width gives f
            lower_dirs = [top]
            a = self.aim * rel_width
            factor = (a * 0.5 * (e_lo + e_up) / ((1 - 0.5 * a) * width) if math.isfinite(width) and width > 0
                      else 0.1)
        return upper_dirs, lower_dirs, max(self.min_loss_discretization, ld * min(0.9, max(0.1, factor)))


#: the step policy :func:`epsilon_interval` uses unless given another
DEFAULT_STEP_POLICY = StepPolicy()


class IntervalResult(NamedTuple):
    """What :func:`epsilon_interval` returns: the certified ends, how they were reached, and flags."""
    lower: float
    upper: float
    info: dict
    flags: tuple


@functools.lru_cache(maxsize=256)
def epsilon_interval(delta, sigma, steps, epochs, rel_width, tail_truncation, loss_discretization=None, floor=0.0,
                     policy=DEFAULT_STEP_POLICY) -> IntervalResult:
    """Certified [lower, upper] on ε(δ), refined until (upper − lower)/upper ≤ ``rel_width``.

    Each pass builds, per direction, PLD_accounting's dominating and/or dominated PLD at one loss step and adds
    it to an :class:`EpsilonInterval` (which keeps, per direction, the smallest upper and the largest lower: each
    a bound); ``policy`` (:class:`StepPolicy`) picks the steps, routes and directions.  ``floor``: another
    certified lower bound on ε(δ) (given by the caller).  A direction whose
    upper is ≤ the interval's lower cannot move either end and is not refined.  ``loss_discretization`` given:
    one GEOM pass of both ends and directions at that step.
    """
    br = EpsilonInterval(floor)
    upper_dirs = lower_dirs = list(DIRECTIONS)
    if loss_discretization is None:
        guess = poisson_epsilon_guess(delta, sigma, steps, epochs)
        ld = policy.coarse_step(guess, rel_width)
        h = policy.fft_first_step(guess, sigma, steps, epochs, rel_width)
        if h is not None:
            f = {d: fft_upper(sigma, steps, epochs, d, h, tail_truncation, delta) for d in DIRECTIONS}
            if all(math.isfinite(v) for v in f.values()):
                for d in DIRECTIONS:
                    br.add_fft_upper(d, f[d], h)
                start = policy.first_lower(f, h, rel_width, steps)
                if start is not None:
                    ld, upper_dirs, lower_dirs = start[0], [], [start[1]]
    else:
        ld = loss_discretization
    passes = 0
    while True:
        refined = -math.inf  # largest upper refined in this pass: a direction below it cannot be the max
        for d in sorted(upper_dirs, key=lambda d: -br.upper(d)):
            if br.upper(d) > refined:
                br.add_geom_upper(d, epsilon_one(sigma, steps, epochs, "upper", d, ld, tail_truncation, delta))
                refined = max(refined, br.upper(d))
        for d in lower_dirs:
            br.add_lower(d, epsilon_one(sigma, steps, epochs, "lower", d, ld, tail_truncation, delta), ld)
        passes += 1
        e_lo, e_up = br.combine()
        reached = br.width <= rel_width * e_up
        if (reached or loss_discretization is not None or passes == policy.max_passes
                or ld <= policy.min_loss_discretization):
            break
        active = [d for d in DIRECTIONS if br.upper(d) > e_lo]
        for d in active:
            h = policy.fft_retry_step(br, d, e_lo, rel_width, sigma, steps, epochs)
            if h is not None:
                br.add_fft_upper(d, fft_upper(sigma, steps, epochs, d, h, tail_truncation, delta), h)
        e_lo, e_up = br.combine()
        reached = br.width <= rel_width * e_up
        if reached:
            break
        upper_dirs, lower_dirs, ld = policy.next_pass(br, active, ld, rel_width, steps)
    e_lo, e_up = br.combine()
    info = {"loss_discretization": ld, "tail_truncation": tail_truncation, "rel_width_target": rel_width,
            "rel_width": br.width / e_up if e_up > 0 else 0.0, "passes": passes,
            "lower_pld": max(br.lower.values()),
            "upper_route": br.upper_route(),
            "fft_step": min((h for h in br.fft_step.values() if h is not None), default=None)}
    flags = () if reached or loss_discretization is not None else (WIDTH_NOT_MET_FLAG,)
    return IntervalResult(e_lo, e_up, info, flags)


# ---------------------------------------------------------------------------------------------------------
# results: the interval and the PLDs with a caller's other lower bound (the floor)

#: method label of every result of this module
METHOD = "pld_accounting"
#: the options of the results below
OPTIONS = ("accuracy", "loss_discretization", "tail_truncation")
#: accuracy entries of a lower end that say which certified lower bound gave it (:func:`lower_label`)
LOWER_LABEL_KEYS = ("lower_method", "lower_pld", "lower_max_statistic")
#: :func:`sigma_search` starts from [SIGMA_START / 20, SIGMA_START] and gives up beyond MAX_SIGMA
SIGMA_START = 1.0
MAX_SIGMA = 1e4


class Floor(NamedTuple):
    """Another certified lower bound on the same curve (the samplers pass the max-statistic one): its value and
    method label; 0.0 and None where there is none."""
    value: float
    method: str | None


def lower_label(pld_lower, floor):
    """accuracy entries naming which certified lower bound gave the lower end: the PLD one or ``floor``."""
    by = floor.method if floor.method is not None and floor.value > pld_lower else METHOD
    return {"lower_method": by, "lower_pld": pld_lower, "lower_max_statistic": floor.value if floor.method else None}


def epsilon_result(delta, sigma, steps, epochs, bound, floor, both_ends=False, *, accuracy="default",
                   loss_discretization=None, tail_truncation=None) -> AccountingResult:
    """ε(δ) by :func:`epsilon_interval` at ``accuracy`` (or one pass at a fixed ``loss_discretization``), with
    ``floor()`` (a :class:`Floor`, asked for once the options are checked) as a second certified lower bound: the
    lower end is the larger of the two.  value = the end ``bound`` asks for; both ends filled if ``both_ends``."""
    check_choice("accuracy", accuracy, tuple(ACCURACY))
    ld = None if loss_discretization is None else float(check_positive("loss_discretization", loss_discretization))
    tail = (float(check_positive("tail_truncation", tail_truncation)) if tail_truncation is not None
            else default_tail(accuracy, delta))
    low = floor()
    lo, up, info, flags = epsilon_interval(float(delta), float(sigma), steps, epochs, ACCURACY[accuracy]["rel_width"],
                                           tail, ld, low.value)
    info = {**info, **lower_label(info["lower_pld"], low)}  # (info is cached: not mutated)
    both = both_ends  # both ends certified: an interval, value its upper end
    return AccountingResult(value=up if both or bound == "upper" else lo, kind="interval" if both else bound,
                            method=METHOD, accuracy={"accuracy": accuracy, **info},
                            lower=lo if both or bound == "lower" else None,
                            upper=up if both or bound == "upper" else None, flags=flags,
                            lower_method=info["lower_method"] if both or bound == "lower" else None,
                            upper_method=METHOD if both or bound == "upper" else None)


def delta_results(epsilons, sigma, steps, epochs, bound, floor, **settings) -> list:
    """δ(ε) at each ε of ``epsilons`` from one PLD (:func:`allocation_pld`, ``settings`` its options): ``bound="upper"``
    the dominating PLD's δ; ``"lower"`` the larger of the dominated PLD's δ and ``floor(ε)`` (a :class:`Floor`),
    both certified lower bounds, labelled (:func:`lower_label`).  Flagged below :data:`RELIABLE_DELTA_FLOOR`."""
    pld, s = allocation_pld(sigma, steps, epochs, bound, **settings)
    out = []
    for e in epsilons:
        if bound == "lower":  # read for a lower bound at any ε (engine/reading.py), max over the two directions
            d = max(float(delta_lower(p, float(e))) for p in (pld._pmf_remove, pld._pmf_add))  # noqa: SLF001
        else:
            d = float(pld.get_delta_for_epsilon(float(e)))
        acc = s
        if bound == "lower":  # the lower end: the larger of the two certified lower bounds
            low = floor(float(e))
            acc = {**s, **lower_label(d, low)}
            d = max(d, low.value)
        flags = (BELOW_FLOOR_FLAG,) if d < RELIABLE_DELTA_FLOOR else ()
        out.append(AccountingResult(value=d, kind=bound, method=METHOD, accuracy=acc,
                                    lower=d if bound == "lower" else None,
                                    upper=d if bound == "upper" else None, flags=flags))
    return out


def delta_result(epsilon, sigma, steps, epochs, bound, floor, both_ends=False, **settings) -> AccountingResult:
    """δ(ε) at one ε (:func:`delta_results`); with ``both_ends`` the other end too, the lower end's labels kept."""
    r = delta_results([epsilon], sigma, steps, epochs, bound, floor, **settings)[0]
    if not both_ends:
        return r
    other = delta_results([epsilon], sigma, steps, epochs, "lower" if bound == "upper" else "upper", floor,
                          **settings)[0]
    low = r if bound == "lower" else other
    lo, up = (r.value, other.value) if bound == "lower" else (other.value, r.value)
    return AccountingResult(value=up, kind="interval", method=r.method,
                            accuracy={**r.accuracy, **{k: low.accuracy[k] for k in LOWER_LABEL_KEYS}}, lower=lo,
                            upper=up, flags=tuple(dict.fromkeys(r.flags + other.flags)),
                            lower_method=low.accuracy["lower_method"], upper_method=METHOD)


def sigma_search(epsilon, rel_tol, eps_at):
    """(lo, hi): σ with eps_at(hi) ≤ ``epsilon`` < eps_at(lo) and hi/lo ≤ 1 + ``rel_tol``, by doubling from
    :data:`SIGMA_START` and bisection in log σ (``eps_at``: a certified upper bound on ε(δ) at σ, nonincreasing in
    σ; hi is sufficient whatever the monotonicity, since eps_at(hi) ≤ ε was evaluated).  ParameterError where
    no σ ≤ :data:`MAX_SIGMA` reaches ``epsilon``."""
    lo, hi = SIGMA_START / 20, SIGMA_START
    while eps_at(hi) > epsilon:
        lo, hi = hi, hi * 2.0
        if hi > MAX_SIGMA:
            raise ParameterError("epsilon", f"reachable with σ ≤ {MAX_SIGMA:g} (a larger ε)", epsilon, message=
                                 f"epsilon={epsilon!r} needs sigma > {MAX_SIGMA:g}; ask for a larger epsilon")
    # the engine's bisection, in log σ, until hi/lo ≤ 1 + rel_tol (200 halvings: never the limit)
    log_lo, log_hi = _bisect(lambda x: eps_at(math.exp(x)) > epsilon, math.log(lo), math.log(hi), 200,
                             width=math.log1p(rel_tol))
    return math.exp(float(log_lo)), math.exp(float(log_hi))
