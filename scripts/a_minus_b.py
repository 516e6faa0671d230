"""Räisä et al. 2024, Fig. 2 / Conjecture 6.3: max over q of a − b per ε (T = 1, δ(q, σ) ≤ δ_target).

One grid point = one (c, ε): q = logspace(c·δ, q_max, n_q) (the paper: c = 4).  A job computes all
its ε at once per c (vectorised, ``effective_noise.a_minus_b_table``).  ``value`` = the exact
maximum (σ*(q, ε) by root finding of Eq. (45), kind ``exact``); ``grid`` = the authors' method
(σ grid of n_sigma points, keep δ ≤ δ_target), which is ≤ exact (``lower``): ``diff`` = exact − grid,
``diff_bound`` its bound from the grid resolution ``resolution_log_sigma``.  c = 1: at q = δ no
noise is needed (σ* = 0) and a − b = +inf.  The plot rule also writes figures/a_minus_b.md
(where a − b > 0 appears, per c; where σ_eff increases in q, i.e. Theorem 6.2's conclusion fails).
"""

import time

import numpy as np
import pandas as pd

import _pipeline
import _style
from dpsampling.papers import raisa as en

GRID = ("c", "delta", "q_max", "n_q")
COLUMNS = ("grid", "diff", "diff_bound", "resolution_log_sigma", "within_resolution", "grid_argmax_q",
           "grid_argmax_sigma", "exact_argmax_q", "exact_argmax_sigma", "sigma1", "max_delta_gap",
           "n_at_grid_floor", "n_q_sigma_eff_increasing", "q_sigma_eff_increasing_max")


def compute_points(points, n_sigma, rel_tol=None, log=None):
    """One row per point (same order); the ε of each (c, δ, q grid) are computed together.

    ``rel_tol`` (the schema's default setting) is unused: both versions are exact to ~1e-14.
    """
    groups = {}
    for i, p in enumerate(points):
        groups.setdefault(tuple(p[k] for k in GRID), []).append(i)
    rows = [None] * len(points)
    for key, idx in groups.items():
        t = time.time()
        c, delta, q_max, n_q = key
        eps = np.array([points[i]["epsilon"] for i in idx], dtype=float)
        tab = en.a_minus_b_table(eps, delta, c=c, q_max=q_max, n_q=int(n_q), n_sigma=int(n_sigma))
        for j, i in enumerate(idx):
            r = {k: tab[k][j].item() for k in COLUMNS}
            flags = []
            if not np.isfinite(tab["exact"][j]):
                flags.append("sigma_star_zero_at_q_le_delta")
            if r["n_at_grid_floor"] > 0:
                flags.append("sigma_star_below_grid")
            rows[i] = {"value": float(tab["exact"][j]), "kind": "exact", "method": "analytic",
                       "lower": r["grid"], "upper": float(tab["exact"][j]), "discretization": None,
                       "rel_tol": None, "est_rel_error": None, "n_sigma": int(n_sigma), **r, "flags": ";".join(flags)}
        if log is not None:
            log.info("c=%g: %d ε in %.2fs", c, len(idx), time.time() - t)
    return rows


def compute_point(p, n_sigma, rel_tol=None):
    return compute_points([p], n_sigma)[0]


def summary(df):
    """Per c: the largest a − b (grid, exact), where it is positive, agreement, Theorem 6.2 check."""
    out = []
    for c, g in df.groupby("c", sort=True):
        g = g.sort_values("epsilon")
        pos = g[g["grid"] > 0]
        pos_x = g[g["value"] > 0]
        fin = g[np.isfinite(g["value"]) & (g["n_at_grid_floor"] == 0)]
        inc = g[g["n_q_sigma_eff_increasing"] > 0]
        out.append({
            "c": c, "q_min": c * g["delta"].iloc[0], "n_eps": len(g),
            "max_grid": g["grid"].max(), "max_exact": g["value"].max(),
            "n_eps_positive_grid": len(pos), "n_eps_positive_exact": len(pos_x),
            "eps_positive_max": pos_x["epsilon"].max() if len(pos_x) else np.nan,
            "max_diff": fin["diff"].max() if len(fin) else np.nan, "min_diff": fin["diff"].min() if len(fin) else np.nan,
            "resolution_log_sigma": g["resolution_log_sigma"].iloc[0],
            "n_within_resolution": int(fin["within_resolution"].astype(bool).sum()), "n_comparable": len(fin),
            "max_delta_gap": g["max_delta_gap"].max(),
            "n_eps_sigma_eff_increasing": len(inc),
            "eps_sigma_eff_increasing_max": inc["epsilon"].max() if len(inc) else np.nan,
            "q_sigma_eff_increasing_max": inc["q_sigma_eff_increasing_max"].max() if len(inc) else np.nan,
        })
    return pd.DataFrame(out)


def markdown(df):
    s = summary(df)
    d = df["delta"].iloc[0]
    crit = en.conjecture63_critical_c(d)
    lines = ["| c | q, ε ≥ | max a−b (grid) | max a−b (exact) | ε with a−b>0 (grid / exact) | a−b>0 for ε ≤ | "
             "exact − grid ∈ | within resolution | max δ gap | ε with σ_eff increasing in q (up to q =) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in s.itertuples():
        lines.append(
            f"| {r.c:g} | {r.q_min:.0e} | {r.max_grid:.6g} | {r.max_exact:.6g} | "
            f"{r.n_eps_positive_grid} / {r.n_eps_positive_exact} of {r.n_eps} | "
            f"{'–' if np.isnan(r.eps_positive_max) else f'{r.eps_positive_max:.3g}'} | "
            + (f"[{r.min_diff:.1e}, {r.max_diff:.1e}] | {r.n_within_resolution} of {r.n_comparable} | "
               if r.n_comparable else "n/a (σ* = 0 at q = δ, below the σ grid) | n/a | ")
            + f"{r.max_delta_gap:.3g} | {r.n_eps_sigma_eff_increasing}"
            + ("" if np.isnan(r.q_sigma_eff_increasing_max) else f" (q ≤ {r.q_sigma_eff_increasing_max / d:.3g}δ)")
            + " |")
    n_q, q_max = int(df["n_q"].iloc[0]), df["q_max"].iloc[0]
    return (f"# Räisä et al. 2024, Fig. 2 / Conjecture 6.3 and the constant 4\n\n"
            f"δ_target = {d:g}, T = 1; per ε: q = logspace(c·δ, {q_max:g}, {n_q}), σ grid of "
            f"{int(df['n_sigma'].iloc[0])} points in [min(q) σ(1, ε), σ(1, ε)] (grid, the authors' method) and the "
            "exact σ*(q, ε) (root of Eq. (45)).  Conjecture 6.3: a − b < 0 for q, ε ≥ 4δ.  "
            "Grid ≤ exact always (grid σ ≥ σ*, a − b decreasing in σ); 'within resolution': "
            "0 ≤ exact − grid ≤ max_q a(1−e^−D) + b(e^D−1), D = Δ log σ of the grid "
            f"(= {s['resolution_log_sigma'].iloc[-1]:.4e} for the largest c).  Last column: ε for which d(σ/q)/dq > 0 at some "
            "grid q (T = 1), i.e. Theorem 6.2's conclusion fails (σ* = 0 at q = δ counts).\n\n"
            + "\n".join(lines) + "\n\n"
            f"Threshold constant (a − b = 0 at the corner q = ε = c·δ, where the maximum sits): c* = {crit:.4f}.\n")


def plot(df, outputs):
    fig, axes = _style.figure(ncols=3, figsize=(15.0, 4.2))
    ax = axes[0, 0]
    g4 = df[df["c"] == df["c"].max()].sort_values("epsilon")
    c4 = g4["c"].iloc[0]
    ax.semilogx(g4["epsilon"], g4["grid"], label=_style.label("authors' σ grid", "lower"),
                **_style.KIND_STYLE["lower"])
    ax.semilogx(g4["epsilon"], g4["value"], label=_style.label("σ* by root finding", "exact"),
                **_style.KIND_STYLE["exact"])
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("ε")
    ax.set_ylabel("max over q of a − b")
    ax.set_title(f"Fig. 2: q, ε ≥ {c4:g}δ, δ ≤ {df['delta'].iloc[0]:g}")
    ax.legend()
    ax = axes[0, 1]
    for i, (c, g) in enumerate(df.groupby("c", sort=True)):
        g = g.sort_values("epsilon")
        col = _style.PALETTE[i % len(_style.PALETTE)]
        ax.semilogx(g["epsilon"], g["grid"], color=col, label=_style.label(f"c={c:g}, grid", "lower"),
                    **_style.KIND_STYLE["lower"])
        fin = np.isfinite(g["value"])
        ax.semilogx(g["epsilon"][fin], g["value"][fin], color=col, label=_style.label(f"c={c:g}", "exact"),
                    **_style.KIND_STYLE["exact"])
    ax.set_yscale("symlog", linthresh=0.1)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("ε")
    ax.set_ylabel("max over q of a − b (symlog)")
    ax.set_title("the constant: q, ε ≥ c·δ (c = 1: a − b = +∞ exactly)")
    ax.legend(fontsize=6)
    ax = axes[0, 2]
    for i, (c, g) in enumerate(df.groupby("c", sort=True)):
        g = g[np.isfinite(g["value"]) & (g["n_at_grid_floor"] == 0)].sort_values("epsilon")
        if g.empty:
            continue
        col = _style.PALETTE[i % len(_style.PALETTE)]
        ax.loglog(g["epsilon"], g["diff"].clip(lower=1e-12), color=col, lw=0.8, label=f"c={c:g}: exact − grid")
        ax.loglog(g["epsilon"], g["diff_bound"], color=col, lw=0.8, ls=":", label=f"c={c:g}: resolution bound")
    ax.set_xlabel("ε")
    ax.set_ylabel("exact − grid")
    ax.set_title("agreement to the σ grid's resolution")
    ax.legend(fontsize=6)
    fig.tight_layout()
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    report = _pipeline.figure_and_markdown(plot, markdown)
    _pipeline.main(snakemake, compute_points=compute_points, report=report)  # noqa: F821 - injected by Snakemake
