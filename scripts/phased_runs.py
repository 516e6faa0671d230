"""Runs of several phases (issue 39): a σ schedule, a batch-size change, pre-training + fine-tuning, a hyper-parameter
search.  One grid point = one (run, sampler, dataset_size, δ, phases), each phase ``{sigma, batch_size, epochs}``
(q = B/N, ⌈N/B⌉ steps per epoch, as the audit); rows = after each phase k (the run's first k phases):

* ``certified``: our certified ε(δ) interval of those phases (:func:`dpsampling.phases.epsilon`: the answer of the
  Python API, each end's method in ``lower_method`` / ``upper_method``), under the relation dp_accounting accounts
  the sampler's events under (:func:`dpsampling.references.event_relation`: the sampler's own, except WOR's
  ``SampledWithoutReplacementDpEvent``, under replace-one only), so that both are asked the same question (WOR's own
  relation is add/remove; under replace-one its upper end is the pair dominating both directions, Lebeda et al.
  2024 §8, wider than its add/remove interval);
* dp_accounting's own answer on the ``ComposedDpEvent`` of the same phases' events, under the same relation
  (:func:`dpsampling.references.run_upper_bounds`): its pessimistic ``PLDAccountant`` (at
  ``dp_accounting_discretization``) and its ``RdpAccountant`` (the analysis Opacus's ``rdp`` accountant implements;
  Opacus itself needs torch, which the pipeline does not install: its rdp and prv numbers are in
  docs/benchmarks.md, from bench/bench_phased_runs.py); kind ``upper``.  An accountant that does not answer gives
  no row; the certified row's ``note`` says why (dp_accounting's PLD has no branch for
  ``SampledWithoutReplacementDpEvent``).

Check (decided here, stops the run with the row named): every certified interval has lower ≤ upper, and every
reference's upper bound is at least the certified lower end (both bound the same ε, from above and from below:
:func:`dpsampling.references.agrees`, kind ``upper bound``).
"""

import math
import time

import _pipeline
import _style
import _tables

from dpsampling import phases as _phases
from dpsampling import references, samplers

CERTIFIED = "certified"
MARKERS = {references.RUN_METHODS[0]: "x", references.RUN_METHODS[1]: "^"}


def colour(name):
    """A sampler's colour: the palette entry of its index in the registry (as certified_intervals)."""
    return _style.PALETTE[samplers.SAMPLERS.index(name) % len(_style.PALETTE)]


def run_phases(p):
    """The grid point's phases as :class:`dpsampling.phases.Phase` (q = B/N, ⌈N/B⌉ steps per epoch)."""
    n = int(p["dataset_size"])
    return [_phases.Phase(p["sampler"], float(ph["sigma"]), int(ph["batch_size"]) / n,
                          math.ceil(n / int(ph["batch_size"])), int(ph["epochs"])) for ph in p["phases"]]


def check_rows(rows, where):
    """Raise RuntimeError naming the row if a certified interval is inverted or a reference's upper bound is below
    the certified lower end of the same phase."""
    certified = {r["phase"]: r for r in rows if r["method"] == CERTIFIED}
    for k, c in certified.items():
        if not c["lower"] <= c["upper"]:
            raise RuntimeError(f"{where}, after phase {k}: certified lower {c['lower']!r} > upper {c['upper']!r}")
    for r in rows:
        if r["method"] == CERTIFIED:
            continue
        c = certified[r["phase"]]
        ref = references.Reference(0.0, r["value"], "upper bound", r["method"])
        if not references.agrees(c["lower"], c["upper"], ref):
            raise RuntimeError(f"{where}, after phase {r['phase']}: {r['method']} gives ε ≤ {r['value']!r}, below "
                               f"the certified lower end {c['lower']!r} ({c['lower_method']}, {c['relation']}): "
                               "one of the two is wrong")


def compute_point(p, rel_tol=1e-3, dp_accounting_discretization=0.0001):
    phases = run_phases(p)
    delta, where = float(p["delta"]), f"run {p['run']} ({p['sampler']})"
    rows, epochs, steps = [], 0, 0
    for k, (phase, ph) in enumerate(zip(phases, p["phases"]), 1):
        epochs, steps = epochs + phase.epochs, steps + phase.steps * phase.epochs
        t = time.process_time()
        res = _phases.epsilon(phases[:k], delta, rel_tol=rel_tol, relation=references.event_relation(p["sampler"]))
        base = {"phase": k, "phase_sigma": float(ph["sigma"]), "phase_batch_size": int(ph["batch_size"]),
                "phase_epochs": int(ph["epochs"]), "epochs": epochs, "total_steps": steps, "relation": res.relation}
        row = {**base, **_pipeline.result_row(res), "method": CERTIFIED, "note": "",
               "rel_width": (res.upper - res.lower) / res.upper if res.upper > 0 else 0.0,
               "cpu_seconds": time.process_time() - t}
        rows.append(row)
    t = time.process_time()
    refs = references.run_upper_bounds(
        p["sampler"], [(ph.sigma, int(raw["batch_size"]), ph.steps * ph.epochs) for ph, raw in zip(phases, p["phases"])],
        delta, dataset_size=int(p["dataset_size"]), relation=rows[0]["relation"],
        discretization=dp_accounting_discretization)
    seconds = (time.process_time() - t) / len(phases)
    for c, answers in zip(list(rows), refs):
        base = {k: c[k] for k in ("phase", "phase_sigma", "phase_batch_size", "phase_epochs", "epochs",
                                  "total_steps", "relation")}
        c["note"] = "; ".join(f"{m} not answered: {why}" for m, (ref, why) in answers.items() if ref is None)
        for method, (ref, _) in answers.items():
            if ref is not None:
                rows.append({**base, "method": method, "kind": "upper", "value": ref.upper, "lower": math.nan,
                             "upper": ref.upper, "lower_method": "", "upper_method": ref.method, "note": "",
                             "bounds_certified_lower": references.agrees(c["lower"], c["upper"], ref),
                             "cpu_seconds": seconds})
    check_rows(rows, where)
    return rows


# --------------------------------------------------------------------------- figure and table


def _runs(df):
    return list(dict.fromkeys(df["run"]))


def _phase_text(r):
    return f"σ {r['phase_sigma']:g}, B {int(r['phase_batch_size'])}, {int(r['phase_epochs'])} ep"


def _tick(r, many):
    """The x tick of a phase: its number and setting (only σ, unlabelled, when the run has many phases)."""
    if many:
        return f"{int(r['phase'])}\n{r['phase_sigma']:g}"
    return f"{int(r['phase'])}\nσ {r['phase_sigma']:g}\nB {int(r['phase_batch_size'])}\n{int(r['phase_epochs'])} ep"


def _bar(ax, x, lower, upper, col, label=None):
    """The certified interval [lower, upper] as an error bar with caps (visible however narrow it is)."""
    lower, upper = lower.to_numpy(dtype=float), upper.to_numpy(dtype=float)
    ax.errorbar(x, upper, yerr=[upper - lower, 0 * upper], fmt="none", ecolor=col, elinewidth=2, capsize=5,
                capthick=1.5, label=label)


def plot(df, paths):
    ticker = __import__("matplotlib.ticker").ticker
    runs = _runs(df)
    fig, axes = _style.figure(ncols=len(runs), nrows=2, figsize=(3.4 * len(runs), 6.4), sharex="col")
    for j, run in enumerate(runs):
        g = df[df["run"] == run]
        top, bottom = axes[0][j], axes[1][j]
        sams = list(dict.fromkeys(g["sampler"]))
        for i, sampler in enumerate(sams):
            h = g[g["sampler"] == sampler]
            c = h[h["method"] == CERTIFIED].sort_values("phase")
            shift = 0.15 * (i - (len(sams) - 1) / 2)
            x = c["phase"].to_numpy() + shift
            col = colour(sampler)
            _bar(top, x, c["lower"], c["upper"], col, f"{sampler} ({c['relation'].iloc[0]}): certified [lower, upper]")
            top.plot(x, c["upper"], color=col, lw=0.6, alpha=0.6)
            _bar(bottom, x, c["lower"] / c["upper"], c["upper"] / c["upper"], col)
            upper = dict(zip(c["phase"], c["upper"]))
            for method, marker in MARKERS.items():
                r = h[h["method"] == method].sort_values("phase")
                if not len(r):
                    continue
                xr = r["phase"].to_numpy() + shift
                top.plot(xr, r["value"], marker, color=col, ms=6, mfc="none", label=f"{sampler}: {method}")
                bottom.plot(xr, r["value"].to_numpy() / [upper[k] for k in r["phase"]], marker, color=col, ms=6,
                            mfc="none")
        first = g[(g["method"] == CERTIFIED) & (g["sampler"] == sams[0])].sort_values("phase")
        many = len(first) > 4
        r0 = g.iloc[0]
        top.set_title(f"{run}: N={int(r0['dataset_size'])}, δ={r0['delta']:g}", fontsize=8)
        top.set_yscale("log")
        top.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        top.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        top.yaxis.set_minor_formatter(ticker.NullFormatter())
        bottom.set_xticks(first["phase"].to_list(), [_tick(r, many) for _, r in first.iterrows()],
                          fontsize=6 if many else 7)
        bottom.set_xlim(0.5, len(first) + 0.5)
        bottom.set_xlabel("after phase (its σ)" if many else "after phase")
    axes[0][0].set_ylabel("ε(δ) of the run so far")
    axes[1][0].set_ylabel("ε ÷ certified upper end")
    legend = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(lab, h)
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=2, bbox_to_anchor=(0.5, 0.0),
               fontsize=7)
    fig.suptitle("Runs of several phases: the certified ε interval after each phase vs dp_accounting's pessimistic\n"
                 "PLD (×) and RDP (△, Opacus rdp's analysis) on the same events, each under the sampler's relation",
                 fontsize=8)
    _pipeline.save_figure(fig, paths)


def _reference_cell(r):
    if r is None:
        return "not answered*"
    return f"≤ {_tables.bound_text(r['value'], 'upper')}"


def _mark(refs):
    """✓ if every answered reference is at least the certified lower end (the CSV's ``bounds_certified_lower``)."""
    marks = [str(r["bounds_certified_lower"]) == "True" for m, r in refs.items() if m != CERTIFIED]
    return "✓" if marks and all(marks) else "✗"


def markdown(df):
    lines = ["# phased_runs: ε(δ) of runs of several phases, certified vs dp_accounting", "",
             "After each phase, the certified ε interval of the run so far ([lower, upper] rounded outward; each "
             "end's method in the CSV's `lower_method` / `upper_method`) and dp_accounting's upper bounds on the "
             "`ComposedDpEvent` of the same phases under the same relation: its pessimistic PLD and its RDP "
             "(the analysis of Opacus's `rdp` accountant; Opacus's own rdp and prv numbers: docs/benchmarks.md). "
             "✓: every reference is at least the certified lower end (checked by the script).", "",
             "| run | sampler (relation) | N | δ | after phase | phase | epochs | certified ε | relative width | "
             + " | ".join(references.RUN_METHODS) + " | check |",
             "|" + "---|" * (10 + len(references.RUN_METHODS))]
    for run in _runs(df):
        g = df[df["run"] == run]
        for sampler in dict.fromkeys(g["sampler"]):
            h = g[g["sampler"] == sampler]
            for _, c in h[h["method"] == CERTIFIED].sort_values("phase").iterrows():
                refs = {r["method"]: r for r in h[h["phase"] == c["phase"]].to_dict("records")}
                lines.append(
                    f"| {run} | {sampler} ({c['relation']}) | {int(c['dataset_size'])} | {c['delta']:g} | "
                    f"{int(c['phase'])} | {_phase_text(c)} | {int(c['epochs'])} | "
                    f"{_tables.interval_text(c['lower'], c['upper'])} | {c['rel_width']:.1e} | "
                    + " | ".join(_reference_cell(refs.get(m)) for m in references.RUN_METHODS)
                    + f" | {_mark(refs)} |")
    notes = sorted(set(df.loc[df["method"] == CERTIFIED, "note"].dropna()) - {""})
    if notes:
        lines += ["", "*" + "; ".join(notes) + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=_pipeline.figure_and_markdown(plot, markdown))  # noqa: F821
