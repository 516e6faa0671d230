"""Chua et al. Fig. 3 and App. Figs 6-7: δ vs ε at fixed σ and T, per batch sampler.

The same curves, checks (Theorem 4.1; where Poisson accounting is provably
wrong for shuffling) and layout as ``samplers_eps_vs_sigma.py`` (generic parts in
``_pipeline``), with the axes δ(ε) instead of ε(σ).  PLD δ values below
RELIABLE_DELTA_FLOOR are flagged and not drawn (not reliable bounds).
"""

import _pipeline
import _samplers

# Which paper figure each (σ, T) panel is (presentation only).
PANELS = {
    (0.4, 10000): "Chua Fig. 3",
    (0.8, 1000): "Chua App. Fig. 6",
    (1.0, 1000): "Chua App. Fig. 7",
}


def compute_point(p, **settings):
    return _samplers.sampler_result_row(p, "delta", **settings)


def plot(df, figure_paths, checks_path):
    _samplers.plot_sampler_figure(df, figure_paths, checks_path, quantity="delta", panel_keys=["sigma", "steps"], x="epsilon",
                     titles=PANELS, xlabel="ε", panel_text=lambda k: f"δ vs ε at σ={k[0]:g}, T={k[1]:,}")


def report(df, out):
    plot(df, [out.pdf, out.png], out.checks)


if __name__ == "__main__":
    _pipeline.main(snakemake, compute_point, report=report)  # noqa: F821 - injected by Snakemake
