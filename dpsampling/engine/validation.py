"""Input checks shared by the library, the CLI and the scripts.

Every check raises :class:`ParameterError` (a ``ValueError``) carrying the parameter, the allowed
range and the offending value (one line of text naming all three), so the CLI names the flag from
``param`` and the pipeline passes the message on unchanged.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError

#: neighbouring directions of an accountant question (add_remove = the max of both)
DIRECTIONS = ("add", "remove", "add_remove")
#: the two directions of one privacy curve (add_remove is their max, not a curve of its own)
ONE_WAY_DIRECTIONS = ("add", "remove")
#: the accountants of :mod:`dpsampling.engine.accountant`
METHODS = ("pld", "rdp", "analytic", "cf")
BOUNDS = ("upper", "lower")


def _values(x):
    return np.atleast_1d(np.asarray(x, dtype=float))


def _fail(name, rule, value):
    raise ParameterError(name, rule, value)


def check_positive(name, value):
    v = _values(value)
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        _fail(name, "> 0 and finite", value)
    return value


def check_epsilon(value, name="epsilon", finite=False):
    v = _values(value)
    if v.size == 0 or np.any(np.isnan(v)) or np.any(v < 0):
        _fail(name, ">= 0 and finite" if finite else ">= 0", value)
    if finite and not np.all(np.isfinite(v)):
        _fail(name, ">= 0 and finite", value)
    return value


def check_delta(value, name="delta"):
    v = _values(value)
    if v.size == 0 or np.any(~(v > 0)) or np.any(~(v < 1)):
        _fail(name, "in (0, 1)", value)
    return value


def check_rate(value, name="q"):
    v = _values(value)
    if v.size == 0 or np.any(~(v > 0)) or np.any(~(v <= 1)):
        _fail(name, "in (0, 1]", value)
    return value


def check_steps(value, name="steps"):
    v = _values(value)
    if v.size == 0 or np.any(v < 1) or np.any(v != np.round(v)):
        _fail(name, "an integer >= 1", value)
    return value


def check_int(name, value, low=1):
    """One integer >= ``low`` (bools rejected); returns it as int."""
    if isinstance(value, bool) or not float(value).is_integer() or int(value) < low:
        _fail(name, f"an integer >= {low}", value)
    return int(value)


def check_finite_list(name, values):
    """A non-empty 1-D list of finite numbers (a scalar counts as a list of one); returns the array."""
    v = _values(values)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        _fail(name, "a non-empty 1-D list of finite numbers", values)
    return v


def check_choice(name, value, allowed):
    if value not in allowed:
        _fail(name, "one of " + ", ".join(allowed), value)
    return value


def check_grid(name, values, low=None, high=None, low_open=True, high_open=False):
    """A non-empty, strictly increasing grid inside (low, high]."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0:
        _fail(name, "a non-empty list of numbers", values)
    if np.any(np.diff(v) <= 0):
        _fail(name, "strictly increasing", values)
    if low is not None and (v[0] <= low if low_open else v[0] < low):
        _fail(name, f"{'>' if low_open else '>='} {low} everywhere", values)
    if high is not None and (v[-1] >= high if high_open else v[-1] > high):
        _fail(name, f"{'<' if high_open else '<='} {high} everywhere", values)
    return v


def scalar_or_array(x, like):
    """``x`` as a float when ``like`` is a scalar, else unchanged (vectorised functions keep scalars scalar)."""
    return float(x) if np.ndim(like) == 0 else x

