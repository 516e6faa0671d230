"""epsilon_per_epoch: the e-th answer is account(..., epochs=e) at the default method, for every sampler."""

import pytest

from dpsampling import samplers
from dpsampling.engine.errors import ParameterError
from dpsampling.samplers import per_epoch
from dpsampling.samplers.per_epoch import epsilon_per_epoch

RUN = dict(sigma=1.1, steps=40, epochs=4)


def _q(spec, steps):
    return 1 / 200 if spec.batch in ("rate", "capped") else None


def _cap(spec):
    """A capped sampler's run: 8000 records (a mean batch of 40), cut at 48."""
    return {"dataset_size": 8000, "max_batch_size": 48} if spec.batch == "capped" else {}


@pytest.mark.parametrize("sampler", samplers.SAMPLERS)
def test_every_epoch_is_accounts_answer(sampler):
    spec = samplers.get_spec(sampler)
    per_epoch.clear_cache()
    rows = epsilon_per_epoch(sampler, 1e-5, q=_q(spec, RUN["steps"]), **RUN, **_cap(spec))
    assert len(rows) == RUN["epochs"]
    for e, row in enumerate(rows, 1):
        ref = samplers.account(sampler, "epsilon", 1e-5, sigma=RUN["sigma"], steps=RUN["steps"], epochs=e,
                               q=_q(spec, RUN["steps"]), **_cap(spec))
        if e in (1, RUN["epochs"]) or spec.epsilon_epochs is None:
            assert row == ref, (sampler, e)  # the first and last epochs, and every epoch asked one by one: account's
        else:  # earlier epochs shared between epochs: certified too, so both intervals contain ε and agree
            assert max(row.lower, ref.lower) <= min(row.upper, ref.upper), (sampler, e)
            width = max(row.upper - row.lower, ref.upper - ref.lower)
            assert abs(row.upper - ref.upper) <= width and abs(row.lower - ref.lower) <= width
            assert row.kind == ref.kind and row.method == ref.method
            assert (row.lower_method, row.upper_method) == (ref.lower_method, ref.upper_method)
        # the logged field is the safe end: the certified upper end, never a lower end
        assert row.value == row.upper >= row.lower and row.kind in ("interval", "exact"), (sampler, e)
        assert row.relation == spec.relation and row.upper_method
    # ε grows with the epochs (more compositions leak more): each end is monotone
    assert all(a.value <= b.value for a, b in zip(rows, rows[1:]))


@pytest.mark.parametrize("sampler", ["poisson", "wor", "balls_and_bins"])
def test_epoch_by_epoch_is_accounts_answer_bit_for_bit(sampler):
    # a training loop asks after every epoch: each call computes one new epoch, exactly account's
    per_epoch.clear_cache()
    for e in range(1, 4):
        q = 1 / 200 if samplers.get_spec(sampler).batch == "rate" else None
        row = epsilon_per_epoch(sampler, 1e-5, sigma=1.1, steps=40, epochs=e, q=q)[-1]
        assert row == samplers.account(sampler, "epsilon", 1e-5, sigma=1.1, steps=40, epochs=e, q=q)


def test_one_more_epoch_reuses_the_kept_answers():
    per_epoch.clear_cache()
    first = epsilon_per_epoch("poisson", 1e-5, sigma=1.1, steps=40, epochs=2, q=1 / 200)
    more = epsilon_per_epoch("poisson", 1e-5, sigma=1.1, steps=40, epochs=3, q=1 / 200)
    assert more[:2] == first and more[0] is first[0]  # the kept objects, not recomputed


def test_the_wor_curve_is_poissons_at_half_sigma():
    # Lebeda et al. Prop. 9: WOR at σ has Poisson's curves at σ/2 (an independent route: the Poisson sampler)
    per_epoch.clear_cache()
    wor = epsilon_per_epoch("wor", 1e-5, sigma=2.2, steps=40, epochs=2, q=1 / 200)
    poi = epsilon_per_epoch("poisson", 1e-5, sigma=1.1, steps=40, epochs=2, q=1 / 200)
    assert [r.value for r in wor] == [r.value for r in poi]
    assert [r.lower for r in wor] == [r.lower for r in poi]


def test_deterministic_is_the_gaussian_at_sigma_over_root_e():
    from dpsampling.engine import gaussian

    rows = epsilon_per_epoch("deterministic", 1e-5, sigma=1.1, steps=40, epochs=4)
    for e, r in enumerate(rows, 1):
        assert r.value == pytest.approx(gaussian.epsilon(1e-5, 1.1 / e**0.5), rel=1e-9)


@pytest.mark.parametrize("epochs", [0, -1, 1.5, True, "2"])
def test_bad_epochs(epochs):
    with pytest.raises(ParameterError) as err:
        epsilon_per_epoch("poisson", 1e-5, sigma=1.1, steps=40, epochs=epochs, q=1 / 200)
    assert err.value.param == "epochs"


def test_balls_and_bins_epochs_are_certified_against_poisson_and_the_gaussian():
    # independent checks of the shared-epoch rows: random allocation is at most the deterministic (Gaussian at
    # σ/√E, an upper bound for any one-batch-per-step sampler: Chua et al.) ... and each row is an interval
    from dpsampling.engine import gaussian

    per_epoch.clear_cache()
    rows = epsilon_per_epoch("balls_and_bins", 1e-5, sigma=1.1, steps=40, epochs=4)
    for e, r in enumerate(rows, 1):
        assert 0 < r.lower <= r.upper <= gaussian.epsilon(1e-5, 1.1 / e**0.5)


def test_shuffle_epochs_are_lower_bounds_below_the_deterministic_value():
    # the max-statistic rows of epochs 2 … E−1 are lower bounds: at most the deterministic ε (Chua Thm 4.1, which
    # dominates shuffling), and at least the one-epoch E_C value (more epochs cannot leak less)
    from dpsampling.engine import gaussian

    per_epoch.clear_cache()
    rows = epsilon_per_epoch("shuffle", 1e-5, sigma=1.1, steps=40, epochs=5)
    for e, r in enumerate(rows, 1):
        assert r.kind == "interval" and r.upper == pytest.approx(gaussian.epsilon(1e-5, 1.1 / e**0.5), rel=1e-9)
        assert r.value == r.upper and r.upper_best_known  # the safe end, never the lower end
        assert rows[0].lower <= r.lower <= r.upper
