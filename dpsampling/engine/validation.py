"""Input checks shared by the library, the CLI and the scripts.

Every check raises :class:`ParameterError` (a ``ValueError``) carrying the parameter, the allowed
range and the offending value (one line of text naming all three), so the CLI names the flag from
``param`` and the pipeline passes the message on unchanged.  A number may come from any array library
(a numpy, JAX or torch scalar or 0-d array): every check reads it through :func:`as_number` and returns it
as a Python number.
"""

from __future__ import annotations

import operator

import numpy as np

from .errors import ParameterError

#: neighbouring directions of an accountant question (add_remove = the max of both)
DIRECTIONS = ("add", "remove", "add_remove")
#: the two directions of one privacy curve (add_remove is their max, not a curve of its own)
ONE_WAY_DIRECTIONS = ("add", "remove")
#: the accountants of :mod:`dpsampling.engine.accountant`
METHODS = ("pld", "rdp", "analytic", "cf")
BOUNDS = ("upper", "lower")


def as_number(value):
    """``value`` as a Python ``int``/``float`` when it is one number of any array library, else unchanged.

    A numpy scalar, a 0-d numpy/JAX/torch array or any object with ``.item()`` and an empty (or no) ``shape``
    gives ``value.item()``; else an object with ``__index__`` gives that integer, and one with ``__float__``
    that float.  Bools, lists, arrays with dimensions and strings come back as they are (the checks decide).
    No array library is imported: the tests are on the protocol, not on the type."""
    if value is None or type(value) in (bool, int, float) or isinstance(value, (str, bytes, list, tuple, dict)):
        return value  # (np.float64 subclasses float: it is converted below)
    shape = getattr(value, "shape", None)
    if hasattr(value, "item") and (shape is None or tuple(shape) == ()):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    if shape is not None:
        return value
    if hasattr(value, "__index__"):
        try:
            return operator.index(value)
        except TypeError:
            pass
    if hasattr(value, "__float__"):
        try:
            return float(value)
        except (TypeError, ValueError):
            return value
    return value


def _values(x):
    """``x`` as a 1-D float array; NaN (which every check refuses) when it is not a number: a string, None, or a
    bool (``True`` is not 1 step, and a bool array is not a list of numbers)."""
    try:
        a = np.asarray(as_number(x))
        if a.dtype == bool:
            return np.array([np.nan])
        return np.atleast_1d(np.asarray(a, dtype=float))
    except (TypeError, ValueError):
        return np.array([np.nan])  # not a number: every check below fails on it


def _fail(name, rule, value):
    raise ParameterError(name, rule, value)


def one_number(name, value):
    """``value`` unless it has dimensions (an array is not one number: ParameterError naming ``name``)."""
    if value is not None and np.ndim(value) != 0:
        raise ParameterError(name, "a single number", value,
                             message=f"{name} must be a single number (got an array of shape {np.shape(value)})")
    return value


def check_positive(name, value):
    v = _values(value)
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        _fail(name, "> 0 and finite", value)
    return as_number(value)


def check_epsilon(value, name="epsilon", finite=False):
    v = _values(value)
    if v.size == 0 or np.any(np.isnan(v)) or np.any(v < 0):
        _fail(name, ">= 0 and finite" if finite else ">= 0", value)
    if finite and not np.all(np.isfinite(v)):
        _fail(name, ">= 0 and finite", value)
    return as_number(value)


def check_delta(value, name="delta"):
    v = _values(value)
    if v.size == 0 or np.any(~(v > 0)) or np.any(~(v < 1)):
        _fail(name, "in (0, 1)", value)
    return as_number(value)


def check_rate(value, name="q"):
    v = _values(value)
    if v.size == 0 or np.any(~(v > 0)) or np.any(~(v <= 1)):
        _fail(name, "in (0, 1]", value)
    return as_number(value)


def check_steps(value, name="steps"):
    v = _values(value)
    if v.size == 0 or np.any(v < 1) or np.any(v != np.round(v)):
        _fail(name, "an integer >= 1", value)
    return as_number(value)


def check_int(name, value, low=1):
    """One integer >= ``low`` (bools and strings are not numbers: rejected); returns it as int."""
    v = as_number(value)
    try:
        ok = not isinstance(v, (bool, str, bytes)) and float(v).is_integer() and int(v) >= low
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        _fail(name, f"an integer >= {low}", value)
    return int(v)


def check_finite_list(name, values):
    """A non-empty 1-D list of finite numbers (a scalar counts as a list of one); returns the array."""
    v = _values(values)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        _fail(name, "a non-empty 1-D list of finite numbers", values)
    return v


def check_choice(name, value, allowed):
    """``value`` if it is one of ``allowed`` (None among them: "None or one of ...")."""
    if value not in allowed:
        names = [str(a) for a in allowed if a is not None]
        _fail(name, ("None or " if None in allowed else "") + "one of " + ", ".join(names), value)
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


#: how close q·steps must be to 1 for a rate q to be 1/steps: a float32 rate equals 1/steps only to its own precision
#: (2^-24 ≈ 6e-8 relative), so an exact comparison refuses np.float32(1/50)
ONE_PER_STEP_TOL = 1e-6


def is_one_over(q, steps) -> bool:
    """Whether the rate ``q`` is 1/``steps`` to within :data:`ONE_PER_STEP_TOL` (relative)."""
    return abs(float(q) * float(steps) - 1.0) <= ONE_PER_STEP_TOL


def steps_of_rate(q):
    """The integer T >= 1 with ``q`` = 1/T (to :data:`ONE_PER_STEP_TOL`), else None."""
    q = float(as_number(q))
    if not q > 0:
        return None
    t = round(1.0 / q)
    return t if t >= 1 and is_one_over(q, t) else None


def scalar_or_array(x, like):
    """``x`` as a float when ``like`` is a scalar, else unchanged (vectorised functions keep scalars scalar)."""
    return float(x) if np.ndim(like) == 0 else x

