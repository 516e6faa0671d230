# Räisä et al. Fig. 2 / Conjecture 6.3: max over q of a − b per ε (T = 1), the authors' σ grid and
# the exact root-finding version, for several constants c (q, ε ≥ c·δ); table figures/a_minus_b.md.
FIGURES["a_minus_b"] = ["figures/a_minus_b.pdf", "figures/a_minus_b.png", "figures/a_minus_b.md"]


def _check_a_minus_b_grids():
    """Reject inverted q grids (c·δ ≥ q_max) before anything runs; the library names q."""
    from dpsampling.papers import raisa as effective_noise

    for c, d, q_max, n_q in {(p["c"], p["delta"], p["q_max"], p["n_q"]) for p in points("a_minus_b")}:
        effective_noise.paper_grid(d, c, 1, n_q, q_max=q_max)


if "a_minus_b" in config:
    _check_a_minus_b_grids()


rule a_minus_b_chunk:
    output:
        "results/a_minus_b/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("a_minus_b"),
        points=lambda wc: chunk_points("a_minus_b", wc.chunk),
        settings=settings("a_minus_b"),
    log:
        "logs/a_minus_b/chunk_{chunk}.log",
    message:
        "a_minus_b: max(a − b) per ε, grid and exact, chunk {wildcards.chunk}"
    script:
        "../../scripts/a_minus_b.py"


rule a_minus_b_plot:
    input:
        "results/a_minus_b/a_minus_b.csv",
    output:
        pdf=report("figures/a_minus_b.pdf", caption="../report/a_minus_b.rst", category="Räisä et al."),
        png="figures/a_minus_b.png",
        md="figures/a_minus_b.md",
    params:
        code_hash=code_hash("a_minus_b"),
    log:
        "logs/a_minus_b/plot.log",
    message:
        "a_minus_b: plotting {output.pdf} and the table {output.md}"
    script:
        "../../scripts/a_minus_b.py"
