"""engine/result.py: AccountingResult, the reliability floor RELIABLE_DELTA_FLOOR and its flag."""

from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR


def test_floor_is_at_least_where_the_pld_was_shown_wrong():
    assert RELIABLE_DELTA_FLOOR >= 1e-10 and BELOW_FLOOR_FLAG == f"delta_below_{RELIABLE_DELTA_FLOOR:g}"
