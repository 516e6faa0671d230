"""Benchmark for `dpsampling audit` on the README's MNIST example (60000/256, σ = 1.1, 60 epochs, δ = 1e-5).

Prints (i) the wall time of the whole audit (poisson, wor, shuffle, deterministic; balls_and_bins is
skipped by default at this size — timed separately at one epoch), per row, and (ii) the Poisson row
against a plain dp_accounting loop on the same inputs and accuracy (pessimistic PLD of the q-subsampled
Gaussian at value discretization 1e-4, self-composed T = 60·235 times), with the ratio.

Run: python bench/bench_audit.py
"""

import math
import time

import dpsampling
from dpsampling.samplers import account

N, B, E, SIGMA, DELTA = 60000, 256, 60, 1.1, 1e-5


def main():
    t = time.perf_counter()
    dpsampling.audit(N, B, epochs=E, sigma=SIGMA, delta=DELTA)
    t_all = time.perf_counter() - t
    print(f"(i) audit {N}/{B}, {E} epochs ({math.ceil(N / B) * E} steps): {t_all:.2f} s")
    steps, q = math.ceil(N / B), B / N
    for s in ("poisson", "wor", "shuffle", "deterministic"):
        t = time.perf_counter()
        kw = {"q": q} if s in ("poisson", "wor") else {}
        account(s, "epsilon", DELTA, sigma=SIGMA, steps=steps, epochs=E, **kw)
        print(f"    {s:14s} {time.perf_counter() - t:6.2f} s (after warm-up by the audit above)")
    t = time.perf_counter()
    r = account("balls_and_bins", "epsilon", DELTA, sigma=SIGMA, steps=steps, epochs=1)
    print(f"    balls_and_bins at 1 epoch only: {time.perf_counter() - t:6.2f} s (ε ≤ {r.value:.4g}); "
          f"skipped by default where its cost model predicts more than {dpsampling.samplers.TIME_LIMIT:g} s")

    try:
        from dp_accounting.pld import privacy_loss_distribution as pldm
    except ImportError:
        print("(ii) dp_accounting not installed: peer loop skipped")
        return
    from dpsampling.engine import pld as _pld

    _pld.composed.cache_clear()  # cold: the audit above left the composed PLD in the cache
    t = time.perf_counter()
    ours = account("poisson", "epsilon", DELTA, sigma=SIGMA, steps=steps, epochs=E, q=q, rel_tol=1e-3).value
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    pld = pldm.from_gaussian_mechanism(SIGMA, sampling_prob=q, value_discretization_interval=1e-4)
    peer = pld.self_compose(steps * E).get_epsilon_for_delta(DELTA)
    t_peer = time.perf_counter() - t
    print(f"(ii) Poisson row: ours {t_ours:.2f} s (ε = {ours:.6g})   plain dp_accounting loop {t_peer:.2f} s "
          f"(ε = {peer:.6g})   ratio peer/ours {t_peer / t_ours:.2f}x")


if __name__ == "__main__":
    main()
