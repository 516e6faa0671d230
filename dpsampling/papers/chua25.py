"""Chua et al. AISTATS 2025 (Balls-and-Bins Sampling for DP-SGD): the paper's claims.

The sampler's accounting (certified PLD bracket, Monte Carlo, the max-statistic lower bound) lives in
:mod:`dpsampling.samplers.balls_and_bins`; this module holds the paper's predicates.
"""

from __future__ import annotations

from dpsampling.engine import accountant
from dpsampling.samplers import balls_and_bins


def not_worse_than_poisson(delta=1e-6, sigma=1.0, steps=100, epochs=1):
    """Chua et al. 2025 abstract: balls-and-bins has "similar-or-better privacy amplification as
    compared to Poisson subsampling in practical regimes".  True iff the certified balls-and-bins
    upper bound on ε(δ) is ≤ the Poisson (q = 1/T, T·E steps) PLD lower bound, i.e. better for certain.
    """
    up = balls_and_bins.epsilon(delta, sigma=sigma, steps=steps, epochs=epochs, bound="upper").value
    poisson_lower = accountant.epsilon(delta, sigma=sigma, q=1.0 / steps, total_steps=steps * epochs,
                                       direction="add_remove", method="pld", bound="lower", rel_tol=1e-3).value
    return bool(up <= poisson_lower)
