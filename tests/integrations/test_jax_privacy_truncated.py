"""JAX Privacy's truncated Poisson strategy, ``CyclicPoissonSampling(truncated_batch_size=B)``, accounted by
dpsampling's truncated Poisson sampler against JAX Privacy's own accounting (``truncated_dpsgd_event``, composed by
dp_accounting's PLD accountant, an upper bound): our certified upper end is at most its value plus rounding, our
lower end at most both; the relation rules of the cyclic mapping hold."""

import pytest
from integration_libs import require

require("jax", "jax")
require("jax_privacy", "jax")

import dp_accounting
from jax_privacy import batch_selection as bs
from jax_privacy.accounting import accountants, analysis

try:  # where JAX Privacy keeps its event builders (experimental in 2.0)
    from jax_privacy.accounting import truncated_dpsgd_event
except ImportError:
    from jax_privacy.experimental.accounting import truncated_dpsgd_event

from dpsampling.engine.errors import ParameterError
from dpsampling.integrations import jax_privacy as djp

DELTA = 1e-5
N, Q, STEPS, SIGMA = 2000, 0.05, 20, 1.5  # mean batch 100, standard deviation 9.7
#: rounding allowed above JAX Privacy's value (its PLD is discretised at 1e-4 and rounded pessimistically too)
ROUNDING = 1e-3


def _jax_truncated_epsilon(n, q, cap, steps, sigma):
    """JAX Privacy's accounting of the truncated run: its DpEvent, composed by dp_accounting's PLD accountant
    (add-or-remove, value discretisation 1e-4)."""
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(truncated_dpsgd_event(sigma, steps, sampling_prob=q, num_examples=n, truncated_batch_size=cap))
    return acc.get_epsilon(DELTA)


@pytest.mark.parametrize("cap", [100, 120])  # the mean, the mean + 2 sd
def test_upper_end_is_at_most_jax_privacys_truncated_accounting(cap):
    s = bs.CyclicPoissonSampling(sampling_prob=Q, iterations=STEPS, truncated_batch_size=cap)
    assert max(len(b) for b in s.batch_iterator(N, rng=0)) <= cap  # batches are cut to the cap
    ours = djp.epsilon(s, N, SIGMA, DELTA)
    theirs = _jax_truncated_epsilon(N, Q, cap, STEPS, SIGMA)
    assert ours.kind == "interval" and ours.relation == "add_remove" and ours.value == ours.upper
    assert ours.upper <= theirs * (1 + ROUNDING)
    assert ours.lower <= ours.upper and ours.lower <= theirs  # theirs is an upper bound: no valid lower end exceeds it


def test_a_cap_at_or_above_the_dataset_size_is_poisson_and_says_so():
    s = bs.CyclicPoissonSampling(sampling_prob=Q, iterations=STEPS, truncated_batch_size=N)
    r = djp.epsilon(s, N, SIGMA, DELTA)
    assert "cap_at_or_above_dataset_size_is_poisson" in r.flags and r.relation == "add_remove"
    poisson = analysis.DpsgdTrainingAccountant(accountants.PldAccountantConfig()).compute_epsilon(
        STEPS, analysis.DpParams(noise_multipliers=SIGMA, num_samples=N, delta=DELTA, batch_size=int(Q * N),
                                 sampling_method=analysis.SamplingMethod.POISSON))
    assert r.value == pytest.approx(poisson, rel=ROUNDING)
    assert r.lower <= r.upper <= poisson * (1 + ROUNDING)
    sig = djp.noise_multiplier(s, N, 2.0, DELTA)
    assert sig.relation == "add_remove" and "cap_at_or_above_dataset_size_is_poisson" in sig.flags
    assert djp.epsilon(s, N, sig.upper, DELTA).value <= 2.0
    assert _jax_truncated_epsilon(N, Q, N, STEPS, sig.upper) == pytest.approx(2.0, rel=2e-3)


def test_the_relation_rules_of_the_cyclic_mapping():
    """c = 1: add-or-remove (the truncated analysis's own relation), zero-out refused (the zeroed example would still
    take a batch slot, which the analysis does not cover); EQUAL_SPLIT groups (c > 1, zero-out or replace-one only)
    refused unless the cap never truncates, INDEPENDENT groups with a cap refused; a cap below 1 refused."""
    plain = bs.CyclicPoissonSampling(sampling_prob=Q, iterations=STEPS, truncated_batch_size=120)
    assert djp.relation_of(plain, N) == "add_remove"
    with pytest.raises(ParameterError, match="cannot be accounted under zero_out") as e:
        djp.epsilon(plain, N, SIGMA, DELTA, relation="zero_out")
    assert e.value.param == "relation"
    cyclic = bs.CyclicPoissonSampling(sampling_prob=4 * Q, iterations=4 * STEPS, cycle_length=4,
                                      truncated_batch_size=120)  # EQUAL_SPLIT groups of 500, mean batch 100
    assert max(len(b) for b in cyclic.batch_iterator(N, rng=0)) == 120
    for relation in (None, "zero_out", "replace_one"):
        with pytest.raises(ParameterError, match="cannot be accounted.*keeps its batch slot") as e:
            djp.epsilon(cyclic, N, SIGMA, DELTA, relation=relation)
        assert e.value.param == "relation"
    with pytest.raises(ParameterError, match="valid only under zero_out or replace_one"):
        djp.epsilon(cyclic, N, SIGMA, DELTA, relation="add_remove")
    never = bs.CyclicPoissonSampling(sampling_prob=4 * Q, iterations=4 * STEPS, cycle_length=4,
                                     truncated_batch_size=N // 4)  # the cap is the group size: never truncates
    untruncated = bs.CyclicPoissonSampling(sampling_prob=4 * Q, iterations=4 * STEPS, cycle_length=4)
    r = djp.epsilon(never, N, SIGMA, DELTA)
    assert r.relation == "zero_out" and r == djp.epsilon(untruncated, N, SIGMA, DELTA)
    independent = bs.CyclicPoissonSampling(sampling_prob=4 * Q, iterations=4 * STEPS, cycle_length=4,
                                           truncated_batch_size=120, partition_type=bs.PartitionType.INDEPENDENT)
    with pytest.raises(ValueError, match="INDEPENDENT"):
        djp.epsilon(independent, N, SIGMA, DELTA)
    with pytest.raises(ParameterError, match="num_examples must be an integer >= 10000") as e:
        djp.epsilon(bs.CyclicPoissonSampling(sampling_prob=1e-4, iterations=STEPS, truncated_batch_size=5), N, SIGMA,
                    DELTA)
    assert e.value.param == "num_examples"
    for cap in (0, -1):
        with pytest.raises(ValueError, match="truncated_batch_size must be an integer >= 1"):
            djp.epsilon(bs.CyclicPoissonSampling(sampling_prob=Q, iterations=STEPS, truncated_batch_size=cap), N,
                        SIGMA, DELTA)
