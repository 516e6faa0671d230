"""Closed forms the allocation tests' quadrature references share: for Y lognormal with E Y = 1 and log-sd s
(log Y ~ N(−s²/2, s²)), the Black–Scholes call E[(Y − k)_+] and put E[(k − Y)_+]."""

import math

from scipy import special


def call(k, s):
    """E[(Y − k)_+]."""
    if k <= 0:
        return 1 - k
    d1 = (-math.log(k) + s * s / 2) / s
    return special.ndtr(d1) - k * special.ndtr(d1 - s)


def put(k, s):
    """E[(k − Y)_+]."""
    if k <= 0:
        return 0.0
    d1 = (-math.log(k) + s * s / 2) / s
    return k * special.ndtr(s - d1) - special.ndtr(-d1)
