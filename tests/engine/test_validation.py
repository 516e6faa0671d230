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


def _delta_taking_engine_functions():
    from dpsampling.engine import accountant, dominated_pld, gaussian, pld, poisson_interval
    return [accountant.epsilon, dominated_pld.epsilon, gaussian.epsilon, gaussian.sigma, pld.epsilon,
            pld.pld_epsilon, pld.epsilon_for_delta, poisson_interval.epsilon, poisson_interval.insufficient_sigma]


@pytest.mark.parametrize("f", _delta_taking_engine_functions(), ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_delta_target_is_named_delta(f):
    """One name per concept: the δ target is ``delta``."""
    import inspect
    params = inspect.signature(f).parameters
    assert "delta" in params and "delta_target" not in params


def test_delta_keyword_gives_the_positional_value():
    from dpsampling.engine import gaussian
    assert gaussian.epsilon(delta=1e-5, sigma=1.3) == gaussian.epsilon(1e-5, 1.3)
    assert gaussian.sigma(epsilon=1.0, delta=1e-5) == gaussian.sigma(1.0, 1e-5)
