"""The library code is a rerun trigger: scripts/_codehash.py hashes the dpsampling modules a script
imports (transitively, from the import graph), and a library edit changes exactly the hashes of the
scripts that import the edited module.  The end-to-end check (`snakemake -n` after an edit lists
exactly the affected computations) is tests/pipeline/test_pipeline.py::test_library_edit_reruns_exactly_its_importers."""

import shutil
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def codehash(repo_root):
    sys.path.insert(0, str(repo_root / "scripts"))
    import _codehash

    return _codehash


def labels(codehash, repo_root, script, extra=()):
    return {codehash._label(f) for f in codehash.modules(repo_root / "scripts" / f"{script}.py", extra)}


def test_import_graph_is_transitive_and_selective(codehash, repo_root):
    rr = labels(codehash, repo_root, "rr_counterexample")
    # direct import, the package __init__ Python runs, and what accountant imports in turn
    assert {"dpsampling.papers.lebeda.randomized_response", "dpsampling", "dpsampling.papers",
            "dpsampling.papers.lebeda", "dpsampling.engine.validation", "scripts/_pipeline.py"} <= rr
    assert "dpsampling.engine.montecarlo" not in rr and "dpsampling.samplers.shuffle" not in rr
    assert "dpsampling.engine.montecarlo" in labels(codehash, repo_root, "laplace_substitution")
    # a generic script (no library import) hashes only the script helpers
    assert labels(codehash, repo_root, "write_grid") == {"scripts/_pipeline.py"}
    # extra modules (the claims rule adds each claim's `evaluate: call:` module) are followed too
    assert "dpsampling.engine.montecarlo" in labels(codehash, repo_root, "write_grid", ["dpsampling.engine.montecarlo"])


HASHES = """
import sys
sys.path.insert(0, "scripts")
import _codehash
print(" ".join(_codehash.code_hash(f"scripts/{s}.py") for s in sys.argv[1:]))
"""


def test_editing_a_module_changes_exactly_its_importers_hashes(repo_root, tmp_path):
    for part in ("dpsampling", "scripts"):
        shutil.copytree(repo_root / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    scripts = ["rr_counterexample", "laplace_substitution", "add_remove_crossing", "poisson_vs_wor_sigma", "write_grid"]

    def hashes():
        out = subprocess.run([sys.executable, "-c", HASHES, *scripts], cwd=tmp_path, capture_output=True, text=True,
                             env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=True)
        return dict(zip(scripts, out.stdout.split()))

    before = hashes()
    assert before == hashes()  # deterministic
    with open(tmp_path / "dpsampling" / "engine" / "montecarlo.py", "a") as f:
        f.write("\n# an edit\n")
    after = hashes()
    changed = {s for s in scripts if before[s] != after[s]}
    assert changed == {"laplace_substitution", "add_remove_crossing"}


def test_every_rule_whose_script_imports_the_library_has_its_code_hash(codehash, repo_root):
    # the rerun trigger only works where the rule carries `code_hash=code_hash("<script>")`: a rule module
    # without it keeps stale results after a library edit (balls_and_bins had none until 2026-11-25: its
    # paper-grade results survived a change of its bracket).  Generic scripts that import no dpsampling
    # module (write_grid, aggregate, gallery) need none.
    import re

    missing = []
    for smk in sorted((repo_root / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=(?:local)?rule )", smk.read_text()):
            script = re.search(r'script:\s*\n\s*"\.\./\.\./scripts/(\w+)\.py"', block)
            if not script:
                continue
            imports_library = any(label.startswith("dpsampling") for label in labels(codehash, repo_root, script[1]))
            if imports_library and not re.search(rf'code_hash=.*code_hash\("{script[1]}"', block):
                missing.append(f"{smk.name}: {block.split(':')[0]}")
    assert not missing, missing
