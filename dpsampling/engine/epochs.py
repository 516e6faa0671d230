"""The certified interval of :mod:`.poisson_interval` after each of several epochs, sharing the one-step PLDs.

An ε(δ) question after E epochs of T steps asks for the T·E-fold composition of the subsampled Gaussian's
one-step pair.  Asked epoch by epoch, most of the work of each question is rebuilding the same one-step pmfs
(the pessimistic connect-the-dots pmf of :func:`.pld.pessimistic_pld` and the dominated pmf of
:func:`.dominated_pld.dominated_pmf`, at each discretisation the refinement visits); their compositions differ
per epoch.  Here the one-step pmfs are built once per (σ, q, discretisation) and kept (:func:`_one_step_upper`,
:func:`_one_step_lower`, bounded LRU caches), and each epoch's composition, its rounding bound, its reading and
the refinement over discretisations are exactly those of :func:`.poisson_interval.epsilon`: the same functions on
the same pmfs, so every epoch's interval is the one :func:`.poisson_interval.epsilon` gives at T·e steps, bit for
bit (``tests/engine/test_epochs.py`` compares them), and each end is valid for the reason given there.
"""

from __future__ import annotations

import math
from functools import lru_cache

from dp_accounting.pld import pld_pmf as _pmflib

from . import dominated_pld, pld, poisson_interval
from .result import RELIABLE_DELTA_FLOOR


@lru_cache(maxsize=16)
def _one_step_upper(sigma: float, q: float, discretization: float):
    """:func:`.pld.pessimistic_pld` (cached; treat as immutable)."""
    return pld.pessimistic_pld(sigma, q, discretization)


@lru_cache(maxsize=32)
def _one_step_lower(sigma: float, q: float, discretization: float, direction: str):
    """:func:`.dominated_pld.dominated_pmf` of one direction (cached; treat as immutable)."""
    return dominated_pld.dominated_pmf(sigma, q, discretization, direction)


@lru_cache(maxsize=4)
def _upper_pmfs(sigma, q, total_steps, direction, discretization):
    """= :func:`.pld._upper_pmfs` (the composed pessimistic pmfs with their rounding bounds), from the cached
    one-step PLD."""
    one = _one_step_upper(sigma, q, discretization)
    comp = pld.self_compose(one, int(total_steps))
    out = []
    for one_pmf, pmf in zip(pld.direction_pmfs(one, direction), pld.direction_pmfs(comp, direction)):
        if total_steps == 1:
            out.append((pmf, 0.0, 0.0))
        elif isinstance(pmf, _pmflib.DensePLDPmf):
            dense = pld._dense_unless_sparse_result(one_pmf, int(total_steps))  # noqa: SLF001
            dense = dense if isinstance(dense, _pmflib.DensePLDPmf) else dense.to_dense_pmf()
            out.append((pmf, pld.composition_error(dense._probs, int(total_steps), pmf._probs), 0.0))  # noqa: SLF001
        else:
            import numpy as np

            size, t = one_pmf.size, int(total_steps)
            out.append((pmf, 0.0, 1.01 * (t - 1) * (size**t + t) * np.finfo(float).eps / 2))
    return tuple(out)


def certified_epsilon(delta, sigma, q, total_steps, direction, discretization):
    """= :func:`.pld.certified_epsilon` (an upper bound on ε(δ)), from the cached one-step PLD."""
    out = []
    for pmf, err2, flat in _upper_pmfs(float(sigma), float(q), int(total_steps), direction, float(discretization)):
        eps0 = float(pld.epsilon_for_delta(pmf, float(delta)))
        target = float(delta) - pld._upper_error(pmf, err2, flat, eps0) if math.isfinite(eps0) else 0.0  # noqa: SLF001
        out.append(float(pld.epsilon_for_delta(pmf, target)) if target > 0 else math.inf)
    return max(out)


@lru_cache(maxsize=4)
def _lower_composed(sigma, q, total_steps, discretization, direction):
    """= :func:`.dominated_pld.composed`, from the cached one-step dominated pmf."""
    return dominated_pld._compose_pmf(_one_step_lower(sigma, q, discretization, direction), int(total_steps))  # noqa: SLF001


def dominated_epsilon(delta, sigma, q, total_steps, direction, discretization):
    """= :func:`.dominated_pld.epsilon` (a lower bound on ε(δ)), from the cached one-step dominated pmf."""
    out = []
    for d in dominated_pld._directions(direction):  # noqa: SLF001
        pmf, err2 = _lower_composed(float(sigma), float(q), int(total_steps), float(discretization), d)
        err_at = dominated_pld._error_at  # noqa: SLF001
        eps0 = float(pld.epsilon_for_delta(pmf, float(delta) + err_at(pmf, err2, total_steps, -math.inf)))
        out.append(max(eps0, float(pld.epsilon_for_delta(pmf, float(delta) + err_at(pmf, err2, total_steps, eps0)))))
    return max(out)


def interval_epsilon_epochs(delta, *, sigma, q, steps, epochs, direction="add_remove", rel_tol=1e-3,
                            finest_discretization=None, discretization=None):
    """:func:`.poisson_interval.epsilon` at ``steps``·e compositions for each e of ``epochs`` (epoch numbers, in
    order): a list of AccountingResult, each the same as that function's (module docstring)."""
    finest = poisson_interval._check_finest(finest_discretization)  # noqa: SLF001
    s, q, dlt = float(sigma), float(q), float(delta)
    out = []
    for e in epochs:
        t = int(steps) * int(e)
        if q == 1.0 or dlt < RELIABLE_DELTA_FLOOR:  # closed form, or the φ accountant alone: nothing to share
            out.append(poisson_interval.epsilon(dlt, sigma=s, q=q, total_steps=t, direction=direction,
                                                rel_tol=rel_tol, finest_discretization=finest_discretization,
                                                discretization=discretization))
            continue
        lo, up, d, widths = poisson_interval._refine(  # noqa: SLF001
            lambda dd, t=t: certified_epsilon(dlt, s, q, t, direction, dd),
            lambda dd, t=t: dominated_epsilon(dlt, s, q, t, direction, dd), rel_tol, finest, discretization)
        out.append(poisson_interval._with_cf(lo, up, d, widths, poisson_interval.cf.accounting_epsilon,  # noqa: SLF001
                                             dlt, s, q, t, direction, rel_tol))
    return out


def clear_caches():
    """Forget the kept one-step pmfs and compositions."""
    for f in (_one_step_upper, _one_step_lower, _upper_pmfs, _lower_composed):
        f.cache_clear()
