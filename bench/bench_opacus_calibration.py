"""Opacus's own σ calibration (``get_noise_multiplier``, as ``make_private_with_epsilon`` calls it) on the README's
MNIST example: 60 000 examples, batches of 256 (sample rate 1/235, 14 100 steps), 60 epochs, target ε = 3, δ = 1e-5,
through dpsampling's accountants and through Opacus's own (the peer: ``rdp``, its default, ``prv`` and ``gdp``), the
same function on the same inputs.

Prints, per accountant: the σ returned, CPU and wall seconds, the number of ``get_epsilon`` calls (and, for ours, of
certified evaluations: the rest are memoised), the CPU ratio to each of Opacus's accountants, and what the σ is worth:
our certified interval of ε for a Poisson run at that σ (Opacus's accountants all assume Poisson sampling) and, for a
dpsampling accountant of another sampler, that sampler's certified ε.  Each calibration runs once, in the order given,
after a warm-up (imports, numba's cached kernels) on another run, so none pays for what the process loads first:
this measures Opacus's bisection over each accountant inside a warm process.  What a user's fresh process pays
(imports, default threads, dpsampling's PrivacyEngine calibrating with one solve) is
bench/bench_calibration_plain.py.

Run: python bench/bench_opacus_calibration.py [accountant ...]   (needs the [opacus] extra; default: dpsampling_poisson
dpsampling_balls_and_bins rdp prv gdp; a sampler name means dpsampling_<sampler>; -v prints every certified evaluation)
"""

import sys
import time
import warnings

from opacus.accountants import registry
from opacus.accountants.utils import get_noise_multiplier

from dpsampling.integrations import opacus as dpo
from dpsampling.samplers import account, get_spec

N, B, EPOCHS, TARGET, DELTA = 60000, 256, 60, 3.0, 1e-5
T = -(-N // B)
PEERS = ("rdp", "prv", "gdp")
DEFAULT = ("dpsampling_poisson", "dpsampling_balls_and_bins", *PEERS)


def calibrate(mechanism, verbose=False):
    """(σ, CPU-s, wall s, get_epsilon calls, certified evaluations or None) of one get_noise_multiplier run."""
    cls = registry._ACCOUNTANTS[mechanism]
    calls = [0]
    inner_eps, inner_account = cls.get_epsilon, dpo._account
    seen = set()
    t0, w0 = time.process_time(), time.time()

    def counted(self, *a, **k):
        calls[0] += 1
        return inner_eps(self, *a, **k)

    def logged(*a, **k):  # our certified evaluations (memo misses)
        key = (a, tuple(sorted(k.items())))
        fresh = key not in seen
        r = inner_account(*a, **k)
        if fresh:
            seen.add(key)
            if verbose:
                print(f"  {time.process_time() - t0:7.2f} CPU-s  σ = {a[2]:.5g}  ε ≤ {r.value:.5g}", flush=True)
        return r

    ours = mechanism.startswith("dpsampling_")
    if ours:
        dpo._MEMO.clear()
        dpo._account = logged
    cls.get_epsilon = counted
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gdp warns that it is experimental and can underestimate ε (it does)
            sigma = get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sample_rate=1 / T, epochs=EPOCHS,
                                         accountant=mechanism)
    finally:
        cls.get_epsilon = inner_eps
        dpo._account = inner_account
    return sigma, time.process_time() - t0, time.time() - w0, calls[0], len(seen) if ours else None


def worth(mechanism, sigma):
    """What σ certifies: ε of a Poisson run at σ (interval), and for another dpsampling sampler its own ε."""
    p = account("poisson", "epsilon", DELTA, sigma=sigma, steps=T * EPOCHS, q=1 / T)
    text = f"[{p.lower:.5f}, {p.upper:.5f}]"
    sampler = mechanism.removeprefix("dpsampling_")
    if mechanism.startswith("dpsampling_") and sampler != "poisson":
        one_per_step = get_spec(sampler).batch == "one_per_step"
        kw = {"steps": T, "epochs": EPOCHS} if one_per_step else {"steps": T * EPOCHS, "q": 1 / T}
        r = account(sampler, "epsilon", DELTA, sigma=sigma, **kw)
        return p, f"[{p.lower:.5f}, {p.upper:.5f}] ({sampler} run: [{r.lower:.4f}, {r.upper:.4f}])"
    return p, text


def warm_up():
    """Load what the first calibration of a process would: dpsampling's lazy imports and numba's cached kernels."""
    t0 = time.process_time()
    account("poisson", "epsilon", DELTA, sigma=1.0, steps=20, q=0.1)
    account("balls_and_bins", "epsilon", DELTA, sigma=1.0, steps=10, epochs=2)
    for mechanism in PEERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = registry.create_accountant(mechanism)
        a.history = [(1.0, 0.1, 20)]
        a.get_epsilon(DELTA)
    return time.process_time() - t0


def main(argv):
    verbose = "-v" in argv
    names = [a for a in argv if a != "-v"] or list(DEFAULT)
    names = [a if a in registry._ACCOUNTANTS or a.startswith("dpsampling_") else f"dpsampling_{a}" for a in names]
    print(f"get_noise_multiplier(target_epsilon={TARGET}, target_delta={DELTA}, sample_rate=1/{T}, epochs={EPOCHS}): "
          f"{int(EPOCHS * T)} steps; each σ's worth is our certified ε interval for a Poisson run at it", flush=True)
    print(f"warm-up (imports, numba's cached kernels, one small run of each accountant): {warm_up():.2f} CPU-s")
    rows = {}
    for name in names:
        sigma, cpu, wall, calls, evals = calibrate(name, verbose)
        rows[name] = (sigma, cpu, wall, calls, evals)
        p, text = worth(name, sigma)
        verdict = ("above the target: σ too small" if p.lower > TARGET else
                   "≤ the target" if p.upper <= TARGET else "undecided")
        ev = "" if evals is None else f" ({evals} certified)"
        print(f"{name:27s} σ = {sigma:.5f}  {cpu:6.2f} CPU-s {wall:6.2f} s wall  {calls:2d} get_epsilon{ev}; "
              f"Poisson run at σ: ε ∈ {text}, {verdict}", flush=True)
    peers = [p for p in PEERS if p in rows]
    if peers:
        print("\nCPU ratio (row / column):")
        print(f"{'':27s}" + "".join(f"{p:>10s}" for p in peers))
        for name, (_, cpu, *_rest) in rows.items():
            print(f"{name:27s}" + "".join(f"{cpu / max(rows[p][1], 1e-9):10.3g}" for p in peers))


if __name__ == "__main__":
    main(sys.argv[1:])
