"""Evaluate the paper claims (config/claims.yaml) and write the claims table."""

import time

import _pipeline
import pandas as pd

from dpsampling import claims


def run_chunk(smk):
    log = _pipeline.logger(smk)
    rows = []
    todo = list(smk.params.claims)
    for i, c in enumerate(todo, 1):
        t = time.time()
        rows.append(claims.evaluate(c))
        log.info("claim %d/%d %s: %s (%.1fs)", i, len(todo), c["id"], rows[-1]["status"], time.time() - t)
    df = pd.DataFrame(rows, columns=None if rows else ["id"])
    df["code_hash"] = _pipeline.code_hash(smk)
    _pipeline.write_csv(df, smk.output[0])


def fmt(x):
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def markdown(df):
    lines = [
        "# Claims: numbers printed in the papers vs this pipeline",
        "",
        f"{(df.status == 'reproduced').sum()} reproduced, {(df.status == 'differs').sum()} differ "
        f"(of {len(df)}); the relation is what the paper states; a numeric claim is reproduced iff ours lies in "
        "the acceptance range (and within the expected value, where one is given; see config/claims.yaml for why).",
        "",
        "| paper | where | quantity | printed | rel. | accept | ours | status | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in df.iterrows():
        acc = "" if pd.isna(r["accept_lo"]) else f"[{fmt(r['accept_lo'])}, {fmt(r['accept_hi'])}]"
        if not pd.isna(r["expect"]):
            acc += f", ≈{fmt(r['expect'])} ±{fmt(r['expect_rel'])} (rel)"
        lines.append(f"| {r['paper']} | {r['where']} | {r['quantity']} | {fmt(r['printed'])} | {r['relation']} | "
                     f"{acc} | {fmt(r['ours'])} | {r['status']} | {'' if pd.isna(r['note']) else r['note']} |")
    return "\n".join(lines) + "\n"


def aggregate(smk):
    order = {c["id"]: i for i, c in enumerate(smk.params.claims)}
    df = pd.concat([d for d in (pd.read_csv(f) for f in smk.input) if len(d)], ignore_index=True)
    df = df.iloc[df["id"].map(order).argsort()].reset_index(drop=True)
    _pipeline.write_csv(df, smk.output.csv)
    _pipeline.write_text(markdown(df), smk.output.md)


if __name__ == "__main__":
    smk = snakemake  # noqa: F821 - injected by Snakemake
    (aggregate if smk.rule == "claims_table" else run_chunk)(smk)
