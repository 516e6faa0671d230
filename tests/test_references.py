"""dpsampling.references: the independent references of the certified_intervals check agree with printed values and
with each other where two apply, and agrees() means what it says (contains / overlaps / equals the lower end)."""

import math

import pytest

from dpsampling import references as R


def test_gaussian_and_shuffle_ec_match_chua_printed_values():
    # Chua et al. ICML 2024 §1.1: σ = 0.5, δ = 1e-6, one epoch of T = 10^4 batches: deterministic ε ≈ 10.997,
    # shuffle ε > 10.994 (the E_C bound)
    assert round(R.gaussian_epsilon(1e-6, 0.5, 1).lower, 3) == 10.997
    ec = R.shuffle_ec_lower(1e-6, 0.5, 10_000)
    assert ec.kind == "lower end" and 10.994 < ec.lower < 10.995


def test_gaussian_is_the_composition_at_sigma_over_root_epochs():
    assert R.gaussian_epsilon(1e-5, 1.1, 60).lower == pytest.approx(R.gaussian_epsilon(1e-5, 1.1 / math.sqrt(60)).lower,
                                                                    rel=1e-14)


def test_two_independent_references_agree():
    # one step per epoch: balls-and-bins is the Gaussian at σ/√E; PLD_accounting's range contains the mpmath value
    exact = R.gaussian_epsilon(1e-5, 0.8, 3)
    bnb = R.allocation_range(1e-5, sigma=0.8, steps=1, epochs=3, abs_tol=0.05)
    assert bnb.lower <= exact.lower <= bnb.upper and bnb.upper - bnb.lower <= 0.05
    # the Poisson-subsampled Gaussian: dp_accounting's PLD pair and the φ accountant's certified interval overlap
    pair = R.pld_pair(1e-5, sigma=1.0, q=0.01, total_steps=100, discretization=1e-3)
    phi = R.phi_interval("poisson", 1e-5, sigma=1.0, q=0.01, steps=100, epochs=1)
    assert pair.lower < pair.upper and phi.upper - phi.lower < 1e-6
    assert R.agrees(phi.lower, phi.upper, pair) and pair.lower <= phi.lower <= phi.upper <= pair.upper


def test_agrees_by_kind():
    point = R.Reference(2.0, 2.0, "point", "p")
    assert R.agrees(1.9, 2.1, point) and R.agrees(2.0, 2.0, point)
    assert not R.agrees(2.0 * 1.01, 2.1, point) and not R.agrees(1.9, 2.0 * 0.99, point)
    interval = R.Reference(2.0, 3.0, "interval", "i")
    assert R.agrees(2.9, 3.5, interval) and R.agrees(1.0, 2.0, interval)
    assert not R.agrees(3.01, 3.5, interval) and not R.agrees(1.0, 1.99, interval)
    lower = R.Reference(2.0, 2.0, "lower end", "l")
    assert R.agrees(2.0, 5.0, lower) and not R.agrees(1.98, 5.0, lower) and not R.agrees(2.02, 5.0, lower)
    upper = R.Reference(0.0, 2.0, "upper bound", "u")  # another method's upper bound: at least our lower end
    assert R.agrees(2.0, 2.5, upper) and R.agrees(1.0, 1.5, upper) and not R.agrees(2.02, 2.5, upper)
    assert not R.agrees(math.nan, 3.0, interval) and not R.agrees(3.0, 2.5, interval)  # not an interval
    assert {c: R.Reference(0, 0, c, "x").check for c in R.CHECKS} == R.CHECKS


def test_bad_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of point, interval, lower end"):
        R.Reference(1.0, 1.0, "upper", "x")


@pytest.fixture
def clone():
    """clone(name, **fields): a sampler registered at run time, a copy of a registered one's spec."""
    import dataclasses

    from dpsampling import samplers

    added = []

    def make(original, **fields):
        spec = dataclasses.replace(samplers.get_spec(original), name=f"toy_{original}", **fields)
        samplers.register(spec)
        added.append(spec.name)
        return spec.name

    yield make
    for name in added:
        samplers.unregister(name)


ROW = {"steps": 10, "q": 0.1, "discretization": 1e-3, "upper": 1.0, "method": "m"}


def test_choose_reads_the_spec_not_the_name(clone):
    """A clone of WOR (add/remove, rate, its spec's sensitivity 2) gets dp_accounting's pair at sensitivity 2, a clone of the deterministic
    sampler the Gaussian at σ/√E, whatever their names: the same values as the reference functions called directly.
    (The row's discretisation 1e-2 puts the pair at 1e-3: ~1 CPU-s for the three pairs, not ~12 at 1e-4; the two
    sensitivities' ε are 15.6 and 3.6 at either step.)"""
    ref, note = R.choose({**ROW, "discretization": 1e-2, "sampler": clone("wor")}, delta=1e-5, sigma=1.0, epochs=2)
    direct = R.pld_pair(1e-5, sigma=1.0, q=0.1, total_steps=20, discretization=1e-3, sensitivity=2.0)
    assert ref == direct and note == ""
    assert ref != R.pld_pair(1e-5, sigma=1.0, q=0.1, total_steps=20, discretization=1e-3, sensitivity=1.0)
    ref, note = R.choose({**ROW, "sampler": clone("deterministic")}, delta=1e-5, sigma=1.0, epochs=3)
    assert ref == R.gaussian_epsilon(1e-5, 1.0, 3) and note == ""


def test_choose_explains_a_missing_reference(clone):
    ref, note = R.choose({**ROW, "sampler": clone("shuffle"), "lower_method": "E_C sets",
                          "upper_method": "deterministic"}, delta=1e-5, sigma=1.0, epochs=2)
    assert ref is None and "no cheap independent recomputation" in note
    ref, note = R.choose({**ROW, "sampler": clone("poisson", relation="zero_out")}, delta=1e-5, sigma=1.0, epochs=1)
    assert ref is None and note.startswith("no reference for sampler toy_poisson (no dominating Poisson pair")
    ref, note = R.choose({**ROW, "sampler": clone("deterministic", reference="")}, delta=1e-5, sigma=1.0, epochs=1)
    assert ref is None and note == "no reference for sampler toy_deterministic"


def test_choose_follows_the_spec_field_not_a_fingerprint(clone):
    """The reference is the one the spec names: a rate sampler declaring the Gaussian gets the Gaussian, and a
    shuffle clone gets the E_C recomputation in one epoch whatever its method label says."""
    ref, note = R.choose({**ROW, "sampler": clone("poisson", reference="gaussian_epsilon")}, delta=1e-5, sigma=1.0,
                         epochs=3)
    assert ref == R.gaussian_epsilon(1e-5, 1.0, 3) and note == ""
    ref, note = R.choose({**ROW, "sampler": clone("shuffle"), "method": "any label"}, delta=1e-5, sigma=1.0, epochs=1)
    assert ref == R.shuffle_ec_lower(1e-5, 1.0, 10) and note == ""


def test_every_registered_reference_exists():
    from dpsampling import samplers

    named = {s.name: s.reference for s in samplers.specs()}
    assert all(r == "" or r in R.REFERENCES for r in named.values()), named
    assert set(R.REFERENCES) <= set(R.__all__)  # each key names a public reference function
    assert all(callable(getattr(R, name)) for name in R.REFERENCES)


def test_shuffled_lower_end_above_the_fixed_order_is_refused(clone):
    shuffled, fixed = clone("shuffle"), clone("deterministic")
    rows = [{"sampler": shuffled, "lower": 2.0, "value": 2.0}, {"sampler": fixed, "lower": 2.0, "value": 2.0}]
    R.check_below_deterministic(rows, "here")  # equal: allowed (Thm 4.1 is ≤)
    rows[0]["lower"] = 2.0 * 1.001
    with pytest.raises(RuntimeError, match=r"toy_shuffle at here: lower bound .* contradicts Chua Thm 4.1"):
        R.check_below_deterministic(rows, "here")
    R.check_below_deterministic(rows[:1], "here")  # no fixed-order row: nothing to compare with
