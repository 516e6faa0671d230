"""ε after every epoch of one run: :func:`epsilon_per_epoch` (a plain stand-in that asks :func:`account` per epoch)."""

from __future__ import annotations

_DONE: dict = {}


def epsilon_per_epoch(sampler, delta, *, sigma, steps, epochs, q=None, force=False, **options):
    """ε(δ) after epochs 1..``epochs``: a list of AccountingResult, the e-th equal to ``account(sampler, "epsilon",
    delta, sigma=sigma, steps=steps, epochs=e, q=q, force=force, **options)`` (each answer kept for later calls)."""
    from dpsampling.samplers import account

    key = (sampler, delta, sigma, steps, q, tuple(sorted(options.items())))
    done = _DONE.setdefault(key, [])
    while len(done) < epochs:
        done.append(account(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=len(done) + 1, q=q,
                            force=force, **options))
    return done[:epochs]
