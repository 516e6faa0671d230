# The claims table: every number the papers print that we reproduce, evaluated at its own
# parameters through the library (independent of any figure grid, so identical under every config).
import yaml

from snakemake.exceptions import WorkflowError

FIGURES["claims"] = ["results/claims/claims.csv", "figures/claims.md"]


def _read_claims():
    """Parse and validate the claims file once (schema, then dpsampling.claims.validate: ids unique,
    lo <= hi, expect inside accept); a bad entry stops the workflow naming the claim and the key."""
    from dpsampling import claims as cl

    with open(config["claims"]["file"]) as f:
        data = yaml.safe_load(f)
    validate(data, "../schemas/claims.schema.yaml")
    seen = set()
    for c in data["claims"]:
        try:
            cl.validate(c)
        except ValueError as e:
            raise WorkflowError(f"{config['claims']['file']}: {e}") from None
        if c["id"] in seen:
            raise WorkflowError(f"{config['claims']['file']}: claim id {c['id']} appears twice")
        seen.add(c["id"])
    return data["claims"]


CLAIMS = _read_claims()


def load_claims():
    return CLAIMS


def claims_of_chunk(chunk):
    from dpsampling import claims as cl

    return [c for c in load_claims() if cl.chunk_of(c["id"], config["claims"]["n_chunks"]) == int(chunk)]


rule claims_chunk:
    priority: 1  # among the pipeline's longest jobs: started first, so that none runs alone at the end
    output:
        "results/claims/chunks/{chunk}.csv",
    params:
        # the script's imports plus the module of every `evaluate: call:` in this chunk
        code_hash=lambda wc: code_hash("claims", [c["evaluate"]["call"].rpartition(".")[0] for c in claims_of_chunk(wc.chunk)]),
        claims=lambda wc: claims_of_chunk(wc.chunk),
    log:
        "logs/claims/chunk_{chunk}.log",
    message:
        "claims: evaluating chunk {wildcards.chunk}"
    # the longest jobs of a smoke run (~10-20 CPU-s each): started first, so that the short jobs fill the cores
    # at the end instead of one claims chunk running alone (measured: a ~10 s one-core tail); order only
    priority: 1
    script:
        "../../scripts/claims.py"


rule claims_table:
    input:
        expand("results/claims/chunks/{i}.csv", i=range(int(config["claims"]["n_chunks"]))),
    output:
        csv="results/claims/claims.csv",
        md=report("figures/claims.md", caption="../report/claims.rst", category="Claims"),
    params:
        code_hash=code_hash("claims"),
        claims=load_claims(),
    log:
        "logs/claims/table.log",
    message:
        "claims: writing {output.csv} and {output.md}"
    script:
        "../../scripts/claims.py"
