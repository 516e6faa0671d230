"""`dpsampling audit` over named training runs and epochs: one grid point = one
(run, dataset_size, batch_size, σ, δ, epochs); rows = one per sampler from :func:`dpsampling.audit`.

balls_and_bins (its default method, the allocation interval: under a second per point at these sizes) is computed
only where steps × epochs ≤ ``balls_and_bins_max_steps`` (a setting); elsewhere it is absent from the CSV.

Checks (decided here, stop the run): on every point the shuffle lower bound ≤ the deterministic value
(Chua ICML 2024 Thm 4.1: shuffling cannot hurt; :func:`dpsampling.references.check_below_deterministic`) and
lower ≤ value ≤ upper on every row.
"""

import math

import _pipeline
import _style
import _tables
import numpy as np

from dpsampling import audit as _audit
from dpsampling import references
from dpsampling.engine.result import BELOW_FLOOR_FLAG

SAMPLERS = ("poisson", "wor", "shuffle", "deterministic")
COLOUR = {"poisson": _style.PALETTE[0], "wor": _style.PALETTE[1], "shuffle": _style.PALETTE[2],
          "deterministic": _style.PALETTE[7], "balls_and_bins": _style.PALETTE[3]}
KEEP = ("sampler", "value", "kind", "method", "lower", "upper", "lower_method", "upper_method", "upper_best_known",
        "steps", "total_steps", "q", "discretization", "rel_tol", "est_rel_error", "flags")


def check_rows(rows, where):
    """Raise if a shuffle lower bound exceeds the deterministic value, or a row's bracket is inverted."""
    references.check_below_deterministic(rows, where)
    for r in rows:
        if not (r["lower"] <= r["value"] * (1 + 1e-9) and r["value"] <= r["upper"] * (1 + 1e-9)):
            raise RuntimeError(f"{r['sampler']}: lower {r['lower']!r} <= value {r['value']!r} <= upper {r['upper']!r} "
                               f"fails at {where}")


def compute_point(p, balls_and_bins_max_steps=0, accuracy="default", rel_tol=1e-3):
    """rel_tol: must be the accountant default (1e-3), which `dpsampling audit` uses."""
    if rel_tol != 1e-3:
        raise ValueError(f"settings: rel_tol must be 0.001 for sampler_audit (the audit default; got {rel_tol!r})")
    steps = math.ceil(p["dataset_size"] / p["batch_size"])
    samplers = SAMPLERS + (("balls_and_bins",) if steps * p["epochs"] <= balls_and_bins_max_steps else ())
    df = _audit(p["dataset_size"], p["batch_size"], epochs=p["epochs"], sigma=p["sigma"], delta=p["delta"],
                samplers=samplers, accuracy=accuracy)
    rows = [{k: r[k] for k in KEEP} for r in df.to_dict("records")]
    check_rows(rows, p)
    by = {r["sampler"]: r for r in rows}
    wrong = bool(by["shuffle"]["lower"] > by["poisson"]["value"] and BELOW_FLOOR_FLAG not in str(by["poisson"]["flags"]).split(";"))
    for r in rows:
        r["poisson_provably_wrong_for_shuffle"] = wrong
    return rows


def _runs(df):
    return list(dict.fromkeys(df["run"]))


def plot(df, paths):
    runs = _runs(df)
    fig, axes = _style.figure(ncols=len(runs), figsize=(3.8 * len(runs), 3.4))
    for ax, run in zip(axes[0], runs):
        g = df[df["run"] == run]
        for sampler in ("poisson", "wor", "deterministic", "balls_and_bins"):
            c = g[g["sampler"] == sampler].sort_values("epochs")
            if len(c):
                kind = c["kind"].iloc[0]
                ax.plot(c["epochs"], c["value"], color=COLOUR[sampler], lw=1, marker="o", ms=2.5,
                        label=_style.label(sampler, kind), **_style.KIND_STYLE[kind])
        s = g[g["sampler"] == "shuffle"].sort_values("epochs")
        ax.fill_between(s["epochs"], s["lower"], s["upper"], color=COLOUR["shuffle"], alpha=0.2,
                        label="shuffle (interval: lower bound … deterministic)")
        ax.plot(s["epochs"], s["lower"], color=COLOUR["shuffle"], lw=1, **_style.KIND_STYLE["lower"])
        p = g[g["sampler"] == "poisson"].sort_values("epochs")
        wrong = p["poisson_provably_wrong_for_shuffle"].astype(bool).to_numpy()
        if wrong.any():
            lo = np.minimum(p["value"].to_numpy(), s["lower"].to_numpy())
            ax.fill_between(p["epochs"], lo, s["lower"].to_numpy(), where=wrong, color="red", alpha=0.25, step=None,
                            label="Poisson ε for a shuffled run: provably wrong")
        r0 = g.iloc[0]
        ax.set_title(f"{run}: N={int(r0['dataset_size'])}, B={int(r0['batch_size'])}, σ={r0['sigma']:g}, "
                     f"δ={r0['delta']:g}", fontsize=8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        es = sorted(int(e) for e in g["epochs"].unique())
        ax.set_xticks(es, [str(e) for e in es])
        ax.xaxis.set_minor_locator(_style.plt.NullLocator())
        ax.set_xlabel("epochs E")
        ax.set_ylabel("ε")
    legend = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(lab, h)
    h, lab = list(legend.values()), list(legend)
    fig.legend(h, lab, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.0), fontsize=7)
    fig.suptitle("How private is the training run? ε vs epochs per batch sampler", fontsize=9)
    _pipeline.save_figure(fig, paths)


def markdown(df):
    def cell(r):
        if r is None:
            return "–"
        if r["kind"] != "exact" and math.isfinite(r["lower"]) and math.isfinite(r["upper"]):
            return _tables.interval_text(r["lower"], r["upper"])
        return f"{r['value']:.4g}"

    cols = ["poisson", "wor", "shuffle", "deterministic", "balls_and_bins"]
    return _tables.runs_table(
        df, "sampler_audit: ε(δ) per batch sampler over epochs",
        ("poisson, wor, balls_and_bins: certified intervals [lower, upper], rounded outward (methods: the CSV's "
         "`method`); deterministic: exact (Gaussian at σ/√E); "
         "shuffle: interval [lower bound (Chua et al.), deterministic]. **wrong**: Poisson accounting of a "
         "shuffled run is provably wrong (shuffle lower bound > Poisson upper bound)."), cols, cell,
        extra=("Poisson for shuffle", lambda r0: "**wrong**" if bool(r0["poisson_provably_wrong_for_shuffle"])
               else "not provably wrong"))


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=_pipeline.figure_and_markdown(plot, markdown))  # noqa: F821
