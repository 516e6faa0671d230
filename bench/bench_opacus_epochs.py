"""``get_epsilon`` after every epoch of a training run, as a training loop asks it, through dpsampling's Opacus
accountants and through Opacus's ``prv`` (its default), in one process: the README's MNIST example, 60 000 examples,
batches of 256 (sample rate 1/235), σ = 1.1, 60 epochs, δ = 1e-5.

Each accountant is stepped 235 times per epoch (``accountant.step``, as Opacus's optimizer hook does) and asked
``get_epsilon(1e-5)`` after each epoch.  Prints, per accountant: the total CPU seconds of the 60 calls, the slowest
call, ε after the last epoch, and the ratio of the total to prv's.  A warm-up run on another σ first, so no accountant
pays for what the process loads first.

Run: python bench/bench_opacus_epochs.py [accountant ...]   (needs the [opacus] extra; default: prv
dpsampling_poisson dpsampling_deterministic dpsampling_shuffle; a sampler name means dpsampling_<sampler>;
--epochs E for a shorter run)
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from opacus.accountants.registry import create_accountant  # noqa: E402

import dpsampling.integrations.opacus  # noqa: E402, F401  (registers dpsampling_<sampler>)

N, B, SIGMA, DELTA = 60000, 256, 1.1, 1e-5
T = -(-N // B)
DEFAULT = ("prv", "dpsampling_poisson", "dpsampling_deterministic", "dpsampling_shuffle")


def run(mechanism, epochs, sigma=SIGMA):
    """(total CPU-s of the per-epoch get_epsilon calls, slowest call, last ε)."""
    acc = create_accountant(mechanism)
    total, slowest, eps = 0.0, 0.0, None
    for _ in range(epochs):
        for _ in range(T):
            acc.step(noise_multiplier=sigma, sample_rate=1 / T)
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eps = acc.get_epsilon(DELTA)
        dt = time.process_time() - t0
        total, slowest = total + dt, max(slowest, dt)
    return total, slowest, eps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("accountants", nargs="*", default=list(DEFAULT))
    ap.add_argument("--epochs", type=int, default=60)
    args = ap.parse_args()
    names = [a if a in ("rdp", "prv", "gdp") or a.startswith("dpsampling_") else f"dpsampling_{a}"
             for a in args.accountants]
    if "prv" not in names:
        names.insert(0, "prv")
    for name in names:  # warm-up: imports and cached kernels, on another σ
        run(name, 1, sigma=SIGMA * 1.5)
    rows = {name: run(name, args.epochs) for name in names}
    ref = rows["prv"][0]
    print(f"get_epsilon after each of {args.epochs} epochs ({T} steps each, σ = {SIGMA}, δ = {DELTA:g}); CPU seconds")
    print(f"{'accountant':28s} {'total':>8s} {'slowest':>8s} {'ε last':>10s} {'÷ prv':>7s}")
    for name, (total, slowest, eps) in rows.items():
        print(f"{name:28s} {total:8.2f} {slowest:8.3f} {eps:10.5g} {total / ref:7.2f}")


if __name__ == "__main__":
    main()
