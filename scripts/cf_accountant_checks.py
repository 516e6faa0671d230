"""Zhu et al. Fig. 3 (§5): the φ accountant over compositions k.

(a) Gaussian σ ∈ {50, 100}, ε(δ = 1e-4): φ vs the analytic Gaussian (σ/√k, exact) vs RDP.
(b) alternating Gaussian σ = 5 / randomized response p = 0.52, δ(ε = 2): φ vs PLD bounds vs RDP.
(c) Poisson-subsampled Gaussian γ = 0.01, σ = 2, ε(δ = 1e-5): φ vs PLD upper/lower vs RDP.
"""


import _pipeline
import _style

METHOD_NAME = {"cf": "φ accountant", "analytic": "analytic Gaussian", "pld": "PLD", "rdp": "RDP"}


def _row(res, curve, value=None, kind=None):
    row = {**_pipeline.result_row(res), "curve": curve}
    if value is not None:
        row.update(value=value, kind=kind)
    return row


def compute_point(p, rel_tol, discretization):
    from dpsampling.engine import accountant
    from dpsampling.papers import zhu as dp  # not at the top: plot jobs skip it
    k = int(p["steps"])
    if p["panel"] == "a":  # T Gaussians = one Gaussian with σ/√T; q = 1
        kw = dict(sigma=p["sigma"], q=1.0, total_steps=k)
        curve = f"σ={p['sigma']:g}"
        return [_row(accountant.epsilon(p["delta"], method=m, **kw), curve) for m in ("cf", "analytic", "rdp")]
    if p["panel"] == "b":
        kw = dict(sigma=p["sigma"], p=p["p"], steps=k, discretization=discretization)
        rows = [_row(dp.heterogeneous_delta(p["epsilon"], method="cf", **kw), "GM/RR")]
        rows += [_row(dp.heterogeneous_delta(p["epsilon"], method="pld", bound=b, **kw), "GM/RR")
                 for b in ("upper", "lower")]
        return rows + [_row(dp.heterogeneous_delta(p["epsilon"], method="rdp", **kw), "GM/RR")]
    kw = dict(sigma=p["sigma"], q=p["q"], total_steps=k, direction=p["direction"])
    pld = accountant.epsilon(p["delta"], rel_tol=rel_tol, **kw)
    return [_row(accountant.epsilon(p["delta"], method="cf", rel_tol=rel_tol, **kw), "subsampled GM"),
            _row(pld, "subsampled GM"),
            _row(pld, "subsampled GM", value=pld.lower, kind="lower"),
            _row(accountant.epsilon(p["delta"], method="rdp", **kw), "subsampled GM")]


def plot(df, outputs):
    fig, axes = _style.figure(ncols=3)
    titles = {"a": "(a) Gaussian, δ = {delta:g}", "b": "(b) GM σ={sigma:g} / RR p={p:g}, ε = {epsilon:g}",
              "c": "(c) Poisson-subsampled GM, σ={sigma:g}, γ={q:g}, δ = {delta:g}"}
    ylabels = {"a": "ε", "b": "δ(ε)", "c": "ε"}
    colors = {"cf": 0, "analytic": 1, "pld": 2, "rdp": 3}
    for ax, panel in zip(axes[0], ("a", "b", "c")):
        g = df[df["panel"] == panel]
        if g.empty:
            ax.set_visible(False)
            continue
        curve_color = {cv: _style.PALETTE[i] for i, cv in enumerate(g["curve"].unique())}
        for (curve, method, kind), c in g.groupby(["curve", "method", "kind"], sort=False):
            c = c.sort_values("steps")
            if panel == "b" and method == "pld":  # PLD δ below 1e-12 is not reliable: not drawn
                c = c[c["value"] >= 1e-12]
            style = dict(_style.KIND_STYLE[kind])
            if method == "cf":
                style = dict(linestyle="none", marker="o", ms=4, mfc="none")
            color = curve_color[curve] if panel == "a" else _style.PALETTE[colors[method]]
            ax.plot(c["steps"], c["value"], color=color, label=_style.label(
                f"{curve}" if panel == "a" else METHOD_NAME[method], kind,
                METHOD_NAME[method] if panel == "a" else None), **style)
        ax.set_xscale("log")
        if panel == "b":
            ax.set_yscale("log")
            ax.set_ylabel("δ(ε)  (PLD drawn where ≥ 1e-12)")
        first = g.iloc[0]
        ax.set_title(titles[panel].format(**{k: first[k] for k in ("delta", "sigma", "p", "epsilon", "q")
                                             if k in first}), fontsize=8)
        ax.set_xlabel("compositions k")
        if panel != "b":
            ax.set_ylabel(ylabels[panel])
        ax.legend(fontsize=6)
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
