"""Numbers as practitioners pass them: numpy, JAX and torch scalars and 0-d arrays become Python numbers."""

from __future__ import annotations

import numbers


def plain(value):
    """``value`` as a Python int or float if it is a real number of any library (numpy, JAX, torch scalar, or a 0-d
    array of one), else ``value`` unchanged (bools stay bools), so the checks behind it see one kind of number."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    shape = getattr(value, "shape", None)
    if hasattr(value, "item") and (shape is None or tuple(shape) == ()):
        try:
            item = value.item()
        except (TypeError, ValueError, RuntimeError):
            return value
        if isinstance(item, numbers.Real) and not isinstance(item, bool):
            return item
    return value
