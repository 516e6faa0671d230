"""Chua et al. Fig. 2: δ_D (exact) and lower/upper bounds on δ_P (one epoch, q = 1/T) for σ=0.3, T=10.

The plot rule also writes ``results/deterministic_vs_poisson/crossings.csv``:
ε0 (below it δ_D > upper bound on δ_P: deterministic batching provably worse),
ε1 (above it lower bound on δ_P > δ_D: Poisson provably worse), their gap and
whether ε0 = ε1 within the grid resolution (evidence for Conjecture 4.3).
"""

import _pipeline
import _samplers
import _style
import numpy as np
import pandas as pd

from dpsampling.engine.result import BELOW_FLOOR_FLAG
from dpsampling.papers import chua

COLOR = {"deterministic": _style.PALETTE[7], "pld": _style.PALETTE[0]}


def compute_point(p, rel_tol=None, discretization=None, finest_discretization=None):
    res = _samplers.one_epoch_result(p, "delta", p["epsilon"], rel_tol, discretization, finest_discretization)
    return {**_pipeline.result_row(res), "q": 1.0 / p["steps"]}


def crossings(df):
    rows = []
    for (sigma, steps), g in df.groupby(["sigma", "steps"], sort=True):
        d = g[g["sampler"] == "deterministic"].set_index("epsilon")["value"].sort_index()
        p = g[g["sampler"] == "poisson"].set_index("epsilon").reindex(d.index)
        c = chua.deterministic_vs_poisson_crossings(d.index.to_numpy(), d.to_numpy(), p["lower"].to_numpy(),
                                                        p["upper"].to_numpy())
        rows.append({"sigma": sigma, "steps": steps, **c, "discretization": p["discretization"].max()})
    return pd.DataFrame(rows)


def plot(df, figure_paths, crossings_path):
    cr = crossings(df)
    _pipeline.write_csv(cr, crossings_path)
    groups = list(df.groupby(["sigma", "steps"], sort=True))
    fig, axes = _style.figure(ncols=len(groups))
    for ax, ((sigma, steps), g), (_, c) in zip(axes.ravel(), groups, cr.iterrows()):
        d = g[g["sampler"] == "deterministic"].sort_values("epsilon")
        p = g[g["sampler"] == "poisson"].sort_values("epsilon")
        ok = ~p["flags"].fillna("").astype(str).str.contains(BELOW_FLOOR_FLAG)
        ax.plot(d["epsilon"], d["value"], color=COLOR["deterministic"], label=_style.label("δ_D", "exact", "Prop. 3.1"),
                **_style.KIND_STYLE["exact"])
        ax.plot(p["epsilon"][ok], p["upper"][ok], color=COLOR["pld"],
                label=_style.label("δ_P", "upper", "PLD, pessimistic"), **_style.KIND_STYLE["upper"])
        lo = p["lower"].astype(float)
        ax.plot(p["epsilon"][ok & (lo > 0)], lo[ok & (lo > 0)], color=_style.PALETTE[5],
                label=_style.label("δ_P", "lower", "PLD, optimistic"), **_style.KIND_STYLE["lower"])
        x0, x1 = float(d["epsilon"].min()), float(d["epsilon"].max())
        if np.isfinite(c["eps0"]):
            ax.axvspan(x0, c["eps0"], color=COLOR["deterministic"], alpha=0.07, lw=0,
                       label=f"ε < ε0 = {c['eps0']:.3f}: δ_D > δ_P (deterministic worse)")
        if np.isfinite(c["eps1"]):
            ax.axvspan(c["eps1"], x1, color=COLOR["pld"], alpha=0.07, lw=0,
                       label=f"ε > ε1 = {c['eps1']:.3f}: δ_P > δ_D (Poisson worse)")
        verdict = "ε0 = ε1 within resolution" if c["equal_within_resolution"] else "ε0 ≠ ε1 at this resolution"
        ax.set_title(f"Chua Fig. 2: δ vs ε at σ={sigma:g}, T={int(steps):,} (q=1/T)\n"
                     f"{verdict} (|ε1−ε0| = {abs(c['gap']):.2g}, grid step {c['resolution']:.2g}; Conj. 4.3)",
                     fontsize=9)
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("δ")
        ax.legend(fontsize=7, loc="lower left")
    _pipeline.save_figure(fig, figure_paths)


def report(df, out):
    plot(df, [out.pdf, out.png], out.crossings)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=report)  # noqa: F821 - injected by Snakemake
