"""Lebeda et al. App. B.1 (Prop. 11): subsampled randomized response, add vs remove, exact.

One grid point = one (k, γ).  Everything is exact rational arithmetic
(``dpsampling.papers.lebeda.randomized_response``); floats only where ε = ln α is needed.  Rows
(column ``quantity``):

- ``delta``: the full curves δ_add(ε) = H_{e^ε}(P‖Q) and δ_remove(ε) = H_{e^ε}(Q‖P) on an ε grid
  (``kind=exact``, evaluated from the exact piecewise-linear-in-α pieces);
- ``hockey_stick``: H_α at α = 4/3 and 2 per direction, ``fraction`` = the exact rational
  (App. B.1 prints 11/48, 1/6, 1/16, 1/8 for k = 2, γ = 1/2);
- ``add_above_remove``: the exact α interval(s) (``alpha_start``/``alpha_end`` as fractions, "inf"
  for ∞) where add > remove, with ε = ln α in ``eps_start``/``eps_end``; ``value`` = the largest
  add - remove on the interval (or, without an interval, the largest on the grid, ≤ 0).
"""

import math
from fractions import Fraction

import _pipeline
import _style
import numpy as np

from dpsampling.papers.lebeda import randomized_response as rr

ALPHAS = (Fraction(4, 3), Fraction(2))


def compute_point(p, n_eps, eps_max, rel_tol=None):
    """One grid point (rel_tol: the schema default, unused: everything is exact)."""
    q = rr._frac("q", p["q"])
    k = p["steps"]
    eps = np.linspace(0.0, eps_max, n_eps)
    add, rem = rr.add_remove_curves(eps, k, q)
    common = {"method": "exact", "kind": "exact", "discretization": None, "rel_tol": None, "est_rel_error": None,
              "flags": ""}
    rows = []
    for d, cur in (("add", add), ("remove", rem)):
        rows += [{**common, "quantity": "delta", "direction": d, "epsilon": e, "value": v} for e, v in zip(eps, cur)]
    for (d, a), v in rr.exact_values(k, q, alphas=ALPHAS).items():
        rows.append({**common, "quantity": "hockey_stick", "direction": d, "alpha": str(a), "epsilon": math.log(a),
                     "value": float(v), "fraction": str(v)})
    ivs = rr.add_above_remove_alpha_intervals(k, q)
    for a, b in ivs:
        lo, hi = math.log(a), (math.inf if b is None else math.log(b))
        inside = (eps > lo) & (eps < hi)
        gap = float(np.max((add - rem)[inside])) if inside.any() else 0.0
        rows.append({**common, "quantity": "add_above_remove", "direction": "add_minus_remove",
                     "alpha_start": str(a), "alpha_end": "inf" if b is None else str(b),
                     "eps_start": lo, "eps_end": hi, "value": gap})
    if not ivs:
        i = int(np.argmax(add - rem))
        rows.append({**common, "quantity": "add_above_remove", "direction": "add_minus_remove",
                     "eps_start": math.nan, "eps_end": math.nan, "epsilon": eps[i], "value": float((add - rem)[i]),
                     "flags": "no_interval"})
    return rows


def _q(x):
    """A fraction read back from the CSV ("5/3", or 1.0 for "1") as text."""
    return str(rr._frac("value", x)) if not isinstance(x, str) else x


def plot(df, outputs):
    steps_values = sorted(df["steps"].unique())
    fig, axes = _style.figure(ncols=len(steps_values), nrows=1, figsize=(3.4 * len(steps_values), 2.8))
    fig.subplots_adjust(bottom=0.2)
    colour = {"add": _style.PALETTE[0], "remove": _style.PALETTE[1]}
    name = {"add": "δ_add = H(P‖Q)", "remove": "δ_remove = H(Q‖P)"}
    for ax, k in zip(axes[0], steps_values):
        g = df[df.steps == k]
        for d in ("add", "remove"):
            c = g[(g.quantity == "delta") & (g.direction == d)]
            ax.plot(c.epsilon, c.value, color=colour[d], label=_style.label(name[d], "exact"), **_style.KIND_STYLE["exact"])
            h = g[(g.quantity == "hockey_stick") & (g.direction == d)]
            ax.plot(h.epsilon, h.value, "o", color=colour[d], ms=3.5)
            for _, r in h[h.value > 0].iterrows():
                ax.annotate(f"{r.fraction}", (r.epsilon, r.value), textcoords="offset points",
                            xytext=(4, 4 if d == "add" else -10), fontsize=7, color=colour[d])
        iv = g[(g.quantity == "add_above_remove") & g.eps_start.notna()]
        for _, r in iv.iterrows():
            ax.axvspan(r.eps_start, min(r.eps_end, g.epsilon.max()), color="grey", alpha=0.18, lw=0)
            ax.text(0.97, 0.95, f"δ_add > δ_remove on α ∈ ({_q(r.alpha_start)}, {_q(r.alpha_end)}),\n"
                    f"ε ∈ ({r.eps_start:.3f}, {r.eps_end:.3f})", transform=ax.transAxes, ha="right", va="top",
                    fontsize=7)
        if iv.empty:
            ax.text(0.97, 0.95, "δ_remove ≥ δ_add for all ε ≥ 0", transform=ax.transAxes, ha="right", va="top",
                    fontsize=7)
        gm = g.q.iloc[0]
        ax.set_title(f"randomized response (3/4), γ={rr._frac('q', gm)}, k={k}", fontsize=8)
        ax.set_xlabel("ε")
        ax.set_ylim(bottom=0)
    axes[0, 0].set_ylabel("δ(ε)")
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="upper center", ncol=2, bbox_to_anchor=(0.5, -0.02))
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
