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

import _style
import numpy as np
import pandas as pd
from dpsampling.engine.result import BELOW_FLOOR_FLAG
from dpsampling.papers import chua
from dpsampling.samplers import account, deterministic, shuffle

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


def result_row(res) -> dict:
    """Flatten a dpsampling.AccountingResult into CSV columns."""
    acc = dict(res.accuracy)
    return {
        "value": res.value,
        "kind": res.kind,
        "method": res.method,
        "lower": res.lower,
        "upper": res.upper,
        "discretization": acc.pop("discretization", None),
        "rel_tol": acc.pop("rel_tol", None),
        "est_rel_error": acc.pop("est_rel_error", None),
        "accuracy_other": json.dumps(acc, sort_keys=True) if acc else "",
        "flags": ";".join(res.flags),
    }


def run_chunk(smk, compute_point=None, compute_points=None) -> None:
    """Compute every point of this chunk, logging progress, and write one CSV.

    ``compute_point(point, **settings)`` returns the result columns of one grid
    point: a dict (one row) or a list of dicts (several rows, e.g. a curve over ε).
    Alternatively ``compute_points(points, **settings)`` handles the whole chunk
    at once (e.g. warm-started solves along a curve) and returns one dict per point.
    """
    log = logger(smk)
    points = list(smk.params.points)
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
    write_csv(df, smk.output[0])
    log.info("chunk done: %d points in %.1fs", len(points), time.time() - t0)


def figure_and_markdown(plot, markdown):
    """A ``report`` for plot rules with outputs pdf, png and md: ``plot(df, [pdf, png])`` and ``markdown(df)``."""

    def report(df, out):
        plot(df, [out.pdf, out.png])
        write_text(markdown(df), out.md)

    return report


def main(smk, compute_point=None, compute_points=None, report=None) -> None:
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
        run_chunk(smk, compute_point, compute_points)


# --------------------------------------------------------------------------- Chua et al. sampler figures
# shared by samplers_eps_vs_sigma.py and samplers_delta_vs_eps.py (ε vs σ and δ vs ε, one epoch per sampler)


SAMPLER_QUANTITY_SYMBOL = {"epsilon": "ε", "delta": "δ"}
SAMPLER_COLOR = {"deterministic": _style.PALETTE[7], "pld": _style.PALETTE[0], "rdp": _style.PALETTE[2],
                 "shuffle": _style.PALETTE[1]}
PROVABLY_WRONG_COLOR = "#D55E00"


def one_epoch_result(p, quantity, target, rel_tol=None, discretization=None, finest_discretization=None,
                     c_grid=None):
    """:func:`dpsampling.samplers.account` for one epoch of ``p["steps"]`` batches (Chua et al.): Poisson at
    q = 1/T (``p["method"]``, upper bound; the accuracy settings apply to it), shuffle with ``c_grid``,
    deterministic exact."""
    sampler, steps = p["sampler"], p["steps"]
    opts = {}
    if sampler == "poisson":
        opts = dict(q=1.0 / steps, method=p.get("method", "pld"), bound="upper", rel_tol=rel_tol,
                    discretization=discretization, finest_discretization=finest_discretization)
    elif sampler == "shuffle":
        opts = dict(c_grid=c_grid)
    return account(sampler, quantity, target, sigma=p["sigma"], steps=steps, **opts)


def sampler_result_row(p, quantity, rel_tol=None, discretization=None, finest_discretization=None, c_grid=None):
    """One row: ε(δ) (``quantity="epsilon"``) or δ(ε) of one sampler at one grid point."""
    target = p["delta"] if quantity == "epsilon" else p["epsilon"]
    res = one_epoch_result(p, quantity, target, rel_tol, discretization, finest_discretization, c_grid)
    row = result_row(res)
    row["q"] = 1.0 / p["steps"]
    row["finest_discretization"] = res.accuracy.get("finest_discretization")
    if p["sampler"] == "shuffle":
        det = deterministic.deterministic_result(quantity, target, p["sigma"]).value
        margin, holds = chua.theorem_4_1_margin(res.value, det)
        if not holds:
            raise RuntimeError(f"Theorem 4.1 violated at {p}: shuffle lower bound {res.value!r} > "
                               f"deterministic {det!r}")
        row.update(accuracy_other="", argmax_c=res.accuracy["argmax_c"], c_grid=res.accuracy["c_grid"],
                   thm41_deterministic=det,
                   thm41_margin=float(margin), thm41_holds=bool(holds))
    return row


def _sampler_curve(g, x, sampler, method=None, column="value"):
    sel = g[(g["sampler"] == sampler) & ((g["method"] == method) if method else True)]
    return sel.set_index(x)[column].reindex(sorted(g[x].unique())).astype(float)


def _reliable_upper(g, x):
    """Valid upper bounds on the Poisson curve: PLD (unless flagged below 1e-12) and RDP; the best of both."""
    pld = g[(g["sampler"] == "poisson") & (g["method"] == "pld")].set_index(x)
    flags = pld["flags"].fillna("").astype(str)
    pld_up = pld["value"].where(~flags.str.contains(BELOW_FLOOR_FLAG))
    xs = sorted(g[x].unique())
    pld_up = pld_up.reindex(xs).astype(float)
    rdp_up = _sampler_curve(g, x, "poisson", "rdp")
    best = np.fmin(pld_up.to_numpy(), rdp_up.to_numpy())
    which = np.where(np.isnan(best), "", np.where(pld_up.to_numpy() == best, "pld", "rdp"))
    return pld_up, rdp_up, best, which


def sampler_checks(df, panel_keys, x):
    """Per panel and x: Theorem 4.1 margin and whether Poisson accounting is provably wrong (+ intervals)."""
    out = []
    for key, g in df.groupby(panel_keys, sort=True):
        xs = np.array(sorted(g[x].unique()), dtype=float)
        det = _sampler_curve(g, x, "deterministic").to_numpy()
        shuf = _sampler_curve(g, x, "shuffle").to_numpy()
        pld_up, rdp_up, best, which = _reliable_upper(g, x)
        margin, holds = chua.theorem_4_1_margin(shuf, det)
        if not holds.all():
            bad = xs[~holds]
            raise RuntimeError(f"Theorem 4.1 violated (shuffle lower bound > deterministic) at {panel_keys}={key}, "
                               f"{x} in {bad.tolist()}")
        wrong = chua.provably_wrong_mask(shuf, best)
        regions = chua.provably_wrong_intervals(xs, shuf, best)
        start = np.full(xs.shape, np.nan)
        end = np.full(xs.shape, np.nan)
        for a, b in regions:
            inside = (xs >= a) & (xs <= b)
            start[inside], end[inside] = a, b
        key = key if isinstance(key, tuple) else (key,)
        out.append(pd.DataFrame({
            **{k: v for k, v in zip(panel_keys, key)},
            x: xs,
            "deterministic": det,
            "shuffle_lower": shuf,
            "poisson_pld_upper": pld_up.to_numpy(),
            "poisson_rdp_upper": rdp_up.to_numpy(),
            "poisson_upper": best,
            "poisson_upper_method": which,
            "thm41_margin": margin,
            "thm41_holds": holds,
            "provably_wrong": wrong,
            "region_start": start,
            "region_end": end,
        }))
    return pd.concat(out, ignore_index=True)


def _positive(s):
    s = s.astype(float)
    return s[(s > 0) & np.isfinite(s)]


def draw_sampler_panel(ax, g, x, quantity, chk):
    """The curves of one paper figure, in the paper's layout (log-scale y)."""
    name = SAMPLER_QUANTITY_SYMBOL[quantity]
    pld = g[(g["sampler"] == "poisson") & (g["method"] == "pld")].sort_values(x)
    if quantity == "delta":  # PLD δ below 1e-12 is not a reliable bound: not drawn
        pld = pld[~pld["flags"].fillna("").astype(str).str.contains(BELOW_FLOOR_FLAG)]
    curves = [
        (g[g["sampler"] == "deterministic"], "value", "exact", "Prop. 3.1", "deterministic", f"{name}_D"),
        (pld, "value", "upper", "PLD, pessimistic", "pld", f"{name}_P"),
        (pld, "lower", "lower", "PLD, optimistic", "pld", f"{name}_P"),
        (g[(g["sampler"] == "poisson") & (g["method"] == "rdp")], "value", "upper", "RDP", "rdp", f"{name}_P"),
        (g[g["sampler"] == "shuffle"], "value", "lower", shuffle.EC_METHOD, "shuffle", f"{name}_S"),
    ]
    for sub, col, kind, method, color, label in curves:
        marker = "." if g[x].nunique() < 30 else None
        sub = sub.sort_values(x).set_index(x)
        s = _positive(sub[col])
        if len(s):
            ax.plot(s.index, s.to_numpy(), color=SAMPLER_COLOR[color], marker=marker, label=_style.label(label, kind, method),
                    **_style.KIND_STYLE[kind])
        if color == "pld" and col == "value":  # refinement stopped at finest_discretization: still a valid bound
            nc = sub[sub["flags"].fillna("").astype(str).str.contains("not_converged")][col]
            if len(nc):
                ax.plot(nc.index, nc.to_numpy(), "x", color=SAMPLER_COLOR[color], ms=5, ls="none",
                        label=f"{label} PLD not refined to rel_tol (valid, looser upper bound)")
    shaded = False
    for a, b in {(r.region_start, r.region_end) for r in chk.itertuples() if r.provably_wrong}:
        ax.axvspan(a, b, color=PROVABLY_WRONG_COLOR, alpha=0.12, lw=0,
                   label=None if shaded else f"{name}_S lower bound > best {name}_P upper bound:\n"
                                             "Poisson accounting provably wrong for shuffling")
        shaded = True
    ax.set_yscale("log")
    if quantity == "delta":  # as in the paper: δ axis down to ~1e-14 (RDP tails go far below)
        ax.set_ylim(bottom=max(ax.get_ylim()[0], 1e-14))


def plot_sampler_figure(df, figure_paths, checks_path, *, quantity, panel_keys, x, titles, xlabel, panel_text):
    """One panel per paper figure (``titles``: panel key -> paper figure), the sampler_checks CSV, and the files."""
    chk = sampler_checks(df, panel_keys, x)
    write_csv(chk, checks_path)
    groups = [((float(k[0]), int(k[1])), g) for k, g in df.groupby(panel_keys, sort=True)]
    order = {k: i for i, k in enumerate(titles)}
    groups.sort(key=lambda kg: (order.get(kg[0], len(order)), kg[0]))
    ncols = min(3, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = _style.figure(ncols=ncols, nrows=nrows)
    for ax in axes.ravel()[len(groups):]:
        ax.set_visible(False)
    for ax, (key, g) in zip(axes.ravel(), groups):
        mask = np.logical_and.reduce([np.isclose(chk[k], v, rtol=1e-12) for k, v in zip(panel_keys, key)])
        draw_sampler_panel(ax, g, x, quantity, chk[mask])
        text = panel_text(key)
        ax.set_title(f"{titles[key]}\n{text}" if key in titles else text, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(SAMPLER_QUANTITY_SYMBOL[quantity])
        ax.legend(fontsize=6.5, loc="best")
    save_figure(fig, figure_paths)

