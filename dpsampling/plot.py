"""``--plot FILE``: the audit's per-epoch intervals against epochs, one band per sampler (PNG or PDF).

matplotlib is part of the ``pipeline`` extra and is imported only here, when a picture is asked for; the file is
written to a temporary file in the same folder and renamed, so a failed write leaves nothing behind.
"""

from __future__ import annotations

import os

#: the formats ``--plot`` writes (by the file's suffix)
FORMATS = (".png", ".pdf")


class PlotError(ValueError):
    """A picture that cannot be made: one line naming ``--plot`` and why."""


def check_path(path) -> str:
    """The path if a PNG/PDF can be written there (its folder exists and is writable), else PlotError."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise PlotError(f"--plot must name a .png or .pdf file (got {path!r})")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise PlotError(f"--plot {path}: is a folder")
    if not os.path.isdir(folder):
        raise PlotError(f"--plot {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PlotError(f"--plot {path}: the folder {folder} is not writable")
    return path


def check_available() -> None:
    """PlotError naming the extra if matplotlib is not installed (asked before any work is done)."""
    import importlib.util

    from dpsampling.engine.lazy import MissingExtra, require

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except ImportError:
        found = False
    if not found:
        try:
            require("matplotlib", "--plot")
        except MissingExtra as exc:
            raise PlotError(str(exc)) from exc


def _pyplot():
    from dpsampling.engine.lazy import MissingExtra, require

    try:
        matplotlib = require("matplotlib", "--plot")
    except MissingExtra as exc:
        raise PlotError(str(exc)) from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


#: one colour per sampler position (colour-blind safe: Okabe–Ito)
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def per_epoch_figure(per_epoch, title=None):
    """A matplotlib Figure: for each sampler its interval [lower, upper] after each epoch as a shaded band with its
    ends drawn, an exact row as a line; ε on a log axis (samplers differ by orders of magnitude)."""
    import math

    from dpsampling import render

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6), dpi=150)
    samplers = list(dict.fromkeys(per_epoch["sampler"]))
    for i, sampler in enumerate(samplers):
        rows = per_epoch[per_epoch["sampler"] == sampler].sort_values("epoch")
        colour = _COLOURS[i % len(_COLOURS)]
        e = rows["epoch"].to_numpy()
        lo = rows["lower"].to_numpy(dtype=float)
        up = rows["upper"].to_numpy(dtype=float)
        val = rows["value"].to_numpy(dtype=float)
        lo = [v if math.isnan(a) else a for a, v in zip(lo, val)]  # a missing end: the value stands for it
        up = [v if math.isnan(b) else b for b, v in zip(up, val)]
        exact = all(a == b for a, b in zip(lo, up))
        kinds = set(rows["kind"])
        best_known = bool(rows["upper_best_known"].any()) if "upper_best_known" in rows else False
        what = "exact" if exact else ("certified interval (best known upper)" if best_known else "certified interval")
        if not exact and all(math.isnan(a) for a in rows["lower"].to_numpy(dtype=float)) and "upper" in kinds:
            what = "upper bound"
        rel = rows["relation"].iloc[0] if "relation" in rows else None
        label = render.plot_label(sampler, what, rel)
        if exact:
            ax.plot(e, up, color=colour, lw=1.8, label=label)
        else:
            ax.fill_between(e, lo, up, color=colour, alpha=0.25, lw=0)
            ax.plot(e, up, color=colour, lw=1.4, label=label)
            ax.plot(e, lo, color=colour, lw=1.0, ls="--")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel(render.plot_axis_label(per_epoch["relation"]) if "relation" in per_epoch else
                  "ε (certified interval; dashed: lower end)", fontsize=8)
    ax.set_xlim(1, max(int(per_epoch["epoch"].max()), 2))
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    return fig


def write(fig, path) -> None:
    """Save ``fig`` to ``path`` (PNG or PDF by its suffix) through a temporary file in the same folder, renamed into
    place; on failure nothing is left behind and PlotError names ``--plot``."""
    import tempfile

    path = check_path(path)
    folder = os.path.dirname(os.path.abspath(path))
    ext = os.path.splitext(path)[1].lower()
    fd, tmp = tempfile.mkstemp(prefix=".dpsampling_plot_", suffix=ext, dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format=ext[1:])
        os.replace(tmp, path)
    except OSError as exc:
        raise PlotError(f"--plot {path}: cannot write it ({exc.strerror or exc})") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def plot_per_epoch(per_epoch, path, title=None) -> None:
    """Draw the per-epoch table (:mod:`dpsampling.per_epoch_audit`) and write it to ``path``."""
    check_path(path)
    fig = per_epoch_figure(per_epoch, title)
    try:
        write(fig, path)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
