"""Study: below which δ does dp_accounting's *pessimistic* PLD stop being an upper bound?

Not a speed benchmark: it measures where ``RELIABLE_DELTA_FLOOR`` (dpsampling/engine/result.py)
must sit.  For a handful of Poisson-subsampled Gaussian settings (σ, q, T) and ε values whose true
δ spans 1e-14 .. 1e-7, it compares the pessimistic PLD δ at discretisations 1e-3, 1e-4, 1e-5 (and the
value :func:`dpsampling.engine.accountant.delta` reports, which picks d itself) with the φ
accountant's certified interval [lo, hi] (dpsampling.engine.cf, error bound certified there) and, if
installed, prv_accountant's upper bound.  A row "VIOLATES" when pessimistic PLD < lo: the PLD is then
provably not an upper bound.  The printout ends with the largest violating δ; the floor is set at
least 5× above it.

Run:  python bench/study_pld_floor.py            (≈ 2-4 min on one core)
"""

from __future__ import annotations

import math

import numpy as np

from dpsampling.engine import accountant, cf, pld

SETTINGS = [  # (σ, q, T): the setting where the problem was found, and neighbours a user meets
    (0.8, 1e-3, 1000),
    (0.8, 1e-2, 100),
    (1.0, 1e-2, 1000),
    (2.0, 0.1, 100),
]
DISCRETIZATIONS = (1e-3, 1e-4, 1e-5)
DELTA_RANGE = (1e-14, 1e-7)


def _prv(sigma, q, steps, eps):
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        return math.nan
    prv = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)
    acc = PRVAccountant(prvs=[prv], max_self_compositions=[steps], eps_error=1e-3, delta_error=1e-15)
    return float(acc.compute_delta(eps, [steps])[2])


def _eps_grid(sigma, q, steps):
    """ε values whose φ-accountant δ lies in DELTA_RANGE, about 2 per decade."""
    out = []
    for e in np.linspace(0.25, 12.0, 24):
        v = cf.accounting_delta(float(e), sigma, q, steps)["value"]
        if DELTA_RANGE[0] <= v <= DELTA_RANGE[1]:
            out.append((float(e), v))
    keep, last = [], None
    for e, v in out:  # thin to ~2 per decade of δ
        if last is None or math.log10(last) - math.log10(v) >= 0.5:
            keep.append(e)
            last = v
    return keep


def main():
    worst, worst_abs = 0.0, [0.0]
    print(f"{'sigma':>5} {'q':>6} {'T':>5} {'eps':>6} {'phi_lo':>11} {'phi_hi':>11} {'prv_up':>11} "
          + " ".join(f"{'pess d=' + format(d, 'g'):>12}" for d in DISCRETIZATIONS)
          + f" {'accountant':>11} {'min pess/lo':>11} {'max lo-pess':>11}")
    for sigma, q, steps in SETTINGS:
        for eps in _eps_grid(sigma, q, steps):
            r = cf.accounting_delta(eps, sigma, q, steps)
            lo, hi = r["lower"], r["upper"]
            pess = [float(pld.delta(eps, sigma, q, steps, "add_remove", True, d)) for d in DISCRETIZATIONS]
            acc = accountant.delta(eps, sigma=sigma, q=q, total_steps=steps).upper
            ratio = min(pess + [acc]) / lo
            deficit = lo - min(pess + [acc])  # > 0: the PLD is below the certified truth by this much
            worst_abs[0] = max(worst_abs[0], deficit)
            bad = [p for p in pess + [acc] if p < lo]
            if bad:
                worst = max(worst, hi)
            print(f"{sigma:5g} {q:6g} {steps:5d} {eps:6.3f} {lo:11.4e} {hi:11.4e} {_prv(sigma, q, steps, eps):11.4e} "
                  + " ".join(f"{p:12.4e}" for p in pess) + f" {acc:11.4e} {ratio:11.6f} {deficit:11.3e}"
                  + ("  VIOLATES" if bad else ""), flush=True)
    print(f"largest absolute shortfall lo - pess over all rows: {worst_abs[0]:.3e}")
    print(f"largest true δ (φ upper end) at which a pessimistic PLD fell below the φ lower end: {worst:.3e}")


if __name__ == "__main__":
    main()
