"""ε after every epoch of one run: :func:`epsilon_per_epoch`.

The answer after epoch e is the one :func:`dpsampling.samplers.account` gives for ``epochs=e`` at the sampler's
default method (the same AccountingResult, so each end keeps its side and its method; ``value`` the safe end).  A sampler whose spec has
``epsilon_epochs`` answers the first and the last epoch alone (account's answer, or its own where it is account's
bit for bit: ``last=None``) and the epochs between at once, given the last epoch's answer, sharing work between
them (poisson and wor: one transform per end at the last epoch's discretisation, :mod:`dpsampling.engine.epochs`;
balls_and_bins: one epoch's laws composed epoch by epoch); any other sampler is asked once per epoch.  Answers are
kept in a bounded module-level LRU cache keyed by the run's parameters and the epoch, so asking again with one more
epoch (a training loop's accountant after every epoch) computes only the new epoch.
"""

from __future__ import annotations

from collections import OrderedDict


#: (run key, epoch) -> AccountingResult, least recently used first
_CACHE: OrderedDict = OrderedDict()
#: at most this many kept answers (a few hundred bytes each)
CACHE_SIZE = 8192


def clear_cache():
    """Forget every kept answer (and the engine's kept one-step PLDs)."""
    _CACHE.clear()
    from dpsampling.engine import lazy

    lazy.module("dpsampling.engine.epochs").clear_caches()


def _check_epochs(epochs):
    from dpsampling.engine.validation import check_int

    return check_int("epochs", epochs, 1)


def _key(sampler, delta, sigma, steps, q, options):
    try:
        key = (sampler, repr(delta), repr(sigma), repr(steps), repr(q), tuple(sorted(
            (k, repr(v)) for k, v in options.items())))
        hash(key)
    except TypeError:
        return None
    return key


def epsilon_per_epoch(sampler, delta, *, sigma, steps, epochs, q=None, force=False, **options) -> list:
    """ε(δ) after epochs 1, 2, …, ``epochs`` of ``steps`` steps each: a list of AccountingResult, the e-th equal to
    ``account(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=e, q=q, **options)``.

    ``options`` are :func:`dpsampling.samplers.account`'s (the sampler's options, ``direction``, ``method``,
    ``bound``); the spec's ``epsilon_epochs`` is used at the default method and bound, every other question is
    asked epoch by epoch.  The cost limit applies to the last epoch's question (``force=True`` runs beyond).
    Answers are cached (module docstring)."""
    from . import _method, _one_batch_per_epoch, _settle, account, get_spec
    from .spec import Question, check_cost

    spec = get_spec(sampler)
    epochs = _check_epochs(epochs)
    options = dict(options)
    method = _method(spec, options.get("method"))
    key = _key(sampler, delta, sigma, steps, q, options)
    missing = [e for e in range(1, epochs + 1) if key is None or (key, e) not in _CACHE]
    found = {}
    if missing:
        found = _compute(spec, method, delta, sigma, steps, q, force, missing, options, account, _one_batch_per_epoch,
                         Question, check_cost)
        found = {e: _settle(r, spec, method) for e, r in found.items()}  # the one result model, as account's
    out = []
    for e in range(1, epochs + 1):
        if e in found:
            r = found[e]
            if key is not None:
                _CACHE[(key, e)] = r
        else:
            r = _CACHE[(key, e)]
            _CACHE.move_to_end((key, e))
        out.append(r)
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def _compute(spec, method, delta, sigma, steps, q, force, missing, options, account, one_batch, Question, check_cost):
    """{epoch: result} for the epochs ``missing``: the spec's ``epsilon_epochs`` where it applies, else account."""
    shared = (spec.epsilon_epochs is not None and method == spec.default_method and sigma != 0
              and options.get("bound") in (None, spec.default_bound(method))
              and one_batch(spec, "epsilon", delta, sigma, steps, 1, q, None, method) is None)
    if not shared:
        return {e: account(spec.name, "epsilon", delta, sigma=sigma, steps=steps, epochs=e, q=q, force=force,
                           **options) for e in missing}
    from . import _check_question, _checks

    # the one check of the question (account's), then the spec's own per-epoch answer takes it as checked
    kw = {k: v for k, v in options.items() if k not in ("method", "bound", "direction")}
    direction = options.get("direction", "add_remove")
    sigma, steps, _, q, delta = _checks.as_numbers(sigma, steps, max(missing), q, delta)
    delta, sigma, steps, _, q, kw = _check_question(spec, "epsilon", delta, sigma, steps, max(missing), q, method,
                                                    options.get("bound"), direction, kw)
    kw["direction"] = direction
    check_cost(spec, Question("epsilon", sigma=sigma, steps=steps, epochs=max(missing), q=q, target=delta,
                              method=method, options=kw), force=force)
    last = max(missing)

    def alone(e):  # the spec's own answer where it gives account's (last=None asks for that), else account's
        own = spec.epsilon_epochs(delta, sigma=sigma, steps=steps, epochs=[e], q=q, last_epoch=e, last=None, **kw)
        own = own[0] if own else None
        return own if own is not None else account(spec.name, "epsilon", delta, sigma=sigma, steps=steps, epochs=e,
                                                   q=q, force=True, **options)

    # the last epoch, and the first (one epoch: `dpsampling epsilon --epochs 1`), each asked alone
    found = {e: alone(e) for e in sorted({last, *([1] if 1 in missing else [])})}
    rest = [e for e in missing if e not in found]
    if rest:
        shared = spec.epsilon_epochs(delta, sigma=sigma, steps=steps, epochs=rest, q=q, last_epoch=last,
                                     last=found[last], **kw)
        shared = [None] * len(rest) if shared is None else shared  # None: nothing shared there, ask account
        shared = [r if r is not None else account(spec.name, "epsilon", delta, sigma=sigma, steps=steps, epochs=e,
                                                  q=q, force=True, **options) for e, r in zip(rest, shared)]
        found.update(zip(rest, shared))
    return found
