"""Random allocation (balls-and-bins): our convex-order interval vs PLD_accounting's range, same inputs and width.

Ours: ``dpsampling.engine.allocation.epsilon_interval`` (default rel_width 1e-2).  Peer: PLD_accounting's
``gaussian_allocation_epsilon_range`` asked for the same absolute width (``epsilon_accuracy`` = our
upper − lower), run in a child process with a time limit (``--peer-limit=SECONDS``, default 600; ``--no-peer``
skips it).  Columns: our interval, relative width, CPU and wall seconds; the peer's interval, relative width,
CPU seconds and the CPU ratio peer/ours.  The machine may be shared: compare CPU seconds.

``--routes``: PLD_accounting's two convolution routes at the same width instead of its adaptive range: the GEOM
pair (DOMINATES and IS_DOMINATED, both directions) at loss_discretization = our absolute width (its measured width is
0.6-1.0 × the step, so this favours the peer) and the FFT upper (DOMINATES only: no lower end) at linear step
0.4 × width / T (our former bracket's rule); each in a child process under ``--peer-limit``.  ``--cases=σ,T,E,δ/...``
replaces the runs.

``--curve``: δ(ε) on the balls_and_bins pipeline's ε grid (20 points in (0, 4]) at its δ-vs-ε runs (σ, T, E =
0.8, 1000, 1 and 1.0, 100, 5; ``--cases=σ,T,E/...`` replaces them): ``allocation.delta_curve`` (one set of
compositions) vs the pointwise loop (``delta_interval`` per ε, each from scratch; the same numbers) vs
PLD_accounting's dominating and dominated PLD pair at loss step ``--peer-step`` (default 1e-2; one PLD per end
serves every ε), CPU seconds, the largest relative width over the ε with δ ≥ 1e-10, and the ratios.

Usage: python bench/bench_allocation.py [--quick] [--no-peer] [--routes] [--peer-limit=600] [--sigmas=0.5,1,2,3]
       [--cases=1.1,235,60,1e-5/...] [--curve [--peer-step=1e-2]]

Measured 2026-11-25 (machine loaded: load average ~20 on 2 cores; CPU s of ours include nothing else), default
rel_width 1e-2, every point in one pass of the grid step; relative width 5.8e-3 - 7.9e-3 except σ = 0.5 at
5005 × 10 and 5000 × 3 (2e-3):
  MNIST 235 × 60, δ = 1e-5: σ = 0.5 [20.2504, 20.3744] 0.05 s; σ = 1 [2.75111, 2.77013] 0.09 s; σ = 1.1 [2.32724,
  2.34334] 0.08 s; σ = 2 [1.00247, 1.00924] 0.11 s; σ = 3 [0.61818, 0.62232] 0.09 s.
  CIFAR-10 196 × 100, δ = 1e-5: σ = 0.5 [29.790, 29.988] 0.05 s; σ = 1 [4.07069, 4.10052] 0.10 s; σ = 2 [1.46733,
  1.47834] 0.11 s; σ = 3 [0.90267, 0.90903] 0.10 s.
  ImageNet 1251 × 90, δ = 1e-6: σ = 0.5 [12.2035, 12.2749] 0.10 s; σ = 1 [1.53615, 1.54801] 0.21 s; σ = 2 [0.57980,
  0.58419] 0.23 s; σ = 3 [0.36162, 0.36439] 0.20 s.
  ImageNet 5005 × 10, δ = 1e-6: σ = 0.5 [3.62540, 3.63288] 0.11 s; σ = 1 [0.22494, 0.22674] 0.43 s; σ = 2 [0.08535,
  0.08602] 0.50 s; σ = 3 [0.05314, 0.05354] 0.45 s.
  LLM 5000 × 3, δ = 1e-6: σ = 0.5 [3.01715, 3.02217] 0.07 s; σ = 1 [0.11904, 0.11998] 0.26 s; σ = 2 [0.04477,
  0.04510] 0.27 s; σ = 3 [0.02780, 0.02801] 0.27 s.
PLD_accounting's range at the same absolute width did not finish within 420 s for MNIST σ = 1.1, CIFAR-10 σ = 1 or
ImageNet 5005 × 10 σ = 1 (ratio > 1000×).  Where it finishes (separate runs, same machine): 8 × 2 epochs, σ = 1,
δ = 1e-5, its PLDs at loss step 1e-3: [3.12553, 3.12597] in 60 CPU s; ours at rel_width 1.4e-4: [3.125672,
3.125914] in 0.28 s (inside theirs, ~200×).  MNIST at rel_width 1e-3: [2.33418, 2.33577] in 1.2 s (the issue's
PLD_accounting "fine" bracket: [2.324, 2.345] in 250 CPU s).  Larger: T = 100 000, σ = 1, E = 1: 5.5 s; σ = 3,
E = 2: 5.4 s; T = 1000, E = 1000, σ = 1, δ = 1e-8: 94 s (the lower end's loss step ∝ 1/E).
At rel_width 1e-3 (one pass each, width 5.9e-4 - 7.9e-4): MNIST σ = 1.1 [2.334177, 2.335770] 1.5 s; CIFAR-10 σ = 1
[4.082235, 4.085287] 1.6 s; ImageNet 1251 × 90 σ = 1 [1.540697, 1.541885] 2.8 s, σ = 0.5 [12.23350, 12.24074] 1.2 s;
ImageNet 5005 × 10 σ = 1 [0.225686, 0.225854] 4.9 s, σ = 3 [0.053298, 0.053340] 5.3 s; LLM σ = 1 [0.119431,
0.119522] 2.9 s.
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


def _route(queue, route, delta, sigma, steps, epochs, width):
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        PrivacyParams,
        gaussian_allocation_pld,
    )

    t = time.process_time()
    params = PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs)
    if route == "geom":
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM, loss_discretization=width,
                                     tail_truncation=1e-3 * delta)
        ends = [float(gaussian_allocation_pld(params=params, config=cfg, bound_type=bt).get_epsilon_for_delta(delta))
                for bt in (BoundType.IS_DOMINATED, BoundType.DOMINATES)]
    else:
        cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.FFT, loss_discretization=0.4 * width / steps,
                                     tail_truncation=1e-3 * delta, max_grid_fft=10**8)
        ends = [float("nan"), float(gaussian_allocation_pld(params=params, config=cfg, bound_type=BoundType.DOMINATES)
                                    .get_epsilon_for_delta(delta))]
    queue.put((*ends, time.process_time() - t))


def _peer_curve(queue, eps, sigma, steps, epochs, step):
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        PrivacyParams,
        gaussian_allocation_pld,
    )

    t = time.process_time()
    cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM, loss_discretization=step,
                                 tail_truncation=1e-13)
    params = PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs)
    lo, up = (gaussian_allocation_pld(params=params, config=cfg, bound_type=bt)
              for bt in (BoundType.IS_DOMINATED, BoundType.DOMINATES))
    ends = [(float(lo.get_delta_for_epsilon(e)), float(up.get_delta_for_epsilon(e))) for e in eps]
    queue.put((ends, time.process_time() - t))


def _max_width(ends):
    widths = [(u - lo) / u for lo, u in ends if u >= 1e-10]
    return max(widths) if widths else float("nan")


#: the balls_and_bins pipeline's δ-vs-ε runs (σ, T, E) and ε grid (config/config.yaml: n_eps 21, eps_max 4)
CURVE_CASES = [(0.8, 1000, 1), (1.0, 100, 5)]
CURVE_EPS = [0.2 * k for k in range(1, 21)]


def curve(cases, peer, limit, peer_step):
    print(f"{'sigma':>5} {'T':>5} {'E':>3} | {'curve s':>7} {'loop s':>7} {'loop/curve':>10} {'same':>4} {'max rel w':>9} "
          f"| {'PLD_acc s':>9} {'max rel w':>9} {'PLD_acc/curve':>13}", flush=True)
    for sigma, steps, epochs in cases:
        t = time.process_time()
        ours = al.delta_curve(CURVE_EPS, sigma, steps, epochs, refine_from=1e-10)
        dt = time.process_time() - t
        t = time.process_time()
        loop = [al.delta_interval(e, sigma, steps, epochs, refine_from=1e-10) for e in CURVE_EPS]
        dl = time.process_time() - t
        same = all(a[:2] == b[:2] for a, b in zip(ours, loop))
        line = (f"{sigma:5.2f} {steps:5d} {epochs:3d} | {dt:7.2f} {dl:7.2f} {dl / dt:9.1f}x {same!s:>4} "
                f"{_max_width([r[:2] for r in ours]):9.2e} |")
        if peer:
            q = mp.get_context("fork").Queue()
            p = mp.get_context("fork").Process(target=_peer_curve, args=(q, CURVE_EPS, sigma, steps, epochs, peer_step))
            p.start()
            p.join(limit)
            if p.is_alive():
                p.terminate()
                p.join()
            r = q.get() if not q.empty() else None
            line += (f" {r[1]:9.1f} {_max_width(r[0]):9.2e} {r[1] / dt:12.1f}x" if r
                     else f" (not finished within {limit:.0f} s)")
        print(line, flush=True)


def run_peer(delta, sigma, steps, epochs, width, limit, route=None):
    """(lower, upper, CPU s) of PLD_accounting (its adaptive range, or ``route`` "geom"/"fft" at a fixed step) in a
    child process, or None past ``limit`` seconds."""
    q = mp.get_context("fork").Queue()
    target, args = (_peer, ()) if route is None else (_route, (route,))
    p = mp.get_context("fork").Process(target=target, args=(q, *args, delta, sigma, steps, epochs, width))
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
    routes = "--routes" in argv
    cases = next((a.split("=")[1] for a in argv if a.startswith("--cases=")), None)
    al.epsilon_interval(1e-5, 1.0, 4, 1)  # numba compile (cached on disk after the first run)
    if "--curve" in argv:
        step = next((float(a.split("=")[1]) for a in argv if a.startswith("--peer-step=")), 1e-2)
        picked = ([tuple(float(x) for x in c.split(",")) for c in cases.split("/")] if cases else CURVE_CASES)
        curve([(s, int(t), int(e)) for s, t, e in picked], peer, limit, step)
        return
    if cases:
        for case in cases.split("/"):
            sigma, steps, epochs, delta = (float(x) for x in case.split(","))
            steps, epochs = int(steps), int(epochs)
            t = time.process_time()
            lo, up, _ = al.epsilon_interval(delta, sigma, steps, epochs)
            dt = time.process_time() - t
            print(f"σ={sigma:g} T={steps} E={epochs} δ={delta:g}: ours [{lo:.5f}, {up:.5f}] rel w {(up - lo) / up:.2e} "
                  f"{dt:.3f} CPU s", flush=True)
            for route in (("geom", "fft") if routes else (None,)):
                r = run_peer(delta, sigma, steps, epochs, up - lo, limit, route)
                name = route or "range"
                print(f"   PLD_accounting {name}: " + (f"[{r[0]:.5f}, {r[1]:.5f}] {r[2]:.1f} CPU s, ratio {r[2] / dt:.0f}x"
                                                     if r else f"not finished within {limit:.0f} s"), flush=True)
        return
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
