"""Lebeda et al. Conjecture 12 (§5): search for δ_add > δ_remove, Poisson-subsampled Gaussian.

One grid point = one (σ, γ, k); the library (``directions.conjecture12_point``) searches
ε ∈ [0, ε(δ=1e-12)] (capped at 700, where e^ε overflows; flag ``eps_capped_at_700``).
Three rows per point, ``quantity=max_margin`` = max over ε of δ_add - δ_remove:
``kind=estimate`` (both pessimistic PLDs at the same discretisation), ``kind=lower`` (certified:
add lower bound - remove upper bound) and ``kind=upper`` (add upper bound - remove lower bound,
the largest margin the PLD brackets cannot exclude).  ``classification``: counterexample
(certified positive margin) / within numerical error (positive estimate below the bracket
width) / remove dominates.  The plot rule also writes the full-grid verdict
(results/conjecture12/verdict.csv and figures/conjecture12_verdict.md).
"""

import _pipeline
import _style
import numpy as np
import pandas as pd

from dpsampling.papers.lebeda import directions

SUMMARY = ("discretization", "eps_max", "eps_capped", "n_eps", "n_unreliable", "eps_at_max",
           "max_margin_estimate", "max_margin_estimate_eps_pos", "min_margin_estimate", "max_margin_certain",
           "eps_at_max_certain", "max_margin_possible", "add_bracket_at_max", "classification")


def compute_point(p, n_eps, n_bins, rel_tol=None):
    """One grid point (rel_tol: the schema default, unused: accuracy is set by n_bins)."""
    r = directions.conjecture12_point(p["sigma"], p["q"], p["steps"], n_eps=n_eps, n_bins=n_bins)
    common = {key: r[key] for key in SUMMARY}
    common.update(rel_tol=None, est_rel_error=None, flags="eps_capped_at_700" if r["eps_capped"] else "")
    return [
        {"quantity": "max_margin", "value": r["max_margin_estimate"], "kind": "estimate", "method": "pld", **common},
        {"quantity": "max_margin", "value": r["max_margin_certain"], "kind": "lower", "method": "pld", **common},
        {"quantity": "max_margin", "value": r["max_margin_possible"], "kind": "upper", "method": "pld", **common},
    ]


def verdict(df):
    """The full-grid verdict (one row) and its markdown."""
    est = df[df.kind == "estimate"]
    v = directions.conjecture12_verdict(est.to_dict("records"))
    cert = est.loc[est.max_margin_certain.idxmax()]
    row = {key: val for key, val in v.items() if key != "argmax"}
    row.update({f"argmax_{key}": val for key, val in v["argmax"].items()})
    row.update(sigma_range=f"{est.sigma.min():g}-{est.sigma.max():g}", q_range=f"{est.q.min():g}-{est.q.max():g}",
               steps_values=" ".join(str(int(x)) for x in sorted(est.steps.unique())),
               max_margin_possible=float(est.max_margin_possible.max()))
    md = (f"# Conjecture 12 (Lebeda et al. 2024, §5): {v['verdict']}\n\n"
          f"Poisson-subsampled Gaussian, δ_add(ε) − δ_remove(ε) over ε ≥ 0 (up to ε(δ=1e-12), at most 700) on "
          f"{v['n_points']} grid points: σ ∈ [{row['sigma_range']}], γ ∈ [{row['q_range']}], "
          f"k ∈ {{{row['steps_values'].replace(' ', ', ')}}}.\n\n"
          "| classification | points |\n|---|---|\n"
          f"| counterexample (add lower bound > remove upper bound) | {v['n_counterexample']} |\n"
          f"| within numerical error (positive estimate, below the PLD bracket) | {v['n_within_numerical_error']} |\n"
          f"| remove dominates (estimate ≤ 0 at every ε) | {v['n_remove_dominates']} |\n\n"
          f"Largest margin estimate: {v['max_margin_estimate']:.3g} at σ={v['argmax']['sigma']:g}, "
          f"γ={v['argmax']['q']:g}, k={int(v['argmax']['steps'])}, ε={v['argmax']['eps_at_max']:.3g} "
          "(at ε = 0 the two directions are equal exactly, so positive values there are discretisation error). "
          f"Largest certified margin (add lower − remove upper): {v['max_margin_certain']:.3g} at ε = "
          f"{cert.eps_at_max_certain:.3g} (σ={cert.sigma:g}, γ={cert.q:g}, k={int(cert.steps)}); a counterexample "
          "needs more than 1e-12 + 1e-9·δ_remove (floating-point rounding of dp_accounting's sums; at ε = 0 the "
          "margin is exactly 0). Largest margin the PLD brackets cannot "
          f"exclude: {row['max_margin_possible']:.3g} (the resolution of this search). "
          f"{int((est.max_margin_estimate_eps_pos > 0).sum())} points have a positive estimate at some ε > 0 "
          f"(largest {est.max_margin_estimate_eps_pos.max():.2g}; unless classified a counterexample, inside the PLD "
          "brackets): at large k the "
          "pessimistic add PLD carries slightly more than unit mass (connect-the-dots rounding, compounded over k), "
          "which biases the estimate upwards by about as much as it is positive at ε = 0. "
          f"{v['n_eps_capped']} points have δ > 1e-12 beyond ε = 700 (searched up to 700 only).\n\n"
          "Per k (resolution = largest margin the PLD brackets cannot exclude; the optimistic PLD is loose "
          "for large k and small γ, so a small positive margin could hide there):\n\n"
          "| k | points | within numerical error | counterexamples | max estimate | max certified | "
          "resolution (median / max) |\n|---|---|---|---|---|---|---|\n")
    for k, g in est.groupby("steps", sort=True):
        md += (f"| {int(k):,} | {len(g)} | {(g.classification == 'within numerical error').sum()} | "
               f"{(g.classification == 'counterexample').sum()} | {g.max_margin_estimate.max():.2g} | "
               f"{g.max_margin_certain.max():.2g} | {g.max_margin_possible.median():.2g} / "
               f"{g.max_margin_possible.max():.2g} |\n")
    return pd.DataFrame([row]), md


def plot(df, outputs, verdict_csv, verdict_md):
    from matplotlib import colors  # plot jobs only (see _style)

    vdf, md = verdict(df)
    _pipeline.write_csv(vdf, verdict_csv)
    _pipeline.write_text(md, verdict_md)
    est = df[df.kind == "estimate"]
    steps_values = sorted(est.steps.unique())
    sig, gam = sorted(est.sigma.unique()), sorted(est.q.unique())
    fig, axes = _style.figure(ncols=len(steps_values), nrows=2, figsize=(2.9 * len(steps_values) + 1.2, 5.6))
    rows = [("max_margin_estimate", "max over ε of δ_add − δ_remove\n(estimate, pessimistic PLDs)"),
            ("max_margin_possible", "largest margin not excluded\n(add upper − remove lower)")]
    vmax = 10.0 ** np.ceil(np.log10(max(float(np.nanmax(np.abs(est.max_margin_estimate))), 1e-12)))
    norms = [colors.SymLogNorm(linthresh=1e-12, vmin=-vmax, vmax=vmax, base=10),
             colors.LogNorm(vmin=max(float(est.max_margin_possible.clip(lower=1e-16).min()), 1e-16),
                            vmax=max(float(est.max_margin_possible.max()), 1e-15))]
    cmaps = ["RdBu_r", "viridis"]
    for r, (col, title) in enumerate(rows):
        for c, k in enumerate(steps_values):
            ax = axes[r, c]
            g = est[est.steps == k]
            z = np.full((len(sig), len(gam)), np.nan)
            for _, row in g.iterrows():
                z[sig.index(row.sigma), gam.index(row.q)] = row[col] if col != "max_margin_possible" else max(row[col], 1e-16)
            mesh = ax.pcolormesh(np.arange(len(gam) + 1), np.arange(len(sig) + 1), z, norm=norms[r], cmap=cmaps[r])
            if r == 0:
                for _, row in g.iterrows():
                    x, y = gam.index(row.q) + 0.5, sig.index(row.sigma) + 0.5
                    if row.classification == "counterexample":
                        ax.plot(x, y, "kx", ms=7, mew=1.5)
                    elif row.classification == "within numerical error":
                        ax.plot(x, y, "k.", ms=2.5)
            ax.grid(False)
            ax.set_xticks(np.arange(len(gam)) + 0.5, [f"{x:.1g}" for x in gam], rotation=90, fontsize=6)
            ax.set_yticks(np.arange(len(sig)) + 0.5, [f"{x:.2g}" for x in sig], fontsize=6)
            ax.set_title(f"k = {int(k):,}", fontsize=9)
            if r == 1:
                ax.set_xlabel("sampling rate γ")
            if c == 0:
                ax.set_ylabel("σ")
        bar = fig.colorbar(mesh, ax=list(axes[r, :]), fraction=0.02, pad=0.01)
        bar.set_label(title, fontsize=7)
        if r == 0:
            top = round(float(np.log10(vmax)))
            dec = [10.0 ** j for j in range(top, -13, -3)]
            bar.set_ticks(sorted([0.0] + dec + [-x for x in dec]))
        bar.ax.tick_params(labelsize=6)
    fig.subplots_adjust(hspace=0.35)
    v = vdf.iloc[0]
    fig.suptitle(f"Conjecture 12 (Poisson-subsampled Gaussian): {v['verdict']} on {int(v['n_points'])} points "
                 f"({int(v['n_within_numerical_error'])} positive within numerical error: dots; counterexamples: ×)",
                 fontsize=9)
    _pipeline.save_figure(fig, outputs)


def report(df, out):
    plot(df, [out.pdf, out.png], out.verdict_csv, out.verdict_md)


if __name__ == "__main__":
    # curve by curve: the k of one (σ, γ) follow each other, so their one-step PLDs are built once (engine cache)
    _pipeline.main(snakemake, compute_point, report=report,  # noqa: F821 - injected by Snakemake
                   order=lambda p: (p["sigma"], p["q"], p["steps"]))
