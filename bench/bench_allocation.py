"""Random allocation (balls-and-bins): our convex-order interval vs PLD_accounting's range, same inputs and width.

Ours: ``dpsampling.engine.allocation.epsilon_interval`` (default rel_width 1e-2).  Peer: PLD_accounting's
``gaussian_allocation_epsilon_range`` asked for the same absolute width (``epsilon_accuracy`` = our
upper − lower), run in a child process with a time limit (``--peer-limit=SECONDS``, default 600; ``--no-peer``
skips it).  Columns: our interval, relative width, CPU and wall seconds; the peer's interval, relative width,
CPU seconds and the CPU ratio peer/ours.  The machine may be shared: compare CPU seconds.

Usage: python bench/bench_allocation.py [--quick] [--no-peer] [--peer-limit=600] [--sigmas=0.5,1,2,3]
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time

from dpsampling.engine import allocation as al

#: (name, steps per epoch, epochs, δ, σ of the named run or None = the σ grid only)
RUNS = [("MNIST", 235, 60, 1e-5, 1.1), ("CIFAR-10", 196, 100, 1e-5, 1.0), ("ImageNet-90", 1251, 90, 1e-6, None),
        ("ImageNet-10", 5005, 10, 1e-6, 1.0), ("LLM", 5000, 3, 1e-6, None)]
SIGMAS = (0.5, 1.0, 2.0, 3.0)


def _peer(queue, delta, sigma, steps, epochs, width):
    from PLD_accounting import gaussian_allocation_epsilon_range

    t = time.process_time()
    up, lo = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=steps, num_epochs=epochs,
                                               epsilon_accuracy=width)
    queue.put((lo, up, time.process_time() - t))


def run_peer(delta, sigma, steps, epochs, width, limit):
    """(lower, upper, CPU s) of PLD_accounting in a child process, or None past ``limit`` seconds."""
    q = mp.get_context("fork").Queue()
    p = mp.get_context("fork").Process(target=_peer, args=(q, delta, sigma, steps, epochs, width))
    p.start()
    p.join(limit)
    if p.is_alive():
        p.terminate()
        p.join()
        return None
    return q.get() if not q.empty() else None


def main(argv):
    quick, peer = "--quick" in argv, "--no-peer" not in argv
    limit = next((float(a.split("=")[1]) for a in argv if a.startswith("--peer-limit=")), 600.0)
    sigmas = next((tuple(float(s) for s in a.split("=")[1].split(",")) for a in argv if a.startswith("--sigmas=")),
                  SIGMAS)
    al.epsilon_interval(1e-5, 1.0, 4, 1)  # numba compile (cached on disk after the first run)
    print(f"{'run':>12} {'T':>5} {'E':>4} {'delta':>6} {'sigma':>5} | {'lower':>9} {'upper':>9} {'rel w':>8} "
          f"{'cpu s':>6} {'wall s':>6} | {'PLD_acc lower':>13} {'upper':>9} {'rel w':>8} {'cpu s':>7} | ratio",
          flush=True)
    for name, steps, epochs, delta, own in RUNS[:1] if quick else RUNS:
        for sigma in sorted(set(sigmas) | ({own} if own else set())):
            t, w = time.process_time(), time.perf_counter()
            lo, up, _ = al.epsilon_interval(delta, sigma, steps, epochs)
            dt, dw = time.process_time() - t, time.perf_counter() - w
            line = (f"{name:>12} {steps:5d} {epochs:4d} {delta:6.0e} {sigma:5.2f} | {lo:9.5f} {up:9.5f} "
                    f"{(up - lo) / up:8.2e} {dt:6.2f} {dw:6.2f} |")
            if peer and sigma == own:
                r = run_peer(delta, sigma, steps, epochs, up - lo, limit)
                line += (f" {r[0]:13.5f} {r[1]:9.5f} {(r[1] - r[0]) / r[1]:8.2e} {r[2]:7.1f} | {r[2] / dt:6.0f}x"
                         if r else f" (not finished within {limit:.0f} s)")
            print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
