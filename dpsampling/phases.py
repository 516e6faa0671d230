"""A run of several phases (``dpsampling.phases.epsilon(phases, delta)``, ``delta(phases, epsilon)``, :class:`Phase`):
:mod:`dpsampling.samplers.phases`, public here."""

from dpsampling.samplers.phases import Phase, delta, epsilon

__all__ = ["Phase", "delta", "epsilon"]
