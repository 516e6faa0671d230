"""What every accountant returns: a value, what kind of value it is, and how it was obtained.

Holds :class:`AccountingResult`, the allowed ``kind`` labels and the ONE PLD reliability floor
(:data:`RELIABLE_DELTA_FLOOR`) used by every module that reads δ off a privacy loss distribution.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: ``upper``: a valid upper bound; ``lower``: a valid lower bound; ``exact``: closed form;
#: ``estimate``: neither (reported with its error).
KINDS = ("upper", "lower", "exact", "estimate")

#: PLD δ below this is not a reliable upper bound: results below it are flagged
#: (``delta_below_<floor>``) and never reported as PLD bounds (the accountant replaces them by the φ
#: accountant's certified end where it can, see ``engine.accountant._below_floor``).
#: Evidence (bench/study_pld_floor.py, dp_accounting 0.6.0, φ accountant certified interval and
#: prv_accountant as references): the pessimistic PLD falls *below* the certified lower end of the
#: truth by an absolute amount of about 1-2e-14 at d = 1e-5 (FFT round-off of the composition),
#: whatever δ is; e.g. σ=0.8, q=1e-3, T=1e3, ε=2: truth 1.4790e-11, pessimistic PLD 1.4774e-11.
#: Relative to δ that shortfall is 1e-3 at δ ≈ 1.5e-11 and ≤ 2e-4 at δ ≥ 1e-10, i.e. below the
#: accountant's default accuracy target (1e-3) only from 1e-10 on: hence 1e-10.
RELIABLE_DELTA_FLOOR = 1e-10
#: The flag set on a PLD δ below :data:`RELIABLE_DELTA_FLOOR`.
BELOW_FLOOR_FLAG = f"delta_below_{RELIABLE_DELTA_FLOOR:g}"


@dataclass(frozen=True)
class AccountingResult:
    """A privacy parameter together with what it is and how it was obtained.

    ``kind`` is ``upper`` (a valid upper bound), ``lower`` (a valid lower
    bound), ``exact`` (closed form) or ``estimate``.  ``lower``/``upper``
    bracket the true value when the method provides both.  ``flags`` lists
    caveats, e.g. ``not_converged`` or ``delta_below_1e-10``.
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

