"""Thin adapter over dp_accounting's privacy loss distributions (PLD).

dp_accounting is the trusted engine; this module only (a) builds and caches
the T-fold composed PLD of the Poisson subsampled Gaussian, and (b) exposes one
neighbouring direction at a time.

Directions follow dp_accounting and Lebeda et al. Prop. 9 / Zhu et al. Thm 11:
``remove`` is (M(D ∪ {x}), M(D)) = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)) and
``add`` is the reverse pair.  dp_accounting 0.6 keeps the two directions in the
private attributes ``_pmf_remove`` / ``_pmf_add`` and exposes only their
maximum publicly; reading one direction therefore needs the private attribute.
``tests/test_pld.py`` checks that the max of the two equals the public value,
so a change inside dp_accounting would fail loudly rather than silently.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# Below this, PLD δ values are dominated by truncated tail mass and rounding
# (measured: δ non-monotone in σ, pessimistic PLD above RDP's bound).
UNRELIABLE_DELTA = 1e-12


@lru_cache(maxsize=6)
def composed(sigma: float, q: float, steps: int, pessimistic: bool, discretization: float):
    """dp_accounting PLD of ``steps`` compositions of the q-subsampled Gaussian (sensitivity 1)."""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    pld = pldlib.from_gaussian_mechanism(
        float(sigma),
        sensitivity=1.0,
        pessimistic_estimate=bool(pessimistic),
        value_discretization_interval=float(discretization),
        sampling_prob=float(q),
        # connect-the-dots exists only for pessimistic estimates in dp_accounting 0.6;
        # optimistic estimates use privacy buckets (much looser for large T).
        use_connect_dots=bool(pessimistic),
    )
    return pld.self_compose(int(steps)) if steps > 1 else pld


def direction_pmfs(pld, direction: str):
    """The dp_accounting pmfs that make up ``direction`` (max is taken over them)."""
    pmfs = {"remove": [pld._pmf_remove], "add": [pld._pmf_add]}  # noqa: SLF001 - see module docstring
    pmfs["add_remove"] = pmfs["remove"] + pmfs["add"]
    return pmfs[direction]


def delta(eps, sigma, q, steps, direction, pessimistic, discretization):
    """δ(ε) from the composed PLD; ``eps`` may be an array."""
    pld = composed(float(sigma), float(q), int(steps), bool(pessimistic), float(discretization))
    vals = [np.asarray(p.get_delta_for_epsilon(eps), dtype=float) for p in direction_pmfs(pld, direction)]
    return np.maximum.reduce(vals)


def epsilon(delta_target, sigma, q, steps, direction, pessimistic, discretization):
    """ε(δ) from the composed PLD (inf when δ is below the infinity mass)."""
    pld = composed(float(sigma), float(q), int(steps), bool(pessimistic), float(discretization))
    return max(float(p.get_epsilon_for_delta(float(delta_target))) for p in direction_pmfs(pld, direction))
