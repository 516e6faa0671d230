"""Study (issue 15): what the T-th power of the spectrum costs in a PLD self-composition, and what a cheaper one
would change.

Not adopted: :func:`dpsampling.engine.pld._self_compose` follows dp_accounting bit for bit, whose
``fft.fft(probs, n) ** T`` is numpy's complex power, i.e. glibc ``cpow`` = cexp(T·clog(z)) per entry for T ≥ 100
(~100 ns an entry: 5x an FFT of the same length, about half the CPU of a σ calibration).  The alternative
measured here, a real FFT (half the spectrum) and the power by repeated squaring (log2 T vectorised
multiplications), moves δ by ~1e-14..1e-11 relative (the order of the FFT's own rounding, raised to the T-th power
in both), so values would stay far inside every est_rel_error, but the composed pmfs would no longer be
dp_accounting's bit for bit (tests/engine/test_pld.py asserts that).  Whether to trade that for the speed is the
lead's call; this prints the numbers it needs.

Prints, CPU seconds: single δ evaluations (dp_accounting's power vs the alternative, max relative δ difference)
and the Räisä Fig. 1 curve ε = 0.5, T = 1e4 (100 q, the pipeline's most expensive), with the max σ difference.

Run:  OPENBLAS_NUM_THREADS=1 python bench/study_compose_power.py      (≈ 1 min)
"""

from __future__ import annotations

import math
import time

import numpy as np
from dp_accounting.pld import pld_pmf
from scipy import fft

from dpsampling.engine import accountant, pld

DP_ACCOUNTING = pld._self_compose


def power(z, n):
    """z**n for an integer n ≥ 1 by repeated squaring, elementwise."""
    out, base = None, z.copy()
    while n:
        if n & 1:
            out = base.copy() if out is None else out * base
        n >>= 1
        if n:
            base *= base
    return out


def self_compose_rfft_squaring(pmf, num_times, tail_mass_truncation=pld.TAIL_MASS_TRUNCATION):
    """:func:`pld._self_compose` with rfft/irfft and :func:`power` in place of fft/ifft and ``**``."""
    if num_times == 1 or isinstance(pmf, pld_pmf.SparsePLDPmf):
        return DP_ACCOUNTING(pmf, num_times, tail_mass_truncation)
    probs = pmf._probs
    lower, upper = pld._self_convolve_bounds(probs, num_times, tail_mass_truncation)
    out_len = upper - lower + 1
    fast_len = fft.next_fast_len(max(out_len, len(probs)), real=True)
    out = fft.irfft(power(fft.rfft(probs, fast_len), num_times), fast_len)
    start = lower % fast_len
    out = np.concatenate((out[start:start + out_len], out[:max(0, out_len - (fast_len - start))]))
    inf_mass = tail_mass_truncation - math.expm1(num_times * math.log1p(-pmf._infinity_mass))
    return pld_pmf.DensePLDPmf(pmf._discretization, pmf._lower_loss * num_times + lower,
                               out, inf_mass, pmf._pessimistic_estimate)


def timed(compose, f, *args):
    pld._self_compose = compose
    pld.composed.cache_clear()
    accountant._poisson_curve.cache_clear()
    t = time.process_time()
    v = f(*args)
    return v, time.process_time() - t


def main():
    eps = 1.0
    print("single δ(ε = 1) evaluations (composition included), CPU s: dp_accounting's power -> rfft + squaring, "
          "max |δ/δ_ref - 1|")
    for s, q, steps, d in [(1.0, 0.1, 1000, 1e-4), (0.8, 0.01, 10_000, 1e-4), (0.7, 3e-3, 10_000, 1e-5)]:
        args = (eps, s, q, steps, "add_remove", True, d)
        ref, t_ref = timed(DP_ACCOUNTING, pld.delta, *args)
        alt, t_alt = timed(self_compose_rfft_squaring, pld.delta, *args)
        print(f"  σ={s} q={q:g} T={steps} d={d:g}: {t_ref:.2f} -> {t_alt:.2f}, {np.max(np.abs(alt / ref - 1)):.1e}")
    qs = [float(x) for x in np.logspace(-3, 0, 100)]

    def curve():
        return [r.value for r in accountant.calibrate_sigma_curve(0.5, 1e-5, qs, total_steps=10_000)]

    ref, t_ref = timed(DP_ACCOUNTING, curve)
    alt, t_alt = timed(self_compose_rfft_squaring, curve)
    print(f"Räisä Fig. 1 curve ε=0.5, T=1e4 (100 q): {t_ref:.1f} -> {t_alt:.1f} s CPU ({t_ref / t_alt:.1f}x), "
          f"max |σ/σ_ref - 1| = {max(abs(a / r - 1) for a, r in zip(alt, ref)):.1e} (calibration window 1e-5)")
    pld._self_compose = DP_ACCOUNTING


if __name__ == "__main__":
    main()
