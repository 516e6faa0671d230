"""dpsampling.engine.cf.mechanisms: the mechanism descriptors refuse parameters outside their range, naming them."""

import pytest

from dpsampling.engine.cf import Gaussian, Laplace, PoissonSubsampled, RandomizedResponse


@pytest.mark.parametrize("call,match", [
    (lambda: Gaussian(-1.0), "sigma"),
    (lambda: Laplace(0.0), "b"),
    (lambda: RandomizedResponse(1.0), "p"),
    (lambda: PoissonSubsampled(Gaussian(1.0), 0.0), "q must be"),
])
def test_bad_mechanism(call, match):
    with pytest.raises(ValueError, match=match):
        call()
