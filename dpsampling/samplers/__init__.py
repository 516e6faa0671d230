"""Batch samplers: one module per sampler, one registry, one entry point :func:`account` for all of them.

Each module (``poisson``, ``wor``, ``shuffle``, ``deterministic``, ``balls_and_bins``) states its dominating
pair and answers ``delta(ε)``, ``epsilon(δ)`` and ``sigma(ε, δ)`` (or says in a ValueError why it cannot),
and ends with ``SPEC`` (:class:`dpsampling.samplers.spec.SamplerSpec`): what it is, as data.  A sampler
joins by one :func:`register` line below; :data:`SAMPLERS`, :func:`account`, the command line, ``audit``
and the pipeline read the registry.  This layer imports the engine only.
"""

from __future__ import annotations

import dataclasses

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.validation import check_choice

from . import _checks  # the input layer of account: array-library numbers, σ = 0
from .spec import TIME_LIMIT, Question, SamplerSpec, check_cost

#: name -> SamplerSpec, in registration order (the order the CLI and the audit list them)
_REGISTRY: dict[str, SamplerSpec] = {}
QUANTITIES = ("epsilon", "delta", "sigma")
#: every batch sampler, in the order the CLI lists them (kept equal to the registry by register/unregister)
SAMPLERS: tuple = ()
#: options every sampler accepts: a sampler without the option checks the value against the first sampler that has
#: it and ignores it (``rel_tol``: the PLD accuracy; samplers without a PLD to refine have nothing to tighten)
SHARED_OPTIONS = ("rel_tol",)
#: the largest σ any question takes: beyond it every accountant underflows (ε, δ ≈ 0)
MAX_SIGMA = 1e6
#: the largest ε the σ calibration takes: larger ε calls for σ → 0, which no PLD resolves
MAX_SIGMA_EPSILON = 100.0


def register(spec: SamplerSpec) -> SamplerSpec:
    """Add a sampler (its name must be new); returns the spec."""
    global SAMPLERS
    if spec.name in _REGISTRY:
        raise ParameterError('spec', 'a sampler whose name is new', spec.name,
                             message=f"sampler {spec.name!r} is already registered")
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
    return _REGISTRY[check_choice("sampler", name, tuple(_REGISTRY))]


def specs() -> tuple:
    """Every registered SamplerSpec, in order."""
    return tuple(_REGISTRY.values())


def with_role(role: str) -> SamplerSpec | None:
    """The first registered sampler whose ``spec.role`` is ``role`` (``spec.ROLES``), or None."""
    return next((s for s in _REGISTRY.values() if s.role == role), None)


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
            direction="add_remove", force=False, relation=None, **options):
    """ε(δ), δ(ε) or σ(ε, δ) of ``steps·epochs`` steps of DP-SGD under ``sampler``; an AccountingResult.

    ``relation``: the neighbouring relation to answer under (None: the sampler's own, ``spec.relation``); another
    one is answered where an argument covers it, else :class:`.relations.NotCovered` says why
    (:mod:`dpsampling.samplers.relations`).

    ``target`` is δ for ``quantity="epsilon"``, ε for ``"delta"`` and (ε, δ) for ``"sigma"``.
    ``steps`` is the number of steps per epoch, ``epochs`` (integer ≥ 1) the number of epochs.
    ``q`` (sampling rate) is required for samplers with a free rate (``spec.batch`` "rate" or "capped"); samplers
    with one batch per step have q = 1/steps (checked if given).  ``bound=None`` takes the sampler's default bound
    for the method (``spec.bounds[method][0]``), ``method=None`` its default method; what each answer is (its kind,
    its ends and the method of each) is said by the sampler's module and its ``SPEC``.  Every answer is in the one
    result model (:class:`~dpsampling.engine.result.AccountingResult`): ``value`` the safe end (ε, δ: the certified
    upper end; σ: a sufficient σ; None for a one-sided lower answer), ``kind`` exact / interval / upper / lower /
    estimate, ``lower_method``/``upper_method`` the method of each end, ``method`` the selector (the method asked,
    or the sampler's default; None for a sampler without a method choice).  ``bound="lower"`` asks for the lower end:
    it is answered as ``lower`` (with its method) beside the upper end when the method gives both.  σ = 0 is answered exactly
    (:func:`._checks.non_private`), and one step per epoch of a one-batch-per-step sampler is the Gaussian at
    σ/√epochs (:func:`_one_batch_per_epoch`).  Every result carries ``spec.relation``.

    ``options``: the sampler's options (``spec.options``; e.g. ``rel_tol``, ``discretization``,
    ``accuracy``, ``mode``).  A question whose predicted time (``spec.cost``) exceeds
    :data:`~dpsampling.samplers.spec.TIME_LIMIT` seconds raises :class:`~dpsampling.samplers.spec.CostError`
    unless ``force=True``.  Bad input raises ParameterError (a ValueError) naming the parameter.
    """
    spec = get_spec(sampler)
    if relation is not None and relation != spec.relation:
        from . import relations

        return relations.account(sampler, quantity, target, relation=relation, sigma=sigma, steps=steps,
                                 epochs=epochs, q=q, bound=bound, method=method, direction=direction, force=force,
                                 **options)
    check_choice("quantity", quantity, QUANTITIES)
    method = _method(spec, method)
    sigma, steps, epochs, q, target = _checks.as_numbers(sigma, steps, epochs, q, target)
    target, sigma, steps, epochs, q, options = _check_question(spec, quantity, target, sigma, steps, epochs, q, method,
                                                               bound, direction, options)
    baseline = _checks.non_private(spec, quantity, target, sigma=sigma, steps=steps, epochs=epochs, q=q, bound=bound,
                                   direction=direction)  # σ = 0, answered exactly
    if baseline is not None:
        return _settle(baseline, spec, method)
    one = _one_batch_per_epoch(spec, quantity, target, sigma, steps, epochs, q, bound, method)
    if one is not None:
        return _settle(one, spec, method)
    check_cost(spec, Question(quantity, sigma=sigma, steps=steps, epochs=epochs, q=q, target=target, method=method,
                              options=options), force=force)
    kw = dict(steps=steps, epochs=epochs, q=q, direction=direction, **options)
    if method is not None:
        kw["method"] = method
    if quantity == "sigma":
        eps, dlt = target
        return _settle(spec.sigma(eps, dlt, bound=bound, **kw), spec, method)
    if method in spec.bracket_methods:
        kw["both_ends"] = True
    bound = spec.default_bound(method) if bound is None else bound
    return _settle(getattr(spec, quantity)(target, sigma=sigma, bound=bound, **kw), spec, method)


def epsilon(sampler, delta, *, sigma, steps, epochs=1, q=None, **kw):
    """ε(δ) of ``sampler`` (``dpsampling epsilon``): :func:`account` with quantity "epsilon"."""
    return account(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, q=q, **kw)


def delta(sampler, epsilon, *, sigma, steps, epochs=1, q=None, **kw):
    """δ(ε) of ``sampler`` (``dpsampling delta``): :func:`account` with quantity "delta"."""
    return account(sampler, "delta", epsilon, sigma=sigma, steps=steps, epochs=epochs, q=q, **kw)


def sigma(sampler, epsilon, delta, *, steps, epochs=1, q=None, **kw):
    """The σ that certifies (ε, δ) under ``sampler`` (``dpsampling sigma``): :func:`account` with quantity "sigma"."""
    return account(sampler, "sigma", (epsilon, delta), steps=steps, epochs=epochs, q=q, **kw)


def _settle(result, spec, method):
    """``result`` in the one result model (:func:`dpsampling.engine.result.settle`): ``value`` the safe end, ``kind``
    one of the KINDS, ``lower_method``/``upper_method`` the method of each end, ``method`` the selector asked
    (``method``, the sampler's default when none was asked; None for a sampler without a method choice),
    ``upper_best_known`` from the spec, and the neighbouring relation its sampler's analysis holds under
    (``spec.relation``)."""
    from dpsampling.engine.result import AccountingResult, settle

    if not isinstance(result, AccountingResult):
        return result
    best = spec.upper_best_known and result.kind != "exact" and result.upper is not None
    return dataclasses.replace(settle(result, method=method, upper_best_known=best), relation=spec.relation)


def _check_question(spec, quantity, target, sigma, steps, epochs, q, method, bound, direction, options):
    """The one check of a question (ParameterError naming the parameter), made before any accountant is imported;
    the sampler modules and the engine take its answer as checked.  δ a single number in (0, 1), ε one ≥ 0 (and at
    most :data:`MAX_SIGMA_EPSILON` for a σ question), σ one in [0, :data:`MAX_SIGMA`] (required unless the quantity
    is σ), steps and epochs integers ≥ 1 (a bool is not a number), q in (0, 1] and given for a sampler with a free
    rate, 1/steps if given for one with one batch per step, a direction and a bound the sampler gives, a method that
    answers the quantity, and options that are the sampler's, apply to this method and quantity and are in range.
    Returns (target, σ, steps, epochs, q, the options to pass on: a shared option the sampler lacks, or that does not
    apply here, is checked and dropped)."""
    from dpsampling.engine import validation

    if quantity == "sigma":
        if not (isinstance(target, (tuple, list)) and len(target) == 2):
            raise ParameterError("target", "(epsilon, delta)", target)
        eps, dlt = target
    else:
        eps, dlt = (target, None) if quantity == "delta" else (None, target)
    if dlt is not None:
        dlt = float(validation.check_delta(_checks.one_number("delta", dlt)))
    if eps is not None:
        eps = float(validation.check_epsilon(_checks.one_number("epsilon", eps)))
        if quantity == "sigma" and eps > MAX_SIGMA_EPSILON:
            raise ParameterError("epsilon", f"in [0, {MAX_SIGMA_EPSILON:g}] for the sigma question", eps,
                                 message=f"epsilon must be in [0, {MAX_SIGMA_EPSILON:g}] for the sigma question (got "
                                         f"{eps!r}): larger ε calls for σ → 0, which no PLD resolves")
    target = (eps, dlt) if quantity == "sigma" else (eps if quantity == "delta" else dlt)
    steps = validation.check_int("steps", steps, 1)
    epochs = validation.check_int("epochs", epochs, 1)
    if sigma is not None or quantity != "sigma":
        sigma = _checks.one_number("sigma", sigma)
        if sigma is None or not 0 <= validation.check_epsilon(sigma, "sigma") <= MAX_SIGMA:
            raise ParameterError("sigma", f"a number in [0, {MAX_SIGMA:g}]", sigma,
                                 message=None if sigma is None else f"sigma must be in [0, {MAX_SIGMA:g}] (got "
                                 f"{sigma!r}); beyond, every accountant underflows (ε, δ ≈ 0)")
        sigma = float(sigma)
    if q is None and spec.batch in ("rate", "capped"):
        raise ParameterError("q", f"in (0, 1] (the sampling rate of sampler {spec.name})", None)
    if q is not None:
        q = float(validation.check_rate(_checks.one_number("q", q)))
        if spec.batch == "one_per_step":
            _checks.check_one_epoch(q, steps, spec.name)
    validation.check_choice("direction", direction, spec.directions)
    bounds = spec.sigma_bounds if quantity == "sigma" else spec.bounds[method]
    if bound is not None and bound not in bounds:
        raise ParameterError("bound", "one of " + ", ".join(bounds), bound,
                             message=f"bound must be {' or '.join(map(repr, bounds))} for the {quantity} question of "
                                     f"sampler '{spec.name}'{'' if method is None else f' with method {method}'} "
                                     f"(got {bound!r})")
    if not spec.answers(quantity, method):
        answering = [m for m in spec.methods if spec.answers(quantity, m)]
        raise ParameterError("method", f"one of {', '.join(answering)} for the {quantity} question", method,
                             message=f"method {method} does not answer the {quantity} question of sampler {spec.name} "
                                     f"(it gives an estimate or a lower bound, which cannot certify a σ); method must "
                                     f"be one of {', '.join(answering)} (got {method!r})")
    return target, sigma, steps, epochs, q, _check_options(spec, quantity, method, options)


def _check_options(spec, quantity, method, options) -> dict:
    """The options of a question, checked against the sampler's own (:class:`~.spec.Option`) and the shared ones
    (:data:`SHARED_OPTIONS`): returns those to pass on; an option of another sampler, or one that does not apply to
    this method and quantity, raises ParameterError naming it."""
    out = {}
    for name, value in options.items():
        own = spec.option(name)
        if name in SHARED_OPTIONS and value is not None and (own is None or not own.applies(quantity, method)):
            other = next((o for o in (s_.option(name) for s_ in specs()) if o is not None and o.cli), None)
            if other is not None:
                other.check(value)
            continue
        if own is None:
            if value is not None and any(s_.option(name) is not None for s_ in specs()):
                names = " or ".join(s_.name for s_ in specs() if s_.option(name) is not None)
                raise ParameterError(name, f"unset for sampler {spec.name} (it applies to sampler {names})", value)
            if value is None and any(s_.option(name) is not None for s_ in specs()):
                continue  # another sampler's option, unset
            raise ParameterError(name, f"not an option of sampler '{spec.name}'", value,
                                 message=f"{name} is not an option of sampler '{spec.name}'")
        if value is not None and not own.applies(quantity, method):
            where = []
            if own.methods is not None:
                where.append(f"method {' or '.join(own.methods)}")
            if own.quantities is not None:
                where.append(f"the {' or '.join(own.quantities)} question")
            raise ParameterError(name, f"unset here (it applies to {' with '.join(where)})", value)
        out[name] = own.check(value)
    for own in spec.options:
        if own.required and own.applies(quantity, method) and options.get(own.name) is None:
            raise ParameterError(own.name, f"{own.allowed} (required for sampler {spec.name})", None)
    return out


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
    return deterministic.one_batch_per_epoch(quantity, target, sigma, epochs)


from . import balls_and_bins, deterministic, poisson, shuffle, truncated_poisson, wor  # noqa: E402  (they import .spec)

register(poisson.SPEC)
register(wor.SPEC)
register(shuffle.SPEC)
register(deterministic.SPEC)
register(balls_and_bins.SPEC)
register(truncated_poisson.SPEC)

__all__ = ["MAX_SIGMA", "MAX_SIGMA_EPSILON", "QUANTITIES", "SAMPLERS", "SHARED_OPTIONS", "TIME_LIMIT", "account",
           "balls_and_bins", "deterministic", "get_spec", "poisson",
           "question", "register", "shuffle", "specs", "unregister", "with_role", "wor", "epsilon", "delta", "sigma"]
