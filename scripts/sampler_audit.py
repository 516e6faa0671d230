"""`dpsampling audit` over named training runs and epochs: one grid point = one
(run, dataset_size, batch_size, σ, δ, epochs); rows = one per sampler from :func:`dpsampling.audit`.

The samplers, their order, colours (by registry index) and words come from the registry
(:func:`dpsampling.samplers.specs`): every sampler the audit answers without a cap.  An optional row
(``SamplerSpec.audit_optional``: balls_and_bins, its allocation interval under a second per point at these sizes)
is computed only where steps × epochs ≤ ``optional_max_steps`` (a setting); elsewhere it is absent from the CSV.

Checks (decided here, stop the run): on every point a lower bound whose upper end is only the best known one
(shuffle) ≤ the exact once-per-epoch value (Chua ICML 2024 Thm 4.1: shuffling cannot hurt;
:func:`dpsampling.references.check_below_deterministic`) and lower ≤ value ≤ upper on every row.  The column
``<baseline>_provably_wrong_for_<sampler>`` (``poisson_provably_wrong_for_shuffle``), one per sampler whose upper
end is not certified: its lower end exceeds the baseline's certified upper end (not below the PLD floor).
"""

import math

import _pipeline
import _style
import _tables
import numpy as np

from dpsampling import audit as _audit
from dpsampling import references, render, samplers
from dpsampling.engine.result import BELOW_FLOOR_FLAG

KEEP = ("sampler", "value", "kind", "method", "lower", "upper", "lower_method", "upper_method", "upper_best_known",
        "steps", "total_steps", "q", "discretization", "rel_tol", "est_rel_error", "flags")


def check_rows(rows, where):
    """Raise if a shuffle lower bound exceeds the deterministic value, or a row's bracket is inverted."""
    references.check_below_deterministic(rows, where)
    for r in rows:
        if not (r["lower"] <= r["value"] * (1 + 1e-9) and r["value"] <= r["upper"] * (1 + 1e-9)):
            raise RuntimeError(f"{r['sampler']}: lower {r['lower']!r} <= value {r['value']!r} <= upper {r['upper']!r} "
                               f"fails at {where}")


def audited(steps=None, epochs=None, optional_max_steps=math.inf):
    """The specs of the samplers `dpsampling audit` answers without a cap, in registry order; an optional one
    (``audit_optional``) only where steps × epochs ≤ ``optional_max_steps`` (``steps=None``: all)."""
    return [s for s in samplers.specs() if s.batch != "capped"
            and (not s.audit_optional or steps is None or steps * epochs <= optional_max_steps)]


def colour(name):
    """A sampler's colour: the palette entry of its index in the registry."""
    return _style.PALETTE[samplers.SAMPLERS.index(name) % len(_style.PALETTE)]


def baseline():
    """The spec the verdicts compare with (role ``baseline``)."""
    return next(s for s in samplers.specs() if s.role == "baseline")


def wrong_column(spec):
    """The column saying the baseline's accounting of a run of ``spec`` is provably wrong."""
    return f"{baseline().name}_provably_wrong_for_{spec.name}"


def compute_point(p, optional_max_steps=0, accuracy="default", rel_tol=1e-3):
    """rel_tol: must be the accountant default (1e-3), which `dpsampling audit` uses."""
    if rel_tol != 1e-3:
        raise ValueError(f"settings: rel_tol must be 0.001 for sampler_audit (the audit default; got {rel_tol!r})")
    steps = math.ceil(p["dataset_size"] / p["batch_size"])
    specs = audited(steps, p["epochs"], optional_max_steps)
    df = _audit(p["dataset_size"], p["batch_size"], epochs=p["epochs"], sigma=p["sigma"], delta=p["delta"],
                samplers=[s.name for s in specs], accuracy=accuracy)
    rows = [{k: r[k] for k in KEEP} for r in df.to_dict("records")]
    check_rows(rows, p)
    by = {r["sampler"]: r for r in rows}
    base = by[baseline().name]
    for spec in specs:
        if spec.upper_best_known:  # its lower end above the baseline's certified upper end, not below the floor
            wrong = bool(by[spec.name]["lower"] > base["upper"]
                         and BELOW_FLOOR_FLAG not in str(base["flags"]).split(";"))
            for r in rows:
                r[wrong_column(spec)] = wrong
    return rows


def _runs(df):
    return list(dict.fromkeys(df["run"]))


def plot(df, paths):
    runs = _runs(df)
    fig, axes = _style.figure(ncols=len(runs), figsize=(3.8 * len(runs), 3.4))
    base = baseline()
    for ax, run in zip(axes[0], runs):
        g = df[df["run"] == run]
        for spec in audited():
            c = g[g["sampler"] == spec.name].sort_values("epochs")
            if not len(c) or spec.upper_best_known:
                continue
            kind = c["kind"].iloc[0]
            ax.plot(c["epochs"], c["value"], color=colour(spec.name), lw=1, marker="o", ms=2.5,
                    label=_style.label(spec.name, kind, render.relation(spec.relation)), **_style.KIND_STYLE[kind])
        p = g[g["sampler"] == base.name].sort_values("epochs")
        for spec in audited():
            s = g[g["sampler"] == spec.name].sort_values("epochs")
            if not len(s) or not spec.upper_best_known:
                continue
            ax.fill_between(s["epochs"], s["lower"], s["upper"], color=colour(spec.name), alpha=0.2,
                            label=f"{spec.name} (interval: lower bound … {spec.upper_method or 'upper end'}, "
                                  f"{render.relation(spec.relation)})")
            ax.plot(s["epochs"], s["lower"], color=colour(spec.name), lw=1, **_style.KIND_STYLE["lower"])
            wrong = p[wrong_column(spec)].astype(bool).to_numpy()
            if wrong.any():
                lo = np.minimum(p["upper"].to_numpy(), s["lower"].to_numpy())
                ax.fill_between(p["epochs"], lo, s["lower"].to_numpy(), where=wrong, color="red", alpha=0.25,
                                step=None, label=f"{base.words} ε for {spec.run}: provably wrong")
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

    specs = audited()
    base = baseline()
    certified = [s.name for s in specs if not s.upper_best_known and s.audit_kind != "exact"]
    words = [f"{', '.join(certified)}: certified intervals [lower, upper], rounded outward (methods: the CSV's "
             "`method`)"]
    words += [f"{s.name}: exact" for s in specs if s.audit_kind == "exact"]
    words += [f"{s.name}: interval [lower bound ({s.lower_source}), {s.upper_method}]. **wrong**: {base.words} "
              f"accounting of {s.run} is provably wrong ({s.name} lower bound > {base.words} upper bound)"
              for s in specs if s.upper_best_known]
    best_known = [s for s in specs if s.upper_best_known]
    extra = None
    if best_known:
        col = wrong_column(best_known[0])
        extra = (f"{base.words} for {best_known[0].name}",
                 lambda r0: "**wrong**" if bool(r0[col]) else "not provably wrong")
    return _tables.runs_table(df, "sampler_audit: ε(δ) per batch sampler over epochs", "; ".join(words) + ".",
                              [s.name for s in specs], cell, extra=extra)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=_pipeline.figure_and_markdown(plot, markdown))  # noqa: F821
