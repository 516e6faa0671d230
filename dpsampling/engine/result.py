"""What every accountant returns: a value, what kind of value it is, and how it was obtained.

Holds :class:`AccountingResult`, the allowed ``kind`` labels and the ONE PLD reliability floor
(:data:`RELIABLE_DELTA_FLOOR`) used by every module that reads δ off a privacy loss distribution.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: ``upper``: a valid upper bound; ``lower``: a valid lower bound; ``exact``: closed form;
#: ``estimate``: neither (reported with its error); ``interval``: an audit row whose ``lower`` and ``upper`` are
#: valid bounds with no dominating pair between them (shuffle: its lower bound and the deterministic value).
KINDS = ("upper", "lower", "exact", "estimate", "interval")

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
    caveats, e.g. ``not_converged`` or :data:`BELOW_FLOOR_FLAG`.
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

