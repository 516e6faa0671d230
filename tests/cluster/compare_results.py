"""compare_results.py A B: every CSV under results folder A has a byte-identical twin under B (and no extra ones),
timing-valued fields excepted.  Exit 0 if so, 1 with one line per difference otherwise.

Timing-valued fields (machine- and load-dependent by nature, so excepted by name, never by value):
  - any column whose name is or ends in `seconds`, `time`, `elapsed` or `wall` (e.g. `cpu_seconds`);
  - in a claims table (columns `id`, `quantity`, `ours`), the `ours` and `status` fields of a claim whose
    `quantity` is measured in seconds (e.g. Zhu et al.'s "CPU seconds of one δ(ε) query").
Everything else, including the version columns and the order of rows, must be equal byte for byte.
"""

import csv
import io
import re
import sys
from pathlib import Path

TIMING_COLUMN = re.compile(r"(^|_)(seconds|time|elapsed|wall)$", re.IGNORECASE)


def _masked(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return rows
    header = rows[0]
    drop = {i for i, name in enumerate(header) if TIMING_COLUMN.search(name)}
    claims = {"id", "quantity", "ours"} <= set(header)
    for row in rows[1:]:
        for i in drop:
            if i < len(row):
                row[i] = "<timing>"
        if claims and "second" in row[header.index("quantity")].lower():
            for name in ("ours", "status"):
                if name in header:
                    row[header.index(name)] = "<timing>"
    return rows


def compare(a: Path, b: Path) -> list[str]:
    files_a = {p.relative_to(a) for p in a.rglob("*.csv")}
    files_b = {p.relative_to(b) for p in b.rglob("*.csv")}
    problems = [f"only in {a}: {p}" for p in sorted(files_a - files_b)]
    problems += [f"only in {b}: {p}" for p in sorted(files_b - files_a)]
    masked = 0
    for rel in sorted(files_a & files_b):
        x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
        if x == y:
            continue
        rx, ry = _masked(x.decode()), _masked(y.decode())
        if rx != ry:
            diff = next((i for i, (u, v) in enumerate(zip(rx, ry)) if u != v), min(len(rx), len(ry)))
            problems.append(f"{rel} differs (first at CSV row {diff}: {rx[diff:diff + 1]} vs {ry[diff:diff + 1]})")
        else:
            masked += 1
    if not problems:
        print(f"{len(files_a)} results CSVs identical ({len(files_a) - masked} byte for byte, "
              f"{masked} after masking timing-valued fields)")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: compare_results.py RESULTS_A RESULTS_B", file=sys.stderr)
        return 2
    a, b = map(Path, argv)
    if not a.is_dir() or not any(a.rglob("*.csv")):
        print(f"compare_results: no CSVs under {a}", file=sys.stderr)
        return 1
    problems = compare(a, b)
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
