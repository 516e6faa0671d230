"""Every loader × every accountant with real Opacus: no combination is silent about a mismatch, after any epoch or
at σ calibration.  Every ``get_epsilon`` on a loader the accountant does not account (or below the certified lower
end of the sampler the loader draws with) warns with the certified interval of that very call (the epoch it is
asked after, not the first call's), naming the reported ε and the accountant to use; ``make_private_with_epsilon``
with such an accountant warns before training with the certified ε at the calibrated σ; a loader nothing correct can
be said about is refused.

The setting is the one practitioners hit: 6000 examples, batches of 64, σ = 1, δ = 1e-5, three epochs.  The
certified ends come from :func:`dpsampling.samplers.account` directly (not through the integration)."""

import math
import re
import warnings

import pytest
from integration_libs import require

torch = require("torch", "opacus")
require("opacus", "opacus")
torch.set_num_threads(1)  # a tiny model: threads only contend

from torch.utils.data import DataLoader, Sampler, TensorDataset

from dpsampling import render
from dpsampling.engine.errors import ParameterError
from dpsampling.integrations import opacus as dpo
from dpsampling.samplers import account

N, B, SIGMA, DELTA, EPOCHS = 6000, 64, 1.0, 1e-5, 3
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


def _dp_warnings(rec):
    return [str(w.message) for w in rec if issubclass(w.category, dpo.DpsamplingWarning)
            and not issubclass(w.category, dpo.DpsamplingNote)]


def _train(accountant, loader_name, epochs=1):
    """``epochs`` epochs through the drop-in engine, asking twice after each; (engine, [ε of each epoch's two
    calls], [the warnings of each epoch's calls])."""
    torch.manual_seed(0)
    engine = dpo.PrivacyEngine(accountant=accountant)
    model = torch.nn.Linear(3, 2)
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=_loader(loader_name), noise_multiplier=SIGMA,
                                             max_grad_norm=1.0, poisson_sampling=LOADERS[loader_name][1])
    eps, warned, notes = [], [], []
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            if len(yb):
                torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            eps.append([engine.get_epsilon(DELTA) for _ in range(2)])
        notes += [str(w.message) for w in rec if issubclass(w.category, dpo.DpsamplingNote)]
        warned.append(_dp_warnings(rec))
    _NOTES[(accountant, loader_name)] = notes
    if epochs == 1:
        return engine, eps[0], warned[0]
    return engine, eps, warned


_NOTES = {}


_ENDS = {}


def _certified(loader_name, steps, epochs=1):
    """The certified (lower, upper) of ``epochs`` epochs of the sampler the loader draws with (lower None: none is
    known)."""
    _, _, sampler, _ = LOADERS[loader_name]
    key = (sampler, steps, epochs)
    if key not in _ENDS:
        q = 1 / steps if sampler == "poisson" else None
        if sampler == "poisson":
            r = account(sampler, "epsilon", DELTA, sigma=SIGMA, steps=steps * epochs, q=q)
        else:
            r = account(sampler, "epsilon", DELTA, sigma=SIGMA, steps=steps, epochs=epochs)
        _ENDS[key] = (r.lower if r.lower is not None else r.value, r.upper if r.upper is not None else r.value)
    lower, upper = _ENDS[key]
    if loader_name == "shuffle_drop_last":
        lower = None  # examples sit out a random epoch: the shuffle lower-bound construction does not apply
    return lower, upper


def _certified_lower(loader_name, steps):
    """The certified lower end of ε for one epoch of the sampler the loader draws with (None: none is known)."""
    return _certified(loader_name, steps)[0]


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
@pytest.mark.parametrize("loader_name", list(LOADERS))
def test_no_silent_mismatch_after_any_epoch(loader_name, accountant):
    """After each of three epochs, both get_epsilon calls on a mismatched pair warn with that epoch's certified
    interval (the reference: account() of that many epochs); a matched pair is silent unless below the lower end."""
    engine, eps, warned = _train(accountant, loader_name, EPOCHS)
    t = len(_loader(loader_name))
    assert sum(h[2] for h in engine.accountant.history) == EPOCHS * t
    mismatch = accountant not in LOADERS[loader_name][3]
    for k in range(1, EPOCHS + 1):
        (e, again), msgs = eps[k - 1], warned[k - 1]
        lower, upper = _certified(loader_name, t, k)
        below = lower is not None and e < lower
        assert e == again and len(msgs) in (0, 2) and bool(msgs) == (mismatch or below), (k, msgs, e, lower)
        if below:
            assert all("provably too small" in m for m in msgs)
        for m in msgs:  # this call's run and its certified interval, not the first epoch's
            assert f"ε = {render.bound(e, 'value')}" in m and f"'{accountant}'" in m and "\n" not in m
            assert f"After {k * t} steps ({k} epoch{'s' if k > 1 else ''}) at σ = 1 " in m
            assert render.certified_text(lower, upper) in m, (m, lower, upper)
            assert f"accountant='dpsampling_{LOADERS[loader_name][2]}'" in m


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
@pytest.mark.parametrize("loader_name", list(LOADERS))
def test_no_silent_mismatch_at_calibration(loader_name, accountant):
    """make_private_with_epsilon warns before training, iff the accountant does not account the loader (or its
    planned ε is below the certified lower end), with the certified ε of the planned run at the calibrated σ."""
    engine = dpo.PrivacyEngine(accountant=accountant)
    model = torch.nn.Linear(3, 2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        _, opt, loader = engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=_loader(loader_name),
            target_epsilon=4.0, target_delta=DELTA, epochs=2, max_grad_norm=1.0,
            poisson_sampling=LOADERS[loader_name][1])
    msgs = _dp_warnings(rec)
    sigma, t = opt.noise_multiplier, len(loader)
    _, _, sampler, _ = LOADERS[loader_name]
    r = account(sampler, "epsilon", DELTA, sigma=sigma, steps=t * 2 if sampler == "poisson" else t,
                epochs=1 if sampler == "poisson" else 2, q=1 / t if sampler == "poisson" else None)
    lower = None if loader_name == "shuffle_drop_last" else (r.lower if r.lower is not None else r.value)
    upper = r.upper if r.upper is not None else r.value
    mismatch = accountant not in LOADERS[loader_name][3]
    from opacus.accountants.registry import create_accountant

    planned = create_accountant(accountant)
    planned.history = [(sigma, 1 / t, 2 * t)]
    below = lower is not None and planned.get_epsilon(DELTA) < lower
    assert len(msgs) <= 1 and bool(msgs) == (mismatch or below), msgs
    if mismatch:
        m = msgs[0]
        assert m.startswith("dpsampling: before training") and f"noise_multiplier = {sigma:.6g}" in m
        assert f"After {2 * t} steps (2 epochs)" in m and render.certified_text(lower, upper) in m
        assert f"accountant='dpsampling_{sampler}'" in m
        hint = re.search(r"needs noise_multiplier = ([0-9.]+) for a certified ε ≤ 4", m)
        if hint:  # the σ it names certifies the target for the loader's sampler
            s = float(hint.group(1))
            r = account(sampler, "epsilon", DELTA, sigma=s, steps=t * 2 if sampler == "poisson" else t,
                        epochs=1 if sampler == "poisson" else 2, q=1 / t if sampler == "poisson" else None)
            assert (r.upper if r.upper is not None else r.value) <= 4.0
        if sampler in ("poisson", "deterministic"):  # σ questions predicted well below SIGMA_HINT_SECONDS here
            assert hint, m
    elif msgs:  # a matching accountant whose planned ε is below the certified lower end
        assert "provably too small" in msgs[0]


def test_a_matching_accountant_with_a_best_known_upper_end_notes_it_once():
    _, _, warned = _train("dpsampling_shuffle", "shuffle")
    notes = _NOTES[("dpsampling_shuffle", "shuffle")]
    assert not warned and len(notes) == 1 and "best known upper bound" in notes[0] and "provably too small" in notes[0]
    _, _, warned = _train("dpsampling_shuffle", "fixed_order")  # a mismatch: its warning, not the note as well
    assert len(warned) == 2 and not _NOTES[("dpsampling_shuffle", "fixed_order")]  # each call warns


def test_the_issues_numbers():
    """6000 / 64, σ = 1, one epoch: the numbers a practitioner saw reported without a warning."""
    _, eps, warned = _train("dpsampling_balls_and_bins", "poisson")  # a Poisson run accounted as balls-and-bins
    poisson = account("poisson", "epsilon", DELTA, sigma=SIGMA, steps=T, q=1 / T)
    assert eps[0] < poisson.lower and len(warned) == 2 and "provably too small" in warned[0]
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


def test_a_plain_opacus_engine_with_our_accountant_says_once_that_it_cannot_see_the_loader():
    """The issue's silent path: opacus.PrivacyEngine(accountant="dpsampling_poisson") on DataLoader(shuffle=True)
    reported ε = 0.7497 with no warning, where the certified ε of the run is [4.079, 4.378] (shuffle).  Now the
    accountant says once that it cannot see the loader, and how to get the check; check_privacy_engine then gives
    the certified interval; the drop-in engine never needs the note."""
    from opacus import PrivacyEngine

    engine = PrivacyEngine(accountant="dpsampling_poisson")
    model = torch.nn.Linear(3, 2)
    _, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                         data_loader=_loader("shuffle"), noise_multiplier=SIGMA, max_grad_norm=1.0,
                                         poisson_sampling=False)
    for xb, yb in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        eps = [engine.get_epsilon(DELTA) for _ in range(3)]
    told = [str(w.message) for w in rec if issubclass(w.category, dpo.DpsamplingUnchecked)]
    assert len(told) == 1 and "cannot see the data loader" in told[0]
    assert "dpsampling.integrations.opacus.PrivacyEngine(accountant='dpsampling_poisson')" in told[0]
    assert "check_privacy_engine" in told[0]
    lower, upper = _certified("shuffle", T)
    assert eps[0] < lower and lower > 4  # what it reports is provably too small ...
    with pytest.warns(dpo.DpsamplingWarning, match="provably too small") as rec:  # ... and the check says so
        check = dpo.check_privacy_engine(engine, loader, delta=DELTA)
    assert (check.lower, check.upper) == (lower, upper) and check.mismatch
    assert render.certified_text(lower, upper) in check.message
