"""Mechanism descriptors of the φ accountant (all with sensitivity 1) and its accuracy error.

Zhu, Dong & Wang (AISTATS 2022), Table 2: Gaussian, Laplace, randomized response, and Poisson
subsampling of a Gaussian or randomized-response base (Theorem 11).  Descriptors are frozen
dataclasses so that equal mechanisms merge into one (descriptor, count) term of a composition.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError
from ..validation import check_delta, check_positive, check_rate, one_number


class CFAccuracyError(RuntimeError):
    """The φ-inversion cannot certify the requested error budget."""


# --------------------------------------------------------------------------
# Mechanism descriptors (all with sensitivity 1)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Gaussian:
    """Gaussian mechanism N(f(D), σ²), sensitivity 1 (Table 2, Lemma 35)."""

    sigma: float

    def __post_init__(self):
        check_positive("sigma", self.sigma)


@dataclass(frozen=True)
class Laplace:
    """Laplace mechanism f(D) + Lap(b), sensitivity 1 (Table 2, Lemma 34)."""

    b: float

    def __post_init__(self):
        check_positive("b", self.b)


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomized response, truthful with probability p (Table 2, Lemma 33)."""

    p: float

    def __post_init__(self):
        check_delta(one_number("p", self.p), "p")  # (the rule of a number in (0, 1))


@dataclass(frozen=True)
class PoissonSubsampled:
    """Poisson subsampling with sampling rate ``q`` (Zhu's γ) of a base mechanism (Theorem 11).

    Supported bases: Gaussian (φ by output-space quadrature) and
    RandomizedResponse (exact, finite support).
    """

    base: object
    q: float

    def __post_init__(self):
        if not isinstance(self.base, (Gaussian, RandomizedResponse)):
            raise ParameterError("base", "Gaussian or RandomizedResponse", self.base,
                                 message="base must be Gaussian or RandomizedResponse "
                                         f"(got {type(self.base).__name__}; Laplace is not supported)")
        check_rate(one_number("q", self.q))
