"""Plumbing shared by the pipeline scripts: logging, atomic writes, version stamps.

Snakemake puts this folder on ``sys.path`` for ``script:`` rules, so every
script can ``import _pipeline``.  Nothing here does math; it only moves
parameters from Snakemake into ``dpsampling`` and results onto disk.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
import warnings
from importlib import metadata

import pandas as pd

VERSIONED = ("dpsampling", "dp-accounting", "numpy", "scipy")


def versions() -> dict:
    """Library versions stamped on every result row."""
    out = {}
    for name in VERSIONED:
        try:
            out[f"version_{name.replace('-', '_')}"] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[f"version_{name.replace('-', '_')}"] = "not installed"
    return out


def code_hash(smk) -> str:
    """The rule's ``code_hash`` param (hash of the library modules its script imports; see _codehash.py)."""
    return str(getattr(smk.params, "code_hash", "")) if smk is not None else ""


def logger(smk) -> logging.Logger:
    """A logger writing to the rule's ``log:`` file (and stderr)."""
    log = logging.getLogger("dpsampling.pipeline")
    log.setLevel(logging.INFO)
    log.handlers.clear()
    fmt = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
    if smk is not None and len(smk.log) > 0:
        os.makedirs(os.path.dirname(str(smk.log[0])) or ".", exist_ok=True)
        targets = [logging.FileHandler(str(smk.log[0]), mode="w")]
    else:
        targets = [logging.StreamHandler(sys.stderr)]
    for h in targets:
        h.setFormatter(fmt)
        log.addHandler(h)
    logging.captureWarnings(True)
    logging.getLogger("absl").setLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)  # dp_accounting's chatty root-logger warnings
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return log


def _atomic(path, write):
    """Write through a temporary file in the target folder, then rename."""
    path = str(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_csv(df: pd.DataFrame, path) -> None:
    _atomic(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.10g"))


def write_text(text: str, path) -> None:
    def w(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    _atomic(path, w)


def save_figure(fig, paths) -> None:
    """Save to every path (pdf, png), then close the figure; PDFs are reproducible (no creation date)."""
    import matplotlib.pyplot as plt

    for p in paths:
        meta = {"CreationDate": None} if str(p).endswith(".pdf") else {"Software": None}
        fmt = os.path.splitext(str(p))[1][1:]
        _atomic(p, lambda tmp, m=meta, f=fmt: fig.savefig(tmp, metadata=m, dpi=150, format=f))
    plt.close(fig)


def result_row(res, end=None) -> dict:
    """Flatten a dpsampling.AccountingResult into CSV columns (``lower_method``/``upper_method``: the method of each
    end).  ``end="lower"``: the row of a one-sided lower-bound curve drawn from ``res`` (kind ``lower``, ``value``
    the lower end, as the curve scripts plot it; ``lower``/``upper`` stay the answer's ends)."""
    from dpsampling.engine.result import end_methods

    acc = dict(res.accuracy)
    lower_method, upper_method = end_methods(res)
    if end == "lower":
        return {**result_row(res), "value": res.lower, "kind": "lower"}
    return {
        "value": res.value,
        "kind": res.kind,
        "method": res.method,
        "lower": res.lower,
        "upper": res.upper,
        "lower_method": lower_method,
        "upper_method": upper_method,
        "discretization": acc.pop("discretization", None),
        "rel_tol": acc.pop("rel_tol", None),
        "est_rel_error": acc.pop("est_rel_error", None),
        "accuracy_other": json.dumps(acc, sort_keys=True) if acc else "",
        "flags": ";".join(res.flags),
    }


def run_chunk(smk, compute_point=None, compute_points=None, order=None) -> None:
    """Compute every point of this chunk, logging progress, and write one CSV.

    ``compute_point(point, **settings)`` returns the result columns of one grid
    point: a dict (one row) or a list of dicts (several rows, e.g. a curve over ε).
    Alternatively ``compute_points(points, **settings)`` handles the whole chunk
    at once (e.g. warm-started solves along a curve) and returns one dict per point.
    ``order`` (a sort key of points) sets the order the points are computed and written in, e.g. so that
    points sharing cached work follow each other (the aggregate puts the rows back in grid order).
    """
    log = logger(smk)
    points = list(smk.params.points)
    if order is not None:
        points.sort(key=order)
    settings = dict(smk.params.settings) if hasattr(smk.params, "settings") else {}
    log.info("chunk %s: %d points, settings %s", smk.wildcards.get("chunk", "?"), len(points), settings)
    rows, t0 = [], time.time()
    if compute_points is not None:
        for p, r in zip(points, compute_points(points, log=log, **settings)):
            rows.append({**p, **r})
    for i, p in enumerate(points if compute_points is None else [], 1):
        t = time.time()
        out = compute_point(p, **settings)
        rows.extend({**p, **r} for r in (out if isinstance(out, list) else [out]))
        log.info("point %d/%d done in %.2fs (%s)", i, len(points), time.time() - t, p["point_id"])
    cols = list(points[0]) if points else ["point_id", "chunk"]
    df = pd.DataFrame(rows, columns=None if rows else cols)
    for k, v in versions().items():
        df[k] = v
    df["code_hash"] = code_hash(smk)
    write_csv(df, smk.output[0])
    log.info("chunk done: %d points in %.1fs", len(points), time.time() - t0)


def figure_and_markdown(plot, markdown):
    """A ``report`` for plot rules with outputs pdf, png and md: ``plot(df, [pdf, png])`` and ``markdown(df)``."""

    def report(df, out):
        plot(df, [out.pdf, out.png])
        write_text(markdown(df), out.md)

    return report


def main(smk, compute_point=None, compute_points=None, report=None, order=None) -> None:
    """Entry point shared by the computation scripts (``_pipeline.main(snakemake, ...)``).

    A ``<name>_chunk`` rule computes its chunk (see :func:`run_chunk`); a
    ``<name>_plot`` rule reads the aggregated CSV and calls ``report(df, output)``
    with Snakemake's output list (positional and named outputs).
    """
    if smk.rule.endswith("_plot"):
        df = pd.read_csv(smk.input[0])
        logger(smk).info("%s: %d rows", smk.rule, len(df))
        report(df, smk.output)
    else:
        run_chunk(smk, compute_point, compute_points, order)

