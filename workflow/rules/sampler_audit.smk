# Issue 10: `dpsampling audit` over named, realistic training runs and epochs 1..E: ε per sampler,
# the shuffle interval [lower, deterministic], provably-wrong Poisson accounting of shuffled runs.
FIGURES["sampler_audit"] = ["figures/sampler_audit.pdf", "figures/sampler_audit.png", "figures/sampler_audit.md"]


rule sampler_audit_chunk:
    output:
        "results/sampler_audit/chunks/{chunk}.csv",
    params:
        code_hash=code_hash("sampler_audit"),
        points=lambda wc: chunk_points("sampler_audit", wc.chunk),
        settings=settings("sampler_audit"),
    log:
        "logs/sampler_audit/chunk_{chunk}.log",
    message:
        "sampler_audit: ε per sampler on chunk {wildcards.chunk}"
    script:
        "../../scripts/sampler_audit.py"


rule sampler_audit_plot:
    input:
        "results/sampler_audit/sampler_audit.csv",
    output:
        pdf=report("figures/sampler_audit.pdf", caption="../report/sampler_audit.rst", category="Practitioner audit"),
        png="figures/sampler_audit.png",
        md="figures/sampler_audit.md",
    params:
        code_hash=code_hash("sampler_audit"),
    log:
        "logs/sampler_audit/plot.log",
    message:
        "sampler_audit: plotting {output.pdf} and writing {output.md}"
    script:
        "../../scripts/sampler_audit.py"
