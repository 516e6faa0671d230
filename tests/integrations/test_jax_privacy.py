"""Real JAX Privacy strategies: the participation pattern each batch iterator produces is the one its sampler
accounts, ε agrees with JAX Privacy's own accountant where it has one, and unmappable strategies are refused."""

import math

import numpy as np
import pytest
from integration_libs import require

require("jax", "jax")
require("jax_privacy", "jax")

from jax_privacy import batch_selection as bs
from jax_privacy.accounting import accountants, analysis

from dpsampling.integrations import jax_privacy as djp
from dpsampling.samplers import account

DELTA = 1e-5


def _participations(strategy, n, seed=0):
    """steps × examples 0/1 matrix of which example is in which batch."""
    batches = list(strategy.batch_iterator(n, rng=seed))
    m = np.zeros((len(batches), n), dtype=int)
    for t, b in enumerate(batches):
        m[t, np.asarray(b)] += 1
    return m


def _jax_epsilon(n, batch, steps, sigma, method=analysis.SamplingMethod.POISSON, cycle_length=None):
    acc = analysis.DpsgdTrainingAccountant(accountants.PldAccountantConfig())
    return acc.compute_epsilon(steps, analysis.DpParams(noise_multipliers=sigma, num_samples=n, delta=DELTA,
                                                        batch_size=batch, sampling_method=method,
                                                        cycle_length=cycle_length))


@pytest.mark.parametrize("cycle_length", [1, 4])
def test_poisson_agrees_with_jax_privacy(cycle_length):
    """JAX Privacy's PLD accountant (value discretisation 1e-4, pessimistic) and ours on the same Poisson run."""
    n, batch, steps, sigma = 6000, 60, 400, 1.1
    group = n // cycle_length
    s = bs.CyclicPoissonSampling(sampling_prob=batch / group, iterations=steps, cycle_length=cycle_length)
    ours = djp.epsilon(s, n, sigma, DELTA)
    theirs = _jax_epsilon(n, batch, steps, sigma, cycle_length=cycle_length)
    assert ours.kind == "interval" and ours.value == ours.upper == pytest.approx(theirs, rel=1e-3)
    # the pattern: an example is only ever in batches of one residue class mod cycle_length
    m = _participations(s, n)
    residues = [{t % cycle_length for t in np.flatnonzero(m[:, i])} for i in range(n)]
    assert all(len(r) <= 1 for r in residues)


def test_fixed_batches_agree_with_jax_privacys_fixed_batch_analysis():
    n, batch, steps, sigma = 6000, 60, 400, 1.1
    s = bs.FixedBatchSampling(batch_size=batch, iterations=steps)
    assert all(len(set(b)) == batch for b in s.batch_iterator(n, rng=0))  # distinct examples, fresh each step
    ours = djp.epsilon(s, n, sigma, DELTA)
    theirs = _jax_epsilon(n, batch, steps, sigma, analysis.SamplingMethod.FIXED_BATCH_SIZE)
    # JAX Privacy's number is WOR's per-direction (add/remove, Lebeda et al. Prop. 9) value; under replace-one, the
    # relation it declares, ours is the pair dominating both directions (Lebeda §8): above it, its lower end below
    native = account("wor", "epsilon", DELTA, sigma=sigma, q=batch / n, steps=steps)
    assert native.relation == "add_remove" and native.value == pytest.approx(theirs, rel=1e-3)
    assert ours.relation == "replace_one" and ours.lower <= theirs * (1 + 1e-3) and theirs < ours.upper


def test_balls_in_bins_keeps_the_bin_and_is_accounted_as_one_epoch_at_sigma_over_sqrt_e():
    n, c, cycles, sigma = 64, 4, 2, 1.0
    s = bs.BallsInBinsSampling(iterations=c * cycles, cycle_length=c)
    m = _participations(s, n)
    assert (m.sum(axis=0) == cycles).all()  # every example in exactly one batch per cycle ...
    assert all(len({t % c for t in np.flatnonzero(m[:, i])}) == 1 for i in range(n))  # ... the same bin each cycle
    r = djp.epsilon(s, n, sigma, DELTA)
    assert r == account("balls_and_bins", "epsilon", DELTA, sigma=sigma / np.sqrt(cycles), steps=c)
    # one bin (c = 1): every example in every step, the Gaussian at σ/√E: the deterministic sampler's exact value
    one = djp.epsilon(bs.BallsInBinsSampling(iterations=3, cycle_length=1), n, sigma, DELTA)
    exact = account("deterministic", "epsilon", DELTA, sigma=sigma, steps=1, epochs=3).value
    assert one.lower <= exact <= one.upper and one.upper == pytest.approx(exact, rel=1e-3)


def test_persistent_partition_is_a_persistent_shuffle():
    n, c = 64, 4
    s = bs.CyclicPoissonSampling(sampling_prob=1.0, iterations=2 * c, cycle_length=c)
    m = _participations(s, n)
    assert (m[:c] == m[c:]).all() and (m[:c].sum(axis=0) == 1).all()  # one partition, reused
    r = djp.epsilon(s, n, 1.0, DELTA)
    det = account("deterministic", "epsilon", DELTA, sigma=1.0, steps=c, epochs=2).value
    assert r.kind == "interval" and r.lower <= r.upper == det == r.value and r.upper_best_known


def test_noise_multiplier_certifies_the_target():
    s = bs.BallsInBinsSampling(iterations=8, cycle_length=4)
    sig = djp.noise_multiplier(s, 64, 3.0, DELTA)
    assert djp.epsilon(s, 64, sig.upper, DELTA).value <= 3.0
    assert djp.epsilon(s, 64, sig.lower, DELTA).value > 3.0 * 0.99
    p = bs.CyclicPoissonSampling(sampling_prob=0.01, iterations=200)
    sig = djp.noise_multiplier(p, 6000, 2.0, DELTA)
    assert _jax_epsilon(6000, 60, 200, sig.upper) == pytest.approx(2.0, rel=2e-3)


@pytest.mark.parametrize("strategy,why", [
    (bs.CyclicPoissonSampling(sampling_prob=0.1, iterations=10, truncated_batch_size=5, cycle_length=2,
                              partition_type=bs.PartitionType.INDEPENDENT), "truncated"),
    (bs.FixedBatchSampling(batch_size=4, iterations=10, replace=True), "replace=True"),
    (bs.BMinSepSampling(sampling_prob=0.1, iterations=10, min_sep=3), "b-min-sep"),
    (bs.UserSelectionStrategy(base_strategy=bs.BallsInBinsSampling(iterations=4, cycle_length=2)), "user-level"),
    ("not a strategy", "no dpsampling sampler"),
])
def test_unmappable_strategies_are_refused(strategy, why):
    with pytest.raises(ValueError, match=why):
        djp.epsilon(strategy, 64, 1.0, DELTA)


def test_the_strategys_own_relation():
    """JAX Privacy: EQUAL_SPLIT groups are valid only under zero-out or replace-one, INDEPENDENT ones and plain
    Poisson under add-or-remove too, fixed batches under replace-one; the result carries the relation it holds under,
    and a relation the strategy or the sampler's analysis does not support is refused."""
    rel = lambda r: r.relation
    poisson = bs.CyclicPoissonSampling(sampling_prob=0.01, iterations=200)
    assert rel(djp.epsilon(poisson, 6000, 1.1, DELTA)) == "add_remove"
    assert rel(djp.epsilon(poisson, 6000, 1.1, DELTA, relation="zero_out")) == "zero_out"
    with pytest.raises(ValueError, match="cannot be accounted under replace_one"):
        djp.epsilon(poisson, 6000, 1.1, DELTA, relation="replace_one")
    cyclic = bs.CyclicPoissonSampling(sampling_prob=0.04, iterations=200, cycle_length=4)  # EQUAL_SPLIT groups
    r = djp.epsilon(cyclic, 6000, 1.1, DELTA)
    assert rel(r) == "zero_out"  # not add-or-remove: JAX Privacy documents EQUAL_SPLIT as zero-out/replace-one only
    with pytest.raises(ValueError, match="valid only under zero_out or replace_one"):
        djp.epsilon(cyclic, 6000, 1.1, DELTA, relation="add_remove")
    independent = bs.CyclicPoissonSampling(sampling_prob=0.04, iterations=200, cycle_length=4,
                                           partition_type=bs.PartitionType.INDEPENDENT)
    assert rel(djp.epsilon(independent, 6000, 1.1, DELTA)) == "add_remove"
    fixed = bs.FixedBatchSampling(batch_size=60, iterations=400)
    assert rel(djp.epsilon(fixed, 6000, 1.1, DELTA)) == "replace_one"
    with pytest.raises(ValueError, match="valid only under"):
        djp.epsilon(fixed, 6000, 1.1, DELTA, relation="add_remove")
    shuffled = bs.CyclicPoissonSampling(sampling_prob=1.0, iterations=8, cycle_length=4)
    assert rel(djp.epsilon(shuffled, 64, 1.0, DELTA)) == "zero_out"
    assert rel(djp.noise_multiplier(fixed, 6000, 2.0, DELTA)) == "replace_one"


def test_numbers_of_any_library_are_accepted():
    import jax.numpy as jnp
    import torch

    s = bs.CyclicPoissonSampling(sampling_prob=0.01, iterations=200)
    ref = djp.epsilon(s, 6000, 1.1, 1e-5)
    assert djp.epsilon(s, np.int64(6000), np.float32(1.1), np.float64(1e-5)).value == pytest.approx(ref.value, 1e-6)
    assert djp.epsilon(s, np.array(6000), jnp.asarray(1.1), jnp.asarray(1e-5)).value == pytest.approx(ref.value, 1e-6)
    assert djp.epsilon(s, torch.tensor(6000), torch.tensor(1.1), 1e-5).value == pytest.approx(ref.value, 1e-6)
    assert djp.noise_multiplier(s, np.int64(6000), np.float32(2.0), jnp.asarray(1e-5)).upper > 0
    with pytest.raises(ValueError, match="num_examples"):
        djp.epsilon(s, np.array([6000, 1]), 1.1, 1e-5)


def test_cost_refusal_names_the_keyword_and_overflow_is_a_clean_error():
    from dpsampling.samplers.spec import CostError

    big = bs.CyclicPoissonSampling(sampling_prob=1e-4, iterations=2_000_000)  # predicted beyond the limit
    with pytest.raises(CostError, match="force=True"):
        djp.epsilon(big, 60000, 1.0, DELTA)
    try:
        r = djp.epsilon(bs.BallsInBinsSampling(iterations=10_000_000, cycle_length=100), 60000, 1.0, DELTA)
    except ValueError as exc:  # one error naming the parameter, never a bare OverflowError
        assert getattr(exc, "param", None) in ("noise_multiplier", "sigma", "iterations"), exc
    else:
        assert r.value == math.inf or r.value > 100


@pytest.mark.parametrize("strategy,n", [
    (bs.CyclicPoissonSampling(sampling_prob=0.01, iterations=200), 6000),  # poisson
    (bs.BallsInBinsSampling(iterations=8, cycle_length=4), 64),  # balls_and_bins
    (bs.CyclicPoissonSampling(sampling_prob=1.0, iterations=8, cycle_length=4), 64),  # a partition: shuffle
    (bs.FixedBatchSampling(batch_size=60, iterations=400), 6000),  # wor
])
def test_the_logged_number_is_the_safe_end(strategy, n):
    """epsilon's value is the certified upper end (never a lower end); noise_multiplier's value a sufficient σ."""
    r = djp.epsilon(strategy, n, 1.0, DELTA)
    assert r.value == r.upper and (r.lower is None or r.lower <= r.value) and r.upper_method
    s = djp.noise_multiplier(strategy, n, 3.0, DELTA)
    assert s.value == s.upper and djp.epsilon(strategy, n, s.value, DELTA).value <= 3.0 * (1 + 1e-6)
