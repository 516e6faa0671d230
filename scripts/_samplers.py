"""Shared code of the Chua et al. sampler computations (samplers_eps_vs_sigma, samplers_delta_vs_eps,
deterministic_vs_poisson): one result row per sampler, the Theorem 4.1 / provably-wrong checks and the
panel plot.  Kept apart from ``_pipeline`` so that only these scripts depend on (and are rerun by
changes to) the sampler modules.
"""

from __future__ import annotations

import _pipeline
import _style
import numpy as np
import pandas as pd

from dpsampling.engine.result import BELOW_FLOOR_FLAG
from dpsampling.papers import chua
from dpsampling.samplers import account, get_spec

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
    spec = get_spec(sampler)
    opts = {}
    if spec.batch == "rate":  # a rate sampler at q = 1/T; the PLD accuracy settings are its
        opts = dict(q=1.0 / steps, method=p.get("method", "pld"), bound="upper", rel_tol=rel_tol,
                    discretization=discretization, finest_discretization=finest_discretization)
    elif spec.option("c_grid") is not None and spec.option("c_grid").applies(quantity, spec.default_method):
        opts = dict(c_grid=c_grid)
    return account(sampler, quantity, target, sigma=p["sigma"], steps=steps, **opts)


def sampler_result_row(p, quantity, rel_tol=None, discretization=None, finest_discretization=None, c_grid=None):
    """One row: ε(δ) (``quantity="epsilon"``) or δ(ε) of one sampler at one grid point."""
    target = p["delta"] if quantity == "epsilon" else p["epsilon"]
    res = one_epoch_result(p, quantity, target, rel_tol, discretization, finest_discretization, c_grid)
    row = _pipeline.result_row(res)
    row["q"] = 1.0 / p["steps"]
    row["finest_discretization"] = res.accuracy.get("finest_discretization")
    if p["sampler"] == "shuffle":
        det = chua.deterministic_result(quantity, target, p["sigma"]).value
        margin, holds = chua.theorem_4_1_margin(res.lower, det)
        if not holds:
            raise RuntimeError(f"Theorem 4.1 violated at {p}: shuffle lower bound {res.lower!r} > "
                               f"deterministic {det!r}")
        row.update(accuracy_other="", argmax_c=res.accuracy["argmax_c"], c_grid=res.accuracy["c_grid"],
                   thm41_deterministic=det,
                   thm41_margin=float(margin), thm41_holds=bool(holds))
    return row


def _sampler_curve(g, x, sampler, method=None, column="value"):
    sel = g[(g["sampler"] == sampler) & ((g["method"] == method) if method else True)]
    return sel.set_index(x)[column].reindex(sorted(g[x].unique())).astype(float)


def _reliable_upper(g, x):
    """Valid upper bounds on the Poisson curve: PLD only above RELIABLE_DELTA_FLOOR (rows flagged below it,
    incl. φ-certified replacements, are dropped) and RDP; the best of both."""
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
        shuf = _sampler_curve(g, x, "shuffle", column="lower").to_numpy()
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
    if quantity == "delta":  # PLD δ below RELIABLE_DELTA_FLOOR is not a reliable bound: not drawn
        pld = pld[~pld["flags"].fillna("").astype(str).str.contains(BELOW_FLOOR_FLAG)]
    curves = [
        (g[g["sampler"] == "deterministic"], "value", "exact", "Prop. 3.1", "deterministic", f"{name}_D"),
        (pld, "value", "upper", "PLD, pessimistic", "pld", f"{name}_P"),
        (pld, "lower", "lower", "PLD, optimistic", "pld", f"{name}_P"),
        (g[(g["sampler"] == "poisson") & (g["method"] == "rdp")], "value", "upper", "RDP", "rdp", f"{name}_P"),
        (g[g["sampler"] == "shuffle"], "lower", "lower", chua.EC_METHOD, "shuffle", f"{name}_S"),
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
    _pipeline.write_csv(chk, checks_path)
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
    _pipeline.save_figure(fig, figure_paths)
