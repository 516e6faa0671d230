"""Every Python snippet marked ``<!-- test: integration -->`` in README.md and docs/integrations.md runs, as a user
would run it (a fresh interpreter, a directory outside the repository), with the real libraries."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from integration_libs import require

require("torch", "opacus")
require("opacus", "opacus")
require("jax_privacy", "jax")

ROOT = Path(__file__).resolve().parents[2]
MARKED = re.compile(r"<!-- test: integration -->\s*\n```python\n(.*?)\n```", re.DOTALL)
SNIPPETS = [(f"{name}#{i + 1}", code) for name in ("README.md", "docs/integrations.md")
            for i, code in enumerate(MARKED.findall((ROOT / name).read_text()))]


def test_there_are_snippets():
    names = {n.split("#")[0] for n, _ in SNIPPETS}
    assert names == {"README.md", "docs/integrations.md"} and len(SNIPPETS) >= 5


@pytest.mark.parametrize("name,code", SNIPPETS, ids=[n for n, _ in SNIPPETS])
def test_snippet_runs(name, code, tmp_path):
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, f"{name} failed:\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{name} printed nothing"
