"""The fast tier of the random sidedness check (tests/sidedness.py; the long tier is bench/bench_sidedness.py): a few
seeded random settings per sampler that the cost model predicts cheap, each certified end against an independent
reference (mpmath, dp_accounting at a finer discretisation or its RDP / truncated event, PLD_accounting), and the
monotonicity ladders (σ, δ, epochs) around the first one."""

import pytest

import sidedness as sd
from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import SAMPLERS

SEED = 2026
#: settings per sampler, each predicted at most MAX_SECONDS by its cost model (truncated Poisson's model predicts
#: at least 6 s for any question, its dp_accounting end included: one setting of it)
N, MAX_SECONDS = 3, 0.5
BUDGET = {"truncated_poisson": (1, 8.0)}


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_every_end_on_its_side_of_an_independent_reference(sampler):
    n, seconds = BUDGET.get(sampler, (N, MAX_SECONDS))
    settings, _ = sd.settings(SEED, sampler, n, seconds, fast=True)
    assert settings, f"no {sampler} setting predicted under {seconds} s"
    failures, answered = [], 0
    for s in settings:
        try:
            r = sd.answer(s)
        except ParameterError as e:  # a refusal (δ below the PLD floor where the φ accountant cannot certify): the
            assert "reliability floor" in str(e), f"{s}: {e}"  # long tier lists each; here only that one kind
            continue
        answered += 1
        failures += sd.references(s, r)
    assert answered, f"every {sampler} setting was refused"
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("sampler", [s for s in SAMPLERS if s not in BUDGET])  # a capped sampler's ladder (six
def test_monotone_in_sigma_delta_and_epochs(sampler):                       # questions of ≈ 3.5 s): the long tier's
    settings, _ = sd.settings(SEED, sampler, 1, BUDGET.get(sampler, (N, MAX_SECONDS))[1], fast=True)
    assert not sd.ladder(settings[0])


def test_a_wrong_end_is_caught():
    """The check is not true by construction: an upper end moved below the exact deterministic value by one part in
    1e9, or a lower end moved above it, is reported."""
    import dataclasses

    s = sd.Setting("deterministic", 1e-5, 1.1, 235, 60)
    r = sd.answer(s)
    assert sd.references(s, r) == []
    assert sd.references(s, dataclasses.replace(r, value=r.value * (1 + 1e-9), lower=r.value * (1 + 1e-9),
                                                upper=r.value * (1 + 1e-9)))
    sh = sd.Setting("shuffle", 1e-5, 1.1, 235, 60)
    r = sd.answer(sh)
    assert sd.references(sh, r) == []
    assert sd.references(sh, dataclasses.replace(r, lower=r.upper * 1.001))
    assert sd.references(sh, dataclasses.replace(r, upper=r.upper * 0.999))
