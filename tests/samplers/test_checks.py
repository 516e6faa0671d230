"""The samplers' input layer: numbers of any array library are read as Python numbers, so a question asked with
numpy scalars, 0-d arrays or a JAX/torch-like scalar (a duck-typed stand-in here: JAX and torch are not installed
in this environment; tests/integrations asks the real ones) gets the answer of the same question in floats."""

import numpy as np
import pytest

from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import account
from dpsampling.samplers._checks import as_numbers, check_epochs, check_sigma_steps


class _Scalar:
    """What a 0-d JAX or torch array offers: ``shape == ()``, ``.item()`` and ``__array__``."""
    shape = ()

    def __init__(self, v):
        self.v = v

    def item(self):
        return self.v

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.v, dtype=dtype)


MAKERS = [np.float32, np.array, _Scalar]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("sampler,q", [("deterministic", None), ("shuffle", None), ("poisson", 0.25)])
def test_account_reads_array_library_numbers(make, sampler, q):
    """σ, δ and q exact in float32 (1.5, 2⁻¹⁷, 0.25), steps and epochs as the library's integers."""
    integer = np.int64 if make is np.float32 else make
    got = account(sampler, "epsilon", make(2.0 ** -17), sigma=make(1.5), steps=integer(20), epochs=integer(1),
                  q=None if q is None else make(q))
    want = account(sampler, "epsilon", 2.0 ** -17, sigma=1.5, steps=20, epochs=1, q=q)
    assert got.value == want.value and got.kind == want.kind


def test_as_numbers_reads_each_number_and_a_sigma_target_element_wise():
    got = as_numbers(np.float32(0.5), np.int64(10), _Scalar(2), np.array(0.1), (_Scalar(1.0), np.float64(1e-5)))
    assert got == (0.5, 10, 2, pytest.approx(0.1), (1.0, 1e-5))
    assert [type(x) for x in got[:3]] == [float, int, int] and [type(x) for x in got[4]] == [float, float]


@pytest.mark.parametrize("epochs", [0, 2.5, True, float("inf"), "two", np.array([1, 2])])
def test_check_epochs_names_epochs(epochs):
    with pytest.raises(ParameterError) as e:
        check_epochs(epochs, "toy", multi_epoch=True)
    assert e.value.param == "epochs"


def test_check_sigma_steps_reads_array_library_numbers():
    assert check_sigma_steps(_Scalar(0.8), np.int64(60000)) == (0.8, 60000)
    with pytest.raises(ParameterError) as e:
        check_sigma_steps(_Scalar(0.8), _Scalar(True))
    assert e.value.param == "steps"
