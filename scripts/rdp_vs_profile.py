"""Zhu et al. Fig. 1 (§3): randomized response p = e/(1+e) vs the Gaussian mechanism σ = 1.

RDP curves, trade-off functions (exact and implied by RDP) and privacy profiles; the printed
statements "GM is (0.277, 0.3)-DP" and "RR is not (ε, 0.3)-DP for ε < 0.471" are marked.
"""


import _pipeline
import _style

PANELS = {"rdp": ("order α", "RDP ε(α)", "(a) Rényi DP"),
          "tradeoff": ("type I error", "type II error", "(b) trade-off functions (f-DP)"),
          "profile": ("ε", "δ(ε)", "(c) privacy profiles")}


# columns every result row carries (tests/pipeline/test_pipeline.py RESULT_COLUMNS)
BASE = {"lower": None, "upper": None, "discretization": None, "rel_tol": None, "est_rel_error": None, "flags": ""}


def compute_point(p, n_points, n_x, **_defaults):  # rel_tol: schema default, unused
    from dpsampling.papers import zhu as dp  # not at the top: plot jobs skip it
    rows = dp.zhu_fig1_curves(p["panel"], p["mechanism"], sigma=p["sigma"], p=p["p"], n_points=n_points, n_x=n_x)
    return [{**BASE, **r} for r in rows]


def plot(df, outputs):
    fig, axes = _style.figure(ncols=3, figsize=(16, 6.2))
    for ax, (panel, (xl, yl, title)) in zip(axes[0], PANELS.items()):
        g = df[df["panel"] == panel]
        for i, ((curve, kind, method), c) in enumerate(g.groupby(["curve", "kind", "method"], sort=False)):
            if method == "cf":  # the φ accountant sits on the exact curve: markers only
                c = c.iloc[::max(1, len(c) // 20)]
                ax.plot(c["x"], c["value"], "o", ms=4, mfc="none", color="k",
                        label=_style.label(curve, kind, "φ accountant"))
                continue
            ax.plot(c["x"], c["value"], label=_style.label(curve, kind, method.replace("_", " ")),
                    color=_style.PALETTE[i % len(_style.PALETTE)], **_style.KIND_STYLE[kind])
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(title)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    ax = axes[0, 2]
    ax.axhline(0.3, color="grey", lw=0.6)
    ax.plot([0.277], [0.3], "k^", ms=6)
    ax.plot([0.471], [0.3], "kv", ms=6)
    ax.annotate("GM is (0.277, 0.3)-DP", (0.277, 0.3), (0.02, 0.08), fontsize=8, arrowprops=dict(arrowstyle="-"))
    ax.annotate("RR is not (ε, 0.3)-DP for ε < 0.471", (0.471, 0.3), (0.9, 0.36), fontsize=8,
                arrowprops=dict(arrowstyle="-"))
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
