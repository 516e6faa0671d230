"""`dpsampling audit --per-epoch` against the plain audit on the MNIST example (60000/256, σ = 1.1, 60 epochs,
δ = 1e-5): CPU seconds of each command in a fresh process (imports included, as a user runs them), each
sampler's per-epoch CPU seconds in one process, and the ratio.  The target: per-epoch ≤ 2× the plain audit.

    python bench/bench_per_epoch.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys

ARGS = ["audit", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "1.1",
        "--delta", "1e-5"]


def cpu_of(argv) -> float:
    """CPU seconds (user + system) of one fresh `python -m dpsampling …` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "dpsampling", *argv], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def per_sampler() -> None:
    """Each sampler's per-epoch table alone, in this process (after the plain row, as the audit asks them): the
    audit's samplers without a cap (a capped sampler joins the audit only with --max-batch-size)."""
    import time

    from dpsampling import samplers
    from dpsampling.samplers.per_epoch import epsilon_per_epoch

    for s in samplers.SAMPLERS:
        if samplers.get_spec(s).batch == "capped":
            continue
        kw = {"q": 256 / 60000} if samplers.get_spec(s).batch == "rate" else {}
        t = time.process_time()
        samplers.account(s, "epsilon", 1e-5, sigma=1.1, steps=235, epochs=60, force=True, **kw)
        plain = time.process_time() - t
        t = time.process_time()
        epsilon_per_epoch(s, 1e-5, sigma=1.1, steps=235, epochs=60, force=True, **kw)
        print(f"  {s:15s} plain row {plain:6.2f} CPU-s, epochs 1..60 {time.process_time() - t:6.2f} CPU-s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    runs = [(cpu_of(ARGS), cpu_of([*ARGS, "--per-epoch"])) for _ in range(a.repeat)]  # interleaved: a change of
    plain, per = min(p for p, _ in runs), min(q for _, q in runs)  # the machine's load reaches both commands alike
    print(f"plain audit        {plain:6.2f} CPU-s (best of {a.repeat}, fresh process)")
    print(f"audit --per-epoch  {per:6.2f} CPU-s (best of {a.repeat}, fresh process)")
    print(f"ratio              {per / plain:6.2f} (target ≤ 2; per run: "
          f"{', '.join(f'{q / p:.2f}' for p, q in runs)})")
    print("per sampler, in one process:")
    per_sampler()


if __name__ == "__main__":
    main()
