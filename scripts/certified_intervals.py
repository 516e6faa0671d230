"""Every sampler's certified ε interval over epochs for named training runs, each checked against an independent
reference.  One grid point = one (run, dataset_size, batch_size, σ, δ, epochs); rows = one per sampler
from :func:`dpsampling.audit` (the answer the command line prints: default method and accuracy, the cost limit),
with the CPU seconds of that row (``cpu_seconds``) and of its reference (``reference_cpu_seconds``).

The samplers, their order and colours (by registry index) come from the registry: every sampler the audit
answers without a cap.  Reference per row: the one its spec names (``SamplerSpec.reference``, planned by
:func:`dpsampling.references.choose`; ``reference_method``, ``reference_check``, ``reference_lower`` /
``reference_upper``, ``contains_reference``; ``reference_note`` says why a row has none); today:

* deterministic: the Gaussian at σ/√E in mpmath (contains);
* poisson, wor: dp_accounting's PLD pair at a tenth of the row's discretisation where its predicted grid has at
  most ``reference_max_pld_points`` points, else the φ accountant's certified interval (overlaps);
* balls_and_bins: PLD_accounting's epsilon range asked for a gap of ``allocation_reference_rel_tol`` × the upper
  end, where steps per epoch × epochs ≤ ``allocation_reference_max_steps`` (overlaps); beyond, the allocation
  accountant itself at ``accuracy="fine"`` (a 10× finer grid: checks the discretisation, not the method; overlaps);
* shuffle: the one-epoch E_C lower end recomputed in mpmath (equals); none for E > 1.

Checks (decided here, stop the run with the row named): every row's lower ≤ upper, the shuffle lower end ≤ the
deterministic value (Chua ICML 2024 Thm 4.1: :func:`dpsampling.references.check_below_deterministic`), and every
row with a reference agrees with it.
"""

import math
import time

import _pipeline
import _style
import _tables

from dpsampling import audit as _audit
from dpsampling import references, samplers

KEEP = ("sampler", "value", "kind", "method", "lower", "upper", "lower_method", "upper_method", "upper_best_known",
        "steps", "total_steps", "q", "discretization", "rel_tol", "est_rel_error", "flags")


def audited():
    """The names of the samplers `dpsampling audit` answers without a cap, in registry order."""
    return [s.name for s in samplers.specs() if s.batch != "capped"]


def colour(name):
    """A sampler's colour: the palette entry of its index in the registry."""
    return _style.PALETTE[samplers.SAMPLERS.index(name) % len(_style.PALETTE)]


def _reference_of(r):
    """The Reference stored in a row's columns, or None."""
    if r["reference_check"] == "none":
        return None
    kind = next(k for k, v in references.CHECKS.items() if v == r["reference_check"])
    return references.Reference(float(r["reference_lower"]), float(r["reference_upper"]), kind,
                                r["reference_method"])


def check_rows(rows, where):
    """Raise RuntimeError naming the row if a bracket is inverted, the shuffle lower end exceeds the
    deterministic value, or an interval disagrees with its reference (recomputed from the row's columns)."""
    references.check_below_deterministic(rows, where)
    for r in rows:
        if not r["lower"] <= r["upper"]:
            raise RuntimeError(f"{r['sampler']} at {where}: lower {r['lower']!r} > upper {r['upper']!r}")
    for r in rows:
        ref = _reference_of(r)
        if ref is not None and not references.agrees(r["lower"], r["upper"], ref):
            raise RuntimeError(f"{r['sampler']} at {where}: the interval [{r['lower']!r}, {r['upper']!r}] "
                               f"({r['lower_method']} / {r['upper_method']}) does not {ref.check} the reference [{ref.lower!r}, {ref.upper!r}] "
                               f"({ref.method})")


def compute_point(p, rel_tol=1e-3, reference_max_pld_points=1_200_000, allocation_reference_max_steps=100,
                  allocation_reference_rel_tol=0.01):
    """rel_tol: must be the accountant default (1e-3), which `dpsampling audit` uses."""
    if rel_tol != 1e-3:
        raise ValueError(f"settings: rel_tol must be 0.001 for certified_intervals (the audit default; got {rel_tol!r})")
    rows = []
    for sampler in audited():
        t = time.process_time()
        df = _audit(p["dataset_size"], p["batch_size"], epochs=p["epochs"], sigma=p["sigma"], delta=p["delta"],
                    samplers=[sampler])
        r = {k: df[k].iloc[0] for k in KEEP}
        r["cpu_seconds"] = time.process_time() - t
        r.update(rel_width=(r["upper"] - r["lower"]) / r["upper"] if r["upper"] > 0 else 0.0)
        t = time.process_time()
        ref, note = references.choose(r, delta=float(p["delta"]), sigma=float(p["sigma"]), epochs=int(p["epochs"]),
                                      max_pld_points=reference_max_pld_points,
                                      allocation_max_steps=allocation_reference_max_steps,
                                      allocation_rel_tol=allocation_reference_rel_tol)
        r.update(reference_method="none" if ref is None else ref.method,
                 reference_check="none" if ref is None else ref.check,
                 reference_lower=math.nan if ref is None else ref.lower,
                 reference_upper=math.nan if ref is None else ref.upper,
                 contains_reference=None if ref is None else references.agrees(r["lower"], r["upper"], ref),
                 reference_note=note, reference_cpu_seconds=time.process_time() - t)
        rows.append(r)
    check_rows(rows, f"run {p['run']}, epochs {p['epochs']}")
    return rows


# --------------------------------------------------------------------------- figure and table


def _runs(df):
    return list(dict.fromkeys(df["run"]))


def _legend_label(sampler, g):
    lows = ", ".join(dict.fromkeys(g["lower_method"]))
    ups = ", ".join(dict.fromkeys(g["upper_method"]))
    return f"{sampler}: {lows}" if lows == ups else f"{sampler}: {lows} / {ups}"


def _ticker():
    import matplotlib.ticker

    return matplotlib.ticker


def plot(df, paths):
    runs = _runs(df)
    fig, axes = _style.figure(ncols=len(runs), nrows=2, figsize=(3.6 * len(runs), 6.4), sharex="col")
    for j, run in enumerate(runs):
        g = df[df["run"] == run]
        top, bottom = axes[0][j], axes[1][j]
        for sampler in audited():
            c = g[g["sampler"] == sampler].sort_values("epochs")
            if not len(c):
                continue
            col, label = colour(sampler), _legend_label(sampler, c)
            if (c["kind"] == "exact").all():
                top.plot(c["epochs"], c["value"], color=col, lw=1.2, label=label, **_style.KIND_STYLE["exact"])
                continue
            top.fill_between(c["epochs"], c["lower"], c["upper"], color=col, alpha=0.3, lw=0, label=label)
            top.plot(c["epochs"], c["upper"], color=col, lw=0.8)
            top.plot(c["epochs"], c["lower"], color=col, lw=0.8, **_style.KIND_STYLE["lower"])
            checked = c["reference_check"] != "none"
            bottom.plot(c["epochs"], c["rel_width"], color=col, lw=1)
            bottom.plot(c["epochs"][checked], c["rel_width"][checked], "o", color=col, ms=4)
            bottom.plot(c["epochs"][~checked], c["rel_width"][~checked], "o", mfc="white", color=col, ms=4)
        r0 = g.iloc[0]
        top.set_title(f"{run}: N={int(r0['dataset_size'])}, B={int(r0['batch_size'])}, σ={r0['sigma']:g}, "
                      f"δ={r0['delta']:g}", fontsize=8)
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(_style.plt.NullFormatter())
        top.yaxis.set_major_locator(_ticker().LogLocator(subs=(1.0, 2.0, 5.0)))
        top.yaxis.set_major_formatter(_ticker().FuncFormatter(lambda v, _: f"{v:g}"))
        es = sorted(int(e) for e in g["epochs"].unique())
        bottom.set_xticks(es, [str(e) for e in es])
        bottom.xaxis.set_minor_locator(_style.plt.NullLocator())
        bottom.set_xlabel("epochs E")
    axes[0][0].set_ylabel("ε: certified interval [lower, upper]")
    axes[1][0].set_ylabel("relative width (upper − lower)/upper")
    legend = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(lab, h)
    o = _style.plt.Line2D([], [], marker="o", ls="", color="grey", ms=4)
    w = _style.plt.Line2D([], [], marker="o", ls="", color="grey", mfc="white", ms=4)
    handles = list(legend.values()) + [o, w]
    labels = list(legend) + ["width: agrees with an independent reference", "width: no affordable reference"]
    fig.legend(handles, labels, loc="upper center", ncol=2, bbox_to_anchor=(0.5, 0.0), fontsize=7)
    exact = ", ".join(s.name for s in samplers.specs() if s.audit_kind == "exact")
    fig.suptitle(f"Certified ε intervals per batch sampler (band: lower end dashed, upper end solid; {exact} "
                 "exact) and their relative widths", fontsize=9)
    _pipeline.save_figure(fig, paths)


def value_text(lower, upper):
    """An exact value at 6 digits, else the interval as the audit prints it (rounded outward)."""
    return f"{lower:#.6g} (exact)" if lower == upper else _tables.interval_text(lower, upper)


def _mark(r):
    if r["reference_check"] == "none":
        return "none"
    return "✓" if str(r["contains_reference"]) == "True" else "✗"


def markdown(df):
    def cell(r):
        if r is None:
            return "–"
        value = value_text(r["lower"], r["upper"])
        if r["lower"] != r["upper"]:
            value += f" · {r['rel_width']:.1e}"
        return f"{value} · {r['cpu_seconds']:.2f} s · {_mark(r)}"

    return _tables.runs_table(
        df, "certified_intervals: every sampler's certified ε(δ) interval, checked against an independent reference",
        ("Each cell: [lower, upper] rounded outward · relative width (upper − lower)/upper · CPU seconds of the "
         "row · reference check: ✓ agrees with an independent reference (the CSV's `reference_method` and "
         "`reference_check`: contains its point, overlaps its interval, or equals its lower end), none: no "
         "affordable reference (the reason in `reference_note`), –: no row.  Methods of each end: the CSV's "
         "`lower_method` / `upper_method`.  "
         + " ".join(f"{s.name}: [lower bound, {s.upper_method} value] (no tighter upper bound is known)."
                    for s in samplers.specs() if s.upper_best_known)), audited(), cell)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=_pipeline.figure_and_markdown(plot, markdown))  # noqa: F821
