"""Benchmark: the cost of one query, Poisson ε(δ), against the number of steps T and the target accuracy.

Ours: ``dpsampling.samplers.account("poisson", "epsilon", δ, ...)`` with ``rel_tol`` = the target relative
accuracy: the pessimistic PLD refined (d = 1e-2, 1e-3, ...) until the estimated relative error is ≤ rel_tol,
plus the optimistic PLD at the final d (the ``lower`` column) -- everything one CLI query computes.

Peers, same inputs and accuracy:
* dp_accounting 0.6's own ``PLDAccountant`` (add_remove: the max of both directions, like ours) on
  ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)``, at the discretisation our query
  ended at (``value_discretization_interval`` = our final d): one pessimistic PLD, no refinement and no
  optimistic PLD, i.e. the least work dp_accounting needs for that accuracy once d is known (a user of
  dp_accounting alone would also have to find d).  Its ε equals our upper bound (checked, printed).
  The accountant first composes an identity PLD with the result (one more FFT convolution, ~20% of its
  time, and ε moves in the 15th digit), so the table also gives dp_accounting's bare PLD API on the same
  inputs (``from_gaussian_mechanism(σ, value_discretization_interval=d, sampling_prob=q).self_compose(T)
  .get_epsilon_for_delta(δ)``, the ε we report bit for bit), the strictest peer: column ``PLD api``.
  (Measured at T = 1e7, d = 1e-5: the accountant's ε is 2.405299, the bare API's and ours 2.404072; the
  identity composition's re-truncation moves it by 5e-4 relative, so the ``=`` check prints False there.)
* prv-accountant (Gopi et al. 2021) where it applies: it models the *remove* direction only
  (``PoissonSubsampledGaussianMechanism``), so it is compared with our query for ``direction="remove"``, at
  ``eps_error`` = rel_tol · ε (its absolute ε error bound) and ``delta_error`` = δ/1000.
A peer that is not installed is skipped with a message.

Settings: σ = 1, δ = 1e-6, q = 0.4/√T (ε ≈ 1-2 at every T, as in a DP-SGD run whose T grows with the
number of epochs at a fixed noise).  Times are process CPU seconds (best of --repeat, caches cleared),
since the machine may be shared; ratio = ours / peer (≤ 1: ours is cheaper).

Usage: python bench/bench_scaling.py [--steps 1e2 1e3 ...] [--rel-tol 1e-2 1e-3 ...] [--repeat N]
"""

import argparse
import logging
import math
import time

logging.getLogger().setLevel(logging.ERROR)

from dpsampling.engine import pld  # noqa: E402
from dpsampling.samplers import account  # noqa: E402

SIGMA, DELTA = 1.0, 1e-6


def q_for(steps):
    return 0.4 / math.sqrt(steps)


def cpu(f, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        pld.composed.cache_clear()
        t = time.process_time()
        out = f()
        best = min(best, time.process_time() - t)
    return out, best


def ours(steps, rel_tol, direction="add_remove"):
    return account("poisson", "epsilon", DELTA, sigma=SIGMA, steps=steps, q=q_for(steps), rel_tol=rel_tol,
                   direction=direction)


def dp_accounting_peer():
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        print("dp_accounting not installed: its column is skipped")
        return None

    def run(steps, d):
        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q_for(steps), dp_accounting.GaussianDpEvent(SIGMA)), steps)
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=d)
        return acc.compose(event).get_epsilon(DELTA)

    return run


def dp_accounting_pld_api_peer():
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError:
        return None

    def run(steps, d):
        one = privacy_loss_distribution.from_gaussian_mechanism(SIGMA, value_discretization_interval=d,
                                                                sampling_prob=q_for(steps))
        return one.self_compose(steps).get_epsilon_for_delta(DELTA)

    return run


def prv_peer():
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        print("prv-accountant not installed: its column is skipped")
        return None

    def run(steps, eps_error):
        acc = PRVAccountant(prvs=PoissonSubsampledGaussianMechanism(sampling_probability=q_for(steps),
                                                                     noise_multiplier=SIGMA),
                            eps_error=eps_error, delta_error=DELTA / 1000, max_self_compositions=steps)
        return acc.compute_epsilon(delta=DELTA, num_self_compositions=steps)  # (lower, estimate, upper)

    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=float, nargs="+", default=[1e2, 1e3, 1e4, 1e5, 1e6, 1e7])
    ap.add_argument("--rel-tol", type=float, nargs="+", default=[1e-2, 1e-3])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    dpa, api, prv = dp_accounting_peer(), dp_accounting_pld_api_peer(), prv_peer()
    print(f"Poisson ε(δ={DELTA:g}), σ={SIGMA:g}, q=0.4/√T; CPU seconds; ratio = ours/peer")
    print(f"{'T':>8} {'rel_tol':>7} {'ε upper':>9} {'d':>6} | {'ours':>7} {'dp_acc':>7} {'ratio':>6} | "
          f"{'PLD api':>7} {'ratio':>6} | {'ours rm':>7} {'prv rm':>7} {'ratio':>6} | ε dp_acc, PLD api = ours, prv ε")
    worse = []
    for steps in (int(t) for t in args.steps):
        for rel_tol in args.rel_tol:
            res, t_o = cpu(lambda: ours(steps, rel_tol), args.repeat)
            d = res.accuracy["discretization"]
            line = f"{steps:8.0e} {rel_tol:7.0e} {res.value:9.5f} {d:6.0e} | {t_o:7.2f} "
            if dpa:
                eps_p, t_p = cpu(lambda: dpa(steps, d), args.repeat)
                eps_a, t_a = cpu(lambda: api(steps, d), args.repeat)
                line += f"{t_p:7.2f} {t_o / t_p:6.2f} | {t_a:7.2f} {t_o / t_a:6.2f} | "
                worse += [(steps, rel_tol, "dp_accounting")] if t_o > t_p else []
                worse += [(steps, rel_tol, "dp_accounting PLD api")] if t_o > t_a else []
                same = math.isclose(eps_p, res.value, rel_tol=1e-9) and eps_a == res.value
            else:
                line += f"{'-':>7} {'-':>6} | {'-':>7} {'-':>6} | "
                same = None
            if prv:
                rm, t_rm = cpu(lambda: ours(steps, rel_tol, "remove"), args.repeat)
                try:
                    (lo, _est, up), t_v = cpu(lambda: prv(steps, rel_tol * rm.value), args.repeat)
                    line += f"{t_rm:7.2f} {t_v:7.2f} {t_rm / t_v:6.2f} | {same} [{lo:.5f}, {up:.5f}] vs ours rm {rm.value:.5f}"
                    worse += [(steps, rel_tol, "prv-accountant (remove)")] if t_rm > t_v else []
                except Exception as exc:  # noqa: BLE001 - report the peer's failure, keep benchmarking
                    line += f"{t_rm:7.2f} {'fail':>7} {'-':>6} | {same} prv: {type(exc).__name__}: {str(exc)[:60]}"
            print(line, flush=True)
    print("ours costs more than the peer at: " + (", ".join(f"T={s:.0e} rel_tol={r:g} ({p})" for s, r, p in worse)
                                                  or "none"))


if __name__ == "__main__":
    main()
