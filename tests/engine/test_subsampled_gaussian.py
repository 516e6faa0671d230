"""engine/subsampled_gaussian.py: one step of the Poisson-subsampled Gaussian in closed form (Eq. (45) of Räisä et al.)
and σ(q) by root finding, against mpmath and dp_accounting (called through the papers.raisa re-exports)."""

import logging
import mpmath as mp
import numpy as np
import pytest
from dpsampling.papers import raisa as en


DELTA = 1e-5


def _mp_sf(x):
    return mp.erfc(x / mp.sqrt(2)) / 2


def mp_delta_remove(q, s, e):
    """Eq. (45) in 60-digit arithmetic."""
    with mp.workdps(60):
        q, s, e = mp.mpf(q), mp.mpf(s), mp.mpf(e)
        h = mp.expm1(e) + q
        L = mp.log(h / q)
        return q * _mp_sf(s * L - 1 / (2 * s)) - h * _mp_sf(s * L + 1 / (2 * s))


def mp_delta_add(q, s, e):
    with mp.workdps(60):
        q, s, e = mp.mpf(q), mp.mpf(s), mp.mpf(e)
        g = mp.exp(-e) - 1 + q
        if g <= 0:
            return mp.mpf(0)
        W = s * mp.log(q / g)
        return mp.exp(e) * (g * _mp_sf(W - 1 / (2 * s)) - q * _mp_sf(W + 1 / (2 * s)))


def _pld(sigma, q, d, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as pldm

    logging.disable(logging.WARNING)  # "connect-dots does not support optimistic" notice
    try:
        return pldm.from_gaussian_mechanism(
            sigma,
            sampling_prob=q,
            value_discretization_interval=d,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic,
        )
    finally:
        logging.disable(logging.NOTSET)


HARD = [
    (1.0, 1.0, 1.0),
    (0.01, 1.0, 0.5),
    (1.0, 4e4, 4e-5),
    (1.0, 39894.0, 4e-5),
    (4e-5, 1.0, 4e-5),
    (4e-5, 0.3, 4.0),
    (1.01e-5, 1e-3, 1.0),
    (0.9999, 3.0, 4.0),
    (0.3, 200.0, 0.02),
    (1.0, 1e6, 1e-6),
    (0.5, 0.05, 1.0),
    (0.2, 2.0, 0.0),
    (0.7, 1.5, 30.0),
]


@pytest.mark.parametrize("q,s,e", HARD)
def test_delta_remove_matches_mpmath(q, s, e):
    # relative error of delta (= abs error of log delta), also where delta ~ 1e-448
    ref = float(mp.log(mp_delta_remove(q, s, e)))
    assert abs(en.log_delta_one_step(q, s, e) - ref) < 1e-12


@pytest.mark.parametrize(
    "q,s,e", [(0.9632, 2.8, 1.6e-6), (0.5, 1.0, 0.1), (0.01, 0.5, 0.001), (0.2, 2.0, 0.0), (0.9, 30.0, 0.05)]
)
def test_delta_add_matches_mpmath(q, s, e):
    ref = mp_delta_add(q, s, e)
    assert abs(en.log_delta_one_step(q, s, e, "add") - float(mp.log(ref))) < 1e-12


def test_delta_add_is_zero_when_eps_exceeds_minus_log1mq():
    # g = q - (1 - e^-eps) <= 0: the add-direction loss never exceeds eps
    assert en.delta_one_step(0.01, 1.0, 0.02, "add") == 0.0
    assert en.delta_one_step(0.01, 1.0, 0.02, "add_remove") == en.delta_one_step(0.01, 1.0, 0.02)


def test_deep_tail_random_vs_mpmath():
    rng = np.random.default_rng(7)
    n = 80
    q = 10 ** rng.uniform(-5, 0, n)
    e = 10 ** rng.uniform(-6, 1, n)
    s = 10 ** rng.uniform(-1.5, 3.5, n)
    ours = en.log_delta_one_step(q, s, e)  # vectorised call
    ours_add = en.log_delta_one_step(q, s, e, "add")
    for i in range(n):
        ra = mp_delta_add(q[i], s[i], e[i])
        if ra > mp.mpf("1e-300"):
            assert abs(ours_add[i] - float(mp.log(ra))) <= 1e-12, (q[i], s[i], e[i])
        ref = mp_delta_remove(q[i], s[i], e[i])
        if ref < mp.mpf("1e-300"):
            continue
        lr = float(mp.log(ref))
        assert abs(ours[i] - lr) <= 1e-12, (q[i], s[i], e[i])


def test_add_never_exceeds_remove_at_T1():
    # remove is the binding direction for one step, so sigma(q, 1) under add/remove = remove
    rng = np.random.default_rng(3)
    q = 10 ** rng.uniform(-5, 0, 4000)
    e = 10 ** rng.uniform(-6, 1, 4000)
    s = 10 ** rng.uniform(-1.5, 3, 4000)
    la = en.log_delta_one_step(q, s, e, "add")
    lr = en.log_delta_one_step(q, s, e, "remove")
    assert np.all(la <= lr + 1e-12)


def test_broadcasting_shapes():
    q = np.array([0.01, 0.1, 1.0])[:, None, None]
    s = np.array([0.5, 2.0])[None, :, None]
    e = np.array([0.1, 1.0, 2.0, 4.0])[None, None, :]
    out = en.delta_one_step(q, s, e)
    assert out.shape == (3, 2, 4)
    assert out[1, 1, 2] == en.delta_one_step(0.1, 2.0, 2.0)
    # monotone: increasing in q, decreasing in sigma and eps
    assert np.all(np.diff(out, axis=0) > 0)
    assert np.all(np.diff(out, axis=1) < 0)
    assert np.all(np.diff(out, axis=2) < 0)


@pytest.mark.parametrize(
    "q,s,e,d",
    [
        (1.0, 1.0, 1.0, 1e-4),
        (0.3, 3.0, 0.5, 1e-4),
        (0.05, 1.6, 0.3, 1e-4),
        (0.01, 1.0, 0.5, 1e-3),
        (0.1, 3.0, 0.2, 1e-3),
        (0.5, 0.8, 2.0, 1e-3),
    ],
)
def test_delta_bracketed_by_dp_accounting_pld(q, s, e, d):
    pess, opt = _pld(s, q, d, True), _pld(s, q, d, False)
    for direction, attr in (("remove", "_pmf_remove"), ("add", "_pmf_add")):
        ours = en.delta_one_step(q, s, e, direction)
        hi = getattr(pess, attr).get_delta_for_epsilon(e)
        lo = getattr(opt, attr).get_delta_for_epsilon(e)
        assert lo * (1 - 1e-9) <= ours <= hi * (1 + 1e-9) + 1e-15, (direction, lo, ours, hi)
    # and the pessimistic connect-the-dots value is tight to the closed form
    assert en.delta_one_step(q, s, e) == pytest.approx(pess._pmf_remove.get_delta_for_epsilon(e), rel=1e-6)


def test_sigma_one_step_solves_eq45_vectorised():
    eps, qs = en.paper_grid(n_eps=40, n_q=25)
    S = en.sigma_one_step(qs[None, :], eps[:, None], DELTA)
    assert S.shape == (40, 25)
    ld = en.log_delta_one_step(qs[None, :], S, eps[:, None])
    assert np.max(np.abs(ld - np.log(DELTA))) < 1e-12
    assert np.all(np.diff(S, axis=1) > 0) and np.all(np.diff(S, axis=0) < 0)


def test_sigma_one_step_gaussian_q1_matches_mpmath_root():
    s = en.sigma_one_step(1.0, 1.0, DELTA)
    with mp.workdps(40):
        ref = mp.findroot(lambda x: mp_delta_remove(1, x, 1) - mp.mpf("1e-5"), 3.73)
    assert s == pytest.approx(float(ref), rel=1e-12)


def test_sigma_zero_when_q_at_most_delta():
    assert en.sigma_one_step(1e-5, 1.0, 1e-5) == 0.0
    assert en.sigma_one_step(5e-6, 1.0, 1e-5) == 0.0
    assert en.sigma_one_step(1.2e-5, 1.0, 1e-5) > 0.0


def test_sigma_one_step_equals_pld_calibration_bisection():
    # bisection on the pessimistic dp_accounting PLD delta at T = 1 (discretisation 1e-4)
    q, e = 1.0, 1.0
    ours = en.sigma_one_step(q, e, DELTA)
    lo, hi = ours * (1 - 2e-3), ours * (1 + 2e-3)
    assert _pld(hi, q, 1e-4, True).get_delta_for_epsilon(e) <= DELTA < _pld(lo, q, 1e-4, True).get_delta_for_epsilon(e)
    for _ in range(8):
        mid = 0.5 * (lo + hi)
        if _pld(mid, q, 1e-4, True).get_delta_for_epsilon(e) <= DELTA:
            hi = mid
        else:
            lo = mid
    assert hi == pytest.approx(ours, rel=2e-5)


@pytest.mark.parametrize("q,e", [(0.1, 1.0), (0.05, 0.3)])
def test_sigma_one_step_certified_by_pld_brackets(q, e):
    # PLD: delta_pess(sigma*(1+r)) <= delta < delta_opt(sigma*(1-r)) => true sigma in [sigma*(1-r), sigma*(1+r)]
    s, r = en.sigma_one_step(q, e, DELTA), 1e-3
    assert _pld(s * (1 + r), q, 1e-3, True).get_delta_for_epsilon(e) <= DELTA
    assert _pld(s * (1 - r), q, 1e-3, False).get_delta_for_epsilon(e) > DELTA


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: en.delta_one_step(0.0, 1.0, 1.0), "q must be in"),
        (lambda: en.delta_one_step(1.5, 1.0, 1.0), "q must be in"),
        (lambda: en.delta_one_step(0.5, -1.0, 1.0), "sigma must be > 0"),
        (lambda: en.delta_one_step(0.5, 1.0, -0.1), "epsilon must be >= 0"),
        (lambda: en.delta_one_step(0.5, 1.0, 1.0, "sideways"), "direction"),
        (lambda: en.sigma_one_step(0.5, 1.0, 0.0), "delta must be in"),
        (lambda: en.sigma_one_step(0.5, 1.0, 1.0), "delta must be in"),
        (lambda: en.sigma_one_step([0.5, 2.0], 1.0, 1e-5), "q must be in"),
        (lambda: en.paper_grid(1e-5, c=4e5 + 1), "eps bounds inverted"),
        (lambda: en.paper_grid(1e-5, c=4.0, eps_max=4.0, q_max=1e-6), "q bounds inverted"),
        (lambda: en.sigma_grid(2.0, 1.0, 10), "sigma bounds inverted"),
        (lambda: en.a_minus_b_grid([0.1], 1e-5, [0.5, 0.1], 10), "q_values"),
        (lambda: en.a_minus_b_exact([0.1], 1e-5, [0.5, 0.1]), "q_values"),
        (lambda: en.a_minus_b_grid([0.1], 2.0, [0.1, 0.5], 10), "delta must be in"),
        (lambda: en.conjecture63_critical_c(1e-5, 4.0, 3.0), "c bounds inverted"),
        (lambda: en.conjecture63_max_a_minus_b(4.0, method="magic"), "method"),
    ],
)
def test_bad_input_raises_naming_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("e", [0.0, 1e-12, 1e-6])
def test_sigma_one_step_tiny_and_zero_epsilon(e):
    # eps = 0: delta = q (2 Phi(1/2s) - 1) exactly, so sigma = 1 / (2 Phi^-1((1 + delta/q)/2))
    from scipy.special import ndtri

    for q in (1.0, 0.3, 2e-5):
        s = en.sigma_one_step(q, e, DELTA)
        assert en.log_delta_one_step(q, s, e) == pytest.approx(np.log(DELTA), abs=1e-12)
        if e == 0.0:
            assert s == pytest.approx(0.5 / ndtri(0.5 * (1 + DELTA / q)), rel=1e-10)
