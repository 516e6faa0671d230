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

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the import edges, for type checkers and scripts/_codehash.py (it reads every import statement)
    import dpsampling.engine.subsampled_gaussian  # noqa: F401

    from . import conjecture63, fig1, one_step  # noqa: F401

# What the package re-exports, by module.  Imported on first use (PEP 562 ``__getattr__`` below), not here:
# ``fig1`` brings dp_accounting (slow to import), which the one-step and Conjecture 6.3 functions do not need
# (e.g. the pipeline's parse-time check of the a_minus_b grids calls only ``paper_grid``).
_EXPORTS = {
    "dpsampling.engine.subsampled_gaussian": (
        "delta_one_step", "hockey_stick_one_step", "log_delta_one_step", "log_norm_interval", "sigma_one_step",
    ),
    ".conjecture63": (
        "a_minus_b_exact", "a_minus_b_grid", "a_minus_b_grid_bruteforce", "a_minus_b_table", "conjecture63_corner",
        "conjecture63_critical_c", "conjecture63_holds", "conjecture63_max_a_minus_b", "conjecture63_violated",
        "max_a_minus_b_decreasing_in_eps", "max_delta_gap", "paper_grid", "sigma_grid", "sigma_grid_log_step",
        "theorem62_fails_near_delta", "theorem62_sufficient_condition_holds",
    ),
    ".fig1": (
        "calibrate_sigma_pld", "corollary54_ratio_decreasing_in_steps", "corollary54_ratio_increasing_in_eps",
        "corollary54_ratio_pld", "sigma_curve", "sigma_eff_check", "sigma_eff_decreasing_pld", "sigma_q1",
    ),
    ".one_step": (
        "FIG1_EPSILONS", "a_minus_b", "corollary54_ratio", "corollary54_ratio_one_step", "effective_noise",
        "is_monotone", "lemma61_max_rel_error", "lemma61_sigma_prime_erf", "monotonicity_violations",
        "sigma_eff_above_sigma1_one_step", "sigma_eff_decreasing_one_step", "sigma_eff_one_step", "sigma_eff_slope",
        "sigma_prime", "sigma_prime_at", "theorem62_log_margin",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value

