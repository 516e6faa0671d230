"""Truncated Poisson: our certified interval (``account("truncated_poisson", "epsilon", ...)``) against
dp_accounting's ``TruncatedSubsampledGaussianDpEvent`` (PLDAccountant, its default discretisation 1e-4) on the
same inputs, at caps from the mean batch size to the mean + 4 standard deviations, for the named runs
(MNIST, CIFAR-10, ImageNet-like); then the smallest cap within 1 % of Poisson's certified ε.

Per point: our [lower, upper], relative width, CPU s; dp_accounting's ε and CPU s; the ratios (our upper /
theirs, their time / ours).  Caches are cleared before every measurement.  Prints markdown; run:
``PYTHONPATH=. python bench/bench_truncated.py [--quick] [--no-dp-accounting]``.
"""

from __future__ import annotations

import argparse
import math
import time

from dpsampling.engine import dominated_pld, pld
from dpsampling.engine import truncated as tr
from dpsampling.samplers import account, truncated_poisson

#: name -> (dataset size, mean batch, σ, epochs, δ)
RUNS = {"MNIST": (60000, 256, 1.1, 60, 1e-5), "CIFAR-10": (50000, 256, 1.0, 100, 1e-5),
        "ImageNet-like": (1281167, 256, 1.0, 10, 1e-6)}


def _clear():
    for f in (pld.composed, dominated_pld.composed, tr._upper_one_step, tr._upper_pmfs,  # noqa: SLF001
              tr._kept_set_one_step, tr._combined_one_step, tr._lower_composed, tr.lower_one_step):  # noqa: SLF001
        f.cache_clear()


def _timed(fn):
    _clear()
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def _theirs(n, q, cap, sigma, total_steps, delta):
    import dp_accounting

    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, cap, sigma), total_steps))
    return acc.get_epsilon(delta)


def run(names, sds, with_theirs):
    print("| run | cap B | (B − mean)/sd | p = P[K ≥ B] | ours lower | ours upper | width | ours CPU s "
          "| dp_accounting ε | its CPU s | our upper / theirs | their time / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        n, b, sigma, epochs, delta = RUNS[name]
        q, steps = b / n, math.ceil(n / b)
        sd = math.sqrt(n * q * (1 - q))
        for k in sds:
            cap = int(round(b + k * sd))
            r, cpu = _timed(lambda: account("truncated_poisson", "epsilon", delta, sigma=sigma, steps=steps,
                                            epochs=epochs, q=q, dataset_size=n, max_batch_size=cap, force=True))
            theirs, tcpu = (_timed(lambda: _theirs(n, q, cap, sigma, steps * epochs, delta)) if with_theirs
                            else (math.nan, math.nan))
            print(f"| {name} | {cap} | {k:g} | {tr.truncation_probability(q, n, cap):.3g} | {r.lower:.4f} | "
                  f"{r.upper:.4f} | {r.accuracy.get('rel_width', 0):.2%} | {cpu:.2f} | {theirs:.4f} | {tcpu:.2f} | "
                  f"{r.upper / theirs:.3f} | {tcpu / cpu:.2f} |", flush=True)
    print()
    print("| run | smallest cap within 1 % of Poisson | mean batch | its ε upper | Poisson ε upper | CPU s |")
    print("|---|---|---|---|---|---|")
    for name in names:
        n, b, sigma, epochs, delta = RUNS[name]
        q, steps = b / n, math.ceil(n / b)
        c, cpu = _timed(lambda: truncated_poisson.smallest_cap(delta, sigma=sigma, steps=steps, epochs=epochs, q=q,
                                                               dataset_size=n, factor=0.01))
        print(f"| {name} | {c.max_batch_size} | {c.mean_batch_size:g} | {c.epsilon:.4f} | {c.poisson_epsilon:.4f} "
              f"| {cpu:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="MNIST only, caps at mean and mean + 2 sd")
    ap.add_argument("--no-dp-accounting", action="store_true", help="skip dp_accounting's event (slow)")
    a = ap.parse_args()
    names = ["MNIST"] if a.quick else list(RUNS)
    sds = (0, 2) if a.quick else (0, 1, 2, 3, 4)
    run(names, sds, not a.no_dp_accounting)


if __name__ == "__main__":
    main()
