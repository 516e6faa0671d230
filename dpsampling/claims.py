"""Checking numbers printed in the papers against the library.

A claim (one entry of ``config/claims.yaml``) names the paper, the place, the
quantity, the printed value, the relation the paper states, and says how to
compute our value: ``evaluate: {call: "dpsampling.module.function", kwargs: {...}}``
(optionally ``field``: an attribute or key of the returned object; an
:class:`~dpsampling.engine.accountant.AccountingResult` yields its ``value``).

Relations say what the paper states: ``≈`` a value, ``≤``/``≥`` an inequality,
``=`` an exact value or a yes/no statement.  Every numeric claim (``≈ ≤ ≥``)
carries a two-sided acceptance range for our value, ``accept: [lo, hi]`` with a
``range_reason`` (how the paper computed and printed its number), and optionally
``expect: {value, rel, source}`` (the value we expect, where the printed digits
allow a wide range).  A claim is ``reproduced`` iff

    ``=``       ours == printed;
    otherwise   lo ≤ ours ≤ hi, and |ours − expect.value| ≤ expect.rel·|expect.value| if given.

So an accountant returning 0 (or ∞, or NaN) reproduces nothing.  A claim whose
check fails is reported as ``differs``; the ``note`` explains why, and
``expected`` (default ``reproduced``) records what we expect, so the tests fail
when a status changes, in either direction.
"""

from __future__ import annotations

import hashlib
import importlib
import math
from fractions import Fraction

RELATIONS = ("≈", "≤", "≥", "=")
NUMERIC = ("≈", "≤", "≥")
REQUIRED = ("id", "paper", "where", "quantity", "printed", "relation", "evaluate")
STATUSES = ("reproduced", "differs")


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def validate(claim: dict) -> dict:
    """Raise ValueError naming the claim and the key if ``claim`` is malformed."""
    cid = claim.get("id", "<no id>")
    missing = [k for k in REQUIRED if k not in claim]
    if missing:
        raise ValueError(f"claim {cid}: missing key(s) {', '.join(missing)}")
    if claim["relation"] not in RELATIONS:
        raise ValueError(f"claim {cid}: relation must be one of {' '.join(RELATIONS)} (got {claim['relation']!r})")
    for old in ("tolerance", "tolerance_kind"):
        if old in claim:
            raise ValueError(f"claim {cid}: {old} is replaced by accept: [lo, hi] and range_reason")
    if claim["relation"] in NUMERIC:
        acc = claim.get("accept")
        if not (isinstance(acc, (list, tuple)) and len(acc) == 2 and all(_finite(a) for a in acc) and acc[0] <= acc[1]):
            raise ValueError(f"claim {cid}: accept must be [lo, hi], two finite numbers with lo <= hi (got {acc!r})")
        if not str(claim.get("range_reason", "")).strip():
            raise ValueError(f"claim {cid}: range_reason is required with accept (how the range follows from the paper)")
        exp = claim.get("expect")
        if exp is not None:
            if not (isinstance(exp, dict) and _finite(exp.get("value")) and _finite(exp.get("rel")) and exp["rel"] >= 0
                    and str(exp.get("source", "")).strip()):
                raise ValueError(f"claim {cid}: expect must be {{value, rel >= 0, source}} (got {exp!r})")
            if not acc[0] <= exp["value"] <= acc[1]:
                raise ValueError(f"claim {cid}: expect.value {exp['value']} lies outside accept {acc}")
    elif "accept" in claim or "expect" in claim:
        raise ValueError(f"claim {cid}: accept/expect apply to relations {' '.join(NUMERIC)}, not '='")
    if claim.get("expected", "reproduced") not in STATUSES:
        raise ValueError(f"claim {cid}: expected must be one of {', '.join(STATUSES)}")
    ev = claim["evaluate"]
    if not isinstance(ev, dict) or "call" not in ev:
        raise ValueError(f"claim {cid}: evaluate needs a 'call' (dotted path of a dpsampling function)")
    if not str(ev["call"]).startswith("dpsampling."):
        raise ValueError(f"claim {cid}: evaluate.call must be a dpsampling function (got {ev['call']!r})")
    return claim


def resolve(path: str):
    """Import ``dpsampling.module.function``."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _to_number(x):
    if hasattr(x, "value") and hasattr(x, "kind"):
        return x.value
    if isinstance(x, Fraction):
        return x
    if isinstance(x, bool):
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        return x


def compute(claim: dict):
    """Our value for ``claim``."""
    ev = claim["evaluate"]
    out = resolve(ev["call"])(**ev.get("kwargs", {}))
    field = ev.get("field")
    if field is not None:
        out = out[field] if isinstance(out, dict) else getattr(out, field)
    return _to_number(out)


def holds(claim: dict, ours) -> bool:
    """Is our value for ``claim`` within its acceptance range (and expectation), or equal for ``=``?"""
    if claim["relation"] == "=":
        return ours == claim["printed"]
    if isinstance(ours, bool):
        return False
    try:
        ours = float(ours)
    except (TypeError, ValueError):
        return False
    if not math.isfinite(ours):
        return False
    lo, hi = (float(a) for a in claim["accept"])
    if not lo <= ours <= hi:
        return False
    exp = claim.get("expect")
    return exp is None or abs(ours - float(exp["value"])) <= float(exp["rel"]) * abs(float(exp["value"]))


def evaluate(claim: dict, ours=None) -> dict:
    """One row of the claims table (``ours`` given: check that value instead of computing it)."""
    validate(claim)
    if ours is None:
        ours = compute(claim)
    acc = claim.get("accept") or (None, None)
    exp = claim.get("expect") or {}
    return {
        "id": claim["id"],
        "paper": claim["paper"],
        "where": claim["where"],
        "quantity": claim["quantity"],
        "printed": claim["printed"],
        "relation": claim["relation"],
        "accept_lo": acc[0],
        "accept_hi": acc[1],
        "expect": exp.get("value"),
        "expect_rel": exp.get("rel"),
        "ours": float(ours) if isinstance(ours, Fraction) else ours,
        "status": "reproduced" if holds(claim, ours) else "differs",
        "expected": claim.get("expected", "reproduced"),
        "note": claim.get("note", ""),
        "range_reason": claim.get("range_reason", ""),
    }


def chunk_of(claim_id: str, n_chunks: int) -> int:
    """Stable chunk of a claim (by its id), so editing one claim reruns one chunk."""
    return int(hashlib.sha1(claim_id.encode()).hexdigest()[:12], 16) % int(n_chunks)
