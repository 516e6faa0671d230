"""Batch samplers: one module per sampler, one registry, one entry point :func:`account` for all of them.

Each module (``poisson``, ``wor``, ``shuffle``, ``deterministic``, ``balls_and_bins``) states its dominating
pair and answers ``delta(ε)``, ``epsilon(δ)`` and ``sigma(ε, δ)`` (or says in a ValueError why it cannot),
and ends with ``SPEC`` (:class:`dpsampling.samplers.spec.SamplerSpec`): what it is, as data.  A sampler
joins by one :func:`register` line below; :data:`SAMPLERS`, :func:`account`, the command line, ``audit``
and the pipeline read the registry.  This layer imports the engine only.
"""

from __future__ import annotations

from dpsampling.engine.errors import ParameterError

from . import _checks  # the input layer of account: array-library numbers, σ = 0
from .spec import TIME_LIMIT, Question, SamplerSpec, check_cost

#: name -> SamplerSpec, in registration order (the order the CLI and the audit list them)
_REGISTRY: dict[str, SamplerSpec] = {}
QUANTITIES = ("epsilon", "delta", "sigma")
#: every batch sampler, in the order the CLI lists them (kept equal to the registry by register/unregister)
SAMPLERS: tuple = ()


def register(spec: SamplerSpec) -> SamplerSpec:
    """Add a sampler (its name must be new); returns the spec."""
    global SAMPLERS
    if spec.name in _REGISTRY:
        raise ValueError(f"sampler {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    SAMPLERS = tuple(_REGISTRY)
    return spec


def unregister(name: str) -> None:
    """Remove a sampler from the registry (tests register toy samplers and remove them)."""
    global SAMPLERS
    del _REGISTRY[name]
    SAMPLERS = tuple(_REGISTRY)


def get_spec(name: str) -> SamplerSpec:
    """The spec of sampler ``name`` (ParameterError naming ``sampler`` if there is none)."""
    if name not in _REGISTRY:
        raise ParameterError("sampler", "one of " + ", ".join(_REGISTRY), name)
    return _REGISTRY[name]


def specs() -> tuple:
    """Every registered SamplerSpec, in order."""
    return tuple(_REGISTRY.values())


def _method(spec, method):
    if not spec.methods:
        if method is not None:
            raise ParameterError("method", "unset", method, message=f"method does not apply to sampler "
                                 f"'{spec.name}' (got {method!r}); leave it unset")
        return None
    method = spec.default_method if method is None else method
    if method not in spec.methods:
        raise ParameterError("method", "one of " + ", ".join(spec.methods), method,
                             message=f"method must be one of {', '.join(spec.methods)} for sampler '{spec.name}' "
                                     f"(got {method!r})")
    return method


def question(sampler, quantity, target, *, sigma=None, steps, epochs=1, q=None, method=None, **options) -> Question:
    """The :class:`Question` the cost model of ``sampler`` sees for these arguments of :func:`account`."""
    spec = get_spec(sampler)
    return Question(quantity, sigma=sigma, steps=steps, epochs=epochs, q=q, target=target,
                    method=_method(spec, method), options=options)


def account(sampler, quantity, target, *, sigma=None, steps, epochs=1, q=None, bound=None, method=None,
            direction="add_remove", force=False, **options):
    """ε(δ), δ(ε) or σ(ε, δ) of ``steps·epochs`` steps of DP-SGD under ``sampler``; an AccountingResult.

    ``target`` is δ for ``quantity="epsilon"``, ε for ``"delta"`` and (ε, δ) for ``"sigma"``.
    ``steps`` is the number of steps per epoch, ``epochs`` (integer ≥ 1) the number of epochs.
    ``q`` (sampling rate) is required for samplers with a free rate (``spec.batch == "rate"``: poisson,
    wor); samplers with one batch per step (shuffle, deterministic, balls_and_bins) have q = 1/steps
    (checked if given).  ``bound=None`` takes the sampler's default bound for the method
    (``spec.bounds[method][0]``: upper for poisson/wor/balls_and_bins pld, lower for shuffle and
    balls_and_bins max_statistic, exact for deterministic); ``method=None`` its default method.

    Per sampler (its module and ``SPEC`` say more):

    * poisson / wor: steps·epochs steps at q; by default (``method`` None or "interval") the certified
      interval of :mod:`dpsampling.engine.poisson_interval` (value = upper end, kind ``upper``; each end's
      method in ``accuracy["lower_method"]``/``["upper_method"]``; σ: ``lower`` a provably insufficient σ);
      ``method`` pld/rdp/analytic/cf: the accountant's answer, kind = ``bound``.  q = 1: exact.
    * deterministic: exact, the Gaussian at σ/√E (E = 1: today's one-epoch value).
    * shuffle: kind ``lower`` with ``upper`` = the deterministic value (Chua Thm 4.1), i.e. the interval
      [lower, upper]; option ``mode`` "dynamic" (default) or "persistent".  σ: only ``bound="lower"``.
    * balls_and_bins: ``method`` "pld" (default; certified PLD_accounting bracket with both ends filled),
      "montecarlo" (kind ``estimate`` with its band; options mc_samples, mc_seed, mc_failure_prob,
      mc_half_width) or "max_statistic" (Chua et al. lower bound, kind ``lower``).

    One step per epoch of a sampler with one batch per step (shuffle, balls_and_bins, deterministic), at its
    default method: exact, the Gaussian at σ/√epochs (:func:`_one_batch_per_epoch`).

    ``options``: the sampler's options (``spec.options``; e.g. ``rel_tol``, ``discretization``,
    ``accuracy``, ``mode``).  A question whose predicted time (``spec.cost``) exceeds
    :data:`~dpsampling.samplers.spec.TIME_LIMIT` seconds raises :class:`~dpsampling.samplers.spec.CostError`
    unless ``force=True``.  Bad input raises ParameterError (a ValueError) naming the parameter.
    """
    spec = get_spec(sampler)
    if quantity not in QUANTITIES:
        raise ParameterError("quantity", "one of " + ", ".join(QUANTITIES), quantity)
    method = _method(spec, method)
    # -- input layer (samplers._checks): array-library numbers as Python numbers; σ = 0 answered exactly
    sigma, steps, epochs, q, target = _checks.as_numbers(sigma, steps, epochs, q, target)
    baseline = _checks.non_private(spec, quantity, target, sigma=sigma, steps=steps, epochs=epochs, q=q, bound=bound,
                                   direction=direction)
    if baseline is not None:
        return baseline
    # --
    one = _one_batch_per_epoch(spec, quantity, target, sigma, steps, epochs, q, bound, method)
    if one is not None:
        return one
    for name, value in options.items():
        opt = spec.option(name)
        if opt is not None:
            opt.check(value)
    check_cost(spec, Question(quantity, sigma=sigma, steps=steps, epochs=epochs, q=q, target=target, method=method,
                              options=options), force=force)
    kw = dict(steps=steps, epochs=epochs, q=q, direction=direction, **options)
    if method is not None:
        kw["method"] = method
    if quantity == "sigma":
        if bound is not None and bound not in spec.sigma_bounds:
            raise ParameterError("bound", "one of " + ", ".join(spec.sigma_bounds), bound,
                                 message=f"bound must be {' or '.join(map(repr, spec.sigma_bounds))} for sigma with "
                                         f"sampler '{spec.name}' (got {bound!r})")
        eps, dlt = target
        return spec.sigma(eps, dlt, bound=bound, **kw)
    if method in spec.bracket_methods:
        kw["both_ends"] = True
    bound = spec.default_bound(method) if bound is None else bound
    return getattr(spec, quantity)(target, sigma=sigma, bound=bound, **kw)


def _one_batch_per_epoch(spec, quantity, target, sigma, steps, epochs, q, bound, method):
    """A sampler with one batch per step (``spec.batch == "one_per_step"``: shuffle, balls_and_bins,
    deterministic) with one step per epoch, at its default method, exactly: the one batch of each epoch is the
    whole dataset (a permutation or a random bin assignment puts every record in it), so each epoch is the
    Gaussian mechanism with sensitivity 1 and the run is the Gaussian at σ/√epochs (:mod:`.deterministic`,
    closed form: :func:`.deterministic.one_batch_per_epoch`), kind ``exact``.  None otherwise."""
    if spec.batch != "one_per_step" or spec.audit_kind == "exact" or isinstance(steps, bool) or steps != 1:
        return None
    if method != spec.default_method:
        return None
    from ._checks import check_epochs, check_one_epoch

    check_epochs(epochs, spec.name, multi_epoch=True)
    if q is not None:
        check_one_epoch(q, 1, spec.name)
    if bound not in (None, "upper", "lower", "exact"):
        raise ValueError(f"bound must be one of upper, lower, exact (got {bound!r})")
    return deterministic.one_batch_per_epoch(quantity, target, sigma, epochs)


from . import balls_and_bins, deterministic, poisson, shuffle, wor  # noqa: E402  (they import .spec)

register(poisson.SPEC)
register(wor.SPEC)
register(shuffle.SPEC)
register(deterministic.SPEC)
register(balls_and_bins.SPEC)

__all__ = ["QUANTITIES", "SAMPLERS", "TIME_LIMIT", "account", "balls_and_bins", "deterministic", "get_spec", "poisson",
           "question", "register", "shuffle", "specs", "unregister", "wor"]
