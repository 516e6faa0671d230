"""Parameter grids described in the config, and their stable split into chunks.

A computation's config block has ``fixed`` parameters (shared by every point)
and a ``grid``: a list of blocks, each the Cartesian product of its axes.  An
axis is a scalar, a list, or ``{start, stop, num, spacing: log|linear}``.

Each point gets a stable id (a hash of its parameters) and a chunk number
derived from that id, so adding or changing one grid value changes the
parameters of one chunk only, and Snakemake reruns just that chunk.  With
``chunk_by: [names]`` the chunk is derived from those parameters only, so that
points sharing them (e.g. one curve, solved with warm starts) stay together.
"""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np


def _parameter_blocks(config: dict):
    """(computation, place, parameters) for every ``fixed`` block and ``grid`` entry of the config."""
    for name, block in config.items():
        if not isinstance(block, dict):
            continue
        places = [("fixed", block.get("fixed"))]
        places += [(f"grid[{i}]", sub) for i, sub in enumerate(block.get("grid") or [])]
        for where, params in places:
            if isinstance(params, dict):
                yield name, where, params


def check_samplers(config: dict) -> None:
    """Raise ValueError naming the first ``sampler`` value (in a ``fixed`` or ``grid`` block) that is not a
    registered sampler (:data:`dpsampling.samplers.SAMPLERS`, the registry: the schema does not list them, so a new
    sampler module needs no schema edit)."""
    from dpsampling import samplers

    for name, where, params in _parameter_blocks(config):
        value = params.get("sampler")
        for v in ([] if value is None else value if isinstance(value, list) else [value]):
            if v not in samplers.SAMPLERS:
                raise ValueError(f"config key {name}.{where}.sampler must be one of "
                                 f"{', '.join(samplers.SAMPLERS)} (got {v!r})")


def expand_axis(name, spec):
    """Values of one axis; raises ValueError naming the key on a bad spec."""
    if isinstance(spec, dict):
        missing = {"start", "stop", "num"} - set(spec)
        if missing:
            raise ValueError(f"grid axis '{name}' needs keys start, stop, num (missing {sorted(missing)})")
        start, stop, num = float(spec["start"]), float(spec["stop"]), int(spec["num"])
        spacing = spec.get("spacing", "linear")
        if num < 1:
            raise ValueError(f"grid axis '{name}': num must be >= 1 (got {num})")
        if not start <= stop:
            raise ValueError(f"grid axis '{name}': start must be <= stop (got start={start}, stop={stop})")
        if spacing == "log":
            if start <= 0:
                raise ValueError(f"grid axis '{name}': log spacing needs start > 0 (got {start})")
            vals = np.geomspace(start, stop, num)
        elif spacing == "linear":
            vals = np.linspace(start, stop, num)
        else:
            raise ValueError(f"grid axis '{name}': spacing must be one of log, linear (got {spacing!r})")
        return [float(v) for v in vals]
    if isinstance(spec, (list, tuple)):
        if len(spec) == 0:
            raise ValueError(f"grid axis '{name}' is empty; give at least one value")
        return list(spec)
    return [spec]


def _canonical(value):
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


def point_id(point: dict) -> str:
    """Stable 12-hex-digit id of a grid point (independent of key order)."""
    payload = json.dumps({k: _canonical(v) for k, v in sorted(point.items())}, sort_keys=True)
    return hashlib.sha1(payload.encode()).hexdigest()[:12]


def build(block: dict) -> list[dict]:
    """All points of a computation's config block, each with ``point_id`` and ``chunk``.

    Duplicate points (same parameters from two grid blocks) are kept once.
    """
    fixed = dict(block.get("fixed", {}))
    n_chunks = int(block.get("n_chunks", 1))
    if n_chunks < 1:
        raise ValueError(f"n_chunks must be >= 1 (got {n_chunks})")
    grid = block.get("grid")
    if not grid:
        raise ValueError("grid must be a non-empty list of blocks of axes")
    chunk_by = block.get("chunk_by")  # parameters that decide the chunk (default: all)
    points, seen = [], set()
    for sub in grid:
        names = list(sub)
        axes = [expand_axis(n, sub[n]) for n in names]
        for combo in itertools.product(*axes):
            p = {**fixed, **dict(zip(names, (_canonical(v) for v in combo)))}
            pid = point_id(p)
            if pid in seen:
                continue
            seen.add(pid)
            p = {k: p[k] for k in sorted(p)}  # key order must not depend on how the YAML was written
            key = pid if not chunk_by else point_id({k: p.get(k) for k in chunk_by})
            points.append({**p, "point_id": pid, "chunk": int(key, 16) % n_chunks})
    return points


def chunk(points: list[dict], index: int) -> list[dict]:
    """The points of chunk ``index``, in a canonical order (by id), so that
    reordering the config does not change a chunk's parameters."""
    return sorted((p for p in points if p["chunk"] == int(index)), key=lambda p: p["point_id"])


def apply_workflow_defaults(config: dict, schema: dict) -> None:
    """Fill, in place, the schema ``default`` of each key the workflow reads from the config itself.

    Every computation's ``settings`` gets ``rel_tol`` (an absent ``settings`` block becomes one), ``claims`` gets
    ``n_chunks`` and, where the config has a ``gallery`` block, ``figures`` and ``width``.  The other defaults in
    the schema are the values the computations' scripts and the library use on their own when a key is absent.
    """
    settings = schema["$defs"]["computation"]["properties"]["settings"]["properties"]
    for value in config.values():
        if isinstance(value, dict) and "grid" in value:
            value.setdefault("settings", {}).setdefault("rel_tol", settings["rel_tol"]["default"])
    for block, keys in (("claims", ("n_chunks",)), ("gallery", ("figures", "width"))):
        if isinstance(config.get(block), dict):
            for key in keys:
                config[block].setdefault(key, schema["properties"][block]["properties"][key]["default"])
