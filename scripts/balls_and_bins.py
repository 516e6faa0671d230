"""Chua et al. (AISTATS 2025) figures: balls-and-bins vs deterministic and Poisson batches.

One grid point = one (view, sampler, σ, T, E[, δ]).  ``view=eps_vs_sigma``: ε(δ) at that σ;
``view=delta_vs_eps``: δ(ε) on an ε grid (``n_eps`` points in [0, ``eps_max``]); the figure draws no δ below the
reliability floor (:data:`dpsampling.engine.result.RELIABLE_DELTA_FLOOR`, drawn as a line; the CSV keeps them,
flagged).  Rows:

- deterministic: exact (Gaussian at σ/√E);
- poisson: q = 1/T over T·E steps, dp_accounting PLD upper and lower bound (add/remove max);
- balls_and_bins: the certified upper and lower bound of method ``method`` (allocation, the default, or pld:
  PLD_accounting) at accuracy ``accuracy``, and for
  ``delta_vs_eps`` a Monte Carlo estimate at ``n_eps_mc`` ε values with its Chernoff–KL
  interval (``mc_samples`` samples per direction, failure probability ``mc_failure_prob``).

Check (decided here): an MC estimate whose interval misses [PLD lower, PLD upper] entirely
(MC upper < PLD lower or MC lower > PLD upper) happens with probability ≤ β for correct code;
the job raises, as in add_remove_crossing (a fixed seed then needs a code fix, not a rerun).

Lower bounds from the max-coordinate statistic (``LOWER_BOUND_ROWS``, through
``dpsampling.samplers.account``):

- at each deterministic point, a shuffle row (sampler=shuffle, kind lower: E_C sets for E = 1, the
  optimistic max-statistic PLD over E dynamic epochs) whose ``upper`` is the deterministic value
  (Chua ICML 2024 Thm 4.1); the job raises if lower > upper;
- at each balls-and-bins point, the Chua et al. (AISTATS 2025) max-statistic lower bound
  (method ``max_statistic``); the job raises if it exceeds the certified upper bound at the same
  point, as the MC check does.
"""

import math

import _pipeline
import _style
import numpy as np

from dpsampling.engine.result import RELIABLE_DELTA_FLOOR
from dpsampling.samplers import account
from dpsampling.samplers import balls_and_bins as bnb
from dpsampling.papers import chua

#: the method (the selector asked) of the balls-and-bins max-statistic lower-bound rows
MAX_STATISTIC = "max_statistic"


def _shuffle_rows(p, quantity, target):
    """Shuffle lower bound (dynamic epochs) at a deterministic point; ``upper`` = deterministic (Thm 4.1)."""
    if p["sampler"] != "deterministic":
        return []
    res = account("shuffle", quantity, target, sigma=p["sigma"], steps=p["steps"], epochs=p["epochs"])
    check_order(res.lower, res.upper, "shuffle lower", "deterministic", f"{p}, {quantity} at {target}")
    return [{**_pipeline.result_row(res, end="lower"), "sampler": "shuffle"}]


def _bnb_max_statistic_rows(p, quantity, target):
    """Chua et al. (AISTATS 2025) max-statistic lower bound at a balls-and-bins point (checked in _one / compute_point)."""
    if p["sampler"] != "balls_and_bins":
        return []
    res = account("balls_and_bins", quantity, target, sigma=p["sigma"], steps=p["steps"], epochs=p["epochs"],
                  method=MAX_STATISTIC)
    return [_pipeline.result_row(res, end="lower")]  # a one-sided lower answer: its curve row


#: row producers f(p, quantity, target) -> list[dict] for the max-statistic lower bounds
LOWER_BOUND_ROWS = [_shuffle_rows, _bnb_max_statistic_rows]


def check_order(lower, upper, lower_name, upper_name, where):
    """Raise if a lower bound exceeds an upper bound of the same quantity (nan = flagged, not checked)."""
    if lower is not None and upper is not None and lower > upper * (1 + 1e-12):
        raise RuntimeError(f"{lower_name} {lower!r} > {upper_name} {upper!r} at {where}: a bug, not a rerun")


def _check_max_statistic(rows, upper_by_eps, where):
    """max-statistic lower ≤ certified upper at the same target (``upper_by_eps``: target -> upper value)."""
    for r in rows:
        if r.get("method") == MAX_STATISTIC and r.get("sampler", "balls_and_bins") == "balls_and_bins":
            check_order(r["value"], upper_by_eps[r["_target"]], "max-statistic lower", "certified upper", where)


def _row(res, **extra):
    return {**_pipeline.result_row(res), **extra}


def _poisson(quantity, target, sigma, steps, epochs, bound, rel_tol):
    return account("poisson", quantity, target, sigma=sigma, steps=steps, epochs=epochs, q=1.0 / steps, bound=bound,
                   method="pld", direction="add_remove", rel_tol=rel_tol)


def _one(p, quantity, target, accuracy, rel_tol, method="allocation"):
    s, T, E = p["sigma"], p["steps"], p["epochs"]
    rows = []
    if p["sampler"] == "deterministic":
        rows.append(_row(chua.deterministic_result(quantity, target, s / math.sqrt(E))))
    elif p["sampler"] == "poisson":
        for bound in ("upper", "lower"):  # the PLD's upper curve and its optimistic lower curve
            rows.append(_pipeline.result_row(_poisson(quantity, target, s, T, E, bound, rel_tol), end=bound
                                             if bound == "lower" else None))
    else:
        call = bnb.epsilon if quantity == "epsilon" else bnb.delta
        for bound in ("upper", "lower"):
            rows.append(_row(call(target, sigma=s, steps=T, epochs=E, bound=bound, method=method,
                                  accuracy=accuracy)))
    for produce in LOWER_BOUND_ROWS:
        rows += [{**r, "_target": target} for r in produce(p, quantity, target)]
    if p["sampler"] == "balls_and_bins":
        _check_max_statistic(rows, {target: rows[0]["value"]}, f"{p}, {quantity} at {target}")
    for r in rows:
        r.pop("_target", None)
    for r in rows:
        r.update(quantity=quantity, epsilon=target if quantity == "delta" else r["value"],
                 delta=target if quantity == "epsilon" else r["value"])
    return rows


def check_mc(mc_lower, mc_upper, pld_lower, pld_upper, where):
    """Raise if the MC interval misses the certified bracket (probability ≤ β for correct code)."""
    if mc_upper < pld_lower or mc_lower > pld_upper:
        raise RuntimeError(f"Monte Carlo interval [{mc_lower!r}, {mc_upper!r}] misses the certified "
                           f"[{pld_lower!r}, {pld_upper!r}] at {where}: a bug (probability ≤ β otherwise)")


def compute_point(p, accuracy="default", rel_tol=1e-2, n_eps=21, eps_max=4.0, n_eps_mc=5, mc_samples=100000,
                  mc_failure_prob=0.01, method="allocation"):
    if p["view"] == "eps_vs_sigma":
        return _one(p, "epsilon", p["delta"], accuracy, rel_tol, method)
    eps = [float(e) for e in np.linspace(0.0, eps_max, n_eps)[1:]]
    if p["sampler"] != "balls_and_bins":
        return [r for e in eps for r in _one(p, "delta", e, accuracy, rel_tol, method)]
    kw = dict(sigma=p["sigma"], steps=p["steps"], epochs=p["epochs"])
    eps_mc = [float(e) for e in np.linspace(0.0, eps_max, n_eps_mc + 1)[1:]]
    curves = {b: bnb.delta_curve(eps + eps_mc, bound=b, method=method, accuracy=accuracy, **kw)
              for b in ("upper", "lower")}
    rows = []
    for b, curve in curves.items():
        rows += [_row(r, quantity="delta", epsilon=e, delta=r.value) for e, r in zip(eps, curve)]
    ms_rows = [{**r, "_target": e} for e in eps for produce in LOWER_BOUND_ROWS for r in produce(p, "delta", e)]
    _check_max_statistic(ms_rows, {e: r.value for e, r in zip(eps, curves["upper"])}, str(p))
    rows += [{k: v for k, v in r.items() if k != "_target"} | {"quantity": "delta", "epsilon": r["_target"],
                                                                 "delta": r["value"]} for r in ms_rows]
    for i, e in enumerate(eps_mc):
        lo, up = curves["lower"][len(eps) + i].value, curves["upper"][len(eps) + i].value
        mc = bnb.delta(e, method="montecarlo", mc_samples=mc_samples, mc_seed=p.get("mc_seed", 0),
                       mc_failure_prob=mc_failure_prob, **kw)
        check_mc(mc.lower, mc.upper, lo, up, f"{p}, ε={e}")
        rows.append(_row(mc, quantity="delta", epsilon=e, delta=mc.value, pld_lower=lo, pld_upper=up,
                         mc_samples=mc_samples, mc_failure_prob=mc_failure_prob))
    return rows


def plot(df, outputs):
    views = [v for v in ("eps_vs_sigma", "delta_vs_eps") if v in set(df["view"])]
    epochs = sorted(df["epochs"].unique())
    fig, axes = _style.figure(ncols=len(epochs), nrows=len(views), figsize=(3.6 * len(epochs), 3.0 * len(views)))
    colour = {"deterministic": _style.PALETTE[7], "poisson": _style.PALETTE[0], "shuffle": _style.PALETTE[2],
              "balls_and_bins": _style.PALETTE[1]}
    for i, view in enumerate(views):
        for j, E in enumerate(epochs):
            ax = axes[i, j]
            g = df[(df["view"] == view) & (df["epochs"] == E)]
            x, y = ("sigma", "value") if view == "eps_vs_sigma" else ("epsilon", "value")
            if view == "delta_vs_eps":  # δ below the reliability floor is not a bound (flagged in the CSV): not drawn
                g = g.assign(value=g["value"].where(g["value"] >= RELIABLE_DELTA_FLOOR))
                ax.axhline(RELIABLE_DELTA_FLOOR, color="0.5", lw=0.7, linestyle=(0, (4, 2)),
                           label=f"reliability floor δ = {RELIABLE_DELTA_FLOOR:g}")
            for sampler, c in colour.items():
                for kind in ("exact", "upper", "lower"):
                    cur = g[(g["sampler"] == sampler) & (g["kind"] == kind) & (g["method"] != "montecarlo")]
                    is_ms = cur["method"] == MAX_STATISTIC
                    for ms, part in ((False, cur[~is_ms]), (True, cur[is_ms])):
                        if not len(part):
                            continue
                        part = part.sort_values(x)
                        method = "max statistic" if ms and sampler == "balls_and_bins" else None
                        style = dict(linestyle=(0, (1, 1.5))) if method else _style.KIND_STYLE[kind]
                        ax.plot(part[x], part[y], color=c, lw=0.9, label=_style.label(sampler, kind, method),
                                **style)
                m = g[(g["sampler"] == sampler) & (g["method"] == "montecarlo") & g[y].notna()].sort_values(x)
                if len(m):
                    ax.errorbar(m[x], m[y], yerr=[m[y] - m["lower"], m["upper"] - m[y]], fmt="o", ms=2.5,
                                color=c, lw=0.8, label=_style.label(sampler, "estimate", "MC, KL band"))
            ax.set_yscale("log")
            ax.set_xlabel("σ" if view == "eps_vs_sigma" else "ε")
            ax.set_ylabel("ε" if view == "eps_vs_sigma" else "δ(ε)")
            steps = ", ".join(str(int(t)) for t in sorted(g["steps"].unique()))
            ax.set_title(f"{'ε vs σ' if view == 'eps_vs_sigma' else 'δ vs ε'}, T={steps}, E={E}", fontsize=8)
    fig.subplots_adjust(hspace=0.45, wspace=0.3)
    h, lab = axes[-1, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.02), fontsize=7)
    fig.suptitle("Balls-and-bins vs deterministic and Poisson batches (Chua et al. AISTATS 2025)", fontsize=9)
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
