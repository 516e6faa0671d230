"""engine/result.py: AccountingResult, the reliability floor RELIABLE_DELTA_FLOOR and its flag."""

import pytest

from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR


def test_floor_is_at_least_where_the_pld_was_shown_wrong():
    assert RELIABLE_DELTA_FLOOR >= 1e-10 and BELOW_FLOOR_FLAG == f"delta_below_{RELIABLE_DELTA_FLOOR:g}"


def _decimal_round(x, digits, up):
    """x rounded to ``digits`` significant digits up or down, in exact decimal arithmetic (an independent reference
    for engine.result.outward)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    d = Decimal(repr(x))  # the float's shortest decimal (read back, the same float)
    exp = d.adjusted() - digits + 1
    return d.quantize(Decimal(1).scaleb(exp), rounding=ROUND_CEILING if up else ROUND_FLOOR)


def test_bound_text_puts_every_bound_on_its_side():
    """Upper ends print ≥ the value, lower ends ≤ (read back as floats), and both equal the exact decimal rounding
    (2.385217: the printed upper end is 2.386, not the nearest 2.385)."""
    import random
    from decimal import Decimal

    from dpsampling.engine.result import bound_text

    assert bound_text(2.385217, "upper") == "2.386" and bound_text(2.385217, "lower") == "2.385"
    assert bound_text(2.343345, "upper", 3) == "2.35" and bound_text(7, "upper") == "7"
    rng = random.Random(0)
    values = [2.385217, 2.343345, 1.0, 0.1, 1e-300, 123456.789, 0.30000000000000004]
    values += [10 ** rng.uniform(-8, 8) for _ in range(2000)]
    for x in values:
        for digits in (3, 4, 6):
            up, lo = bound_text(x, "upper", digits), bound_text(x, "lower", digits)
            assert float(up) >= x >= float(lo), (x, digits, up, lo)
            assert Decimal(up) == _decimal_round(x, digits, True), (x, digits, up)
            assert Decimal(lo) == _decimal_round(x, digits, False), (x, digits, lo)
    assert bound_text(float("inf"), "upper") == "inf" and bound_text(float("nan"), "lower") == "nan"
    with pytest.raises(ValueError, match="side"):
        bound_text(1.0, "sideways")


# ----------------------------------------------------------------------------- the one result model (settle)


def test_settle_puts_the_safe_end_in_value():
    """value is the safe end: an interval's or an upper bound's upper end, None for a one-sided lower answer (its
    number in lower); a certified bracket (per-end labels in accuracy) is an interval; each end gets its method."""
    from dpsampling.engine.result import KINDS, AccountingResult, settle

    assert KINDS == ("exact", "interval", "upper", "lower", "estimate")
    acc = {"lower_method": "dominated PLD", "upper_method": "pessimistic PLD"}
    r = settle(AccountingResult(1.0, "lower", "dominated PLD / pessimistic PLD", acc, 1.0, 1.2), method="certified")
    assert (r.kind, r.value, r.lower, r.upper, r.method) == ("interval", 1.2, 1.0, 1.2, "certified")
    assert (r.lower_method, r.upper_method) == ("dominated PLD", "pessimistic PLD")
    # an upper bound with an uncertified estimate of the lower end (the optimistic PLD): kind upper, value upper
    p = settle(AccountingResult(0.9, "lower", "pld", {}, 0.9, 1.1, lower_method="optimistic PLD (not certified)",
                                upper_method="pessimistic PLD"))
    assert (p.kind, p.value, p.lower, p.upper) == ("upper", 1.1, 0.9, 1.1)
    # a lower bound alone: no value, never the lower end
    lo = settle(AccountingResult(0.7, "lower", "max-statistic events", {}, 0.7, None))
    assert (lo.kind, lo.value, lo.lower, lo.upper) == ("lower", None, 0.7, None)
    assert (lo.lower_method, lo.upper_method) == ("max-statistic events", None)
    up = settle(AccountingResult(2.0, "upper", "rdp", {}, None, 2.0))
    assert (up.kind, up.value, up.upper_method, up.lower_method) == ("upper", 2.0, "rdp", None)
    ex = settle(AccountingResult(3.0, "exact", "analytic", {}, 3.0, 3.0))
    assert (ex.kind, ex.value, ex.lower_method, ex.upper_method) == ("exact", 3.0, "analytic", "analytic")
    est = settle(AccountingResult(0.5, "estimate", "montecarlo", {}, 0.4, 0.6))
    assert (est.kind, est.value) == ("estimate", 0.5)  # an estimate is not a bound: its own value, its band
    # an interval of a best-known upper end (shuffle): the flag travels; settle is idempotent
    sh = settle(AccountingResult(5.0, "interval", "E_C sets / deterministic", {}, 4.0, 5.0), upper_best_known=True)
    assert sh.upper_best_known and settle(sh) == sh and (sh.lower_method, sh.upper_method) == ("E_C sets",
                                                                                               "deterministic")
    assert sh.as_dict()["upper_best_known"] is True and sh.as_dict()["lower_method"] == "E_C sets"
