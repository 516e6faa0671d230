"""What a batch cap costs: ε(δ) of truncated Poisson sampling against the cap B for named training runs.
One grid point = one (run, dataset_size, batch_size, σ, δ, epochs, cap_sd); the cap is B = round(mean + cap_sd × sd)
(at least 1) with mean = q·N = batch_size and sd = √(N q (1 − q)) the Poisson batch size's; ⌈N/B⌉ steps per epoch.

Per row: our certified interval (``samplers.account("truncated_poisson", "epsilon", ...)`` at the library's
default accuracy: the answer the command line prints; ``lower``/``upper`` with ``lower_method``/``upper_method``),
dp_accounting's value (``TruncatedSubsampledGaussianDpEvent`` self-composed total_steps times in a
``PLDAccountant`` at ``dp_accounting_discretization``, its default 1e-4: an upper bound only, pessimistic at any
discretisation), Poisson's certified interval
(``samplers.account("poisson", ...)`` at ``rel_tol``) and the smallest cap whose certified upper ε is within
``factor`` of Poisson's (:func:`dpsampling.samplers.truncated_poisson.smallest_cap`; one search per run, cached in
the job: the config's ``chunk_by: [run]`` keeps a run's caps in one job).

Checks (decided here, stop the run with the row named): lower ≤ upper on every row; our upper ≤ dp_accounting's
value × (1 + 1e-3) (its analysis is one of the dominating pairs we take the best of, so more would be an error of
ours); at each run's largest cap our interval overlaps Poisson's (far above the mean, truncation almost never
happens and ε converges to Poisson's).
"""

import functools
import math
import time

import _pipeline
import _style
import _tables

from dpsampling.samplers import account
from dpsampling.samplers import truncated_poisson

#: our upper end may exceed dp_accounting's value by at most this (relative): both round pessimistically
DP_ACCOUNTING_SLACK = 1e-3
COLOUR = {"ours": _style.PALETTE[2], "dp_accounting": _style.PALETTE[3], "poisson": _style.PALETTE[0],
          "cap": _style.PALETTE[7]}


def cap_of(p):
    """(cap B, mean batch size, its standard deviation) of a grid point."""
    n, b = int(p["dataset_size"]), int(p["batch_size"])
    q = b / n
    sd = math.sqrt(n * q * (1 - q))
    return max(1, int(round(b + float(p["cap_sd"]) * sd))), float(b), sd


def _run_key(p):
    return (int(p["dataset_size"]), int(p["batch_size"]), float(p["sigma"]), float(p["delta"]), int(p["epochs"]))


@functools.lru_cache(maxsize=None)
def _poisson(n, b, sigma, delta, epochs, rel_tol):
    r = account("poisson", "epsilon", delta, sigma=sigma, steps=math.ceil(n / b), epochs=epochs, q=b / n,
                rel_tol=rel_tol, force=True)
    return r.lower, r.upper, f"{r.lower_method} / {r.upper_method}"


@functools.lru_cache(maxsize=None)
def _smallest(n, b, sigma, delta, epochs, factor):
    t = time.process_time()
    c = truncated_poisson.smallest_cap(delta, sigma=sigma, steps=math.ceil(n / b), epochs=epochs, q=b / n,
                                       dataset_size=n, factor=factor)
    return c.max_batch_size, c.epsilon, c.poisson_epsilon, time.process_time() - t


def dp_accounting_epsilon(n, q, cap, sigma, total_steps, delta, discretization=1e-4):
    """dp_accounting's ε(δ) of truncated Poisson: its TruncatedSubsampledGaussianDpEvent composed total_steps times
    in a PLDAccountant at value discretisation ``discretization`` (its default 1e-4), an upper bound only."""
    import dp_accounting

    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=discretization)
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, cap, sigma), total_steps))
    return float(acc.get_epsilon(delta))


def check_rows(rows, where):
    """Raise RuntimeError naming the row if its interval is inverted or its upper end exceeds dp_accounting's
    value × (1 + DP_ACCOUNTING_SLACK)."""
    for r in rows:
        name = f"{where}, cap {r['max_batch_size']}"
        if not r["lower"] <= r["upper"]:
            raise RuntimeError(f"{name}: lower {r['lower']!r} > upper {r['upper']!r}")
        if not r["upper"] <= r["dp_accounting_epsilon"] * (1 + DP_ACCOUNTING_SLACK):
            raise RuntimeError(f"{name}: our upper end {r['upper']!r} exceeds dp_accounting's value "
                               f"{r['dp_accounting_epsilon']!r} × (1 + {DP_ACCOUNTING_SLACK:g})")


def check_largest_caps(df):
    """Raise RuntimeError naming the row if, at a run's largest cap, our interval does not overlap Poisson's."""
    for run in dict.fromkeys(df["run"]):
        g = df[df["run"] == run]
        r = g.loc[g["max_batch_size"].idxmax()]
        if r["upper"] < r["poisson_lower"] or r["poisson_upper"] < r["lower"]:
            raise RuntimeError(f"run {run}, cap {int(r['max_batch_size'])} (the largest): our interval "
                               f"[{r['lower']!r}, {r['upper']!r}] does not overlap Poisson's "
                               f"[{r['poisson_lower']!r}, {r['poisson_upper']!r}]")


def compute_point(p, rel_tol=1e-3, factor=0.01, dp_accounting_discretization=1e-4):
    """rel_tol: Poisson's interval (the accountant default 1e-3); the truncated interval is the library default's."""
    n, b, sigma, delta, epochs = _run_key(p)
    cap, mean, sd = cap_of(p)
    q, steps = b / n, math.ceil(n / b)
    t = time.process_time()
    r = account("truncated_poisson", "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, q=q, dataset_size=n,
                max_batch_size=cap, force=True)
    cpu = time.process_time() - t
    t = time.process_time()
    theirs = dp_accounting_epsilon(n, q, cap, sigma, steps * epochs, delta, float(dp_accounting_discretization))
    their_cpu = time.process_time() - t
    p_lo, p_up, p_method = _poisson(n, b, sigma, delta, epochs, float(rel_tol))
    s_cap, s_eps, s_pois, s_cpu = _smallest(n, b, sigma, delta, epochs, float(factor))
    acc = r.accuracy
    row = {"max_batch_size": cap, "mean_batch_size": mean, "sd_batch_size": sd, "q": q, "steps": steps,
           "total_steps": steps * epochs, "truncation_probability": acc.get("truncation_probability", 0.0),
           **_pipeline.result_row(r),
           "rel_width": (r.upper - r.lower) / r.upper if r.upper > 0 else 0.0, "cpu_seconds": cpu,
           "dp_accounting_epsilon": theirs, "dp_accounting_cpu_seconds": their_cpu,
           "dp_accounting_discretization": float(dp_accounting_discretization),
           "poisson_lower": p_lo, "poisson_upper": p_up, "poisson_method": p_method,
           "factor": float(factor), "smallest_cap": s_cap, "smallest_cap_epsilon": s_eps,
           "smallest_cap_poisson_epsilon": s_pois, "smallest_cap_cpu_seconds": s_cpu}
    check_rows([row], f"run {p['run']}")
    return row


# --------------------------------------------------------------------------- figure and table


def _runs(df):
    return list(dict.fromkeys(df["run"]))


def _ticker():
    import matplotlib.ticker

    return matplotlib.ticker


def plot(df, paths):
    check_largest_caps(df)
    runs = _runs(df)
    fig, axes = _style.figure(ncols=len(runs), figsize=(3.8 * len(runs), 3.6))
    for ax, run in zip(axes[0], runs):
        g = df[df["run"] == run].sort_values("max_batch_size")
        r0 = g.iloc[0]
        x = g["max_batch_size"]
        ax.fill_between(x, g["lower"], g["upper"], color=COLOUR["ours"], alpha=0.3, lw=0,
                        label="truncated Poisson: our certified interval")
        ax.plot(x, g["upper"], color=COLOUR["ours"], lw=1, marker="o", ms=2.5)
        ax.plot(x, g["lower"], color=COLOUR["ours"], lw=1, marker="o", ms=2.5, **_style.KIND_STYLE["lower"])
        ax.plot(x, g["dp_accounting_epsilon"], color=COLOUR["dp_accounting"], lw=1, marker="s", ms=2.5,
                label="dp_accounting's truncated event (upper bound)")
        ax.axhspan(r0["poisson_lower"], r0["poisson_upper"], color=COLOUR["poisson"], alpha=0.5, lw=0)
        ax.axhline(r0["poisson_upper"], color=COLOUR["poisson"], lw=0.8, label="Poisson (no cap): certified interval")
        cap = int(r0["smallest_cap"])
        ax.axvline(cap, color=COLOUR["cap"], lw=1, ls=":",
                   label=f"smallest cap within {r0['factor']:.0%} of Poisson's ε")
        ax.annotate(f"B = {cap}", (cap, 1), xycoords=("data", "axes fraction"), xytext=(3, -10),
                    textcoords="offset points", fontsize=7, color=COLOUR["cap"])
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(_ticker().LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_minor_formatter(_style.plt.NullFormatter())
        ax.yaxis.set_major_formatter(_ticker().FuncFormatter(lambda v, _: f"{v:g}"))
        mean, sd = float(r0["mean_batch_size"]), float(r0["sd_batch_size"])
        top = ax.secondary_xaxis("top", functions=(lambda b, m=mean, s=sd: (b - m) / s,
                                                   lambda k, m=mean, s=sd: m + k * s))
        top.set_xlabel("(B − mean batch) / sd", fontsize=7, labelpad=2)
        top.tick_params(labelsize=7)
        ax.set_title(f"{run}: N={int(r0['dataset_size'])}, mean batch {int(r0['batch_size'])}\n"
                     f"σ={r0['sigma']:g}, δ={r0['delta']:g}, {int(r0['epochs'])} epochs", fontsize=8, pad=28)
        ax.set_xlabel("cap B (largest batch)")
    axes[0][0].set_ylabel("ε")
    legend = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(lab, h)
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=2 if len(runs) > 1 else 1,
               bbox_to_anchor=(0.5, 0.0), fontsize=7)
    fig.suptitle("What a batch cap costs: ε of truncated Poisson sampling vs the cap B", fontsize=9, y=1.08)
    _pipeline.save_figure(fig, paths)


def markdown(df):
    check_largest_caps(df)
    lines = ["# truncation_cost: ε(δ) of truncated Poisson sampling against the cap B", "",
             ("Each run draws Poisson batches (rate q = mean batch / N, ⌈N/mean batch⌉ steps per epoch) and cuts a "
              "batch larger than B down to B.  ours: the certified interval [lower, upper] (rounded outward; methods "
              "in the CSV's `lower_method` / `upper_method`) and its relative width (upper − lower)/upper; "
              "dp_accounting: its TruncatedSubsampledGaussianDpEvent in a PLDAccountant, an upper bound only "
              "(rounded up); Poisson: the certified interval without a cap; P[K > B]: the probability that a batch "
              "is cut."), "",
             "| run | N | mean batch | σ | δ | epochs | cap B | (B − mean)/sd | P[K > B] | ours | width | "
             "dp_accounting | Poisson |",
             "|" + "---|" * 13]
    for run in _runs(df):
        g = df[df["run"] == run].sort_values("max_batch_size")
        for r in g.to_dict("records"):
            k = (r["max_batch_size"] - r["mean_batch_size"]) / r["sd_batch_size"]
            lines.append(
                f"| {run} | {int(r['dataset_size'])} | {int(r['batch_size'])} | {r['sigma']:g} | {r['delta']:g} | "
                f"{int(r['epochs'])} | {int(r['max_batch_size'])} | {k:.2f} | {r['truncation_probability']:.2g} | "
                f"{_tables.interval_text(r['lower'], r['upper'])} | {r['rel_width']:.1e} | "
                f"{_tables.bound_text(r['dp_accounting_epsilon'], 'upper')} | "
                f"{_tables.interval_text(r['poisson_lower'], r['poisson_upper'])} |")
    lines += ["", "## The smallest cap within the factor of Poisson's ε", "",
              ("The smallest cap B whose certified upper ε is ≤ (1 + factor) × Poisson's certified upper ε (both "
               "rounded up)."), "",
              "| run | mean batch | sd | factor | smallest cap B | (B − mean)/sd | its ε upper | Poisson ε upper |",
              "|" + "---|" * 8]
    for run in _runs(df):
        r = df[df["run"] == run].iloc[0]
        k = (r["smallest_cap"] - r["mean_batch_size"]) / r["sd_batch_size"]
        lines.append(f"| {run} | {int(r['batch_size'])} | {r['sd_batch_size']:.2f} | {r['factor']:g} | "
                     f"{int(r['smallest_cap'])} | {k:.2f} | {_tables.bound_text(r['smallest_cap_epsilon'], 'upper')} "
                     f"| {_tables.bound_text(r['smallest_cap_poisson_epsilon'], 'upper')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=_pipeline.figure_and_markdown(plot, markdown))  # noqa: F821
