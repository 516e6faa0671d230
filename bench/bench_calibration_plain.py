"""σ calibration as a user runs it: each contender in a fresh child process with the user's default environment (no
thread variables, no warm-up), on the README's MNIST run (60 000 examples, batches of 256: sample rate 1/235 as
Opacus sets it, 235 steps per epoch, 60 epochs = 14 100 steps), target ε = 3, δ = 1e-5.

Contenders (each a child ``python -c``):

* ``prv``, ``rdp``: Opacus's ``PrivacyEngine(accountant=...)``, ``make_private_with_epsilon`` on a tiny model and a
  loader of the MNIST shape (60 000 rows of 4 zeros, batches of 256: ``len(loader) = 235``);
* ``poisson``, ``balls_and_bins``: the same through dpsampling's drop-in ``PrivacyEngine`` with
  ``dpsampling_poisson`` (Opacus's Poisson loader) and ``dpsampling_balls_and_bins`` (``BallsAndBinsBatchSampler``);
* ``cli_poisson``, ``cli_balls_and_bins``: ``python -m dpsampling sigma`` for the same run.

Each child's CPU seconds (user + sys of the child and its threads, from ``os.wait4``) and wall seconds; the Opacus
children also print the CPU-s of the calibration call alone (process time, after imports) and the σ.  Prints the
median of ``--runs`` runs (default 3, contenders interleaved), and the ratios ours / prv.

Run: python bench/bench_calibration_plain.py [--runs N] [contender ...]
"""

import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, B, EPOCHS, TARGET, DELTA = 60000, 256, 60, 3.0, 1e-5
T = -(-N // B)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

OPACUS_CHILD = f"""
import sys, time, warnings
import torch
from torch.utils.data import DataLoader, TensorDataset
which = sys.argv[1]
if which in ("prv", "rdp"):
    from opacus import PrivacyEngine
    engine = PrivacyEngine(accountant=which)
else:
    from dpsampling.integrations.opacus import PrivacyEngine, BallsAndBinsBatchSampler
    engine = PrivacyEngine(accountant="dpsampling_" + which)
data = TensorDataset(torch.zeros({N}, 4), torch.zeros({N}, dtype=torch.long))
if which == "balls_and_bins":
    loader, poisson = DataLoader(data, batch_sampler=BallsAndBinsBatchSampler({N}, {T})), False
else:
    loader, poisson = DataLoader(data, batch_size={B}), True
model = torch.nn.Linear(4, 2)
t0 = time.process_time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Opacus's secure-RNG note
    _, opt, _ = engine.make_private_with_epsilon(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                                 data_loader=loader, target_epsilon={TARGET}, target_delta={DELTA},
                                                 epochs={EPOCHS}, max_grad_norm=1.0, poisson_sampling=poisson)
print(repr(opt.noise_multiplier), time.process_time() - t0)
"""

CLI = {"cli_poisson": ["--sampler", "poisson", "--q", repr(1 / T), "--steps", str(T * EPOCHS)],
       "cli_balls_and_bins": ["--sampler", "balls_and_bins", "--steps", str(T), "--epochs", str(EPOCHS)]}
OPACUS = ("prv", "rdp", "poisson", "balls_and_bins")
DEFAULT = (*OPACUS, *CLI)


def command(name):
    if name in CLI:
        return [sys.executable, "-m", "dpsampling", "sigma", *CLI[name], "--epsilon", str(TARGET),
                "--delta", str(DELTA)]
    return [sys.executable, "-c", OPACUS_CHILD, name]


def environment():
    """The user's environment without thread settings; dpsampling importable from this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run(name):
    """(CPU-s of the child, wall s, σ, CPU-s of the calibration call or None)."""
    w0 = time.time()
    proc = subprocess.Popen(command(name), env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.time() - w0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{name} exited {proc.returncode}: {err[-2000:]}")
    if name in CLI:
        import json

        sigma, inner = json.loads(out)["value"], None
    else:
        sigma, inner = (float(x) for x in out.split())
    return usage.ru_utime + usage.ru_stime, wall, sigma, inner


def main(argv):
    runs = 3
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    names = argv or list(DEFAULT)
    print(f"MNIST run: sample rate 1/{T}, {T} steps per epoch, {EPOCHS} epochs ({T * EPOCHS} steps), target ε = "
          f"{TARGET}, δ = {DELTA}; each contender a fresh process, default threads, no warm-up; median of {runs}",
          flush=True)
    rows = {n: [] for n in names}
    for i in range(runs):
        for name in names:
            rows[name].append(run(name))
            cpu, wall, sigma, inner = rows[name][-1]
            extra = "" if inner is None else f", calibration call {inner:.2f} CPU-s"
            print(f"  run {i + 1} {name:20s} {cpu:6.2f} CPU-s {wall:6.2f} s wall  σ = {sigma:.6f}{extra}", flush=True)
    med = {n: [statistics.median(r[k] for r in rs) if rs[0][k] is not None else None for k in range(4)]
           for n, rs in rows.items()}
    print(f"\n{'contender':20s} {'CPU-s':>7s} {'wall s':>7s} {'calib CPU-s':>11s} {'σ':>9s} {'CPU ÷ prv':>9s}")
    for n, (cpu, wall, sigma, inner) in med.items():
        ratio = f"{cpu / med['prv'][0]:9.2f}" if "prv" in med else ""
        calib = f"{inner:11.2f}" if inner is not None else f"{'':11s}"
        print(f"{n:20s} {cpu:7.2f} {wall:7.2f} {calib} {sigma:9.6f} {ratio}")


if __name__ == "__main__":
    main(sys.argv[1:])
