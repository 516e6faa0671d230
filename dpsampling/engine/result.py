"""What every accountant returns: a value, what kind of value it is, and how it was obtained.

Holds :class:`AccountingResult`, the allowed ``kind`` labels, the ONE PLD reliability floor
(:data:`RELIABLE_DELTA_FLOOR`) used by every module that reads δ off a privacy loss distribution, and the one way a
bound is printed (:func:`bound_text`, :func:`interval_text`: every upper end rounded up, every lower end down).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .errors import ParameterError

#: ``upper``: a valid upper bound; ``lower``: a valid lower bound; ``exact``: closed form;
#: ``estimate``: neither (reported with its error); ``interval``: an audit row whose ``lower`` and ``upper`` are both
#: certified ends (``value`` is the safe one: the upper end of ε or σ, the lower end of the epochs allowed);
#: ``lower_best_upper``: an audit row whose ``lower`` is a certified lower bound and whose ``upper`` is only the best
#: known upper end, not a certified pair (shuffle: its lower bound and the deterministic value).
KINDS = ("upper", "lower", "exact", "estimate", "interval", "lower_best_upper")

#: PLD δ below this is not a reliable upper bound: results below it are flagged
#: (``delta_below_<floor>``) and never reported as PLD bounds (the accountant replaces them by the φ
#: accountant's certified end where it can, see ``engine.accountant._below_floor``).
#: Evidence (bench/study_pld_floor.py: 18 points in 4 settings σ∈{0.8,1,2}, q∈{1e-3,1e-2,0.1},
#: T∈{100,1000}, true δ 5e-14..6e-8, dp_accounting 0.6.0 at d = 1e-3/1e-4/1e-5 against the φ
#: accountant's certified interval and prv_accountant): the pessimistic PLD falls *below* the
#: certified truth by an absolute 0.5-4.5e-14 (FFT round-off/truncation of the composition) whatever
#: δ is.  Worst ratio pessimistic/truth: 0.999964 at δ = 2.2e-10 (all 8 points ≥ 1e-10 are within
#: 4e-5, below the accountant's default accuracy 1e-3), but 0.9989 at 1.48e-11 (σ=0.8, q=1e-3,
#: T=1e3, ε=2, d=1e-5: 1.4774e-11 vs 1.4790e-11), 0.976 at 1.9e-12 (d=1e-3) and 0.57 at 4.6e-14.
#: Hence 1e-10.
RELIABLE_DELTA_FLOOR = 1e-10
#: The flag set on a PLD δ below :data:`RELIABLE_DELTA_FLOOR`.
BELOW_FLOOR_FLAG = f"delta_below_{RELIABLE_DELTA_FLOOR:g}"
#: The flag of a certified interval that did not reach its requested relative width (the command line exits 1).
WIDTH_NOT_MET_FLAG = "rel_width_not_reached"


@dataclass(frozen=True)
class AccountingResult:
    """A privacy parameter together with what it is and how it was obtained.

    ``kind`` is ``upper`` (a valid upper bound), ``lower`` (a valid lower
    bound), ``exact`` (closed form) or ``estimate``.  ``lower``/``upper``
    bracket the true value when the method provides both.  ``flags`` lists
    caveats, e.g. ``not_converged`` or :data:`BELOW_FLOOR_FLAG`.  ``relation``: the neighbouring relation the
    value holds under (``dpsampling.samplers.spec.RELATIONS``; :func:`dpsampling.samplers.account` sets it from
    the sampler's spec; None for an engine answer asked directly).
    """

    value: float
    kind: str
    method: str
    accuracy: dict = field(default_factory=dict)
    lower: float | None = None
    upper: float | None = None
    flags: tuple = ()
    relation: str | None = field(default=None, compare=False)  # not part of the value: equal answers compare equal

    def as_dict(self) -> dict:
        d = asdict(self)
        d["flags"] = ";".join(self.flags)
        return d



def outward(x: float, digits: int, up: bool) -> float:
    """``x`` rounded to ``digits`` significant digits away from the certified side: up for an upper end, down for a
    lower end, so that a printed bound is implied by the certified one.  Exact: the rounding is done in decimal on
    the float's shortest repr, so the result read back as a float is ≥ ``x`` (up) or ≤ ``x`` (down).  0, ±∞ and NaN
    are returned as they are."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    if x == 0 or not math.isfinite(x):
        return x
    d = Decimal(repr(float(x)))
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR))


#: the sides a printed number can stand for: ``upper`` rounds up, ``lower`` down, ``exact``/``value`` to nearest
SIDES = ("upper", "lower", "exact", "value")


def bound_text(x, side: str, digits: int = 4) -> str:
    """One bound as text: ``x`` to ``digits`` significant digits, rounded up if ``side`` is ``"upper"`` and down if
    ``"lower"`` (so the printed bound still holds), to nearest for ``"exact"``/``"value"`` (not a bound).  Every
    surface that prints a bound (statement, audit table and verdicts, CLI text, pipeline tables, warnings) uses this
    function or :func:`interval_text`.  ``inf``/``nan`` print as such; an integer prints as itself."""
    if side not in SIDES:
        raise ParameterError('side', 'one of upper, lower, exact, value', side,
                             message=f"side must be one of {', '.join(SIDES)} (got {side!r})")
    if isinstance(x, bool) or (isinstance(x, int)):
        return str(x)
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if side in ("upper", "lower"):
        x = outward(x, digits, side == "upper")
    return f"{x:.{digits}g}"


def interval_text(lower, upper) -> str:
    """'[lower, upper]' rounded outward (lower down, upper up) to the fewest significant digits (4 to 8) that show
    the certified width, so the printed interval contains the certified one."""
    for digits in range(4, 9):
        a, b = outward(lower, digits, False), outward(upper, digits, True)
        if b - a <= 2 * (upper - lower) + 1e-300:
            break
    return f"[{a:.{digits}g}, {b:.{digits}g}]"


def separating_text(lo_end, hi_end) -> tuple:
    """(text of ``lo_end`` rounded up, text of ``hi_end`` rounded down) with the fewest digits (4 to 12) that keep
    them apart (``lo_end < hi_end``): a printed ``lo_end < hi_end`` is as true as the one between the numbers."""
    for digits in range(4, 13):
        a, b = outward(lo_end, digits, True), outward(hi_end, digits, False)
        if a < b:
            return f"{a:.{digits}g}", f"{b:.{digits}g}"
    return f"{lo_end!r}", f"{hi_end!r}"


def ends_text(lower, upper) -> tuple:
    """Texts of an interval's ends rounded outward (lower down, upper up) with the fewest digits (4 to 12) that tell
    them apart."""
    for digits in range(4, 13):
        a, b = outward(lower, digits, False), outward(upper, digits, True)
        if a != b or digits == 12:
            return f"{a:.{digits}g}", f"{b:.{digits}g}"
