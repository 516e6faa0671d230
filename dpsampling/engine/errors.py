"""The package's two exceptions: :class:`ParameterError` for bad input (it carries the parameter it is about)
and :class:`InternalError` for a broken internal invariant (a bug, not the caller's input).

Importing them costs nothing (no numpy), so the command line can catch them before any accountant loads.
"""

from __future__ import annotations


class ParameterError(ValueError):
    """A value outside its allowed range: ``param`` (the library's keyword), ``allowed`` (the allowed range
    as text) and ``got`` (the value).  The command line names the flag of ``param`` from its option table;
    the text is ``<param> must be <allowed> (got <got>)`` unless a ``message`` is given."""

    def __init__(self, param, allowed, got, message=None):
        self.param, self.allowed, self.got = param, allowed, got
        super().__init__(message if message is not None else f"{param} must be {allowed} (got {got!r})")


class InternalError(RuntimeError):
    """A broken internal invariant (a numerical failure, not bad input): the message says which invariant and
    the values that broke it.  Never raised for a value the caller can change to fix it."""
