"""Lebeda et al. Fig. 2: smallest σ for (ε, δ) vs sampling rate, Poisson vs WOR."""

import numpy as np
import pandas as pd

import _pipeline
import _style
from dpsampling import accountant


def compute_point(p, rel_tol):
    res = accountant.calibrate_sigma(p["epsilon"], p["delta"], q=p["q"], steps=p["steps"],
                                     sampler=p["sampler"], direction=p["direction"], rel_tol=rel_tol)
    return _pipeline.result_row(res)


def plot(df, outputs):
    fig, axes = _style.figure()
    ax = axes[0, 0]
    for i, ((sampler, eps), g) in enumerate(df.groupby(["sampler", "epsilon"], sort=True)):
        g = g.sort_values("q")
        kind = g["kind"].iloc[0] if g["kind"].nunique() == 1 else "upper"
        name = {"poisson": "Poisson", "wor": "WOR"}[sampler]
        ax.loglog(g["q"], g["value"], marker="o" if sampler == "wor" else None, markersize=3,
                  label=_style.label(f"{name}, ε={eps:g}", kind, "PLD"), **_style.KIND_STYLE["upper"])
    d, t = df["delta"].iloc[0], df["steps"].iloc[0]
    ax.set_xlabel("sampling rate γ")
    ax.set_ylabel("smallest noise multiplier σ")
    ax.set_title(f"σ for (ε, δ={d:g})-DP after T={t:,} steps (add/remove)")
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.axhline(2.0, color="grey", lw=0.6)
    ax.legend()
    _pipeline.save_figure(fig, outputs)
    _style.close(fig)


if __name__ == "__main__":
    smk = snakemake  # noqa: F821 - injected by Snakemake
    if smk.rule.endswith("_plot"):
        plot(pd.read_csv(smk.input[0]), smk.output)
    else:
        _pipeline.run_chunk(smk, compute_point)
