"""Write every computation's parameter grid (results/<computation>/grid.csv), one job for all of them."""

import os

import pandas as pd

import _pipeline

smk = snakemake  # noqa: F821 - injected by Snakemake
log = _pipeline.logger(smk)
for path in smk.output:
    name = os.path.basename(os.path.dirname(str(path)))
    points = list(smk.params.points[name])
    _pipeline.write_csv(pd.DataFrame(points), path)
    log.info("%s: %d grid points in %d chunks", name, len(points), len({p["chunk"] for p in points}))
