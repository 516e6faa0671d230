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
