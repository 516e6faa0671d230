"""The package's two exceptions: :class:`ParameterError` for bad input (it carries the parameter it is about)
and :class:`InternalError` for a broken internal invariant (a bug, not the caller's input).

Importing them costs nothing (no numpy), so the command line can catch them before any accountant loads.
"""

from __future__ import annotations


class ParameterError(ValueError):
    """A value outside its allowed range: ``param`` (the library's keyword), ``allowed`` (the allowed range
    as text) and ``got`` (the value).  The command line names the flag of ``param`` from its option table;
    the text is ``<param> must be <allowed> (got <got>)``, or ``<param> is missing: it must be <allowed>`` when
    ``got`` is None (a parameter not given), unless a ``message`` is given."""

    def __init__(self, param, allowed, got, message=None):
        self.param, self.allowed, self.got = param, allowed, got
        if message is None:
            message = f"{param} is missing: it must be {allowed}" if got is None else \
                f"{param} must be {allowed} (got {got!r})"
        super().__init__(message)

    def __reduce__(self):  # copyable (pandas deep-copies DataFrame.attrs, where the audit keeps a row's reason)
        return (type(self), (self.param, self.allowed, self.got, str(self)))

    def with_message(self, message: str) -> "ParameterError":
        """The same error (parameter, allowed range, value) with ``message`` (e.g. the original prefixed by where
        it occurred)."""
        return ParameterError(self.param, self.allowed, self.got, message=message)

    def renamed(self, names: dict) -> "ParameterError":
        """This error naming the caller's own keyword ``names[param]`` (an entry point whose keywords differ from the
        library's, e.g. an integration's ``noise_multiplier`` for ``sigma``); itself when ``param`` is not renamed."""
        name = names.get(self.param)
        if not name or type(self) is not ParameterError:
            return self
        text = str(self)
        if text.startswith(f"{self.param} "):
            text = name + text[len(self.param):]
        return ParameterError(name, self.allowed, self.got, message=text)

    @property
    def missing(self) -> bool:
        """True when the parameter was not given (``got`` is None)."""
        return self.got is None


class InternalError(RuntimeError):
    """A broken internal invariant (a numerical failure, not bad input): the message says which invariant and
    the values that broke it.  Never raised for a value the caller can change to fix it."""
