"""Zhu et al. Fig. 4 (App. C.4, Prop. 30): one-step hockey-stick curves of the Poisson-subsampled
Gaussian (σ = 1, γ = 0.5): H_α((1-γ)Q+γP ‖ Q) (remove) dominates for α ≥ 1, the add curve
H_α(P ‖ (1-γ)P+γQ) for α < 1; add_remove is their pointwise maximum."""

import numpy as np

import _pipeline
import _style

BASE = {"lower": None, "upper": None, "discretization": None, "rel_tol": None, "est_rel_error": None, "flags": ""}
NAMES = {"remove": "H_α((1-γ)Q+γP ‖ Q)  (remove)", "add": "H_α(P ‖ (1-γ)P+γQ)  (add)",
         "add_remove": "pointwise max"}


def compute_point(p, eps_min, eps_max, n_eps, **_defaults):  # rel_tol: schema default, unused
    from dpsampling.papers import zhu as dp  # not at the top: plot jobs skip it
    from dpsampling.papers.lebeda import wor_substitution as ws
    eps = np.linspace(eps_min, eps_max, n_eps)
    if p["direction"] == "add_remove":
        h = ws.wor_substitution_profile(eps, p["sigma"], p["q"], sensitivity=1.0)
    else:
        h = dp.hs_subsampled_gaussian(eps, p["sigma"], p["q"], p["direction"])
    return [{**BASE, "x": float(e), "alpha": float(np.exp(e)), "value": float(v), "kind": "exact",
             "method": "closed_form"} for e, v in zip(eps, h)]


def plot(df, outputs):
    fig, axes = _style.figure()
    ax = axes[0, 0]
    styles = {"add_remove": dict(color="#D62728", lw=3, alpha=0.35), "remove": dict(color=_style.PALETTE[0]),
              "add": dict(color=_style.PALETTE[2], linestyle="--")}
    for d in ("add_remove", "remove", "add"):
        g = df[df["direction"] == d].sort_values("alpha")
        ax.plot(g["alpha"], g["value"], label=_style.label(NAMES[d], "exact", "closed form"), **styles[d])
    ax.axvline(1.0, color="grey", lw=0.6)
    p = df.iloc[0]
    ax.set_xlabel("α = e^ε")
    ax.set_ylabel("H_α  (one step)")
    ax.set_xlim(0, min(df["alpha"].max(), 4.0))
    ax.set_title(f"Poisson-subsampled Gaussian, σ={p['sigma']:g}, γ={p['q']:g}")
    ax.legend()
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
