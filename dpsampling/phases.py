"""A run of several phases (``dpsampling.phases.epsilon(phases, delta)``, ``delta(phases, epsilon)``,
``sigma(phases, epsilon, delta, scale="all" | i)``, :class:`Phase`): :mod:`dpsampling.samplers.phases` and
:mod:`dpsampling.samplers.phases_sigma`, public here."""

from dpsampling.samplers.phases import Phase, delta, epsilon
from dpsampling.samplers.phases_sigma import sigma

__all__ = ["Phase", "delta", "epsilon", "sigma"]
