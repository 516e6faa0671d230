"""What every accountant returns: a value, what kind of value it is, and how it was obtained.

Holds :class:`AccountingResult`, the allowed ``kind`` labels and the ONE PLD reliability floor
(:data:`RELIABLE_DELTA_FLOOR`) used by every module that reads δ off a privacy loss distribution.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: ``upper``: a valid upper bound; ``lower``: a valid lower bound; ``exact``: closed form;
#: ``estimate``: neither (reported with its error).
KINDS = ("upper", "lower", "exact", "estimate")

#: PLD δ below this is dominated by dp_accounting's truncated tail mass and rounding, so it is not a
#: reliable bound: results below it are flagged (``delta_below_<floor>``), never reported as bounds.
RELIABLE_DELTA_FLOOR = 1e-12
#: The flag set on a PLD δ below :data:`RELIABLE_DELTA_FLOOR`.
BELOW_FLOOR_FLAG = f"delta_below_{RELIABLE_DELTA_FLOOR:g}"


@dataclass(frozen=True)
class AccountingResult:
    """A privacy parameter together with what it is and how it was obtained.

    ``kind`` is ``upper`` (a valid upper bound), ``lower`` (a valid lower
    bound), ``exact`` (closed form) or ``estimate``.  ``lower``/``upper``
    bracket the true value when the method provides both.  ``flags`` lists
    caveats, e.g. ``not_converged`` or ``delta_below_1e-12``.
    """

    value: float
    kind: str
    method: str
    accuracy: dict = field(default_factory=dict)
    lower: float | None = None
    upper: float | None = None
    flags: tuple = ()

    def as_dict(self) -> dict:
        d = asdict(self)
        d["flags"] = ";".join(self.flags)
        return d

