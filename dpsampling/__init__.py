"""dpsampling: privacy accounting of DP-SGD under different batch samplers.

The math lives here as pure functions (no file I/O) in three layers that import downward only:
``engine`` (accountants, numerics), ``samplers`` (one module per batch sampler, :func:`account`) and
``papers`` (paper-specific computations); the Snakemake pipeline and the ``dpsampling`` command line
are thin layers on top.  See ARCHITECTURE.md.
"""

__version__ = "0.1.0"

_API = {
    "AccountingResult": ("dpsampling.engine.result", "AccountingResult"),
    "epsilon": ("dpsampling.engine.accountant", "epsilon"),
    "delta": ("dpsampling.engine.accountant", "delta"),
    "calibrate_sigma": ("dpsampling.engine.accountant", "calibrate_sigma"),
    "account": ("dpsampling.samplers", "account"),
    "audit": ("dpsampling.audit", "audit"),
    "statement": ("dpsampling.statement", "statement"),
}

__all__ = [*_API, "__version__"]


def __getattr__(name):  # lazy: `import dpsampling` stays cheap (PEP 562)
    if name in _API:
        import importlib

        mod, attr = _API[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'dpsampling' has no attribute {name!r}")
