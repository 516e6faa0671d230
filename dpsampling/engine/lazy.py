"""Deferred imports: a module (or one function of it) loaded on first use.

The sampler modules describe themselves as data (``SPEC``) that the command line reads to build its parser;
importing them must therefore not load scipy, dp_accounting or numba (about 1 s of CPU).  Their heavy
imports go through :func:`module` and :func:`function`, which load on first attribute access or call.
"""

from __future__ import annotations

import importlib
import sys


class _Deferred:
    """Stands for a module; imports it on the first attribute access."""

    def __init__(self, name):
        self._name, self._module = name, None

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self):
        return f"<deferred module {self._name!r}>"


def module(name: str):
    """Module ``name`` (itself if already imported, else a stand-in that imports it on first attribute access)."""
    return sys.modules[name] if name in sys.modules else _Deferred(name)


def function(module_name: str, name: str):
    """A stand-in for ``from module_name import name`` (a callable) that imports on its first call."""
    target = None

    def call(*args, **kwargs):
        nonlocal target
        if target is None:
            target = getattr(importlib.import_module(module_name), name)
        return target(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module_name}.{name} (imported on first call)"
    return call


class MissingExtra(RuntimeError):
    """An optional dependency is not installed: the message names the extra that installs it (one line)."""


def require(module_name: str, what: str, extra: str = "pipeline"):
    """Module ``module_name``, imported now; if it is not installed, :class:`MissingExtra` saying that ``what``
    needs the ``extra``: "<what> needs the 'pipeline' extra: pip install 'dpsampling[pipeline]'"."""
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise MissingExtra(f"{what} needs the '{extra}' extra: pip install 'dpsampling[{extra}]'") from exc


__all__ = ["MissingExtra", "function", "module", "require"]
