"""Poisson subsampling with rate q (each record joins each batch independently with probability q).

Dominating pairs (Zhu et al. 2022 Thm 11; Lebeda et al. 2024 Prop. 9), one step, sensitivity 1:
remove = ((1-q)N(0,σ²) + qN(1,σ²), N(0,σ²)), add = (N(0,σ²), (1-q)N(0,σ²) + qN(1,σ²)); the run is
their T-fold composition, accounted by :mod:`dpsampling.engine.accountant` (dp_accounting PLD/RDP).
Bounds: ``upper`` (pessimistic PLD: connect-the-dots discretisation rounds privacy loss up; RDP is an
upper bound by conversion) and ``lower`` (optimistic PLD rounds it down); ``exact`` at q = 1.
One epoch of Chua et al. (q = 1/T): :func:`poisson_epoch_result`.
"""

from __future__ import annotations

from dpsampling.engine import accountant
from dpsampling.engine.result import AccountingResult

from ._checks import check_epochs, check_quantity, check_sigma_steps

NAME = "poisson"
BOUNDS = ("upper", "lower")


def poisson_epoch_epsilon(delta, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """ε_P(δ) for one epoch of Poisson batching: q = 1/T, T steps (Chua §3, footnote 3).

    A thin wrapper: ``dpsampling.engine.accountant.epsilon(delta, sigma=σ, q=1/T,
    steps=T, sampler="poisson", direction="add_remove", ...)`` — dp_accounting
    PLD (``bound="upper"``: pessimistic, ``"lower"``: optimistic; max over add
    and remove) or RDP (default orders; upper only).  ``discretization`` is
    the PLD value discretisation (None: the accountant picks it from its
    accuracy target, which can take minutes at T ≥ 1e4).  Returns a float.
    """
    r = poisson_epoch_result("epsilon", delta, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)



def poisson_epoch_delta(epsilon, sigma, steps, method="pld", bound="upper", discretization=1e-4):
    """δ_P(ε) for one epoch of Poisson batching (q = 1/T); see :func:`poisson_epoch_epsilon`.

    PLD values below RELIABLE_DELTA_FLOOR (1e-10) are not reliable upper
    bounds (the accountant flags them ``delta_below_1e-10`` and reports the φ accountant's certified value).
    """
    r = poisson_epoch_result("delta", epsilon, sigma, steps, method=method, bound=bound, discretization=discretization)
    return float(r.value)



def poisson_epoch_result(quantity, target, sigma, steps, *, method="pld", bound="upper", rel_tol=None,
                         discretization=None, finest_discretization=None):
    """ε_P(δ) or δ_P(ε) for one epoch of Poisson batching (q = 1/T, Chua §3 footnote 3), as a result.

    Delegates to :func:`dpsampling.engine.accountant.epsilon` / ``delta`` (dp_accounting
    PLD or RDP, max over add and remove).  PLD: a fixed ``discretization`` is
    used as is; ``None`` refines it to ``rel_tol``.  ``finest_discretization``
    (PLD, automatic only) stops the refinement there (flag ``not_converged``
    with the estimated error if ``rel_tol`` is not reached); only the
    pessimistic PLD is refined, the optimistic one (``lower``) is evaluated at
    the final discretisation, as in the accountant.
    """
    target = check_quantity(quantity, target)
    _, steps = check_sigma_steps(sigma, steps)
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ValueError(f"rel_tol must be in (0, 0.1] (got {rel_tol!r})")
    finest = None if finest_discretization is None else float(finest_discretization)  # the accountant checks it
    q, s = 1.0 / steps, float(sigma)
    call = accountant.epsilon if quantity == "epsilon" else accountant.delta
    kw = {}
    if method == "pld":
        kw = {"discretization": None if discretization is None else float(discretization)}
        if finest is not None:
            kw["finest_discretization"] = finest
    return call(target, sigma=s, q=q, steps=steps, sampler="poisson", direction="add_remove",
                method=method, bound=bound, rel_tol=rel_tol, **kw)



def _kw(q, steps, epochs, sampler, method, rel_tol, options):
    check_epochs(epochs, sampler, multi_epoch=True)
    if q is None:
        raise ValueError(f"q (the sampling rate) is required for sampler '{sampler}'")
    rel_tol = accountant.DEFAULT_REL_TOL if rel_tol is None else float(rel_tol)
    if not (0 < rel_tol <= 0.1):
        raise ValueError(f"rel_tol must be in (0, 0.1] (got {rel_tol!r})")
    kw = dict(q=q, steps=steps * epochs, sampler=sampler, method="pld" if method is None else method,
              rel_tol=rel_tol)
    for k in ("discretization", "finest_discretization"):
        if options.get(k) is not None:
            kw[k] = options.pop(k)
        options.pop(k, None)
    if options:
        raise ValueError(f"{sorted(options)[0]} is not an option of sampler '{sampler}'")
    return kw


def delta(epsilon, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
          rel_tol=None, _sampler=NAME, **options) -> AccountingResult:
    """δ(ε) after steps·epochs steps: :func:`dpsampling.engine.accountant.delta`."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    return accountant.delta(epsilon, sigma=sigma, bound=bound, direction=direction, **kw)


def epsilon(delta, *, sigma, steps, epochs=1, q=None, bound="upper", method=None, direction="add_remove",
            rel_tol=None, _sampler=NAME, **options) -> AccountingResult:
    """ε(δ) after steps·epochs steps: :func:`dpsampling.engine.accountant.epsilon`."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    return accountant.epsilon(delta, sigma=sigma, bound=bound, direction=direction, **kw)


def sigma(epsilon, delta, *, steps, epochs=1, q=None, method=None, direction="add_remove", rel_tol=None,
          _sampler=NAME, **options) -> AccountingResult:
    """Smallest σ (an upper bound on it): :func:`dpsampling.engine.accountant.calibrate_sigma`."""
    kw = _kw(q, steps, epochs, _sampler, method, rel_tol, options)
    return accountant.calibrate_sigma(epsilon, delta, direction=direction, **kw)
