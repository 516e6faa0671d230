"""The replace-one pair of the Poisson-subsampled Gaussian (engine/replace_one.py): its profile against mpmath's
integral of the hockey-stick divergence, its dominated pmf below the pair and below dp_accounting's pessimistic
replace-one PLD, the certified upper end above dp_accounting's at a 10× finer discretisation."""

import math

import mpmath as mp
import numpy as np
import pytest

from dpsampling.engine import pld, reading, replace_one


def _mp_delta(sigma, q, eps):
    """δ(ε) = ∫ (P − e^ε Q)_+ of P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²), at 30 digits."""
    mp.mp.dps = 30
    p = lambda y: (1 - q) * mp.npdf(y, 0, sigma) + q * mp.npdf(y, 1, sigma)  # noqa: E731
    qq = lambda y: (1 - q) * mp.npdf(y, 0, sigma) + q * mp.npdf(y, -1, sigma)  # noqa: E731
    y0 = mp.findroot(lambda y: mp.log(p(y) / qq(y)) - eps, 0.5)
    return float(mp.quad(lambda y: p(y) - mp.e**eps * qq(y), [y0, y0 + 5 * sigma, mp.inf]))


@pytest.mark.parametrize("sigma,q", [(1.1, 0.01), (0.6, 0.2)])
def test_profile_is_the_pairs_hockey_stick(sigma, q):
    eps = [-0.5, 0.0, 0.01, 0.1, 0.5]
    h, _ = replace_one.profile(sigma, q, np.array(eps))
    for e, v in zip(eps, h):
        assert v == pytest.approx(_mp_delta(sigma, q, e), rel=1e-9, abs=1e-300)


def test_dominated_one_step_is_below_the_pair_and_close():
    """Its δ(ε) is below mpmath's (a dominated pair) and within 1e-4 relative at d = 1e-4 (second order in d)."""
    sigma, q = 1.1, 256 / 60000
    one = replace_one.dominated_one_step(sigma, q, 1e-4)
    assert one._infinity_mass == 0.0 and math.fsum(one._probs) == pytest.approx(1.0, abs=1e-12)
    for e in (0.0, 0.001, 0.005, 0.01):
        ref = _mp_delta(sigma, q, e)
        got = float(reading.delta_lower(one, e))
        assert got <= ref and (ref - got) / ref <= 1e-4


def test_composed_ends_bracket_dp_accountings_finer_pld():
    """T = 2000: the dominated composition's δ is below dp_accounting's pessimistic connect-the-dots replace-one PLD
    at 10× finer d, the certified upper end above it, within 3e-2 relative of each other at d = 1e-3."""
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    sigma, q, t = 1.1, 256 / 60000, 2000
    fine = pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=True, value_discretization_interval=1e-4,
                                          sampling_prob=q, use_connect_dots=True,
                                          neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE).self_compose(t)
    for e in (0.5, 1.0):
        ref = fine.get_delta_for_epsilon(e)
        c = replace_one.dominated_composed(sigma, q, t, 1e-3)
        lo = float(reading.delta_lower(c.pmf, e)) - 1e-15 - pld.rounding_at(c.pmf, c.err2, e)
        up = replace_one.certified_delta(e, sigma=sigma, q=q, total_steps=t, discretization=1e-3)
        assert lo <= ref <= up and (up - lo) / up <= 3e-2


def test_max_pair_dominates_both_directions():
    """The one pair dominating both directions (WOR under replace-one): its δ(ε) is at or above each direction's
    exact profile (dp_accounting's privacy-loss formulas, the same as dominated_pld's) at every ε tried, and after
    composition at or above each direction's composed pessimistic pmf; one pmf serves both orders."""
    from dp_accounting.pld import privacy_loss_mechanism as plm

    from dpsampling.engine import dominated_pld

    sigma, q, d = 0.55, 256 / 60000, 1e-3
    pair = replace_one.max_pair_one_step(sigma, q, d)
    eps = np.linspace(-0.5, 1.5, 41)
    for adjacency in (plm.AdjacencyType.REMOVE, plm.AdjacencyType.ADD):
        loss = plm.GaussianPrivacyLoss(sigma, sampling_prob=q, adjacency_type=adjacency)
        exact, _ = dominated_pld.profile(loss, eps)
        ours = np.array([pld.delta_for_epsilon(pair, e) for e in eps])
        assert np.all(ours >= exact * (1 - 1e-12))
    comp, err2 = replace_one.max_pair_composed(sigma, q, 2000, d)
    for e in (1.0, 3.0):
        both = pld.delta_for_epsilon(comp, e) + pld.rounding_at(comp, err2, e)
        for direction in ("remove", "add"):
            assert both >= pld.certified_delta(e, sigma, q, 2000, direction, d)


def _mp_direction_delta(sigma, q, eps, direction):
    """δ(ε) of the q-subsampled Gaussian's remove pair ((1−q)N(0,σ²) + qN(1,σ²) vs N(0,σ²)) or its add pair (the
    reverse order), mpmath's integral at 30 digits; the loss is monotone in the output, with range (log(1−q), ∞)
    (remove) or (−∞, −log(1−q)) (add): beyond it δ is 1 − e^ε or 0."""
    mp.mp.dps = 30
    edge = mp.log(1 - q)
    if direction == "remove" and eps <= edge:
        return float(1 - mp.e**eps)
    if direction == "add" and eps >= -edge:
        return 0.0
    mix = lambda y: (1 - q) * mp.npdf(y, 0, sigma) + q * mp.npdf(y, 1, sigma)  # noqa: E731
    gauss = lambda y: mp.npdf(y, 0, sigma)  # noqa: E731
    p, qq = (mix, gauss) if direction == "remove" else (gauss, mix)
    # the loss, increasing in y for remove, decreasing for add: bisection on y (log of the mixture in closed form)
    loss = lambda y: mp.log((1 - q) + q * mp.e**((2 * y - 1) / (2 * sigma**2)))  # noqa: E731
    sign = 1 if direction == "remove" else -1
    lo, hi = mp.mpf(-60) * sigma - 1, mp.mpf(60) * sigma + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sign * (sign * loss(mid) - eps) < 0 else (lo, mid)
    y0 = (lo + hi) / 2
    pieces = [y0, y0 + 10 * sigma, mp.inf] if direction == "remove" else [-mp.inf, y0 - 10 * sigma, y0]
    return float(mp.quad(lambda y: p(y) - mp.e**eps * qq(y), pieces))


@pytest.mark.parametrize("sigma,q,epsilons", [(0.55, 256 / 60000, (-0.004, -0.002, 0.0, 0.002, 0.004, 0.02)),
                                              (0.8, 0.05, (-0.04, -0.01, 0.0, 0.01, 0.04, 0.1))])
def test_max_pair_is_the_pointwise_max_of_mpmaths_directions(sigma, q, epsilons):
    """One step of the pair dominating both directions (WOR under replace-one at σ/2): its δ(ε) is at or above
    mpmath's δ of each direction, at ε on both sides of 0 (where the directions cross, Lebeda et al. Thm 14), and
    within 1e-3 relative of the larger at d = 1e-4 (connect-the-dots: second order in d)."""
    pair = replace_one.max_pair_one_step(sigma, q, 1e-4)
    for eps in epsilons:
        remove, add = (_mp_direction_delta(sigma, q, eps, dr) for dr in ("remove", "add"))
        ref = max(remove, add)
        got = float(pld.delta_for_epsilon(pair, eps))
        assert got >= ref * (1 - 1e-12) and (got - ref) / ref <= 1e-3, (eps, got, remove, add)
