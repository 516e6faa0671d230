"""Lebeda et al. Fig. 2: smallest σ for (ε, δ) vs sampling rate, Poisson vs WOR."""

import _pipeline
import _style


def compute_points(points, rel_tol, log):
    """σ for every point, one warm-started curve per (sampler, ε, δ, T, direction)."""
    from dpsampling.papers.lebeda.sampling_schemes import sigma_curve  # not at the top: plot jobs skip it
    key = ("sampler", "epsilon", "delta", "steps", "direction")
    rows = {}
    for line in sorted({tuple(p[k] for k in key) for p in points}):
        pts = [p for p in points if tuple(p[k] for k in key) == line]
        kw = dict(zip(key, line))
        res = sigma_curve(kw["epsilon"], kw["delta"], [p["q"] for p in pts], steps=kw["steps"],
                          sampler=kw["sampler"], direction=kw["direction"], rel_tol=rel_tol)
        rows.update({p["point_id"]: _pipeline.result_row(r) for p, r in zip(pts, res)})
        log.info("curve %s: %d points done (%d/%d)", kw, len(pts), len(rows), len(points))
    return [rows[p["point_id"]] for p in points]


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


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_points=compute_points, report=plot)  # noqa: F821 - injected by Snakemake
