# The README's gallery: the key figure of each paper as a small PNG in docs/gallery/, the claims summary line,
# and docs/gallery/manifest.json (a hash of each figure's config block, checked by tests/pipeline/test_gallery.py).
# Regenerate (paper-grade, committed config): `snakemake --cores all gallery`.  Adding a figure: one line in
# config.yaml's `gallery: figures:`.  Not part of `all`: it rewrites files under docs/ and the README section.
import hashlib
import json

localrules: gallery


for _name in config["gallery"]["figures"]:
    if f"figures/{_name}.png" not in FIGURES.get(_name, []):
        raise ValueError(f"config key gallery.figures: {_name!r} has no figures/{_name}.png; allowed: "
                         + ", ".join(sorted(n for n, f in FIGURES.items() if f"figures/{n}.png" in f)))


def config_hash(name):
    """sha256 of a computation's (validated) config block: the figure is current iff this is unchanged."""
    text = json.dumps(config[name], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


rule gallery:
    input:
        figures=expand("figures/{name}.png", name=config["gallery"]["figures"]),
        claims="results/claims/claims.csv",
    output:
        images=expand("docs/gallery/{name}.png", name=config["gallery"]["figures"]),
        manifest="docs/gallery/manifest.json",
    params:
        names=config["gallery"]["figures"],
        width=config["gallery"]["width"],
        hashes={name: config_hash(name) for name in config["gallery"]["figures"]},
    log:
        "logs/gallery.log",
    message:
        "gallery: {params.names} -> docs/gallery/ and the README's gallery section"
    script:
        "../../scripts/gallery.py"
