"""Räisä et al. 2024, Fig. 1: effective noise σ_eff = σ(q, T)/q against q (Poisson, add/remove).

One grid point = one (ε, T, q).  With ``chunk_by: [epsilon, steps]`` a job holds whole (ε, T)
curves, which the library solves left to right in q with warm starts
(``effective_noise.sigma_curve``).  T = 1 and q = 1 are exact (Eq. (45) root; √T × analytic
Gaussian), other σ are sufficient by the pessimistic PLD (kind ``upper``).  Extra columns:
``sigma_eff`` = σ/q, ``sigma_q1`` = σ(1, T) and ``ratio`` = σ(q, T)/(q σ(1, T)) (Corollary 5.4).
The plot rule also writes figures/effective_noise.md: per (ε, T) the ratio at the smallest q
(→ 1 as T grows) and the check that σ_eff decreases in q.
"""

import time

import numpy as np
import pandas as pd

import _pipeline
import _style
from dpsampling.papers import raisa as en

CURVE = ("epsilon", "delta", "steps", "sampler", "direction")


def compute_points(points, rel_tol, log=None):
    """One row per point (same order), each (ε, δ, T) curve calibrated along increasing q."""
    groups = {}
    for i, p in enumerate(points):
        if p["sampler"] != "poisson":
            raise ValueError(f"sampler must be poisson for effective_noise (got {p['sampler']!r})")
        groups.setdefault(tuple(p[k] for k in CURVE), []).append(i)
    rows = [None] * len(points)
    for n, (key, idx) in enumerate(groups.items(), 1):
        t = time.time()
        eps, delta, steps, _, direction = key
        idx = sorted(idx, key=lambda i: points[i]["q"])
        qs = [points[i]["q"] for i in idx]
        results = en.sigma_curve(eps, delta, qs, steps, direction=direction, rel_tol=rel_tol)
        s1 = en.sigma_q1(eps, delta, steps)
        for i, q, res in zip(idx, qs, results):
            rows[i] = {**_pipeline.result_row(res), "sigma_eff": res.value / q, "sigma_q1": s1,
                       "ratio": float(en.corollary54_ratio(res.value, q, s1))}
        if log is not None:
            log.info("curve %d/%d (ε=%g, T=%d): %d points in %.1fs", n, len(groups), eps, steps, len(idx),
                     time.time() - t)
    return rows


def compute_point(p, rel_tol):
    return compute_points([p], rel_tol)[0]


def summary(df):
    """Per (ε, T): σ(1, T), the Corollary 5.4 ratio at the smallest q, and the monotonicity check."""
    out = []
    for (eps, steps), g in df.groupby(["epsilon", "steps"], sort=True):
        g = g.sort_values("q")
        chk = en.sigma_eff_check(g["q"].to_numpy(), g["sigma_eff"].to_numpy(),
                                 pd.to_numeric(g["est_rel_error"], errors="coerce").fillna(0.0).to_numpy())
        out.append({"epsilon": eps, "steps": int(steps), "q_min": g["q"].iloc[0], "sigma_q1": g["sigma_q1"].iloc[0],
                    "ratio_at_q_min": g["ratio"].iloc[0], "min_ratio": g["ratio"].min(), **chk,
                    "max_est_rel_error": pd.to_numeric(g["est_rel_error"], errors="coerce").max(),
                    "n_flagged": int(g["flags"].fillna("").astype(str).str.len().gt(0).sum()),
                    "kinds": "/".join(sorted(g["kind"].unique()))})
    return pd.DataFrame(out)


def markdown(df):
    s = summary(df)
    d = df["delta"].iloc[0]
    steps = sorted(s["steps"].unique())
    head = ("| ε | " + " | ".join(f"T={t:,}" for t in steps) + " |\n|---|" + "---|" * len(steps) + "\n")
    rows = []
    for eps, g in s.groupby("epsilon", sort=True):
        cell = g.set_index("steps")["ratio_at_q_min"]
        rows.append(f"| {eps:g} | " + " | ".join(f"{cell[t]:.4g}" if t in cell else "–" for t in steps) + " |")
    bad = s[s["n_increases_beyond_error"] > 0]
    noisy = s[(s["n_increases"] > 0) & (s["n_increases_beyond_error"] == 0)]
    check = ("σ_eff decreases in q on every curve" if bad.empty and noisy.empty else
             f"σ_eff decreases in q on every curve up to the calibration error ({len(noisy)} curves have "
             f"increases smaller than their points' estimated errors)" if bad.empty else
             f"σ_eff INCREASES beyond the estimated error on {len(bad)} curves: "
             + ", ".join(f"(ε={r.epsilon:g}, T={r.steps})" for r in bad.itertuples()))
    detail = ["| ε | T | σ(1,T) | ratio at q_min | min ratio | increases (beyond error) | max rel. change (< 0: decreasing) | "
              "max est. rel. error | flagged | kind |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in s.itertuples():
        detail.append(f"| {r.epsilon:g} | {r.steps:,} | {r.sigma_q1:.5g} | {r.ratio_at_q_min:.5g} | {r.min_ratio:.6g} | "
                      f"{r.n_increases} ({r.n_increases_beyond_error}) | {r.max_rel_increase:.2e} | "
                      f"{'0 (exact)' if np.isnan(r.max_est_rel_error) else f'{r.max_est_rel_error:.1e}'} | {r.n_flagged} | {r.kinds} |")
    return (f"# Räisä et al. 2024, Fig. 1 / Corollary 5.4\n\n"
            f"σ(q, T)/(q σ(1, T)) at the smallest q = {s['q_min'].min():g} (δ = {d:g}, Poisson, add/remove); "
            "Corollary 5.4: → 1 as T → ∞.\n\n" + head + "\n".join(rows) + "\n\n"
            f"Check: {check}.  σ(q, T) for T > 1 and q < 1 is an upper bound (pessimistic PLD, dp_accounting) "
            "within its estimated relative error; T = 1 and q = 1 are exact.\n\n" + "\n".join(detail) + "\n")


def plot(df, outputs):
    eps_values = sorted(df["epsilon"].unique())
    steps = sorted(df["steps"].unique())
    ncols = 4
    nrows = int(np.ceil((len(eps_values) + 1) / ncols))
    fig, axes = _style.figure(ncols=ncols, nrows=nrows, figsize=(4.0 * ncols, 3.3 * nrows))
    axes = axes.ravel()
    colour = {t: _style.PALETTE[i % len(_style.PALETTE)] for i, t in enumerate(steps)}
    for ax, eps in zip(axes, eps_values):
        for t in steps:
            g = df[(df.epsilon == eps) & (df.steps == t)].sort_values("q")
            if len(g) < 3:  # end points only (T = 1e5 in the paper config): shown in the ratio panel
                continue
            kind = "exact" if (g["kind"] == "exact").all() else "upper"
            method = "Eq. (45)" if kind == "exact" else "PLD"
            ax.loglog(g["q"], g["sigma_eff"], color=colour[t], label=_style.label(f"T={t:,}", kind, method),
                      **_style.KIND_STYLE[kind])
            ax.axhline(g["sigma_q1"].iloc[0], color=colour[t], lw=0.8, ls="--", alpha=0.8,
                       label=f"σ(1, T={t:,}) (exact)")
        ax.set_title(f"ε = {eps:g}")
        ax.set_xlabel("sampling rate q")
        ax.set_ylabel("σ_eff = σ(q, T)/q")
    ax = axes[len(eps_values)]
    s = summary(df)
    for i, (eps, g) in enumerate(s.groupby("epsilon", sort=True)):
        ax.loglog(g["steps"], g["ratio_at_q_min"], marker="o", ms=3, color=_style.PALETTE[i % len(_style.PALETTE)],
                  label=f"ε={eps:g}")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("number of steps T")
    ax.set_ylabel(f"σ(q,T)/(q σ(1,T)) at q={s['q_min'].min():g}")
    ax.set_title("Corollary 5.4: ratio → 1")
    ax.legend(fontsize=7)
    for extra in axes[len(eps_values) + 1:]:
        extra.axis("off")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), bbox_to_anchor=(0.5, -0.06))
    fig.suptitle(f"Räisä et al. Fig. 1: effective noise, δ = {df['delta'].iloc[0]:g}, Poisson, add/remove")
    fig.tight_layout()
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    report = _pipeline.figure_and_markdown(plot, markdown)
    _pipeline.main(snakemake, compute_points=compute_points, report=report)  # noqa: F821 - injected by Snakemake
