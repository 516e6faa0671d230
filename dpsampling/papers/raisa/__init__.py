"""Effective noise of Poisson-subsampled DP-SGD (Räisä, Jälkö & Honkela 2024).

"Subsampling is not Magic" studies the effective noise standard deviation
``sigma_eff = sigma(q, T) / q`` (their Eq. (25)) of the Poisson subsampled
Gaussian mechanism with sensitivity 1.  This package holds the single-step
(T = 1) mathematics of their §6 in closed form, plus the pure helpers of §5
(Corollary 5.4) that the pipeline combines with PLD calibrations for T > 1.

Layout: :mod:`.one_step` (Lemma 6.1, Theorem 6.2, a − b, Fig. 1 at T = 1, Corollary 5.4 helpers),
:mod:`.conjecture63` (Fig. 2 / Conjecture 6.3), :mod:`.fig1` (Fig. 1 for T > 1 by PLD calibration).
The one-step closed form of Eq. (45) and σ(q) by root finding live in the engine
(:mod:`dpsampling.engine.subsampled_gaussian`) and are re-exported here.
"""

from dpsampling.engine.subsampled_gaussian import (
    delta_one_step, hockey_stick_one_step, log_delta_one_step, log_norm_interval, sigma_one_step,
)

from .conjecture63 import (
    a_minus_b_exact, a_minus_b_grid, a_minus_b_grid_bruteforce, a_minus_b_table, conjecture63_corner,
    conjecture63_critical_c, conjecture63_holds, conjecture63_max_a_minus_b, conjecture63_violated,
    max_a_minus_b_decreasing_in_eps, max_delta_gap, paper_grid, sigma_grid, sigma_grid_log_step,
    theorem62_fails_near_delta, theorem62_sufficient_condition_holds,
)
from .fig1 import (
    calibrate_sigma_pld, corollary54_ratio_decreasing_in_steps, corollary54_ratio_increasing_in_eps,
    corollary54_ratio_pld, sigma_curve, sigma_eff_check, sigma_eff_decreasing_pld, sigma_q1,
)
from .one_step import (
    FIG1_EPSILONS, a_minus_b, corollary54_ratio, corollary54_ratio_one_step, effective_noise, is_monotone,
    lemma61_max_rel_error, lemma61_sigma_prime_erf, monotonicity_violations, sigma_eff_above_sigma1_one_step,
    sigma_eff_decreasing_one_step, sigma_eff_one_step, sigma_eff_slope, sigma_prime, sigma_prime_at,
    theorem62_log_margin,
)


__all__ = [
    "FIG1_EPSILONS",
    "a_minus_b",
    "a_minus_b_exact",
    "a_minus_b_grid",
    "a_minus_b_grid_bruteforce",
    "a_minus_b_table",
    "calibrate_sigma_pld",
    "conjecture63_corner",
    "conjecture63_critical_c",
    "conjecture63_holds",
    "conjecture63_max_a_minus_b",
    "conjecture63_violated",
    "corollary54_ratio",
    "corollary54_ratio_decreasing_in_steps",
    "corollary54_ratio_increasing_in_eps",
    "corollary54_ratio_one_step",
    "corollary54_ratio_pld",
    "delta_one_step",
    "effective_noise",
    "is_monotone",
    "lemma61_max_rel_error",
    "lemma61_sigma_prime_erf",
    "log_delta_one_step",
    "log_norm_interval",
    "max_a_minus_b_decreasing_in_eps",
    "max_delta_gap",
    "monotonicity_violations",
    "paper_grid",
    "sigma_curve",
    "sigma_eff_above_sigma1_one_step",
    "sigma_eff_check",
    "sigma_eff_decreasing_one_step",
    "sigma_eff_decreasing_pld",
    "sigma_eff_one_step",
    "sigma_eff_slope",
    "sigma_grid",
    "sigma_grid_log_step",
    "sigma_one_step",
    "sigma_prime",
    "sigma_prime_at",
    "hockey_stick_one_step",
    "sigma_q1",
    "theorem62_fails_near_delta",
    "theorem62_log_margin",
    "theorem62_sufficient_condition_holds",
]

