"""Write a computation's parameter grid (results/<computation>/grid.csv)."""

import pandas as pd

import _pipeline

smk = snakemake  # noqa: F821 - injected by Snakemake
log = _pipeline.logger(smk)
points = list(smk.params.points)
_pipeline.write_csv(pd.DataFrame(points), smk.output[0])
log.info("%d grid points in %d chunks", len(points), len({p["chunk"] for p in points}))
