"""dpsampling.samplers.account: every sampler with epochs, balls_and_bins registered (issues 10, 11)."""


import mpmath
import pytest

from dpsampling.samplers import SAMPLERS, account, get_spec
from dpsampling.samplers import _max_statistic as ms
from dpsampling.samplers import balls_and_bins as bnb
from dpsampling.samplers import deterministic, shuffle
from dpsampling.engine import accountant
from dpsampling.samplers import balls_and_bins, poisson, wor
from dpsampling.papers import chua

FAST_BNB = {"loss_discretization": 0.05, "tail_truncation": 1e-8}


def test_balls_and_bins_is_registered():
    assert SAMPLERS == ("poisson", "wor", "shuffle", "deterministic", "balls_and_bins", "truncated_poisson")


@pytest.mark.parametrize("sigma,steps", [(0.5, 10_000), (1.0, 100)])
def test_one_epoch_shuffle_and_deterministic_equal_todays_values(sigma, steps):
    """E = 1 through account() is today's single-epoch value, bit for bit (shuffle: plus the upper end)."""
    r = account("shuffle", "epsilon", 1e-6, sigma=sigma, steps=steps, q=1.0 / steps)
    today = chua.shuffle_result("epsilon", 1e-6, sigma, steps)
    assert (r.lower, r.kind, r.lower_method, r.accuracy, r.flags) == (today.value, "interval", today.method,
                                                                       today.accuracy, today.flags)
    assert r.lower == chua.shuffle_epsilon_lower(1e-6, sigma, steps)
    det = account("deterministic", "epsilon", 1e-6, sigma=sigma, steps=steps)
    ref = chua.deterministic_result("epsilon", 1e-6, sigma)
    assert (det.value, det.kind, det.lower, det.upper) == (ref.value, ref.kind, ref.lower, ref.upper)
    assert det.lower_method == det.upper_method == ref.method and det.method is None  # no method choice
    assert r.value == r.upper == det.value and r.upper_best_known  # the safe end: the upper end (Chua Thm 4.1)
    rd = account("shuffle", "delta", 1.0, sigma=sigma, steps=steps, epochs=1, mode="persistent")
    assert rd.lower == chua.shuffle_delta_lower(1.0, sigma, steps)
    assert rd.value == rd.upper == chua.deterministic_delta(1.0, sigma)
    sig, ref = account("deterministic", "sigma", (1.0, 1e-5), steps=steps), chua.deterministic_sigma_result(1.0, 1e-5)
    assert (sig.value, sig.kind, sig.lower, sig.upper) == (ref.value, ref.kind, ref.lower, ref.upper)


@pytest.mark.parametrize("sigma,epochs,eps", [(1.1, 60, 2.0), (3.0, 20, 0.5), (0.5, 3, 30.0)])
def test_deterministic_epochs_against_mpmath(sigma, epochs, eps):
    mpmath.mp.dps = 50
    s = mpmath.mpf(sigma) / mpmath.sqrt(epochs)
    exact = mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)
    r = account("deterministic", "delta", eps, sigma=sigma, steps=235, epochs=epochs)
    assert r.kind == "exact" and r.value == pytest.approx(float(exact), rel=1e-9)
    sig = account("deterministic", "sigma", (eps, float(exact)), steps=235, epochs=epochs)
    assert sig.value == pytest.approx(sigma, rel=1e-6)


def test_poisson_epochs_is_steps_times_epochs():
    a = account("poisson", "epsilon", 1e-6, sigma=1.0, steps=50, epochs=4, q=0.02, rel_tol=1e-2)
    b = account("poisson", "epsilon", 1e-6, sigma=1.0, steps=200, q=0.02, rel_tol=1e-2)
    assert a == b


def test_shuffle_epochs_interval_and_modes():
    dyn = account("shuffle", "epsilon", 1e-5, sigma=1.1, steps=235, epochs=4)
    pers = account("shuffle", "epsilon", 1e-5, sigma=1.1, steps=235, epochs=4, mode="persistent")
    det = account("deterministic", "epsilon", 1e-5, sigma=1.1, steps=235, epochs=4)
    assert dyn.kind == pers.kind == "interval" and dyn.upper == pers.upper == det.value == dyn.value == pers.value
    assert dyn.lower_method == ms.PLD_METHOD and dyn.accuracy["mode"] == "dynamic"
    assert dyn.upper_method == pers.upper_method == "deterministic (Chua Thm 4.1)"
    # persistent: one epoch at σ/√E (the per-batch average)
    assert pers.lower == chua.shuffle_epsilon_lower(1e-5, 1.1 / 2.0, 235)
    assert 0 < dyn.lower < pers.lower <= det.value


def test_shuffle_sigma_is_an_interval_whose_value_suffices():
    r = account("shuffle", "sigma", (2.0, 1e-5), steps=235, epochs=2, bound="lower")
    det = account("deterministic", "sigma", (2.0, 1e-5), steps=235, epochs=2).value
    assert r.kind == "interval" and r.value == r.upper == det and r.upper_best_known
    assert account("shuffle", "sigma", (2.0, 1e-5), steps=235, epochs=2) == r  # bound=None: the same interval
    # below r.lower the lower bound on ε exceeds the target: σ ≤ r.lower is provably insufficient
    assert account("shuffle", "epsilon", 1e-5, sigma=r.lower, steps=235, epochs=2).lower > 2.0
    # the answer (value) is sufficient: the certified upper end of ε there meets the target
    assert account("shuffle", "epsilon", 1e-5, sigma=r.value, steps=235, epochs=2).upper <= 2.0 * (1 + 1e-9)


def test_balls_and_bins_through_account_equals_the_module():
    kw = dict(sigma=1.0, steps=5, epochs=2, method="pld", **FAST_BNB)  # 5 × 2 steps: ~4 s of CPU (10 × 2: ~11 s)
    up = account("balls_and_bins", "epsilon", 1e-6, **kw)
    lo = account("balls_and_bins", "epsilon", 1e-6, bound="lower", **kw)
    m_up = bnb.epsilon(1e-6, bound="upper", **kw).value
    m_lo = bnb.epsilon(1e-6, bound="lower", **kw).value
    assert (up.kind, up.value, up.lower, up.upper) == ("interval", m_up, m_lo, m_up)
    assert (lo.kind, lo.value, lo.lower, lo.upper) == ("interval", m_up, m_lo, m_up)  # bound="lower": the same
    d = account("balls_and_bins", "delta", 1.0, **kw)
    assert d.value == bnb.delta(1.0, bound="upper", **kw).value and d.lower == bnb.delta(1.0, bound="lower", **kw).value
    mc = account("balls_and_bins", "delta", 1.0, sigma=1.0, steps=5, epochs=2, method="montecarlo", mc_samples=20_000, mc_seed=4)
    assert mc == bnb.delta(1.0, sigma=1.0, steps=5, epochs=2, method="montecarlo", mc_samples=20_000, mc_seed=4)
    assert mc.kind == "estimate" and mc.lower <= d.upper and d.lower <= mc.upper  # the band meets the bracket
    mx = account("balls_and_bins", "epsilon", 1e-6, sigma=1.0, steps=5, epochs=2, method="max_statistic")
    assert mx.kind == "lower" and mx.lower == ms.balls_and_bins_epsilon_lower(1e-6, 1.0, 5, 2).value
    assert mx.value is None and mx.lower <= up.upper  # a one-sided lower answer: no safe end


@pytest.mark.parametrize("sigma,epochs", [(0.7, 1), (1.5, 3)])
def test_lower_le_upper_for_every_sampler(sigma, epochs):
    steps, delta = 10, 1e-5
    for sampler in SAMPLERS:
        batch = get_spec(sampler).batch
        extra = ({"q": 1.0 / steps, "rel_tol": 1e-2} if batch == "rate"
                 else {"q": 0.1, "dataset_size": 100, "max_batch_size": 12} if batch == "capped" else {})
        r = account(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, **extra)
        assert r.lower is not None and r.upper is not None, sampler
        assert 0 <= r.lower <= r.upper * (1 + 1e-12), (sampler, r)
        assert r.value == r.upper, sampler  # the safe end, never the lower end
    # shuffle lower ≤ deterministic; balls-and-bins max-statistic lower ≤ its certified upper
    bb_up = account("balls_and_bins", "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs)
    bb_ms = account("balls_and_bins", "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, method="max_statistic")
    assert bb_ms.lower <= bb_up.upper


@pytest.mark.parametrize("call,match", [
    (lambda: account("deterministic", "epsilon", 1e-6, sigma=1.0, steps=10, epochs=0), "^epochs"),
    (lambda: account("shuffle", "epsilon", 1e-6, sigma=1.0, steps=10, epochs=1.5), "^epochs"),
    (lambda: account("shuffle", "epsilon", 1e-6, sigma=1.0, steps=10, mode="sometimes"), "^mode"),
    (lambda: account("shuffle", "epsilon", 1e-6, sigma=1.0, steps=10, method="pld"), "^method"),
    (lambda: account("balls_and_bins", "epsilon", 1e-6, sigma=1.0, steps=10, q=0.5), "^q must be 1/steps"),
    (lambda: account("balls_and_bins", "epsilon", 1e-6, sigma=1.0, steps=10, method="montecarlo"), "montecarlo"),
    (lambda: account("balls_and_bins", "epsilon", 1e-6, sigma=1.0, steps=10, method="max_statistic", bound="upper"),
     "^bound"),
    (lambda: account("balls_and_bins", "sigma", (1.0, 1e-6), steps=10, bound="lower"), "^bound"),
    (lambda: account("balls_and_bins", "delta", 1.0, sigma=1.0, steps=10, direction="add"), "^direction"),
    (lambda: account("poisson", "sigma", (1.0, 1e-6), steps=10, q=0.1, bound="lower"), "^bound"),
])
def test_cannot_answer_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------------------- the registry and account's questions


def test_every_sampler_module_declares_name_and_bounds():
    for mod in (poisson, wor, shuffle, deterministic, balls_and_bins):
        assert mod.NAME in SAMPLERS and mod.BOUNDS
        assert callable(mod.delta) and callable(mod.epsilon) and callable(mod.sigma)
    assert shuffle.BOUNDS == ("upper", "lower") and deterministic.BOUNDS == ("exact",)


def test_deterministic_and_shuffle_values_through_account():
    d = account("deterministic", "epsilon", 1e-6, sigma=0.5, steps=10_000)
    assert (d.kind, d.upper_method) == ("exact", "analytic") and d.value == pytest.approx(10.99715, abs=5e-5)
    s = account("shuffle", "delta", 4.0, sigma=0.4, steps=10_000, q=1e-4, c_grid=[2.0, 2.18, 2.5])
    assert (s.kind, s.lower_method) == ("interval", "E_C sets") and s.lower == pytest.approx(0.22605, abs=5e-6)
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
    (("shuffle", "sigma", (1.0, 1e-6)), dict(steps=100, bound="exact"), "bound"),
    (("shuffle", "epsilon", 1e-6), dict(sigma=0.5, steps=100, bound="exact"), "bound"),
    (("shuffle", "epsilon", 1e-6), dict(sigma=0.5, steps=100, q=0.5), "1/steps"),
    (("balls", "epsilon", 1e-6), dict(sigma=0.5, steps=100), "sampler"),
    (("poisson", "alpha", 1e-6), dict(sigma=0.5, steps=100, q=0.1), "quantity"),
])
def test_bad_questions_name_the_parameter(args, kw, word):
    with pytest.raises(ValueError, match=word):
        account(*args, **kw)


# ----------------------------------------------------------------------------- orderings at every setting
# Orderings that must hold at every setting (issue 12), over a seeded random sample of settings: N_SETTINGS drawn
# once from a seeded numpy generator, in ranges a user meets at small T (σ ∈ [0.5, 3], q ∈ [1e-3, 0.5] log-uniform,
# T ∈ [1, 50], ε ∈ [0.1, 4], δ ∈ [1e-8, 1e-3] log-uniform), PLD at a fixed discretisation 1e-3 (every inequality is a
# theorem at that discretisation too); the same sample as tests/engine/test_accountant.py.  Exemptions, both stated by the library: the φ accountant's certified error
# (its interval is used, never its point value) and PLD δ below RELIABLE_DELTA_FLOOR (flagged).


from orderings import D, SETTINGS  # noqa: E402 - the shared sample (tests/orderings.py)
from orderings import setting_id as _id  # noqa: E402


@pytest.mark.parametrize("s", SETTINGS, ids=_id)
def test_sampler_orderings(s):
    sg, T, e = s["sigma"], s["steps"], s["eps"]
    shuffle = account("shuffle", "delta", e, sigma=sg, steps=T)
    det = account("deterministic", "delta", e, sigma=sg, steps=T)
    assert shuffle.kind == "interval" and det.kind == "exact" and shuffle.value == shuffle.upper == det.value
    assert shuffle.lower <= det.value * (1 + 1e-12)  # Chua Thm 4.1: shuffling never worse than deterministic
    for sampler in ("poisson", "wor"):
        up = account(sampler, "delta", e, sigma=sg, steps=T, q=s["q"], bound="upper", discretization=D)
        lo = account(sampler, "delta", e, sigma=sg, steps=T, q=s["q"], bound="lower", discretization=D)
        assert lo.lower <= up.value and (up.lower is None or up.lower <= up.value) and lo.value == up.value


# ----------------------------------------------------------------------------- the one result model: value = safe end


def _run_kw(sampler, steps=10):
    batch = get_spec(sampler).batch
    return ({"q": 1.0 / steps, "rel_tol": 1e-2} if batch == "rate"
            else {"q": 0.1, "dataset_size": 100, "max_batch_size": 12} if batch == "capped" else {})


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("bound", [None, "lower"])
def test_value_is_never_a_lower_end(sampler, bound):
    """epsilon/delta/sigma through account, at the default method: ``value`` is the safe end (ε, δ: the certified
    upper end, ≥ every certified lower end; σ: a sufficient σ, the upper end of the σ bracket), whatever bound is
    asked; each end carries its method and the answer its relation."""
    spec, steps, kw = get_spec(sampler), 10, _run_kw(sampler)
    if bound is not None and bound not in spec.bounds.get(spec.default_method, ()):
        pytest.skip(f"{sampler} takes no bound={bound}")
    for quantity, target in (("epsilon", 1e-5), ("delta", 1.0)):
        r = account(sampler, quantity, target, sigma=1.0, steps=steps, epochs=2, bound=bound, **kw)
        assert r.kind in ("interval", "exact", "upper"), (sampler, quantity, r.kind)
        assert r.value == r.upper and r.upper_method, (sampler, quantity)
        assert r.lower is None or r.lower <= r.value * (1 + 1e-12), (sampler, quantity)
        assert r.method == spec.default_method and r.relation == spec.relation
        assert r.upper_best_known == spec.upper_best_known
    sig_bound = bound if bound in spec.sigma_bounds else None
    s = account(sampler, "sigma", (2.0, 1e-5), steps=steps, epochs=2, bound=sig_bound,
                **{k: v for k, v in kw.items() if k != "rel_tol"})
    assert s.value == s.upper and (s.lower is None or s.lower <= s.value), sampler
    # sufficient: the certified upper end of ε at σ = value meets the target (the calibration's tolerance aside)
    e = account(sampler, "epsilon", 1e-5, sigma=s.value, steps=steps, epochs=2, **kw)
    assert e.upper <= 2.0 * (1 + 2e-2), (sampler, e.upper)


def test_a_one_sided_lower_answer_has_no_value():
    """method max_statistic gives only a lower bound: value None (never the lower end), the bound in ``lower``."""
    r = account("balls_and_bins", "epsilon", 1e-5, sigma=1.0, steps=10, epochs=2, method="max_statistic")
    assert (r.kind, r.value, r.upper, r.upper_method) == ("lower", None, None, None)
    assert r.lower > 0 and r.lower_method == ms.PLD_METHOD and r.method == "max_statistic"  # 2 epochs: its PLD
    assert r.lower == ms.balls_and_bins_epsilon_lower(1e-5, 1.0, 10, 2).value  # the max-statistic's own value


@pytest.mark.parametrize("method", ["pld", "rdp", "cf"])
def test_other_methods_keep_the_rule(method):
    """The Poisson accountants: pld/rdp are upper bounds (value = upper; pld's lower is the optimistic PLD, not
    certified, and says so), the φ accountant an estimate with its certified band."""
    r = account("poisson", "epsilon", 1e-5, sigma=1.0, steps=100, q=0.01, method=method,
                bound=None if method == "rdp" else "lower")
    assert r.method == method
    if method == "cf":
        assert r.kind == "estimate" and r.lower <= r.value <= r.upper
        return
    assert r.kind == "upper" and r.value == r.upper and r.upper_method
    ref = accountant.epsilon(1e-5, sigma=1.0, q=0.01, total_steps=100, method=method)
    assert r.upper == ref.value  # the engine's upper bound, asked directly
    if method == "pld":
        assert r.lower <= r.value and "not certified" in r.lower_method
