"""Real Opacus on CPU PyTorch: a tiny model on synthetic data trained for a few steps with each accountant."""

import json
import math
import warnings

import pytest
from integration_libs import require

torch = require("torch", "opacus")
require("opacus", "opacus")

from opacus import PrivacyEngine as OpacusPrivacyEngine
from opacus.accountants.utils import get_noise_multiplier
from torch.utils.data import DataLoader, TensorDataset

from dpsampling import audit, cli, samplers
from dpsampling.integrations import opacus as dpo
from dpsampling.samplers import account

N, T, DELTA = 64, 4, 1e-5


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 5, generator=g)
    y = (x[:, 0] > 0).long()
    return TensorDataset(x, y)


def _train(engine, loader, *, sigma=None, epochs, poisson_sampling=False, target_epsilon=None):
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    if target_epsilon is None:
        model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                 noise_multiplier=sigma, max_grad_norm=1.0,
                                                 poisson_sampling=poisson_sampling)
    else:
        model, opt, loader = engine.make_private_with_epsilon(module=model, optimizer=opt, data_loader=loader,
                                                              target_epsilon=target_epsilon, target_delta=DELTA,
                                                              epochs=epochs, max_grad_norm=1.0,
                                                              poisson_sampling=poisson_sampling)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
            steps += 1
    return opt, steps


def _cli_epsilon(*argv):
    """`dpsampling epsilon ...`'s value (the command line, in process)."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(["epsilon", *argv, "--delta", str(DELTA)]) == 0
    return json.loads(buf.getvalue())


def test_registered_on_import():
    from opacus.accountants.registry import create_accountant

    for s in ("poisson", "wor", "shuffle", "deterministic", "balls_and_bins"):
        acc = create_accountant(f"dpsampling_{s}")
        assert acc.mechanism() == f"dpsampling_{s}" and len(acc) == 0 and acc.get_epsilon(DELTA) == 0.0
    dpo.register()  # explicit, idempotent


def test_balls_and_bins_sampler_and_accountant():
    """Every example in exactly one batch per epoch, bins redrawn each epoch; ε after training = `dpsampling epsilon`."""
    sampler = dpo.BallsAndBinsBatchSampler(N, T, generator=torch.Generator().manual_seed(1))
    epochs = [list(sampler) for _ in range(3)]
    for batches in epochs:
        assert len(batches) == T and sorted(i for b in batches for i in b) == list(range(N))
    assert epochs[0] != epochs[1]
    again = dpo.BallsAndBinsBatchSampler(N, T, generator=torch.Generator().manual_seed(1))
    assert list(again) == epochs[0]  # seeded

    loader = DataLoader(_data(), batch_sampler=dpo.BallsAndBinsBatchSampler(N, T, torch.Generator().manual_seed(2)))
    engine = OpacusPrivacyEngine(accountant="dpsampling_balls_and_bins")
    _, steps = _train(engine, loader, sigma=1.0, epochs=2)
    assert steps == 8 and len(engine.accountant) == 8 and engine.accountant.history == [(1.0, 1 / T, 8)]
    ref = _cli_epsilon("--sampler", "balls_and_bins", "--sigma", "1.0", "--steps", str(T), "--epochs", "2")
    assert engine.get_epsilon(DELTA) == ref["value"]
    lo, up = engine.accountant.get_epsilon_interval(DELTA)
    assert (lo, up) == (ref["lower"], ref["upper"]) and lo < up


def test_poisson_accountant_after_training_is_the_cli():
    engine = OpacusPrivacyEngine(accountant="dpsampling_poisson")
    _, steps = _train(engine, DataLoader(_data(), batch_size=N // T), sigma=1.0, epochs=2, poisson_sampling=True)
    ref = _cli_epsilon("--sampler", "poisson", "--sigma", "1.0", "--q", str(1 / T), "--steps", str(steps))
    assert engine.get_epsilon(DELTA) == ref["value"]
    # and Opacus's own PRV accountant (a Poisson upper estimate) agrees to its stated eps_error (0.01 by default)
    prv = OpacusPrivacyEngine(accountant="prv")
    prv.accountant.history = [(1.0, 1 / T, steps)]
    assert prv.get_epsilon(DELTA) == pytest.approx(ref["value"], abs=0.02)


def test_make_private_with_epsilon_calibrates_through_opacus():
    """σ from Opacus's own bisection over our balls-and-bins accountant: certified ε ≤ target, and within the grid
    cell (2^(1/36)) and Opacus's tolerance of the σ our own calibration gives."""
    loader = DataLoader(_data(), batch_sampler=dpo.BallsAndBinsBatchSampler(N, T, torch.Generator().manual_seed(3)))
    engine = OpacusPrivacyEngine(accountant="dpsampling_balls_and_bins")
    opt, steps = _train(engine, loader, epochs=2, target_epsilon=3.0)
    sigma = opt.noise_multiplier
    assert account("balls_and_bins", "epsilon", DELTA, sigma=sigma, steps=T, epochs=2).value <= 3.0
    ours = account("balls_and_bins", "sigma", (3.0, DELTA), steps=T, epochs=2).upper
    assert ours / 1.001 <= sigma <= ours * 2 ** (2 / dpo.GRID_PER_OCTAVE) * 1.01
    assert engine.get_epsilon(DELTA) <= 3.0 and steps == 8


@pytest.mark.parametrize("sampler", ["poisson", "balls_and_bins"])
def test_drop_in_engine_calibrates_with_the_sigma_command(sampler):
    """dpsampling's PrivacyEngine: make_private_with_epsilon's σ is `dpsampling sigma`'s for the same run (one answer
    per question), its certified ε is ≤ the target, and it lies within Opacus's own bisection's tolerance of the σ
    Opacus's get_noise_multiplier finds over the same accountant (an independent search)."""
    if sampler == "poisson":
        loader, poisson, cli_args = DataLoader(_data(), batch_size=N // T), True, ["--q", repr(1 / T), "--steps",
                                                                                   str(2 * T)]
    else:
        loader = DataLoader(_data(), batch_sampler=dpo.BallsAndBinsBatchSampler(N, T, torch.Generator().manual_seed(3)))
        poisson, cli_args = False, ["--steps", str(T), "--epochs", "2"]
    engine = dpo.PrivacyEngine(accountant=f"dpsampling_{sampler}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's secure-RNG note
        opt, _ = _train(engine, loader, epochs=2, target_epsilon=3.0, poisson_sampling=poisson)
    sigma = opt.noise_multiplier
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli.main(["sigma", "--sampler", sampler, *cli_args, "--epsilon", "3.0", "--delta", str(DELTA)])
    assert sigma == json.loads(buf.getvalue())["upper"]
    kw = {"q": 1 / T, "steps": 2 * T} if sampler == "poisson" else {"steps": T, "epochs": 2}
    assert account(sampler, "epsilon", DELTA, sigma=sigma, **kw).upper <= 3.0
    theirs = get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=1 / T, epochs=2,
                                  accountant=f"dpsampling_{sampler}")
    assert sigma <= theirs * 1.001 and sigma >= theirs * 0.97


@pytest.mark.parametrize("sampler", ["poisson", "deterministic"])
def test_calibration_of_cheap_samplers_matches_ours(sampler):
    sigma = get_noise_multiplier(target_epsilon=2.0, target_delta=DELTA, sample_rate=1 / T, epochs=2,
                                 accountant=f"dpsampling_{sampler}")
    kw = {"q": 1 / T, "steps": 2 * T} if sampler == "poisson" else {"steps": T, "epochs": 2}
    assert account(sampler, "epsilon", DELTA, sigma=sigma, **kw).value <= 2.0
    assert sigma == pytest.approx(account(sampler, "sigma", (2.0, DELTA), **kw).upper, rel=0.02)


def test_shuffled_loader_with_prv_is_told_the_audit():
    loader = DataLoader(_data(), batch_size=N // T, shuffle=True)
    engine = dpo.PrivacyEngine(accountant="prv")
    _train(engine, loader, sigma=1.0, epochs=2)
    with pytest.warns(dpo.DpsamplingWarning) as rec:
        eps = engine.get_epsilon(DELTA)
    msg = str(rec[0].message)
    df = audit(N, N // T, delta=DELTA, epochs=2, sigma=1.0, samplers="poisson,shuffle,deterministic")
    rows = {r["sampler"]: r for r in df.to_dict("records")}
    lower = math.floor(rows["shuffle"]["lower"] * 1e3) / 1e3  # a lower end is printed rounded down
    assert f"{lower:.4g}" in msg and f"ε = {eps:.4g}" in msg  # the ε Opacus reported, not another Poisson number
    assert "'prv'" in msg and "dpsampling_shuffle" in msg and "\n" not in msg
    assert eps == pytest.approx(rows["poisson"]["value"], abs=0.02)  # Opacus's number is still the Poisson one
    # a Poisson-sampled loader is not flagged
    engine = dpo.PrivacyEngine(accountant="prv")
    _train(engine, DataLoader(_data(), batch_size=N // T), sigma=1.0, epochs=1, poisson_sampling=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpo.DpsamplingWarning)
        engine.get_epsilon(DELTA)


def test_shuffle_accountant_returns_the_deterministic_value_and_warns():
    engine = OpacusPrivacyEngine(accountant="dpsampling_shuffle")
    _train(engine, DataLoader(_data(), batch_size=N // T, shuffle=True), sigma=1.0, epochs=2)
    with pytest.warns(dpo.DpsamplingWarning, match="Poisson accounting would claim") as rec:
        eps = engine.get_epsilon(DELTA)
    det = _cli_epsilon("--sampler", "deterministic", "--sigma", "1.0", "--steps", str(T), "--epochs", "2")
    assert eps == det["value"]
    shuffle = _cli_epsilon("--sampler", "shuffle", "--sigma", "1.0", "--steps", str(T), "--epochs", "2")
    assert engine.accountant.get_epsilon_interval(DELTA) == (shuffle["lower"], det["value"])  # value: the upper end
    assert len(str(rec[0].message).splitlines()) == 1


def test_bad_histories_are_refused():
    acc = dpo.ACCOUNTANTS["balls_and_bins"]()
    acc.step(noise_multiplier=1.0, sample_rate=0.25)
    acc.step(noise_multiplier=2.0, sample_rate=0.25)
    with pytest.raises(ValueError, match="changes the noise multiplier or the sample rate"):
        acc.get_epsilon(DELTA)
    acc = dpo.ACCOUNTANTS["deterministic"]()
    acc.history = [(1.0, 0.3, 10)]
    with pytest.raises(ValueError, match="sample_rate must be 1/steps"):
        acc.get_epsilon(DELTA)
    acc = dpo.ACCOUNTANTS["poisson"]()
    acc.history = [(1.0, 0.3, 10)]
    for bad in (0, 1, -1e-5, math.nan):
        with pytest.raises(ValueError, match="delta must be in"):
            acc.get_epsilon(bad)
    with pytest.raises(ValueError, match="steps"):
        dpo.BallsAndBinsBatchSampler(10, 0)


def test_partial_epoch_and_state_dict():
    acc = dpo.ACCOUNTANTS["deterministic"]()
    for _ in range(6):  # 1.5 epochs of T = 4
        acc.step(noise_multiplier=1.0, sample_rate=0.25)
    one = _cli_epsilon("--sampler", "deterministic", "--sigma", "1.0", "--steps", "4", "--epochs", "1")["value"]
    two = _cli_epsilon("--sampler", "deterministic", "--sigma", "1.0", "--steps", "4", "--epochs", "2")["value"]
    assert acc.get_epsilon_interval(DELTA) == (one, two) and acc.get_epsilon(DELTA) == two
    other = dpo.ACCOUNTANTS["deterministic"]()
    other.load_state_dict(acc.state_dict())
    assert other.history == acc.history and other.get_epsilon(DELTA) == two
    with pytest.raises(ValueError):
        dpo.ACCOUNTANTS["poisson"]().load_state_dict(acc.state_dict())


def test_numbers_of_any_library_are_accepted():
    import numpy as np

    acc = dpo.ACCOUNTANTS["deterministic"]()
    for _ in range(T):
        acc.step(noise_multiplier=np.float32(1.0), sample_rate=torch.tensor(1 / T))
    ref = _cli_epsilon("--sampler", "deterministic", "--sigma", "1.0", "--steps", str(T))["value"]
    assert acc.get_epsilon(np.float32(1e-5)) == pytest.approx(ref, rel=1e-6)
    assert acc.get_epsilon(torch.tensor(1e-5, dtype=torch.float64)) == acc.get_epsilon(np.array(1e-5)) == ref
    assert len(dpo.BallsAndBinsBatchSampler(np.int64(N), torch.tensor(T))) == T


def test_a_cost_refusal_says_how_to_go_ahead_in_opacus():
    from dpsampling.samplers.spec import CostError

    acc = dpo.ACCOUNTANTS["poisson"]()
    acc.history = [(1.0, 1e-6, 2_000_000)]  # predicted beyond the time limit
    with pytest.raises(CostError, match=r"accountant\.force = True") as err:
        acc.get_epsilon(DELTA)
    assert "--force" not in str(err.value) and "force=True" not in str(err.value)
    acc = dpo.ACCOUNTANTS["poisson"]()
    for _ in range(4):
        acc.step(noise_multiplier=1.0, sample_rate=1e-6)
    acc.history[-1] = (1.0, 1e-6, 2_000_000)  # whole epochs built by steps: the per-epoch path refuses the same way
    with pytest.raises(CostError, match=r"accountant\.force = True"):
        acc.get_epsilon(DELTA)


def test_a_sampler_registered_at_run_time_gets_an_accountant_with_its_originals_values():
    """A clone of balls_and_bins registered after import: dpsampling_<name> exists, reads the spec (one batch per
    step, not a rate sampler) and answers what the original's accountant answers."""
    import dataclasses

    from opacus.accountants.registry import create_accountant

    from dpsampling import samplers

    samplers.register(dataclasses.replace(samplers.get_spec("balls_and_bins"), name="toy_bnb"))
    try:
        engine = dpo.PrivacyEngine(accountant="dpsampling_toy_bnb")  # the drop-in engine registers it
        toy, original = engine.accountant, create_accountant("dpsampling_balls_and_bins")
        for acc in (toy, original):
            for _ in range(2 * T):
                acc.step(noise_multiplier=1.0, sample_rate=1 / T)
        assert toy.mechanism() == "dpsampling_toy_bnb"
        assert toy.get_epsilon(DELTA) == original.get_epsilon(DELTA)
        assert toy.get_epsilon_interval(DELTA) == original.get_epsilon_interval(DELTA)
        assert dpo.sampler_for("balls_and_bins") == "balls_and_bins"  # the original keeps the loader kind
    finally:
        samplers.unregister("toy_bnb")
        dpo.register()
    assert "toy_bnb" not in dpo.ACCOUNTANTS


def test_get_epsilon_after_every_epoch_reuses_the_compositions(monkeypatch):
    """A training loop asks after every epoch: the accountant asks epsilon_per_epoch for the epochs up to the next
    power of two at once, so 20 epochs make 6 questions (1, 2, 4, 8, 16, 32 epochs), and every answer is
    account's for its epoch (the per-epoch list's e-th entry)."""
    asked = []
    inner = dpo.epsilon_per_epoch

    def counted(sampler, delta, **kw):
        asked.append(kw["epochs"])
        return inner(sampler, delta, **kw)

    monkeypatch.setattr(dpo, "epsilon_per_epoch", counted)
    acc = dpo.ACCOUNTANTS["poisson"]()
    got = []
    for _ in range(20):
        for _ in range(T):
            acc.step(noise_multiplier=1.3, sample_rate=1 / T)
        got.append(acc.get_epsilon(DELTA))
    assert sorted(set(asked)) == [1, 2, 4, 8, 16, 32]
    for e in (1, 7, 20):  # a certified upper end of epoch e (epochs shared with a later one may differ in the 9th digit)
        ref = account("poisson", "epsilon", DELTA, sigma=1.3, steps=T, epochs=e, q=1 / T)
        assert ref.lower <= got[e - 1] and got[e - 1] == pytest.approx(ref.value, rel=1e-6)


def test_a_float32_sample_rate_of_one_over_steps_is_accepted():
    """Opacus may hand a float32 rate: np.float32(1/50) equals 1/50 to its own precision, so it is 50 steps per
    epoch (and the accountant answers as at the float64 rate); 0.3 is no 1/steps and is refused naming the rate."""
    import numpy as np

    assert dpo.steps_of_rate(np.float32(1 / 50), "deterministic") == 50
    a, b = dpo.ACCOUNTANTS["deterministic"](), dpo.ACCOUNTANTS["deterministic"]()
    a.history, b.history = [(1.0, float(np.float32(1 / 50)), 100)], [(1.0, 1 / 50, 100)]
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5)
    with pytest.raises(ValueError, match="sample_rate must be 1/steps"):
        dpo.steps_of_rate(0.3, "deterministic")


@pytest.mark.parametrize("sampler", ["poisson", "wor", "shuffle", "deterministic", "balls_and_bins"])
def test_get_epsilon_is_the_safe_end(sampler):
    """What Opacus logs (get_epsilon) is the certified upper end — the library's value — never a lower end."""
    from opacus.accountants.registry import create_accountant

    acc = create_accountant(f"dpsampling_{sampler}")
    for _ in range(2 * T):
        acc.step(noise_multiplier=1.0, sample_rate=1 / T)
    rate = samplers.get_spec(sampler).batch == "rate"
    ref = account(sampler, "epsilon", DELTA, sigma=1.0, steps=T, epochs=2, q=1 / T if rate else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpo.DpsamplingWarning)
        eps = acc.get_epsilon(DELTA)
        lo, up = acc.get_epsilon_interval(DELTA)
    assert eps == up == ref.value == ref.upper >= lo == ref.lower
