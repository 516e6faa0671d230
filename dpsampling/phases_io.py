"""A run of phases as the command line reads it: a CSV or YAML file (``--phases FILE``) or repeated ``--phase`` flags.

One phase per row, keys ``sampler, sigma, q, steps, epochs`` (:class:`dpsampling.phases.Phase`; ``epochs`` optional,
default 1; ``sigma`` may be left empty for the phase whose σ ``dpsampling sigma --scale i`` calibrates):

* CSV: a header row naming the keys, then one row per phase (lines starting with ``#`` and blank lines skipped);
* YAML (``.yaml``/``.yml``, needs PyYAML): a list of mappings, or a mapping with the list under ``phases``;
* a flag: ``--phase sampler=poisson,sigma=1.1,q=0.0042,steps=7050[,epochs=1]``.

Only the form is checked here (keys known and present, numbers that are numbers), each error one
:class:`~dpsampling.engine.errors.ParameterError` naming the file, the row and the key; the ranges are checked where
every question is checked (:func:`dpsampling.samplers.account`, through :func:`dpsampling.phases.epsilon`), and
:func:`where` names a phase's row for its messages.
"""

from __future__ import annotations

import csv
import math
import os

from dpsampling.engine.errors import ParameterError
from dpsampling.samplers.phases import Phase

#: the keys of a phase, in order; the required ones
KEYS = ("sampler", "sigma", "q", "steps", "epochs")
REQUIRED = ("sampler", "q", "steps")
YAML_SUFFIXES = (".yaml", ".yml")


def _fail(param, origin, key, why, got):
    where = f"{origin}, key {key}" if key else origin
    raise ParameterError(param, "a run of phases (keys " + ", ".join(KEYS) + ")", got, message=f"{param} {where}: {why}")


def _number(param, origin, key, value, integer):
    if isinstance(value, bool):
        _fail(param, origin, key, f"must be {'an integer' if integer else 'a number'} (got {value!r})", value)
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            _fail(param, origin, key, f"must be {'an integer' if integer else 'a number'} (got {text!r})", value)
    if integer and isinstance(value, float) and value.is_integer():
        value = int(value)
    if integer and not isinstance(value, int):
        _fail(param, origin, key, f"must be an integer (got {value!r})", value)
    if not integer and not (isinstance(value, (int, float)) and math.isfinite(value)):
        _fail(param, origin, key, f"must be a finite number (got {value!r})", value)
    return value if integer else float(value)


def phase_of(row: dict, param: str, origin: str) -> Phase:
    """One phase from a mapping of its keys (``origin`` names the row in errors, ``param`` the flag)."""
    if not isinstance(row, dict):
        _fail(param, origin, None, f"must be a mapping of {', '.join(KEYS)} (got {row!r})", row)
    row = {str(k).strip(): v for k, v in row.items() if k is not None}
    unknown = [k for k in row if k not in KEYS]
    if unknown:
        _fail(param, origin, unknown[0], f"unknown key (the keys are {', '.join(KEYS)})", unknown[0])
    for k in REQUIRED:
        if row.get(k) is None or (isinstance(row[k], str) and not row[k].strip()):
            _fail(param, origin, k, "is missing", None)
    sigma = row.get("sigma")
    empty = sigma is None or (isinstance(sigma, str) and not sigma.strip())
    sampler = row["sampler"]
    if not isinstance(sampler, str):
        _fail(param, origin, "sampler", f"must be a sampler's name (got {sampler!r})", sampler)
    epochs = row.get("epochs")
    return Phase(sampler.strip(), None if empty else _number(param, origin, "sigma", sigma, False),
                 _number(param, origin, "q", row["q"], False), _number(param, origin, "steps", row["steps"], True),
                 1 if epochs is None or (isinstance(epochs, str) and not epochs.strip())
                 else _number(param, origin, "epochs", epochs, True))


def read_file(path) -> tuple:
    """(phases, origins) from a CSV or YAML file (module docstring); ``origins[i]`` names phase i's row."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        _fail("phases", f"file {path}", None, f"cannot be read ({exc.strerror or exc})", path)
    if path.lower().endswith(YAML_SUFFIXES):
        rows = _yaml_rows(path, text)
    else:
        rows = _csv_rows(path, text)
    if not rows:
        _fail("phases", f"file {path}", None, "has no phases (one row per phase: " + ",".join(KEYS) + ")", path)
    phases = [phase_of(row, "phases", f"file {path}, {origin}") for origin, row in rows]
    return phases, [origin for origin, _ in rows]


def _csv_rows(path, text):
    lines = [(i + 1, line) for i, line in enumerate(text.splitlines()) if line.strip() and not line.lstrip()
             .startswith("#")]
    if not lines:
        return []
    header = [h.strip() for h in next(csv.reader([lines[0][1]]))]
    for h in header:
        if h not in KEYS:
            _fail("phases", f"file {path}, line {lines[0][0]} (the header)", h,
                  f"unknown column (the columns are {', '.join(KEYS)}; epochs optional)", h)
    out = []
    for n, line in lines[1:]:
        cells = next(csv.reader([line]))
        if len(cells) != len(header):
            _fail("phases", f"file {path}, line {n}", None,
                  f"has {len(cells)} cells, the header {len(header)} ({','.join(header)})", line)
        out.append((f"line {n}", dict(zip(header, cells))))
    return out


def _yaml_rows(path, text):
    try:
        import yaml
    except ImportError:
        _fail("phases", f"file {path}", None, "is YAML, which needs PyYAML (pip install pyyaml, or the 'pipeline' "
                                              "extra); or write it as CSV", path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        _fail("phases", f"file {path}", None, f"is not valid YAML ({' '.join(str(exc).split())})", path)
    if isinstance(data, dict) and "phases" in data:
        data = data["phases"]
    if not isinstance(data, list):
        _fail("phases", f"file {path}", None, "must hold a list of phases (or a mapping with the list under "
                                              "'phases')", data)
    return [(f"entry {i + 1}", row) for i, row in enumerate(data)]


def parse_flag(text: str, n: int) -> tuple:
    """(phase, origin) from the ``n``-th (1-based) ``--phase key=value,...`` flag."""
    origin = f"#{n} ({text})"
    row = {}
    for part in (p for p in text.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            _fail("phase", origin, key, "must be key=value", part)
        if key in row:
            _fail("phase", origin, key, "is given twice", part)
        row[key] = value
    return phase_of(row, "phase", origin), origin


def where(origins, message: str) -> str:
    """A phase's error message (``"phase i (...): ..."``, as :mod:`dpsampling.samplers.phases` words it) with phase
    i's row from ``origins``."""
    head, sep, rest = message.partition(" ")
    index = rest.split(" ", 1)[0].rstrip(":")
    if head == "phase" and index.isdigit() and int(index) < len(origins):
        return f"phase {index} at {origins[int(index)]}{rest[len(index):]}"
    return message


__all__ = ["KEYS", "REQUIRED", "parse_flag", "phase_of", "read_file", "where"]
