"""Every loader × every accountant with real Opacus: no combination reports, without a warning, an ε below the
certified lower end of the sampler the loader actually draws with; a mismatch warns once per engine, naming the
reported ε and the accountant to use; a loader nothing correct can be said about is refused.

The setting is the one practitioners hit: 6000 examples, batches of 64, σ = 1, one epoch, δ = 1e-5.  The certified
lower ends come from :func:`dpsampling.samplers.account` directly (not through the integration)."""

import math
import warnings

import pytest
from integration_libs import require

torch = require("torch", "opacus")
require("opacus", "opacus")
torch.set_num_threads(1)  # a tiny model: threads only contend

from torch.utils.data import DataLoader, Sampler, TensorDataset

from dpsampling.engine.errors import ParameterError
from dpsampling.integrations import opacus as dpo
from dpsampling.samplers import account

N, B, SIGMA, DELTA = 6000, 64, 1.0, 1e-5
T = math.ceil(N / B)  # 94 batches per epoch (the last one has 48 examples)
ACCOUNTANTS = ["rdp", "prv", "gdp", "dpsampling_poisson", "dpsampling_wor", "dpsampling_shuffle",
               "dpsampling_deterministic", "dpsampling_balls_and_bins"]
#: loader -> (DataLoader keywords or a batch sampler, poisson_sampling, the sampler it draws with, its accountant)
LOADERS = {
    "poisson": ({"batch_size": B}, True, "poisson", ("rdp", "prv", "gdp", "dpsampling_poisson")),
    "shuffle": ({"batch_size": B, "shuffle": True}, False, "shuffle", ("dpsampling_shuffle",)),
    "shuffle_drop_last": ({"batch_size": B, "shuffle": True, "drop_last": True}, False, "shuffle", ("dpsampling_shuffle",)),
    "fixed_order": ({"batch_size": B, "shuffle": False}, False, "deterministic", ("dpsampling_deterministic",)),
    "fixed_order_drop_last": ({"batch_size": B, "drop_last": True}, False, "deterministic",
                              ("dpsampling_deterministic",)),
    "balls_and_bins": ("bnb", False, "balls_and_bins", ("dpsampling_balls_and_bins",)),
}


class EveryOtherBatchSampler(Sampler):
    """A batch sampler dpsampling does not know (an example may be in several batches)."""

    def __len__(self):
        return T

    def __iter__(self):
        for t in range(T):
            yield list(range(t, N, 2))[:B]


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 3, generator=g)
    return TensorDataset(x, (x[:, 0] > 0).long())


def _loader(name):
    kw = LOADERS[name][0]
    if kw == "bnb":
        return DataLoader(_data(), batch_sampler=dpo.BallsAndBinsBatchSampler(N, T, torch.Generator().manual_seed(0)),
                          collate_fn=_collate)
    return DataLoader(_data(), **kw)


def _collate(batch):
    if not batch:
        return torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)
    return torch.utils.data.default_collate(batch)


def _train(accountant, loader_name):
    """One epoch through the drop-in engine; (engine, ε of two get_epsilon calls, the warnings they raised)."""
    torch.manual_seed(0)
    engine = dpo.PrivacyEngine(accountant=accountant)
    model = torch.nn.Linear(3, 2)
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=_loader(loader_name), noise_multiplier=SIGMA,
                                             max_grad_norm=1.0, poisson_sampling=LOADERS[loader_name][1])
    for xb, yb in loader:
        opt.zero_grad()
        if len(yb):
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        eps = [engine.get_epsilon(DELTA) for _ in range(2)]
    _NOTES[(accountant, loader_name)] = [str(w.message) for w in rec if issubclass(w.category, dpo.DpsamplingNote)]
    return engine, eps, [str(w.message) for w in rec if issubclass(w.category, dpo.DpsamplingWarning)
                         and not issubclass(w.category, dpo.DpsamplingNote)]


_NOTES = {}


_LOWER = {}


def _certified_lower(loader_name, steps):
    """The certified lower end of ε for one epoch of the sampler the loader draws with (None: none is known)."""
    _, _, sampler, _ = LOADERS[loader_name]
    if loader_name == "shuffle_drop_last":
        return None  # examples sit out a random epoch: the shuffle lower-bound construction does not apply
    key = (sampler, steps)
    if key not in _LOWER:
        q = 1 / steps if sampler == "poisson" else None
        r = account(sampler, "epsilon", DELTA, sigma=SIGMA, steps=steps, q=q)
        _LOWER[key] = r.lower if r.lower is not None else r.value
    return _LOWER[key]


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
@pytest.mark.parametrize("loader_name", list(LOADERS))
def test_no_silent_under_report(loader_name, accountant):
    engine, eps, warned = _train(accountant, loader_name)
    assert eps[0] == eps[1] and sum(h[2] for h in engine.accountant.history) == len(_loader(loader_name))
    lower = _certified_lower(loader_name, len(_loader(loader_name)))
    mismatch = accountant not in LOADERS[loader_name][3]
    below = lower is not None and eps[0] < lower
    assert len(warned) <= 1  # once per engine
    assert bool(warned) == (mismatch or below), (warned, eps, lower)
    if below:
        assert warned and "provably too small" in warned[0]
    if warned:
        msg = warned[0]
        assert f"ε = {eps[0]:.4g}" in msg and f"'{accountant}'" in msg and "\n" not in msg
        assert f"accountant='dpsampling_{LOADERS[loader_name][2]}'" in msg
        assert f"After {len(_loader(loader_name))} steps (1 epoch) at σ = 1 " in msg and ". a" not in msg


def test_a_matching_accountant_with_a_best_known_upper_end_notes_it_once():
    _, _, warned = _train("dpsampling_shuffle", "shuffle")
    notes = _NOTES[("dpsampling_shuffle", "shuffle")]
    assert not warned and len(notes) == 1 and "best known upper bound" in notes[0] and "provably too small" in notes[0]
    _, _, warned = _train("dpsampling_shuffle", "fixed_order")  # a mismatch: its warning, not the note as well
    assert len(warned) == 1 and not _NOTES[("dpsampling_shuffle", "fixed_order")]


def test_the_issues_numbers():
    """6000 / 64, σ = 1, one epoch: the numbers a practitioner saw reported without a warning."""
    _, eps, warned = _train("dpsampling_balls_and_bins", "poisson")  # a Poisson run accounted as balls-and-bins
    poisson = account("poisson", "epsilon", DELTA, sigma=SIGMA, steps=T, q=1 / T)
    assert eps[0] < poisson.lower and len(warned) == 1 and "provably too small" in warned[0]
    _, eps, warned = _train("dpsampling_poisson", "shuffle")  # a shuffled run accounted as Poisson
    shuffle = account("shuffle", "epsilon", DELTA, sigma=SIGMA, steps=T)
    assert eps[0] < shuffle.lower and shuffle.lower > 4 and "provably too small" in warned[0]
    _, eps, warned = _train("prv", "shuffle")
    assert "'prv'" in warned[0] and f"ε = {eps[0]:.4g}" in warned[0]


def test_an_unknown_batch_sampler_is_refused_and_can_be_declared():
    loader = DataLoader(_data(), batch_sampler=EveryOtherBatchSampler())
    for accountant in ("prv", "dpsampling_shuffle"):
        engine = dpo.PrivacyEngine(accountant=accountant)
        model = torch.nn.Linear(3, 2)
        with pytest.raises(ParameterError, match="EveryOtherBatchSampler.*cannot say what ε") as err:
            engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                data_loader=loader, noise_multiplier=SIGMA, max_grad_norm=1.0, poisson_sampling=False)
        assert err.value.param == "data_loader"
    with pytest.raises(ParameterError, match="loader must be (None or )?one of"):
        dpo.PrivacyEngine(accountant="prv", loader="every_other")
    engine = dpo.PrivacyEngine(accountant="dpsampling_shuffle", loader="shuffle")  # the user says how it draws
    model = torch.nn.Linear(3, 2)
    engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
                        noise_multiplier=SIGMA, max_grad_norm=1.0, poisson_sampling=False)


def test_check_privacy_engine_checks_a_plain_opacus_engine():
    from opacus import PrivacyEngine

    engine = PrivacyEngine(accountant="prv")
    model = torch.nn.Linear(3, 2)
    model, _, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=_loader("fixed_order"), noise_multiplier=SIGMA,
                                             max_grad_norm=1.0, poisson_sampling=False)
    assert dpo.check_privacy_engine(engine, loader, delta=DELTA) is None  # before any step
    engine.accountant.history = [(SIGMA, 1 / T, T)]
    with pytest.warns(dpo.DpsamplingWarning, match="provably too small"):
        check = dpo.check_privacy_engine(engine, loader, delta=DELTA)
    exact = account("deterministic", "epsilon", DELTA, sigma=SIGMA, steps=T).value
    assert check.mismatch and check.sampler == "deterministic" and check.lower == check.upper == exact
    assert check.reported == engine.get_epsilon(DELTA) < exact
