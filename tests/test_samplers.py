"""dpsampling.samplers.account: one entry point, each sampler module answering it."""

import pytest

from dpsampling.engine import accountant
from dpsampling.samplers import SAMPLERS, account, balls_and_bins, deterministic, poisson, shuffle, wor


def test_every_sampler_module_declares_name_and_bounds():
    for mod in (poisson, wor, shuffle, deterministic, balls_and_bins):
        assert mod.NAME in SAMPLERS and mod.BOUNDS
        assert callable(mod.delta) and callable(mod.epsilon) and callable(mod.sigma)
    assert shuffle.BOUNDS == ("lower",) and deterministic.BOUNDS == ("exact",)


def test_deterministic_and_shuffle_values_through_account():
    d = account("deterministic", "epsilon", 1e-6, sigma=0.5, steps=10_000)
    assert (d.kind, d.method) == ("exact", "analytic") and d.value == pytest.approx(10.99715, abs=5e-5)
    s = account("shuffle", "delta", 4.0, sigma=0.4, steps=10_000, q=1e-4, c_grid=[2.0, 2.18, 2.5])
    assert (s.kind, s.method) == ("lower", "E_C sets") and s.value == pytest.approx(0.22605, abs=5e-6)
    sig = account("deterministic", "sigma", (1.0, 1e-5), steps=10)
    assert sig.value == accountant.calibrate_sigma(1.0, 1e-5, q=1.0, total_steps=1).value


def test_poisson_epochs_multiply_steps_and_wor_is_poisson_at_half_sigma():
    two = account("poisson", "epsilon", 1e-5, sigma=1.0, q=0.01, steps=50, epochs=2, method="rdp")
    one = accountant.epsilon(1e-5, sigma=1.0, q=0.01, total_steps=100, method="rdp")
    assert two.value == one.value and two.kind == "upper"
    w = account("wor", "delta", 1.0, sigma=2.0, q=0.01, steps=100, method="rdp")
    p = account("poisson", "delta", 1.0, sigma=1.0, q=0.01, steps=100, method="rdp")
    assert w.value == p.value  # Lebeda Prop. 9


@pytest.mark.parametrize("args, kw, word", [
    (("shuffle", "epsilon", 1e-6), dict(sigma=0.5, steps=100, epochs=0), "epochs"),
    (("deterministic", "delta", 1.0), dict(sigma=0.5, steps=100, epochs=2.5), "epochs"),
    (("balls_and_bins", "delta", 1.0), dict(sigma=0.5, steps=100, epochs=0), "epochs"),
    (("poisson", "epsilon", 1e-6), dict(sigma=0.5, steps=100), "q"),
    (("shuffle", "sigma", (1.0, 1e-6)), dict(steps=100), "bound must be 'lower'.*provably larger"),
    (("shuffle", "epsilon", 1e-6), dict(sigma=0.5, steps=100, bound="upper"), "bound"),
    (("shuffle", "epsilon", 1e-6), dict(sigma=0.5, steps=100, q=0.5), "1/steps"),
    (("balls", "epsilon", 1e-6), dict(sigma=0.5, steps=100), "sampler"),
    (("poisson", "alpha", 1e-6), dict(sigma=0.5, steps=100, q=0.1), "quantity"),
])
def test_bad_questions_name_the_parameter(args, kw, word):
    with pytest.raises(ValueError, match=word):
        account(*args, **kw)
