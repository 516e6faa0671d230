"""Lebeda et al. Fig. 3 (§7): WOR Laplace under substitution, three candidate pairs, k = 2.

One grid point = one pair ("PP||QQ", "QQ||PP", "PQ||QP") at (scale, γ) (§7: 2 and 1/2) with
P = ½Lap(-1, b) + ½Lap(1, b), Q = Lap(-1, b).  The paper prints the mixed pair as
"H(P×Q ‖ P×Q)" (identically 0); its description of x_2, x_2' gives P×Q ‖ Q×P, used here.
Rows (column ``quantity``):

- ``hockey_stick``: H_{e^ε} of the pair: exact (``method=quad``, ``kind=exact``, 1-D quadrature,
  error in ``quad_error``), Monte Carlo (``kind=estimate``, ±α band w.p. ≥ 1-β, check column
  ``mc_check`` against the exact value: flagged beyond α, raises beyond 2α, as in
  add_remove_crossing) and dp_accounting PLD bounds (``kind=upper``/``lower``);
- ``max_interval``: the ε intervals on which this pair is the largest of the three (ends
  ``eps_start``/``eps_end``: roots of the difference of the exact curves, brentq xtol 1e-10);
  ``value`` = the largest lead over the second largest on the interval.
"""

import _pipeline
import _style
import numpy as np

from dpsampling.engine import montecarlo
from dpsampling.papers.lebeda import substitution

NAME = {"PP||QQ": "H(P×P‖Q×Q)", "QQ||PP": "H(Q×Q‖P×P)", "PQ||QP": "H(P×Q‖Q×P)"}


def compute_point(p, mc_half_width, mc_failure_prob, n_eps, n_eps_exact, discretization, rel_tol=None):
    """One grid point (rel_tol: the schema default, unused)."""
    pair, b, g = p["pair"], p["scale"], p["q"]
    e_max = substitution.max_loss(b, g)
    e_mc = np.linspace(0.0, e_max, n_eps)
    e_ex = np.unique(np.concatenate([np.linspace(0.0, e_max, n_eps_exact), e_mc]))
    common = {"discretization": None, "rel_tol": None, "est_rel_error": None, "flags": ""}
    rows = []
    exact, err = substitution.exact_curve(e_ex, pair, with_error=True, scale=b, q=g)
    rows += [{**common, "quantity": "hockey_stick", "epsilon": e, "value": v, "kind": "exact", "method": "quad",
              "quad_error": q} for e, v, q in zip(e_ex, exact, err)]
    n = montecarlo.hoeffding_samples(mc_half_width, mc_failure_prob, n_eps)
    mc = substitution.mc_curve(e_mc, pair, n, p["mc_seed"], mc_failure_prob=mc_failure_prob, scale=b, q=g)
    ref = substitution.exact_curve(e_mc, pair, scale=b, q=g)
    excess = np.abs(mc.estimate - ref) / mc.mc_half_width
    if np.any(excess > 2.0):
        raise RuntimeError(f"Monte Carlo {pair} more than 2α from the exact curve at ε={e_mc[excess > 2].tolist()} "
                           f"({p}): a bug, not chance")
    for i, e in enumerate(e_mc):
        ok = excess[i] <= 1.0
        rows.append({**common, "quantity": "hockey_stick", "epsilon": e, "value": mc.estimate[i], "kind": "estimate",
                     "method": "montecarlo", "lower": mc.estimate[i] - mc.mc_half_width,
                     "upper": mc.estimate[i] + mc.mc_half_width, "mc_samples": mc.mc_samples,
                     "mc_half_width": mc.mc_half_width, "mc_failure_prob": mc.mc_failure_prob, "mc_seed": mc.mc_seed,
                     "exact_value": ref[i], "mc_excess": excess[i], "mc_check": "ok" if ok else "outside_band",
                     "flags": "" if ok else "mc_outside_band"})
    up, lo = substitution.pld_bounds(e_mc, pair, discretization, scale=b, q=g)
    for kind, vals in (("upper", up), ("lower", lo)):
        rows += [{**common, "quantity": "hockey_stick", "epsilon": e, "value": v, "kind": kind, "method": "pld",
                  "discretization": discretization} for e, v in zip(e_mc, vals)]
    for a, z, who, lead in substitution.max_pair_leads(0.0, None, scale=b, q=g):
        if who == pair:
            rows.append({**common, "quantity": "max_interval", "eps_start": a, "eps_end": z, "value": lead,
                         "kind": "exact", "method": "quad"})
    return rows


def plot(df, outputs):
    fig, axes = _style.figure(nrows=2, figsize=(6.4, 6.0), gridspec_kw={"height_ratios": [2.2, 1]})
    top, bottom = axes[0, 0], axes[1, 0]
    pairs = [p for p in substitution.PAIRS if p in set(df.pair)]
    colour = {p: _style.PALETTE[i] for i, p in enumerate(substitution.PAIRS)}
    ex = {}
    for p in pairs:
        g = df[(df.pair == p) & (df.quantity == "hockey_stick")]
        e = g[g.kind == "exact"].sort_values("epsilon")
        ex[p] = e.set_index("epsilon")["value"]
        top.plot(e.epsilon, e.value, color=colour[p], lw=1.2, label=_style.label(NAME[p], "exact", "quadrature"),
                 **_style.KIND_STYLE["exact"])
        m = g[g.method == "montecarlo"].sort_values("epsilon")
        top.fill_between(m.epsilon, m.lower, m.upper, color=colour[p], alpha=0.2, lw=0)
        top.plot(m.epsilon, m.value, "o", color=colour[p], ms=2, label=_style.label(
            NAME[p], "estimate", f"MC ±{m.mc_half_width.iloc[0]:.1e}"))
        bad = m[m.mc_check != "ok"]
        if len(bad):
            top.plot(bad.epsilon, bad.value, "x", color="red", ms=6, label="MC outside its band")
    iv = df[df.quantity == "max_interval"].sort_values("eps_start")
    for ax in (top, bottom):
        for _, r in iv.iterrows():
            ax.axvspan(r.eps_start, r.eps_end, color=colour[r.pair], alpha=0.08, lw=0)
            ax.axvline(r.eps_end, color="grey", lw=0.6)
    for _, r in iv.iterrows():
        top.text(0.5 * (r.eps_start + r.eps_end), 1.01, f"max: {NAME[r.pair]}\n[{r.eps_start:.4f}, {r.eps_end:.4f}]",
                 transform=top.get_xaxis_transform(), ha="center", va="bottom", fontsize=6.5, color=colour[r.pair])
    if len(ex) == 3:  # lead of each pair over the larger of the other two (exact)
        grid = ex[pairs[0]].index
        for p in pairs:
            other = np.max([ex[q].reindex(grid).to_numpy() for q in pairs if q != p], axis=0)
            bottom.plot(grid, ex[p].to_numpy() - other, color=colour[p], lw=1.0, **_style.KIND_STYLE["exact"])
        bottom.axhline(0, color="black", lw=0.6)
        lim = max(iv.value.max() * 1.3, 1e-3)
        bottom.set_ylim(-lim, lim)
    b, g = df.scale.iloc[0], df.q.iloc[0]
    top.set_ylabel("H_{e^ε}")
    top.set_ylim(bottom=0)
    top.legend(fontsize=6.5, loc="upper right")
    bottom.set_ylabel("lead over the\nlarger other pair")
    bottom.set_xlabel("ε")
    fig.suptitle(f"WOR Laplace (scale {b:g}, γ={g:g}) under substitution, k = 2 (Lebeda et al. Fig. 3)",
                 fontsize=9, y=1.0)
    _pipeline.save_figure(fig, outputs)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=plot)  # noqa: F821 - injected by Snakemake
