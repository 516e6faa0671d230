"""The samplers' input layer: numbers of any array library are read as Python numbers, so a question asked with
numpy scalars, 0-d arrays or a JAX/torch-like scalar (a duck-typed stand-in here: JAX and torch are not installed
in this environment; tests/integrations asks the real ones) gets the answer of the same question in floats."""

import numpy as np
import pytest

from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import account
from dpsampling.samplers._checks import as_numbers, check_sigma_steps


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
def test_bad_epochs_names_epochs(epochs):
    with pytest.raises(ParameterError) as e:
        account("deterministic", "epsilon", 1e-5, sigma=1.0, steps=10, epochs=epochs)
    assert e.value.param == "epochs"


@pytest.mark.parametrize("name", ["steps", "epochs", "sigma", "q", "delta"])
@pytest.mark.parametrize("sampler", ["poisson", "deterministic"])
def test_a_bool_is_not_a_number(sampler, name):
    """``steps=True`` is not 1 step (nor σ = 1, q = 1, ...): refused naming the parameter, as any non-number."""
    kw = dict(sigma=1.0, steps=10, epochs=1, q=0.1 if sampler == "poisson" else None)
    target = 1e-5
    if name == "delta":
        target = True
    else:
        kw[name] = True
    with pytest.raises(ParameterError) as e:
        account(sampler, "epsilon", target, **kw)
    assert e.value.param == name


def test_a_missing_parameter_is_said_missing():
    with pytest.raises(ParameterError, match=r"^q is missing: it must be in \(0, 1\]") as e:
        account("poisson", "epsilon", 1e-5, sigma=1.0, steps=10)
    assert e.value.param == "q" and e.value.missing and "None" not in str(e.value)
    with pytest.raises(ParameterError, match=r"^sigma is missing") as e:
        account("poisson", "epsilon", 1e-5, q=0.1, steps=10)
    with pytest.raises(ParameterError, match=r"^max_batch_size is missing") as e:
        account("truncated_poisson", "epsilon", 1e-5, sigma=1.0, q=0.1, steps=10, dataset_size=100)


def test_a_float32_rate_of_one_over_steps_is_one_over_steps():
    from dpsampling.engine.validation import steps_of_rate

    assert steps_of_rate(np.float32(1 / 50)) == 50 and steps_of_rate(np.float32(1 / 235)) == 235
    assert steps_of_rate(0.021) is None
    r = account("deterministic", "epsilon", 1e-5, sigma=1.0, steps=50, q=np.float32(1 / 50))
    assert r.value == account("deterministic", "epsilon", 1e-5, sigma=1.0, steps=50).value


def test_check_sigma_steps_reads_array_library_numbers():
    assert check_sigma_steps(_Scalar(0.8), np.int64(60000)) == (0.8, 60000)
    with pytest.raises(ParameterError) as e:
        check_sigma_steps(_Scalar(0.8), _Scalar(True))
    assert e.value.param == "steps"
