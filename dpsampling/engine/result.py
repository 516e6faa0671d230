"""What every accountant returns: a value, what kind of value it is, and how it was obtained.

Holds :class:`AccountingResult`, the allowed ``kind`` labels, the ONE PLD reliability floor
(:data:`RELIABLE_DELTA_FLOOR`) used by every module that reads δ off a privacy loss distribution, and the one way a
bound is printed (:func:`bound_text`, :func:`interval_text`: every upper end rounded up, every lower end down).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .errors import ParameterError

#: What a result's numbers are (one meaning each, whatever the entry point):
#: ``exact``: closed form (``lower`` = ``upper`` = ``value``);
#: ``interval``: both ends certified, whatever the width — the true value lies in [``lower``, ``upper``]
#: (``upper_best_known`` True when the upper end is certified but only the best known, not claimed tight: shuffle's
#: deterministic end, Chua et al. ICML 2024 Thm 4.1);
#: ``upper``: only the upper end is certified (a ``lower`` given beside it is an uncertified estimate, e.g. the
#: optimistic PLD, named by ``lower_method``);
#: ``lower``: only the lower end is certified (one-sided; ``value`` is None: a lower end is never the safe end);
#: ``estimate``: not a bound (Monte Carlo, or a value with an error band in ``lower``/``upper``).
KINDS = ("exact", "interval", "upper", "lower", "estimate")
#: the kinds whose upper end is certified (``value`` = ``upper``)
UPPER_CERTIFIED_KINDS = ("exact", "interval", "upper")

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
#: The flag of a certified interval that did not reach its requested relative width (still an answer: printed).
WIDTH_NOT_MET_FLAG = "rel_width_not_reached"


@dataclass(frozen=True)
class AccountingResult:
    """A privacy parameter (ε, δ or σ) together with what it is and how it was obtained.

    ``value`` is THE SAFE END, one rule everywhere: for ε and δ the certified upper end (the exact value if
    ``exact``); for σ a σ that is sufficient (the upper end of the σ bracket: every σ ≥ it certifies the target).
    ``value`` never holds a lower end: a one-sided lower answer (kind ``lower``) has ``value`` None.  An
    ``estimate`` keeps its estimate in ``value`` (not a bound).

    ``kind``: one of :data:`KINDS`.  ``lower``/``upper``: the ends (for σ: ``lower`` a provably insufficient σ,
    ``upper`` a sufficient one); ``lower_method``/``upper_method``: the method that gives each end, a label such as
    "dominated PLD", "pessimistic PLD", "deterministic (Chua Thm 4.1)" or "analytic" (None where the end is
    absent).  ``method``: the selector the question was asked with (the ``method`` argument / ``--method``
    choice, e.g. "certified", "pld", "rdp"; through :func:`dpsampling.samplers.account` the sampler's default
    method when none was asked, None for a sampler without a method choice); an engine answer asked directly
    carries its engine's label there.  ``upper_best_known``: the upper end is certified but only the best known,
    not claimed tight.  ``flags`` lists caveats, e.g. ``not_converged`` or :data:`BELOW_FLOOR_FLAG`.
    ``relation``: the neighbouring relation the numbers hold under (``dpsampling.samplers.spec.RELATIONS``;
    :func:`dpsampling.samplers.account` sets it from the sampler's spec; None for an engine answer asked directly).
    """

    value: float | None
    kind: str
    method: str | None
    accuracy: dict = field(default_factory=dict)
    lower: float | None = None
    upper: float | None = None
    flags: tuple = ()
    relation: str | None = field(default=None, compare=False)  # not part of the value: equal answers compare equal
    lower_method: str | None = field(default=None, compare=False)  # labels, not part of the value
    upper_method: str | None = field(default=None, compare=False)
    upper_best_known: bool = field(default=False, compare=False)

    def end_methods(self) -> tuple:
        """(lower_method, upper_method): :func:`end_methods` of this result."""
        return end_methods(self)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["flags"] = ";".join(self.flags)
        return d


def end_methods(result) -> tuple:
    """(lower_method, upper_method) of ``result``: its own fields where set, else the engine's
    ``accuracy["lower_method"]``/``["upper_method"]``, else the halves of a "<lower> / <upper>" label, else its
    ``method`` label for each end it has (both for ``exact``)."""
    lm, um = result.lower_method, result.upper_method
    acc = result.accuracy or {}
    lm = lm or acc.get("lower_method")
    um = um or acc.get("upper_method")
    label = result.method or ""
    halves = label.split(" / ", 1) if " / " in label else None
    if lm is None and result.lower is not None:
        lm = halves[0] if halves else (label or None)
    if um is None and result.upper is not None:
        um = halves[1] if halves else (label or None)
    if result.kind == "exact":
        lm, um = lm or label or None, um or label or None
    return lm, um


def settle(result, *, method="keep", interval=None, upper_best_known=None):
    """``result`` in the one result model (the answer of :func:`dpsampling.samplers.account`):

    * ``kind``: ``interval`` when both ends are present and certified (``interval`` True, or None and recognised
      by the certified brackets' per-end labels ``accuracy["lower_method"]``/``["upper_method"]`` or an existing
      ``interval`` kind); a ``lower`` answer that carries an upper end which is certified but not its lower end
      (the optimistic PLD beside the pessimistic one) is ``upper``;
    * ``value``: the safe end (:class:`AccountingResult`): the upper end of an ``interval`` or ``upper`` answer, None
      for a one-sided ``lower`` answer (its number is in ``lower``);
    * ``lower_method``/``upper_method`` filled (:func:`end_methods`), None for an absent end;
    * ``method`` the selector ``method`` (unless "keep"), ``upper_best_known`` set when given.
    """
    import dataclasses

    lm, um = end_methods(result)
    kind, lower, upper = result.kind, result.lower, result.upper
    if kind == "lower" and lower is None:
        lower = result.value
    if kind == "upper" and upper is None:
        upper = result.value
    if interval is None:
        acc = result.accuracy or {}
        interval = kind == "interval" or ("lower_method" in acc and "upper_method" in acc)
    if kind in ("upper", "lower", "interval") and lower is not None and upper is not None:
        kind = "interval" if interval else "upper"
    elif kind == "interval":  # an end is missing: one-sided
        kind = "upper" if upper is not None else "lower"
    if kind in ("interval", "upper"):
        value = upper
    elif kind == "lower":
        value = None
    else:
        value = result.value
    kw = dict(value=value, kind=kind, lower=lower, upper=upper, lower_method=lm if lower is not None else None,
              upper_method=um if upper is not None else None)
    if method != "keep":
        kw["method"] = method
    if upper_best_known is not None:
        kw["upper_best_known"] = bool(upper_best_known)
    return dataclasses.replace(result, **kw)


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
