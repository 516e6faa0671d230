"""Poisson vs sampling without replacement (Lebeda et al. 2024, §6): derived quantities.

Both are computed from the samplers' σ calibration (:func:`dpsampling.samplers.poisson.sigma`,
:func:`dpsampling.samplers.wor.sigma`, one epoch of ``steps`` steps).
"""

from __future__ import annotations

import dataclasses
import math

from dpsampling.engine import accountant
from dpsampling.engine.validation import check_choice
from dpsampling.samplers import poisson, wor

_SAMPLERS = {"poisson": poisson, "wor": wor}


def calibrate_sigma(epsilon, delta, *, q, steps, sampler="poisson", rel_tol=None, method=None):
    """Smallest σ (an upper bound on it) for ``steps`` steps at rate q under ``sampler`` (poisson / wor);
    ``method="pld"``: the same sufficient σ (``value``) without the certified interval's lower end."""
    check_choice("sampler", sampler, tuple(_SAMPLERS))
    return _SAMPLERS[sampler].sigma(epsilon, delta, q=q, steps=steps, rel_tol=rel_tol, method=method)


def sigma_curve(epsilon, delta, qs, *, steps, sampler="poisson", direction="add_remove", rel_tol=None):
    """:func:`calibrate_sigma` for many sampling rates at once (Fig. 2's lines): the engine's warm-started
    Poisson curve (:func:`dpsampling.engine.accountant.calibrate_sigma_curve`), times
    :data:`dpsampling.samplers.wor.SENSITIVITY` for WOR (σ_WOR = 2σ_Poisson exactly, Prop. 9)."""
    check_choice("sampler", sampler, tuple(_SAMPLERS))
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else rel_tol
    res = accountant.calibrate_sigma_curve(epsilon, delta, qs, total_steps=steps, direction=direction,
                                           rel_tol=rel_tol)
    if sampler == "poisson":
        return res
    return [dataclasses.replace(r, value=r.value * wor.SENSITIVITY, upper=r.upper * wor.SENSITIVITY) for r in res]


def loglog_slope(epsilon, delta, q, steps, sampler="poisson", rel_step=1.2, rel_tol=1e-3):
    """d log σ / d log γ of the calibrated σ(γ) (central difference, factor ``rel_step``); only the sufficient σ
    (``value``) enters, so the certified interval's lower end is not computed (method pld: the same value)."""
    hi = min(1.0, q * rel_step)
    lo = hi / rel_step**2
    s_hi = calibrate_sigma(epsilon, delta, q=hi, steps=steps, sampler=sampler, rel_tol=rel_tol, method="pld").value
    s_lo = calibrate_sigma(epsilon, delta, q=lo, steps=steps, sampler=sampler, rel_tol=rel_tol, method="pld").value
    return math.log(s_hi / s_lo) / math.log(hi / lo)


def transition_sigma(epsilon, delta, steps, sampler="poisson", q_range=(1e-4, 1.0), slope=0.5, iters=7):
    """σ at the transition of Lebeda Fig. 2 between the flat and the linear regime.

    The paper describes the transition only in words ("when σ is slightly less
    than 1 for Poisson"); we make it precise as the sampling rate γ* at which the
    log-log slope of σ(γ) crosses ``slope`` (0.5: halfway between flat, 0, and
    linear, 1), found by bisection on log γ, and return σ(γ*) (the sufficient σ, ``value``: method pld, which gives
    it without the certified interval's lower end).
    """
    a, b = math.log(q_range[0]), math.log(q_range[1] / 1.2)
    for _ in range(iters):
        m = 0.5 * (a + b)
        if loglog_slope(epsilon, delta, math.exp(m), steps, sampler) < slope:
            a = m
        else:
            b = m
    q_star = math.exp(0.5 * (a + b))
    return calibrate_sigma(epsilon, delta, q=q_star, steps=steps, sampler=sampler, method="pld").value


def wor_to_poisson_sigma_ratio(epsilon, delta, q, steps):
    """σ_WOR / σ_Poisson at equal (ε, δ, γ, T): 2 by Lebeda Prop. 9."""
    wor = calibrate_sigma(epsilon, delta, q=q, steps=steps, sampler="wor").value
    poi = calibrate_sigma(epsilon, delta, q=q, steps=steps, sampler="poisson").value
    return wor / poi
