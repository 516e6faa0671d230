"""Lebeda et al. Table 1: ε for Poisson and WOR at σ=0.8, γ=1e-3, T=1e4 over δ."""

import _pipeline


def compute_point(p, rel_tol):
    from dpsampling.samplers import account  # not at the top: plot jobs skip it
    res = account(p["sampler"], "epsilon", p["delta"], sigma=p["sigma"], q=p["q"], steps=p["steps"],
                  direction=p["direction"], rel_tol=rel_tol)
    return _pipeline.result_row(res)


def markdown(df):
    """The table in the paper's layout, upper bounds with their estimated error."""
    rows = ["| δ | ε (Poisson) | ε (WOR) |", "|---|---|---|"]
    for d, g in df.groupby("delta", sort=True):
        cell = {}
        for _, r in g.iterrows():
            cell[r["sampler"]] = f"{r['value']:.4f} (≤, rel. err ≤ {r['est_rel_error']:.0e})"
        rows.append(f"| {d:.0e} | {cell.get('poisson', '–')} | {cell.get('wor', '–')} |")
    p = df.iloc[0]
    head = (f"ε upper bounds (pessimistic PLD, dp_accounting) for the subsampled Gaussian, "
            f"σ={p['sigma']:g}, γ={p['q']:g}, T={int(p['steps']):,}, add/remove.\n\n")
    return head + "\n".join(rows) + "\n"


def report(df, out):
    _pipeline.write_text(markdown(df), out[0])


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=report)  # noqa: F821 - injected by Snakemake
