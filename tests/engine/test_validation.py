"""The shared input checks: one ValueError naming the parameter, the allowed range and the value."""

import numpy as np
import pytest

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import (as_number, check_delta, check_epsilon, check_finite_list, check_int,
                                         check_positive, check_rate, check_steps)


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


# ---------------------------------------------------------------- numbers of any array library
class _ItemScalar:
    """A 0-d array of an array library we do not import (JAX, torch): ``shape == ()`` and ``.item()``."""
    shape = ()

    def __init__(self, v):
        self.v = v

    def item(self):
        return self.v


class _IndexOnly:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class _FloatOnly:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v


@pytest.mark.parametrize("value,expected,kind", [
    (np.float32(1.1), float(np.float32(1.1)), float), (np.int64(60000), 60000, int), (np.array(2.5), 2.5, float),
    (np.array(7), 7, int), (_ItemScalar(0.25), 0.25, float), (_ItemScalar(3), 3, int), (_IndexOnly(4), 4, int),
    (_FloatOnly(0.5), 0.5, float), (1.5, 1.5, float), (3, 3, int)])
def test_as_number_gives_a_python_number(value, expected, kind):
    got = as_number(value)
    assert type(got) is kind and got == expected


@pytest.mark.parametrize("value", [True, np.bool_(True), [1.0, 2.0], np.array([1.0, 2.0]), "1.0", None])
def test_as_number_leaves_non_scalars_and_bools_to_the_checks(value):
    got = as_number(value)
    assert got is value or (isinstance(got, bool) and got == bool(value))


@pytest.mark.parametrize("make", [np.float32, np.float64, np.array, _ItemScalar, _FloatOnly])
def test_checks_accept_array_library_numbers(make):
    assert check_positive("sigma", make(1.5)) == 1.5 and type(check_positive("sigma", make(1.5))) is float
    assert check_delta(make(0.5)) == 0.5 and check_rate(make(0.25)) == 0.25 and check_epsilon(make(2.0)) == 2.0
    with pytest.raises(ParameterError, match=r"^sigma must be > 0 and finite") as e:
        check_positive("sigma", make(-1.5))
    assert e.value.param == "sigma"


@pytest.mark.parametrize("make", [np.int64, np.int32, np.array, _ItemScalar, _IndexOnly])
def test_integer_checks_accept_array_library_integers(make):
    assert check_int("steps", make(60000)) == 60000 and check_steps(make(60000)) == 60000
    with pytest.raises(ParameterError, match=r"^steps must be an integer >= 1") as e:
        check_int("steps", make(0))
    assert e.value.param == "steps"


@pytest.mark.parametrize("value", [np.bool_(True), "abc", object(), float("inf")])
def test_integer_check_refuses_non_integers_naming_the_parameter(value):
    with pytest.raises(ParameterError) as e:
        check_int("epochs", value)
    assert e.value.param == "epochs"
