"""dpsampling: privacy accounting of DP-SGD under different batch samplers.

The math lives here as pure functions (no file I/O) in three layers that import downward only:
``engine`` (accountants, numerics), ``samplers`` (one module per batch sampler, :func:`account`) and
``papers`` (paper-specific computations); the Snakemake pipeline and the ``dpsampling`` command line
are thin layers on top.  See ARCHITECTURE.md.

The top-level functions ask what the command line's commands ask, sampler first: ``epsilon(sampler, delta, ...)``,
``delta(sampler, epsilon, ...)``, ``sigma(sampler, epsilon, delta, ...)`` (all :func:`dpsampling.samplers.account`),
``audit(dataset_size, batch_size, ...)`` and ``statement(dataset_size, batch_size, ...)``.  They are imported on
first use (this module's ``__getattr__``, the package's one deferred import), so ``import dpsampling`` stays cheap.
"""

__version__ = "0.1.0"

_API = {
    "AccountingResult": ("dpsampling.engine.result", "AccountingResult"),
    "epsilon": ("dpsampling.samplers", "epsilon"),
    "delta": ("dpsampling.samplers", "delta"),
    "sigma": ("dpsampling.samplers", "sigma"),
    "account": ("dpsampling.samplers", "account"),
    "audit": ("dpsampling.auditing", "audit"),
    "statement": ("dpsampling.statements", "statement"),
    "Phase": ("dpsampling.samplers.phases", "Phase"),
}

__all__ = [*_API, "__version__"]


def __getattr__(name):  # lazy: `import dpsampling` stays cheap (PEP 562)
    if name in _API:
        import importlib

        mod, attr = _API[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'dpsampling' has no attribute {name!r}")
