"""Lebeda et al. Fig. 4 (§8): the Gaussian mechanism under substitution with sampling without
replacement (σ = 4, γ = 0.05, data in [-1, 1] so Δ = 2).

Left: one-step hockey-stick curves; Theorem 14 (= Zhu Prop. 30): the remove branch bounds α ≥ 1,
the add branch α < 1, and the pointwise maximum (split at ε = 0) is a valid profile.
Right: k = 1000 compositions: the dominating pair built from that maximum (connect-the-dots PLD,
self-composed: upper bound), the remove-direction composition (φ accountant: lower bound, realised
by a pair of datasets), the RDP accountant for WOR + substitution (an upper bound) and, dotted as in
the paper, the RDP curve of Poisson subsampling under add/remove (a reference of scale, no bound here:
the upper bound exceeds it for ε ≳ 1.5, "does not generally outperform the RDP accountant").
"""

import numpy as np

import _pipeline
import _style

BASE = {"lower": None, "upper": None, "discretization": None, "rel_tol": None, "est_rel_error": None, "flags": ""}
REFERENCE = "RDP, Poisson add/remove (the paper's dotted reference; no bound here)"
NAMES = {"remove": "H_α((1-γ)Q+γP ‖ Q)  (α ≥ 1 branch)", "add": "H_α(Q ‖ (1-γ)Q+γP)  (α < 1 branch)",
         "add_remove": "pointwise max (Thm 14 split)"}


def compute_point(p, eps_min, eps_max, n_eps, n_eps_exact, discretization, **_defaults):  # rel_tol unused
    from dpsampling.papers import zhu as dp  # not at the top: plot jobs skip it
    from dpsampling.papers.lebeda import wor_substitution as ws
    s, g, sens = p["sigma"], p["q"], p["sensitivity"]
    if p["panel"] == "one_step":
        eps = np.linspace(eps_min, eps_max, n_eps_exact)
        if p["direction"] == "add_remove":
            h = ws.wor_substitution_profile(eps, s, g, sens)
        else:
            h = dp.hs_subsampled_gaussian(eps, s, g, p["direction"], sens)
        return [{**BASE, "curve": NAMES[p["direction"]], "x": float(e), "value": float(v), "kind": "exact",
                 "method": "closed_form"} for e, v in zip(eps, h)]
    eps = np.linspace(max(eps_min, 0.0), eps_max, n_eps)
    c = ws.wor_substitution_curves(eps, s, g, int(p["steps"]), sens, discretization=discretization,
                                   dataset_size=int(p["dataset_size"]))
    rows = []
    for i, e in enumerate(eps):
        rows.append({**BASE, "curve": "dominating pair (max profile), self-composed", "x": float(e),
                     "value": float(c["upper"][i]), "kind": "upper", "method": "pld_connect_dots",
                     "discretization": discretization})
        lo, er = float(c["lower"][i]), float(c["lower_err"][i])
        rows.append({**BASE, "curve": "remove direction ~_R, composed", "x": float(e), "value": lo, "kind": "lower",
                     "method": "cf", "lower": max(lo - er, 0.0), "upper": lo + er})
        if np.isfinite(c["rdp"][i]):
            rows.append({**BASE, "curve": "RDP accountant (WOR, substitution)", "x": float(e),
                         "value": float(c["rdp"][i]), "kind": "upper", "method": "rdp"})
        if np.isfinite(c["rdp_poisson"][i]):  # the paper's dotted line: not a bound for WOR + substitution
            rows.append({**BASE, "curve": REFERENCE, "x": float(e), "value": float(c["rdp_poisson"][i]),
                         "kind": "upper", "method": "rdp_reference"})
    return rows


def plot(df, outputs):
    fig, axes = _style.figure(ncols=2)
    ax = axes[0, 0]
    one = df[df["panel"] == "one_step"]
    styles = {"add_remove": dict(color="#D62728", lw=3, alpha=0.35), "remove": dict(color=_style.PALETTE[0]),
              "add": dict(color=_style.PALETTE[1], linestyle="--")}
    for d in ("add_remove", "remove", "add"):
        g = one[one["direction"] == d].sort_values("x")
        ax.plot(g["x"], g["value"], label=_style.label(NAMES[d], "exact", "closed form"), **styles[d])
    # zoom on where the curves differ from the trivial bound (1 - α)_+ (there they all coincide)
    live = one[one["value"] - np.maximum(0.0, -np.expm1(one["x"])) > 1e-4]
    if len(live):
        lo, hi = live["x"].min(), live["x"].max()
        ax.set_xlim(lo, hi)
        ax.set_ylim(0, 1.05 * one[(one["x"] >= lo) & (one["x"] <= hi)]["value"].max())
    ax.axvline(0.0, color="grey", lw=0.6)
    p = df.iloc[0]
    ax.set_xlabel("ε")
    ax.set_ylabel("hockey-stick divergence (one step)")
    ax.set_title(f"one iteration: σ={p['sigma']:g}, γ={p['q']:g}, Δ={p['sensitivity']:g}", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    comp = df[df["panel"] == "composed"]
    colors = {"pld_connect_dots": _style.PALETTE[1], "cf": _style.PALETTE[0], "rdp": "grey", "rdp_reference": "k"}
    names = {"cf": "φ accountant", "rdp": "RDP", "pld_connect_dots": "PLD", "rdp_reference": "RDP"}
    for (curve, method, kind), g in comp.groupby(["curve", "method", "kind"], sort=False):
        g = g.sort_values("x")
        style = dict(_style.KIND_STYLE[kind], color=colors[method])
        if method == "rdp_reference":  # dotted, as in the paper: a reference of scale, no bound here
            style["linestyle"] = ":"
        ax.semilogy(g["x"], g["value"], label=_style.label(curve, "reference" if method == "rdp_reference" else kind,
                                                           names[method]), **style)
    k = comp["steps"].dropna().iloc[0] if len(comp) else float("nan")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title(f"{int(k)} iterations (substitution, WOR)", fontsize=9)
    ax.legend(fontsize=7)
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
