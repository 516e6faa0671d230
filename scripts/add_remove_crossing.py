"""Lebeda et al. Fig. 1 (§5, App. B.2): add vs remove curves of the subsampled Laplace mechanism.

One grid point = one (mechanism, sampler, scale, γ, k, mc_seed).  Rows (column ``quantity``):

- ``delta``: δ(ε) per ``direction`` (add / remove): Monte Carlo (``method=montecarlo``,
  ``kind=estimate``, ``lower``/``upper`` = estimate ∓ α, the simultaneous Hoeffding band of
  App. B.2 that holds w.p. ≥ 1-β over the |E| grid points) and exact PLD bounds
  (``method=pld``, ``kind=upper`` pessimistic / ``kind=lower`` optimistic, dp_accounting).
  MC rows carry ``pld_lower``/``pld_upper`` at the same ε and the check column ``mc_check``.
- ``add_above_remove``: the ε intervals (ε ≥ 0) where the add curve exceeds the remove curve,
  ``eps_start``/``eps_end``; ``kind=lower`` = certain (add lower bound > remove upper bound: the
  true set contains it), ``kind=upper`` = possible (contains the true set), ``kind=estimate`` =
  MC point estimates; ``confidence`` = 1 for PLD bounds, 1-2β for the MC bands; ``value`` = the
  largest gap inside the interval (or, when there is no interval, the largest gap on the grid,
  ≤ 0, with empty ends).

MC check (decided here): each MC estimate must lie within ±α of the PLD bracket
[pld_lower, pld_upper].  Outside ±α happens with probability ≤ β for a correct implementation,
so it is *flagged* (``mc_check=outside_band``, flag ``mc_outside_band``), not fatal: with a fixed
seed a rare miss would otherwise fail every rerun.  Outside ±2α has probability
≤ 2|E|(β/2|E|)^4 (Hoeffding), i.e. it means a bug, and the script *raises*.
"""

import math

import _pipeline
import _style
import numpy as np

from dpsampling.engine.validation import ONE_WAY_DIRECTIONS
from dpsampling.engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR



def compute_point(p, mc_half_width, mc_failure_prob, n_eps, n_eps_pld, discretization, rel_tol=None):
    """One grid point (rel_tol: the schema default, not used by Monte Carlo or fixed-grid PLD)."""
    from dpsampling.papers.lebeda import directions  # not at the top: plot jobs skip it
    c = directions.add_remove_comparison(
        p["mechanism"], p["scale"], p["q"], p["steps"], sampler=p["sampler"],
        mc_half_width=mc_half_width, mc_failure_prob=mc_failure_prob, n_eps=n_eps, n_eps_pld=n_eps_pld,
        mc_seed=p["mc_seed"], discretization=discretization)
    rows = []
    for d in ONE_WAY_DIRECTIONS:
        mc, check = c.mc[d], c.mc_check(d)
        if np.any(check == "far_outside"):
            bad = c.pld_at_mc.epsilon[check == "far_outside"]
            raise RuntimeError(f"Monte Carlo {d} curve more than 2α outside the PLD bounds at ε={bad.tolist()} "
                               f"({p}): a bug, not chance (probability ≤ 2|E|(β/2|E|)^4)")
        lo, hi = getattr(c.pld_at_mc, f"{d}_lower"), getattr(c.pld_at_mc, f"{d}_upper")
        for i, e in enumerate(mc.epsilon):
            rows.append({"quantity": "delta", "direction": d, "epsilon": e, "value": mc.estimate[i],
                         "kind": "estimate", "method": "montecarlo", "lower": mc.estimate[i] - mc.mc_half_width,
                         "upper": mc.estimate[i] + mc.mc_half_width, "mc_samples": mc.mc_samples,
                         "mc_half_width": mc.mc_half_width, "mc_failure_prob": mc.mc_failure_prob,
                         "mc_seed": mc.mc_seed, "pld_lower": lo[i], "pld_upper": hi[i],
                         "mc_excess": c.mc_excess[d][i], "mc_check": check[i],
                         "flags": "mc_outside_band" if check[i] != "ok" else ""})
        for kind in ("upper", "lower"):
            vals = getattr(c.pld, f"{d}_{kind}")
            for e, v in zip(c.pld.epsilon, vals):
                rows.append({"quantity": "delta", "direction": d, "epsilon": e, "value": v, "kind": kind,
                             "method": "pld", "discretization": c.pld.discretization,
                             "flags": BELOW_FLOOR_FLAG if v < RELIABLE_DELTA_FLOOR else ""})
    for (method, kind), ivs in c.crossings.items():
        base = {"quantity": "add_above_remove", "direction": "add_minus_remove", "kind": kind, "method": method,
                "confidence": c.confidence[(method, kind)],
                "discretization": c.pld.discretization if method == "pld" else None,
                "mc_samples": c.mc["add"].mc_samples if method == "montecarlo" else None}
        if ivs:
            rows += [{**base, "eps_start": a, "eps_end": b, "value": gap} for a, b, gap in ivs]
        else:
            e, diff = _gap(c, method, kind)
            gap, at = directions.max_margin(e, diff)
            rows.append({**base, "eps_start": math.nan, "eps_end": math.nan, "epsilon": at, "value": gap,
                         "flags": "no_interval"})
    for r in rows:
        r.setdefault("rel_tol", None)
        r.setdefault("est_rel_error", None)
        r.setdefault("discretization", None)
        r["eps_max"] = c.eps_max
    return rows


def _gap(c, method, kind):
    """add - remove on the grid behind ``c.crossings[(method, kind)]`` (for 'no interval' rows)."""
    if method == "pld":
        a, r = ("add_lower", "remove_upper") if kind == "lower" else ("add_upper", "remove_lower")
        return c.pld.epsilon, getattr(c.pld, a) - getattr(c.pld, r)
    a, r = c.mc["add"], c.mc["remove"]
    s = {"lower": -1.0, "upper": 1.0, "estimate": 0.0}[kind]
    return a.epsilon, (a.estimate + s * a.mc_half_width) - (r.estimate - s * r.mc_half_width)


def _fmt(iv):
    return f"({iv['eps_start']:.3f}, {iv['eps_end']:.3f})"


def plot(df, outputs):
    settings = df[["sampler", "scale", "q"]].drop_duplicates().sort_values(["sampler", "scale", "q"])
    steps_values = sorted(df["steps"].unique())
    fig, axes = _style.figure(ncols=len(steps_values), nrows=len(settings), figsize=(3.3 * len(steps_values), 2.9 * len(settings)))
    colour = {"add": _style.PALETTE[0], "remove": _style.PALETTE[1]}
    for row, (_, st) in enumerate(settings.iterrows()):
        for col, k in enumerate(steps_values):
            ax = axes[row, col]
            g = df[(df.sampler == st.sampler) & (df.scale == st.scale) & (df.q == st.q) & (df.steps == k)]
            if g.empty:  # (setting, k) not on the grid
                ax.set_axis_off()
                continue
            cur = g[g.quantity == "delta"]
            for d in ("add", "remove"):
                for kind in ("upper", "lower"):
                    c = cur[(cur.direction == d) & (cur.method == "pld") & (cur.kind == kind)]
                    ax.plot(c.epsilon, c.value, color=colour[d], lw=0.9, label=_style.label(f"δ_{d}", kind, "PLD"),
                            **_style.KIND_STYLE[kind])
                m = cur[(cur.direction == d) & (cur.method == "montecarlo")]
                alpha = m.mc_half_width.iloc[0]
                ax.fill_between(m.epsilon, m.lower, m.upper, color=colour[d], alpha=0.25, lw=0)
                ax.plot(m.epsilon, m.value, color=colour[d], marker="o", ms=1.8, lw=0.8,
                        label=_style.label(f"δ_{d}", "estimate", f"MC ±{alpha:.1e}"), **_style.KIND_STYLE["estimate"])
                bad = m[m.mc_check != "ok"]
                if len(bad):
                    ax.plot(bad.epsilon, bad.value, "x", color="red", ms=6, label="MC outside its band of PLD")
            iv = g[(g.quantity == "add_above_remove") & g.eps_start.notna()]
            certain = iv[(iv.method == "pld") & (iv.kind == "lower")]
            mc = iv[(iv.method == "montecarlo") & (iv.kind == "lower")]
            for _, r in certain.iterrows():
                ax.axvspan(r.eps_start, r.eps_end, color="grey", alpha=0.18, lw=0)
            if len(certain):
                conf = mc.confidence.iloc[0] if len(mc) else float("nan")
                text = "δ_add > δ_remove on\nε ∈ " + ", ".join(_fmt(r) for _, r in certain.iterrows())
                text += " (PLD, certain)\nMC: " + (", ".join(_fmt(r) for _, r in mc.iterrows())
                                                    + f"\n(confidence ≥ {conf:.0%})" if len(mc) else "not resolved")
                ax.text(0.97, 0.97, text, transform=ax.transAxes, ha="right", va="top", fontsize=6.5,
                        bbox={"facecolor": "white", "alpha": 0.85, "lw": 0})
            ax.set_title(f"{st.sampler.upper()} Laplace, scale {st.scale:g}, γ={st.q:g}, k={k}", fontsize=8)
            ax.set_xlabel("ε")
            if col == 0:
                ax.set_ylabel("δ(ε)")
            ax.set_ylim(bottom=0)
    fig.subplots_adjust(hspace=0.45, wspace=0.25)
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.02))
    fig.suptitle("Add vs remove privacy curves of the subsampled Laplace mechanism (Lebeda et al. Fig. 1); "
                 "grey: ε where δ_add > δ_remove", fontsize=9)
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
