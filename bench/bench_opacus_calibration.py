"""Opacus's own σ calibration (``get_noise_multiplier``, as ``make_private_with_epsilon`` calls it) over a dpsampling
accountant, on the README's MNIST example: 60 000 examples, batches of 256 (235 steps per epoch), 60 epochs,
target ε = 3, δ = 1e-5.  Prints each certified evaluation (CPU-s so far, σ, ε upper end), the σ returned, CPU and
wall seconds, the number of certified evaluations, and our certified ε at that σ (≤ the target).

Run: python bench/bench_opacus_calibration.py [sampler ...]   (needs the [opacus] extra; default balls_and_bins)
"""

import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from opacus.accountants.utils import get_noise_multiplier  # noqa: E402

from dpsampling.integrations import opacus as dpo  # noqa: E402
from dpsampling.samplers import account  # noqa: E402

N, B, EPOCHS, TARGET, DELTA = 60000, 256, 60, 3.0, 1e-5
T = -(-N // B)


def main(samplers):
    for sampler in samplers:
        dpo._MEMO.clear()
        t0, w0 = time.process_time(), time.time()
        inner = dpo._account

        def logged(*a, **k):
            fresh = (a, k.get("bound", a[5] if len(a) > 5 else None)) not in seen
            r = inner(*a, **k)
            if fresh:
                seen.add((a, k.get("bound", a[5] if len(a) > 5 else None)))
                print(f"  {time.process_time() - t0:7.1f} CPU-s  σ = {a[2]:.5g}  ε ≤ {r.value:.5g}", flush=True)
            return r

        seen = set()
        dpo._account = logged
        try:
            sigma = get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sample_rate=1 / T, epochs=EPOCHS,
                                         accountant=f"dpsampling_{sampler}")
        finally:
            dpo._account = inner
        cpu, wall = time.process_time() - t0, time.time() - w0
        kw = {"steps": T, "epochs": EPOCHS} if sampler in dpo.PER_EPOCH else {"steps": T * EPOCHS, "q": 1 / T}
        r = account(sampler, "epsilon", DELTA, sigma=sigma, **kw)
        eps = r.upper if sampler == "shuffle" else r.value  # shuffle: the certified end is the deterministic value
        print(f"{sampler}: σ = {sigma:.5g} in {cpu:.1f} CPU-s, {wall:.1f} s wall, {len(seen)} certified evaluations; "
              f"certified ε at σ = {eps:.5g} (target {TARGET})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["balls_and_bins"])
