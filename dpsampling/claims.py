"""Checking numbers printed in the papers against the library.

A claim (one entry of ``config/claims.yaml``) names the paper, the place, the
quantity, the printed value, a relation and a tolerance, and says how to
compute our value: ``evaluate: {call: "dpsampling.module.function", kwargs: {...}}``
(optionally ``field``: an attribute or key of the returned object; an
:class:`~dpsampling.engine.accountant.AccountingResult` yields its ``value``).

Relations read "ours <relation> printed":
    ≈  |ours - printed| ≤ tol  (tol·|printed| when ``tolerance_kind: rel``)
    ≤  ours ≤ printed + tol
    ≥  ours ≥ printed - tol
    =  ours == printed (booleans and exact values)
A claim whose check fails is reported as ``differs``; the ``note`` explains
why, and ``expected`` (default ``reproduced``) records what we expect, so the
tests fail when a status changes, in either direction.
"""

from __future__ import annotations

import hashlib
import importlib
import math
from fractions import Fraction

RELATIONS = ("≈", "≤", "≥", "=")
REQUIRED = ("id", "paper", "where", "quantity", "printed", "relation", "tolerance", "evaluate")
STATUSES = ("reproduced", "differs")


def validate(claim: dict) -> dict:
    """Raise ValueError naming the claim and the key if ``claim`` is malformed."""
    cid = claim.get("id", "<no id>")
    missing = [k for k in REQUIRED if k not in claim]
    if missing:
        raise ValueError(f"claim {cid}: missing key(s) {', '.join(missing)}")
    if claim["relation"] not in RELATIONS:
        raise ValueError(f"claim {cid}: relation must be one of {' '.join(RELATIONS)} (got {claim['relation']!r})")
    if not float(claim["tolerance"]) >= 0:
        raise ValueError(f"claim {cid}: tolerance must be >= 0 (got {claim['tolerance']!r})")
    if claim.get("tolerance_kind", "abs") not in ("abs", "rel"):
        raise ValueError(f"claim {cid}: tolerance_kind must be abs or rel (got {claim['tolerance_kind']!r})")
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


def holds(ours, printed, relation, tolerance, tolerance_kind="abs") -> bool:
    """Does "ours <relation> printed" hold within ``tolerance``?"""
    if relation == "=":
        return ours == printed
    if isinstance(ours, bool) or isinstance(printed, bool):
        return False
    ours, printed, tol = float(ours), float(printed), float(tolerance)
    if math.isnan(ours):
        return False
    if tolerance_kind == "rel":
        tol *= abs(printed)
    if relation == "≈":
        return abs(ours - printed) <= tol
    if relation == "≤":
        return ours <= printed + tol
    return ours >= printed - tol


def evaluate(claim: dict) -> dict:
    """One row of the claims table."""
    validate(claim)
    ours = compute(claim)
    ok = holds(ours, claim["printed"], claim["relation"], claim["tolerance"], claim.get("tolerance_kind", "abs"))
    return {
        "id": claim["id"],
        "paper": claim["paper"],
        "where": claim["where"],
        "quantity": claim["quantity"],
        "printed": claim["printed"],
        "relation": claim["relation"],
        "tolerance": claim["tolerance"],
        "tolerance_kind": claim.get("tolerance_kind", "abs"),
        "ours": float(ours) if isinstance(ours, Fraction) else ours,
        "status": "reproduced" if ok else "differs",
        "expected": claim.get("expected", "reproduced"),
        "note": claim.get("note", ""),
    }


def chunk_of(claim_id: str, n_chunks: int) -> int:
    """Stable chunk of a claim (by its id), so editing one claim reruns one chunk."""
    return int(hashlib.sha1(claim_id.encode()).hexdigest()[:12], 16) % int(n_chunks)
