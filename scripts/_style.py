"""The one plotting style of the project: every figure goes through here.

Curves are labelled with what they are: upper bound, lower bound, exact or
estimate (with its error), and the line style says the same thing at a glance:
upper bounds solid, lower bounds dashed, estimates dotted, exact dash-dot.
"""

from __future__ import annotations

import importlib

# matplotlib is imported on first use (``figure``/``setup``/``_style.plt``), not here: chunk jobs import this
# module for its constants and never plot, and pyplot costs ~0.8 s CPU per job process.

KIND_STYLE = {
    "upper": dict(linestyle="-"),
    "lower": dict(linestyle="--"),
    "estimate": dict(linestyle=":"),
    "exact": dict(linestyle="-."),
    "interval": dict(linestyle="-"),
}
KIND_LABEL = {"upper": "upper bound", "lower": "lower bound", "estimate": "estimate", "exact": "exact",
              "interval": "certified interval"}
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]


def _pyplot():
    import matplotlib

    matplotlib.use("agg")
    return importlib.import_module("matplotlib.pyplot")


def __getattr__(name):  # `_style.plt`: pyplot, imported on first use
    if name == "plt":
        return _pyplot()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def setup():
    import matplotlib

    plt = _pyplot()
    plt.rcParams.update({
        "figure.figsize": (6.0, 4.2),
        "font.size": 10,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        "legend.fontsize": 8,
        "legend.frameon": False,
        "savefig.bbox": "tight",
        "pdf.fonttype": 42,
    })


def label(name: str, kind: str, method: str | None = None) -> str:
    """'ε_P (upper bound, PLD)' style labels."""
    parts = [KIND_LABEL.get(kind, kind)] + ([method] if method else [])
    return f"{name} ({', '.join(parts)})"


def figure(ncols=1, nrows=1, **kw):
    setup()
    plt = _pyplot()
    w, h = plt.rcParams["figure.figsize"]
    return plt.subplots(nrows, ncols, figsize=kw.pop("figsize", (w * ncols, h * nrows)), squeeze=False, **kw)

