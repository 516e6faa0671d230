"""Sampling without replacement (WOR): fixed batch size b, sampling rate q = b/n.

Dominating pairs under add/remove neighbours (Lebeda et al. 2024, Prop. 9): the add and remove
curves are exactly those of Poisson subsampling with sensitivity 2, i.e. Poisson at σ/2; the engine
applies this (:func:`dpsampling.engine.accountant._poisson_sigma`).  Bounds: as for Poisson
(``upper`` pessimistic PLD / RDP, ``lower`` optimistic PLD), since the curves are equal.
"""

from __future__ import annotations

from functools import partial

from . import poisson

NAME = "wor"
BOUNDS = ("upper", "lower")

delta = partial(poisson.delta, _sampler=NAME)
epsilon = partial(poisson.epsilon, _sampler=NAME)
sigma = partial(poisson.sigma, _sampler=NAME)


# --------------------------------------------------------------------------- description (dpsampling.samplers.spec)
SPEC = poisson._spec(NAME, "sampling without replacement: a fixed batch of b = q·n records",
                     "Poisson's add pair at σ/2 (sensitivity 2)", "Poisson's remove pair at σ/2 (sensitivity 2)",
                     delta, epsilon, sigma)
