"""Chua et al. Fig. 1 and App. Figs 4-5: ε vs σ at fixed δ and T, per batch sampler.

Curves (one epoch, T batches): deterministic (exact, Prop. 3.1), Poisson with
q = 1/T (PLD upper and lower bound, RDP upper bound; max over add/remove) and
shuffle (lower bound from the sets E_C, eq. (3)).  Also used by
``samplers_delta_vs_eps.py`` (δ vs ε), which shares the generic parts in ``_pipeline``.

Beyond the paper: every shuffle row is checked against Theorem 4.1 (shuffle
lower bound ≤ deterministic; the job fails otherwise), and the plot rule writes
where the shuffle lower bound exceeds the best Poisson upper bound (reporting
Poisson accounting for a shuffled implementation is provably wrong there) to
``results/<computation>/provably_wrong.csv`` and shades it on the figure.
"""

import _pipeline
import _samplers

# Which paper figure each (δ, T) panel is (presentation only; other panels get a generic title).
PANELS = {
    (1e-6, 10000): "Chua Fig. 1 (= App. Fig. 4 as captioned, T=10,000)",
    (1e-6, 100000): "Chua App. Fig. 4 (T=100,000 as in its text: matches its printed numbers)",
    (1e-5, 1000): "Chua App. Fig. 5",
}


def compute_point(p, **settings):
    return _samplers.sampler_result_row(p, "epsilon", **settings)


#: the checks table of the plot rule (Theorem 4.1, provably-wrong regions), shared with samplers_delta_vs_eps
checks = _samplers.sampler_checks


def plot(df, figure_paths, checks_path):
    _samplers.plot_sampler_figure(df, figure_paths, checks_path, quantity="epsilon", panel_keys=["delta", "steps"],
                                  x="sigma", titles=PANELS, xlabel="noise multiplier σ", panel_text=lambda k: f"ε vs σ at δ={k[0]:g}, T={k[1]:,}")


def report(df, out):
    plot(df, [out.pdf, out.png], out.checks)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=report)  # noqa: F821 - injected by Snakemake
