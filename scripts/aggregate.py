"""Concatenate a computation's chunk CSVs into one tidy CSV, in grid order."""

import pandas as pd

import _pipeline

smk = snakemake  # noqa: F821 - injected by Snakemake
log = _pipeline.logger(smk)
order = {p["point_id"]: i for i, p in enumerate(smk.params.points)}
frames = [pd.read_csv(f) for f in smk.input]
df = pd.concat([f for f in frames if len(f)], ignore_index=True)
missing = set(order) - set(df["point_id"])
if missing:
    raise RuntimeError(f"{len(missing)} grid points have no result (e.g. {sorted(missing)[:3]})")
df = df[df["point_id"].isin(order)]
df = df.iloc[df["point_id"].map(order).argsort(kind="stable")].reset_index(drop=True)
_pipeline.write_csv(df, smk.output[0])
log.info("%d rows from %d chunks", len(df), len(frames))
