"""dp_accounting's ``TruncatedSubsampledGaussianDpEvent`` as a certified upper end.

dp_accounting's ``PLDAccountant`` builds the event's one-step pessimistic PLD
(``PrivacyLossDistribution.from_truncated_subsampled_gaussian_mechanism`` at its default discretisation 1e-4),
self-composes it by FFT and reads ε(δ) / δ(ε) in floats: its value is an upper bound of the one-step pair up to the
composition's rounding and the reading's float error, which it does not bound (issue 38: at a cap ≥ n the value sat
5.6e-5 below ours).  Here the same one-step PLD (dp_accounting's own, so the same pair) is composed by
:func:`.pld.self_compose` (dp_accounting's composition, the same floats), the composition's rounding is bounded as for
the Poisson upper end (:func:`.pld.composition_error`, :func:`.pld.rounding_at`) and the reading is an upper one by
construction (:func:`.reading.epsilon_for_delta_upper`, :func:`.reading.delta_upper`): the result is at least
dp_accounting's value up to float error, and an upper bound whenever the one-step PLD is one (the module's
premise: dp_accounting's analysis of the event, arXiv 2508.15089).
"""

from __future__ import annotations

import math
from functools import lru_cache

from dp_accounting.pld import pld_pmf as _pmflib

from . import pld
from .reading import delta_upper, epsilon_for_delta_upper

#: dp_accounting's PLDAccountant default value discretisation
DISCRETIZATION = 1e-4


@lru_cache(maxsize=8)
def _composed(dataset_size: int, q: float, max_batch_size: int, sigma: float, total_steps: int,
              discretization: float = DISCRETIZATION):
    """((composed pmf, err2, flat), …) over both directions, as :func:`.pld._upper_pmfs`: the δ error the pmf may
    carry at ε is at most ``rounding_at(pmf, err2, ε) + flat``."""
    from dp_accounting.pld import privacy_loss_distribution as _pldlib

    one = _pldlib.from_truncated_subsampled_gaussian_mechanism(
        dataset_size=int(dataset_size), sampling_probability=float(q), truncated_batch_size=int(max_batch_size),
        noise_multiplier=float(sigma), value_discretization_interval=float(discretization))
    comp = pld.self_compose(one, int(total_steps))
    out = []
    for one_pmf, pmf in zip(pld.direction_pmfs(one, "add_remove"), pld.direction_pmfs(comp, "add_remove")):
        if total_steps == 1:
            out.append((pmf, 0.0, 0.0))
        elif isinstance(pmf, _pmflib.DensePLDPmf):
            dense = pld._dense_unless_sparse_result(one_pmf, int(total_steps))  # noqa: SLF001
            dense = dense if isinstance(dense, _pmflib.DensePLDPmf) else dense.to_dense_pmf()
            out.append((pmf, pld.composition_error(dense._probs, int(total_steps), pmf._probs), 0.0))  # noqa: SLF001
        else:  # a composition that stayed sparse: dp_accounting's direct sums (pld._upper_pmfs' flat bound)
            size, t = one_pmf.size, int(total_steps)
            out.append((pmf, 0.0, 1.01 * (t - 1) * (size**t + t) * 2.0**-53))
    return tuple(out)


def certified_epsilon(delta, *, sigma, q, dataset_size, max_batch_size, total_steps) -> float:
    """An upper bound on the event's ε(δ): per direction ε₁ read for an upper bound at δ − E(ε₀) (ε₀ the float
    reading at δ, E the rounding bound, nonincreasing in ε; the larger of ε₀, ε₁ kept), max over the directions
    (:func:`.pld.certified_epsilon`'s argument)."""
    out = []
    for pmf, err2, flat in _composed(int(dataset_size), float(q), int(max_batch_size), float(sigma),
                                     int(total_steps)):
        reader = pld.EpsilonReader(pmf)
        eps0 = float(reader(float(delta)))
        err = (pld.rounding_at(pmf, err2, eps0) if err2 else 0.0) + flat if math.isfinite(eps0) else 0.0
        target = float(delta) - err if math.isfinite(eps0) else 0.0
        out.append(max(eps0, epsilon_for_delta_upper(pmf, target, reader.read)) if target > 0 else math.inf)
    return max(out)


def certified_delta(epsilon, *, sigma, q, dataset_size, max_batch_size, total_steps) -> float:
    """An upper bound on the event's δ(ε): per direction the proven upper reading (:func:`.reading.delta_upper`)
    plus the rounding bound, rounded up; max over the directions."""
    out = []
    for pmf, err2, flat in _composed(int(dataset_size), float(q), int(max_batch_size), float(sigma),
                                     int(total_steps)):
        err = (pld.rounding_at(pmf, err2, float(epsilon)) if err2 else 0.0) + flat
        out.append(math.nextafter(float(delta_upper(pmf, float(epsilon))) + err, math.inf))
    return min(1.0, max(out))
