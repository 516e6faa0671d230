"""The shared input checks: one ValueError naming the parameter, the allowed range and the value."""

import numpy as np
import pytest

from dpsampling.engine.validation import check_finite_list, check_int


@pytest.mark.parametrize("value", [0, 2.5, True, -3])
def test_check_int_rejects_naming_the_key(value):
    with pytest.raises(ValueError, match=r"^k must be an integer >= 1 \(got "):
        check_int("k", value)


def test_check_int_accepts_integral_values_at_the_bound():
    assert check_int("seed", 0, 0) == 0 and check_int("n", 3.0) == 3 and isinstance(check_int("n", np.int64(5)), int)


@pytest.mark.parametrize("value", [[], [0.1, np.nan], [[0.1, 0.2]], np.inf])
def test_check_finite_list_rejects_naming_the_key(value):
    with pytest.raises(ValueError, match=r"^eps_grid must be a non-empty 1-D list of finite numbers"):
        check_finite_list("eps_grid", value)


def test_check_finite_list_returns_a_1d_array():
    assert np.array_equal(check_finite_list("eps", 0.5), [0.5])
