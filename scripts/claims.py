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
    _pipeline.write_csv(pd.DataFrame(rows, columns=None if rows else ["id"]), smk.output[0])


def fmt(x):
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def markdown(df):
    lines = [
        "# Claims: numbers printed in the papers vs this pipeline",
        "",
        f"{(df.status == 'reproduced').sum()} reproduced, {(df.status == 'differs').sum()} differ "
        f"(of {len(df)}); a claim reads “ours <relation> printed” within the tolerance.",
        "",
        "| paper | where | quantity | printed | rel. | tol. | ours | status | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in df.iterrows():
        tol = fmt(r["tolerance"]) + (" (rel)" if r["tolerance_kind"] == "rel" else "")
        lines.append(f"| {r['paper']} | {r['where']} | {r['quantity']} | {fmt(r['printed'])} | {r['relation']} | "
                     f"{tol} | {fmt(r['ours'])} | {r['status']} | {'' if pd.isna(r['note']) else r['note']} |")
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
