"""Balls-and-bins: Monte Carlo samples/s (ours vs the peer's estimator) and certified-bound time.

Monte Carlo: the peer library (google-research dpsgd_batch_sampler_accounting,
``BnBAccountant``) is not installed; its importance-sampling estimator (E = 1,
conditioning on the largest coordinate; see /work/shared/peer-notes §4) is
re-expressed below as a loop over memory-bounded batches using scipy.stats
(norm.ppf/isf for the maximum, truncnorm.rvs for the other coordinates,
scipy.special.logsumexp for the loss), which is how that method is written
in plain numpy/scipy.  Same estimator, same inputs: both rates and the ratio.

Certified bounds: ours (``dpsampling.samplers.balls_and_bins.epsilon_range`` at the
"default" and "fine" settings: adaptive bracket, relative width ≤ 5e-2 / 1e-2; upper end from
PLD_accounting's FFT route where it is tighter than its GEOM route, lower end = max of the GEOM
lower of one direction and the max-statistic lower bound; columns "up" / "low" say which) vs PLD_accounting's
plain ``gaussian_allocation_epsilon_range`` asked for the same absolute width
(``epsilon_accuracy`` = our upper − lower), on the same inputs; CPU seconds (the machine may be
shared) and the ratio.  PLD_accounting runs its O(n²) convolutions in numba when numba is
installed, else in a much slower numpy fallback; the table header says which.

Measured 2026-11-23 (CPU s per point, δ = 1e-6, default accuracy, machine loaded ~8-17 on 2 cores):
σ = 2, T = 1000: E = 1: 17 → 6.0-6.9 (bracket [0.05711, 0.05949]; PLD_accounting's range for the same
width 161 s: 23x); E = 5: 80-87 → 29 ([0.13548, 0.14130]); E = 10: 164 → 49 ([0.19648, 0.20540]);
σ = 1, T = 100, E = 1: 0.6 s ([0.83937, 0.85967], lower end from the max statistic) vs PLD_accounting 3.2 s;
"fine" (rel width ≤ 1e-2): 4.0 s ([0.85170, 0.85850]) vs PLD_accounting's 133 s for [0.8561, 0.8639] (issue 11);
σ = 2, T = 1000, E = 1 "fine": 285 s ([0.058958, 0.059478]; the GEOM lower's O(n²) cost dominates).
PLD_accounting's range at σ = 2, T = 1000, E = 5 did not finish within ~25 min of a loaded machine.
Before = GEOM-only bracket of main 8675ed9; after = FFT upper + one GEOM lower + max-statistic floor.

Measured 2026-11-25, corner grid (CPU s, one process, main 90007f9 → bnb branch; every other corner ≤ 3.6 s):
σ = 1, T = 1000: E = 1 67 (width 6.5e-2: target missed) → 6.1 (4.6e-2); E = 5 → 33; E = 10 → 81 (4.6e-2;
FFT upper loose there, both ends GEOM of REMOVE); σ = 2, T = 1000: E = 1 5.6 → 3.0; E = 5 25 → 13; E = 10 42 → 24.
Where the time goes (σ = 2, T = 1000, E = 10): the GEOM lower's first exp-space convolutions (grid 74k → 57k
points: 6 of 15 s; the first four 86 %), PLD_accounting spreading its step evenly over ~15 stages and E epochs.

Measured 2026-11-25 (second session), idle, 2 cores, after the window-sum kernel (dpsampling/samplers/_geometric_kernel.py):
--kernel, the 17 convolutions of one REMOVE upper (σ = 1, T = 1000, E = 5): PLD_accounting 15.4 CPU s, ours 2.4 CPU s
on one thread (6.5x), 1.26 s wall on two (12.2x), largest relative difference 4e-16.  Whole grid σ ∈ {0.35, 0.5, 0.7,
1, 1.25, 1.5, 1.75, 2} × T ∈ {100, 1000} × E ∈ {1, 5, 10} (48 points, wall s on 2 cores, width ≤ 5e-2 everywhere):
45 ≤ 10 s; over: σ = 1.25 / 1.5 / 1.75, T = 1000, E = 10: 12.3 / 14.4 / 10.5 s (21 / 25 / 13 CPU s; before: 63 CPU s
with the width missed / 65 / 13); σ = 1, T = 1000: E = 5 4.4 s, E = 10 9.4 s (were 32 / 81 CPU s); σ = 2, T = 1000,
E = 10 9.3 s (22 CPU s before).

Usage: python3 bench/bench_balls_and_bins.py [--quick] [--kernel | --mc-only | --bounds-only] [--default-only] [--fine-only] [--no-peer]
       [--cases=σ,T,E/σ,T,E...] [--peer-all]
"""

from __future__ import annotations

import math
import sys
import time
import warnings

import numpy as np
from scipy import special, stats

from dpsampling.engine import allocation_pld as pa
from dpsampling.samplers import balls_and_bins as bnb
from dpsampling.samplers import balls_and_bins_mc as mc


def peer_style_is(eps, sigma, steps, n, seed, batch=10_000):
    """Peer's IS estimator (both directions, max), batch loop with scipy.stats; returns δ̂."""
    rng = np.random.default_rng(seed)
    s2 = sigma * sigma
    out = []
    for direction in ("remove", "add"):
        if direction == "remove":
            c = 0.5 + s2 * (eps - math.log(1 + (math.exp(1 / s2) - 1) / steps))
            p = 1 - stats.norm.cdf(c / sigma) ** steps
        else:
            c = 0.5 + s2 * (math.log(steps) - eps)
            p = stats.norm.cdf(c / sigma) ** steps
        total = 0.0
        done = 0
        while done < n:
            m = min(batch, n - done)
            if direction == "remove":
                f_c = stats.norm.cdf(c / sigma) ** steps
                u = rng.uniform(f_c, 1.0, size=m) ** (1.0 / steps)
                mx = sigma * stats.norm.ppf(u) if stats.norm.cdf(c / sigma) < 0.5 else \
                    sigma * stats.norm.isf(1 - u)
                z = stats.truncnorm.rvs(-np.inf, (mx / sigma)[:, None], scale=sigma, size=(m, steps),
                                        random_state=rng)
                z[np.arange(m), rng.integers(0, steps, size=m)] = mx
                z[:, 0] += 1
                loss = special.logsumexp(z / s2, axis=1) - math.log(steps) - 0.5 / s2
            else:
                x = stats.truncnorm.rvs(-np.inf, c / sigma, scale=sigma, size=(m, steps), random_state=rng)
                loss = -(special.logsumexp(x / s2, axis=1) - math.log(steps) - 0.5 / s2)
            total += np.sum(np.maximum(0.0, 1 - np.exp(eps - loss)))
            done += m
        out.append(p * total / n)
    return max(out)


def bench_mc(quick):
    n = 20_000 if quick else 200_000
    for eps, sigma, steps in [(0.5, 1.0, 100), (1.0, 0.7, 1000)]:
        nn = n if steps <= 100 else n // 10
        t = time.process_time()
        ours = mc.mc_delta(eps, sigma=sigma, steps=steps, mc_samples=nn, mc_seed=1)
        t_ours = time.process_time() - t
        t = time.process_time()
        peer = peer_style_is(eps, sigma, steps, nn, 1)
        t_peer = time.process_time() - t
        r_o, r_p = 2 * nn / t_ours, 2 * nn / t_peer
        print(f"MC IS eps={eps} sigma={sigma} T={steps} n={nn}/direction: ours {ours.value:.4g} "
              f"[{ours.lower:.4g}, {ours.upper:.4g}] {r_o:,.0f} samples/s; peer-style {peer:.4g} "
              f"{r_p:,.0f} samples/s; ratio {r_o / r_p:.1f}x (CPU time)", flush=True)


#: (σ, steps per epoch, epochs): the corner grid of the issue's range (σ ∈ [0.35, 2], 100–1000 steps,
#: 1–10 epochs) and its middle σ; --quick: one cheap point
BOUND_CASES = [(s, t, e) for s in (0.35, 1.0, 2.0) for t in (100, 1000) for e in (1, 5, 10)]


def _peer_affordable(steps, epochs):
    """PLD_accounting's range is run by default where it takes seconds to minutes: T·E ≤ 100 (measured:
    σ = 2, T = 1000, E = 1 161 s; E = 5 not done in ~25 min); --peer-all runs it everywhere."""
    return steps * epochs <= 100 or "--peer-all" in sys.argv


def bench_bounds(quick, accuracies, peer):
    """Table: our certified ε(δ = 1e-6) bracket (CPU s, wall s, relative width) and PLD_accounting's
    ``gaussian_allocation_epsilon_range`` asked for the same absolute width (CPU s), and the ratio."""
    from PLD_accounting import gaussian_allocation_epsilon_range
    from PLD_accounting.types import has_numba

    print(f"certified bounds, delta=1e-6, CPU and wall seconds, one process "
          f"(numba {'on' if has_numba() else 'OFF: numpy fallback'})")
    print(f"{'sigma':>5} {'T':>5} {'E':>3} {'acc':>7} | {'ours lower':>10} {'ours upper':>10} {'rel w':>8} "
          f"{'cpu s':>7} {'wall s':>7} {'up':>4} {'low':>5} | {'PLD_acc lower':>13} {'upper':>8} {'rel w':>8} "
          f"{'cpu s':>7} | ratio", flush=True)
    cases = BOUND_CASES[:1] if quick else BOUND_CASES
    for arg in sys.argv:
        if arg.startswith("--cases="):  # e.g. --cases=2,1000,10/1,100,1
            cases = [(float(c.split(",")[0]), int(c.split(",")[1]), int(c.split(",")[2])) for c in arg[8:].split("/")]
    for sigma, steps, epochs in cases:
        for acc in accuracies:
            pa.directional_pmf.cache_clear()
            pa.epsilon_interval.cache_clear()
            t, w = time.process_time(), time.perf_counter()
            r = bnb.epsilon_range(1e-6, sigma=sigma, steps=steps, epochs=epochs, accuracy=acc)
            dt, dw = time.process_time() - t, time.perf_counter() - w
            line = (f"{sigma:5.2f} {steps:5d} {epochs:3d} {acc:>7} | {r.lower:10.5f} {r.upper:10.5f} "
                    f"{(r.upper - r.lower) / r.upper:8.2e} {dt:7.1f} {dw:7.1f} {r.accuracy['upper_route']:>4} "
                    f"{'ms' if r.accuracy['lower_method'] != 'pld_accounting' else 'pld':>5} |")
            if peer and _peer_affordable(steps, epochs):
                t = time.process_time()
                up, lo = gaussian_allocation_epsilon_range(delta=1e-6, sigma=sigma, num_steps=steps,
                                                           num_epochs=epochs, epsilon_accuracy=r.upper - r.lower)
                dp = time.process_time() - t
                line += f" {lo:13.5f} {up:8.5f} {(up - lo) / up:8.2e} {dp:7.1f} | {dp / dt:5.1f}x"
            else:
                line += " (PLD_accounting range not run: " + ("--no-peer)" if not peer else "T·E > 100; --peer-all)")
            print(line, flush=True)


def bench_kernel(quick):
    """PLD_accounting's geometric convolution kernel (the peer) against ours (dpsampling.engine.geometric_kernel)
    on the same inputs: every convolution of one REMOVE upper bound (σ = 1, T = 1000, E = 5 at the step the
    bracket uses there, 0.0279; --quick: T = 100), recorded from PLD_accounting's own run.  CPU and wall seconds
    summed over the convolutions, ours on one and on two numba threads, and the largest relative difference
    over bins above 1e-12."""
    import numba
    import PLD_accounting.geometric_convolution as gc

    from dpsampling.engine.geometric_kernel import windowed_geometric_kernel

    steps = 100 if quick else 1000
    calls, library = [], gc._geometric_kernel

    def record(**kw):
        calls.append(kw)
        return library(**kw)

    gc._geometric_kernel = record
    try:
        import PLD_accounting as pa

        pa.gaussian_allocation_directional_pld(
            params=pa.PrivacyParams(sigma=1.0, num_steps=steps, num_epochs=5), direction=pa.Direction.REMOVE,
            config=pa.AllocationSchemeConfig(convolution_method=pa.ConvolutionMethod.GEOM, loss_discretization=0.0279,
                                             tail_truncation=1e-9), bound_type=pa.BoundType.DOMINATES)
    finally:
        gc._geometric_kernel = library
    windowed_geometric_kernel(**calls[-1])  # compile / load numba's cache
    print(f"geometric convolution kernel, sigma=1, T={steps}, E=5, REMOVE upper, loss_discretization=0.0279: "
          f"{len(calls)} convolutions, grids up to {max(c['pmf_base'].size for c in calls)} points")

    def timed(fn):
        t, w, outs = time.process_time(), time.perf_counter(), [fn(**c) for c in calls]
        return time.process_time() - t, time.perf_counter() - w, outs

    peer_cpu, peer_wall, ref = timed(library)
    before = numba.get_num_threads()
    for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
        numba.set_num_threads(threads)
        cpu, wall, outs = timed(windowed_geometric_kernel)
        worst = max(float(np.max(np.abs(o[r > 1e-12] / r[r > 1e-12] - 1))) for o, r in zip(outs, ref))
        print(f"  PLD_accounting {peer_cpu:6.2f} CPU s {peer_wall:6.2f} wall s | ours, {threads} thread(s): "
              f"{cpu:6.2f} CPU s {wall:6.2f} wall s | ratio CPU {peer_cpu / cpu:4.1f}x wall {peer_wall / wall:4.1f}x | "
              f"max rel diff (bins > 1e-12) {worst:.1e}", flush=True)
    numba.set_num_threads(before)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    quick = "--quick" in sys.argv
    if "--kernel" in sys.argv:
        bench_kernel(quick)
        sys.exit(0)
    if "--bounds-only" not in sys.argv:
        bench_mc(quick)
    if "--mc-only" not in sys.argv:
        accs = ("default",) if quick or "--default-only" in sys.argv else ("default", "fine")
        bench_bounds(quick, ("fine",) if "--fine-only" in sys.argv else accs,
                     peer="--no-peer" not in sys.argv)
