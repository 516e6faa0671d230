"""Write tests/data/claims_values.csv (id, ours) from a smoke run's results/claims/claims.csv.

Usage: python3 tests/data/update_claims_values.py PATH/results/claims/claims.csv
The values are our recorded claim values (computed at each claim's own parameters, identical under
every config); tests/test_claims.py uses them for the mutation test without recomputing.
"""

import sys
from pathlib import Path

import pandas as pd

src = sys.argv[1]
df = pd.read_csv(src)[["id", "ours"]]
out = Path(__file__).with_name("claims_values.csv")
with open(out, "w") as f:
    f.write("# id, our value: the id/ours columns of results/claims/claims.csv of a smoke run "
            "(tests/data/update_claims_values.py)\n")
    df.to_csv(f, index=False)
print(f"{len(df)} claims -> {out}")
