"""Benchmark: σ(q, T) calibration for Räisä et al. Fig. 1 points, ours vs the authors' method.

Peer (the authors' src/plot_convergence.py): dp_accounting's
``get_smallest_subsampled_gaussian_noise`` -- one pessimistic connect-the-dots PLD per candidate σ at
value_discretization_interval = min(1e-3, 0.1 ε/T), bisection on σ in [0, σ(1, T)] to 1e-7.
Ours: ``effective_noise.calibrate_sigma_pld`` = ``dpsampling.engine.accountant.calibrate_sigma`` -- secant on
log σ over successively finer dp_accounting PLDs (d = 1e-2, 1e-3, ...) until the estimated relative error
is below rel_tol; "cold" = one point on its own, "curve" = the pipeline's warm-started 100-q curve
(``sigma_curve`` = ``accountant.calibrate_sigma_curve``), amortised per point.
Accuracy: |σ/σ_ref - 1| with σ_ref = ours at rel_tol = 1e-6 (points; its estimated error is printed) or
1e-7 (curves).  "Equal accuracy": ours at the loosest rel_tol whose max error is at most the authors'.
Times are process CPU seconds (the machine is shared), same inputs for both.

Usage: python bench/bench_effective_noise.py [--quick | --curves-only]
"""

import argparse
import logging
import time

import numpy as np

logging.getLogger().setLevel(logging.ERROR)

from dp_accounting.pld import accountant as pld_accountant  # noqa: E402
from dp_accounting.pld import common  # noqa: E402

from dpsampling.papers import raisa as en  # noqa: E402

DELTA = 1e-5
# (ε, T, q): every ε and T of Fig. 1 (T > 1) and small / middle / large q, Latin-square style
POINTS = [(0.125, 10, 1e-3), (1.0, 10, 0.03), (4.0, 10, 0.5),
          (0.125, 100, 0.03), (1.0, 100, 0.5), (4.0, 100, 1e-3),
          (0.125, 1000, 0.5), (1.0, 1000, 1e-3), (4.0, 1000, 0.03)]
CURVES = [(4.0, 10), (1.0, 100), (0.125, 1000)]
REL_TOLS = (1e-3, 1e-4, 1e-5)


def cpu(f, *a, **k):
    from dpsampling.engine import accountant, pld

    pld.composed.cache_clear()
    pld.one_step.cache_clear()
    accountant._poisson_curve.cache_clear()
    t = time.process_time()
    v = f(*a, **k)
    return v, time.process_time() - t


def authors(eps, steps, q):
    return pld_accountant.get_smallest_subsampled_gaussian_noise(
        common.DifferentialPrivacyParameters(eps, DELTA), steps, sampling_prob=q)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="three points, rel_tol 1e-3 only, no curves")
    ap.add_argument("--curves-only", action="store_true", help="only the pipeline-mode (curve) comparison")
    args = ap.parse_args()
    if not args.curves_only:
        points_part(args)
    if not args.quick:
        curves_part()


def points_part(args):
    points, rel_tols = (POINTS[::4], REL_TOLS[:1]) if args.quick else (POINTS, REL_TOLS)
    print(f"δ={DELTA:g}; CPU seconds; err = |σ/σ_ref - 1|, σ_ref = ours at rel_tol=1e-6")
    print(f"{'ε':>6} {'T':>5} {'q':>6} | {'ref σ':>10} {'ref est':>8} | {'authors':>7} {'err':>8} {'d':>8} | "
          + " | ".join(f"ours {r:.0e}: {'t':>5} {'err':>8}" for r in rel_tols))
    tot_a, tot_o, err_a, err_o = 0.0, {r: 0.0 for r in rel_tols}, [], {r: [] for r in rel_tols}
    for eps, steps, q in points:
        ref = en.calibrate_sigma_pld(eps, DELTA, q=q, steps=steps, rel_tol=1e-6)
        s_a, t_a = cpu(authors, eps, steps, q)
        tot_a += t_a
        err_a.append(abs(s_a / ref.value - 1))
        cells = []
        for r in rel_tols:
            res, t_o = cpu(en.calibrate_sigma_pld, eps, DELTA, q=q, steps=steps, rel_tol=r)
            tot_o[r] += t_o
            err_o[r].append(abs(res.value / ref.value - 1))
            cells.append(f"ours {r:.0e}: {t_o:5.2f} {err_o[r][-1]:8.1e}")
        print(f"{eps:6g} {steps:5d} {q:6g} | {ref.value:10.6g} {ref.accuracy['est_rel_error']:8.1e} | "
              f"{t_a:7.2f} {err_a[-1]:8.1e} {min(1e-3, 0.1 * eps / steps):8.2e} | " + " | ".join(cells), flush=True)
    print(f"\nauthors' method: {tot_a:.1f} s CPU for {len(points)} points, max err {max(err_a):.1e}, "
          f"median err {np.median(err_a):.1e}")
    for r in rel_tols:
        print(f"ours cold, rel_tol={r:.0e}: {tot_o[r]:.1f} s CPU (ratio {tot_a / tot_o[r]:.1f}x), "
              f"max err {max(err_o[r]):.1e}, median err {np.median(err_o[r]):.1e}"
              f"{'  <- at least the authors accuracy' if max(err_o[r]) <= max(err_a) else ''}")


def curves_part():
    """Pipeline mode at equal accuracy: per curve, the loosest rel_tol whose max error is at most the authors'."""
    print("\npipeline mode: warm-started 100-q curves, q = logspace(-3, 0, 100), amortised per σ; the authors'"
          " method and the reference on every 20th q of the same curve (5 points per curve)")
    qs = np.logspace(-3, 0, 100)
    sample = np.arange(0, 99, 20)
    tot_a, tot_o = 0.0, 0.0
    for eps, steps in CURVES:
        refs = [en.calibrate_sigma_pld(eps, DELTA, q=qs[i], steps=steps, rel_tol=1e-7).value for i in sample]
        t_a, e_a = 0.0, []
        for i, ref in zip(sample, refs):
            s_a, t = cpu(authors, eps, steps, qs[i])
            t_a += t
            e_a.append(abs(s_a / ref - 1))
        t_a /= len(sample)
        for r in (1e-3, 1e-4, 1e-5, 1e-6):
            res, t = cpu(en.sigma_curve, eps, DELTA, qs, steps, rel_tol=r)
            n = sum(x.kind == "upper" for x in res)
            ev = np.mean([x.accuracy["pld_evaluations"] for x in res if x.kind == "upper"])
            e_o = [abs(res[i].value / ref - 1) for i, ref in zip(sample, refs)]
            equal = max(e_o) <= max(e_a)
            print(f"  ε={eps:g} T={steps:5d} rel_tol={r:.0e}: ours {t / n:.3f} s per σ ({ev:.1f} PLD evaluations), "
                  f"max err {max(e_o):.1e} | authors {t_a:.2f} s per σ, max err {max(e_a):.1e} | "
                  f"ratio {t_a / (t / n):.0f}x{'  <- at least the authors accuracy' if equal else ''}", flush=True)
            if equal:
                tot_a, tot_o = tot_a + t_a, tot_o + t / n
                break
    print(f"at equal accuracy (per curve the loosest rel_tol that matches the authors' max error): "
          f"authors {tot_a:.2f} s vs ours {tot_o:.3f} s per σ summed over the curves: {tot_a / tot_o:.0f}x")


if __name__ == "__main__":
    main()
