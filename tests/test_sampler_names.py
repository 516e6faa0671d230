"""No layer above ``samplers/`` names a sampler: the audit, the statement, the command line, the references, the
engine, the integrations and the pipeline's generic computations (``scripts/``, ``workflow/``) read the sampler's
spec (``dpsampling.samplers.spec.SamplerSpec``) instead.

Read with ``ast`` (a Snakemake file with ``tokenize``): every string constant of a generic module that is a
registered sampler's name, or contains one with an underscore as a word (``balls_and_bins`` inside a label), is a
literal naming a sampler.  Docstrings are excepted, and so is one table per integration module: a module-level
assignment to ``SAMPLER_NAMES`` (the library's own names mapped to ours).  The papers' own computations are about
named samplers and may name them: :data:`PAPER_COMPUTATIONS`, listed file by file.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from dpsampling import samplers

PKG = Path(__file__).resolve().parents[1] / "dpsampling"
#: the generic layers: the package's top modules, the engine and the integrations (samplers/ and papers/ are
#: about named samplers by design)
GENERIC = sorted([*PKG.glob("*.py"), *(PKG / "engine").rglob("*.py"), *(PKG / "integrations").rglob("*.py")])
#: the one table an integration module may keep
TABLE = "SAMPLER_NAMES"
ROOT = PKG.parent
#: the pipeline files that are a paper's own computation about named samplers (Chua et al. 2024 and 2025, Lebeda et
#: al., Räisä et al., the truncated Poisson cap): they may name samplers; every other script and rule is generic
PAPER_COMPUTATIONS = frozenset({
    "scripts/_samplers.py", "scripts/balls_and_bins.py", "scripts/deterministic_vs_poisson.py",
    "scripts/effective_noise.py", "scripts/poisson_vs_wor_sigma.py", "scripts/poisson_vs_wor_table.py",
    "scripts/truncation_cost.py", "workflow/rules/balls_and_bins.smk",
})
PIPELINE = sorted(p for p in [*(ROOT / "scripts").glob("*.py"), *(ROOT / "workflow").rglob("*.py"),
                              *(ROOT / "workflow").rglob("*.smk")]
                  if p.relative_to(ROOT).as_posix() not in PAPER_COMPUTATIONS)


def _docstrings(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _tables(tree):
    """Every node inside a module-level ``SAMPLER_NAMES = ...`` assignment."""
    out = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == TABLE for t in targets) and node.value is not None:
            out |= {id(n) for n in ast.walk(node.value)}
    return out


def sampler_literals(source, names):
    """(line, text) of every string constant in ``source`` that names a sampler of ``names``."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _tables(tree)
    words = {n for n in names if "_" in n}
    hits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
            continue
        if node.value in names or words & set(re.findall(r"\w+", node.value)):
            hits.append((node.lineno, node.value))
    return sorted(hits)


def test_the_check_finds_a_literal():
    """The check can fail: a comparison with a name, a label holding one, but not a docstring or the table."""
    src = ('"""About poisson."""\nSAMPLER_NAMES = {"x": "poisson"}\n'
           'def f(s):\n    """shuffle"""\n    return s == "shuffle" or f"{s} / balls_and_bins"\n')
    assert sampler_literals(src, {"poisson", "shuffle", "balls_and_bins"}) == [(5, " / balls_and_bins"),
                                                                                 (5, "shuffle")]


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: str(p.relative_to(PKG)))
def test_no_sampler_name_literal_in_the_generic_layers(path):
    hits = sampler_literals(path.read_text(), set(samplers.SAMPLERS))
    assert not hits, f"{path.relative_to(PKG.parent)} names samplers (read the spec instead): {hits}"


def smk_sampler_literals(source, names):
    """(line, text) of every string token of a Snakemake file that names a sampler of ``names`` (its Python parts
    tokenize as Python; comments are not tokens of type STRING)."""
    words = {n for n in names if "_" in n}
    hits = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            value = tok.string
        if isinstance(value, str) and (value in names or words & set(re.findall(r"\w+", value))):
            hits.append((tok.start[0], value))
    return hits


def test_the_snakemake_check_finds_a_literal():
    src = '# poisson in a comment\nrule a:\n    output:\n        "results/balls_and_bins/x.csv",\n    run:\n' \
          '        print("shuffle")\n'
    assert smk_sampler_literals(src, {"poisson", "shuffle", "balls_and_bins"}) == [
        (4, "results/balls_and_bins/x.csv"), (6, "shuffle")]


def test_the_paper_computations_exist():
    assert all((ROOT / p).is_file() for p in PAPER_COMPUTATIONS), sorted(p for p in PAPER_COMPUTATIONS
                                                                        if not (ROOT / p).is_file())


@pytest.mark.parametrize("path", PIPELINE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_sampler_name_literal_in_the_generic_pipeline(path):
    names = set(samplers.SAMPLERS)
    find = smk_sampler_literals if path.suffix == ".smk" else sampler_literals
    hits = find(path.read_text(), names)
    assert not hits, (f"{path.relative_to(ROOT)} names samplers (read the spec instead, or list it in "
                      f"PAPER_COMPUTATIONS if it is a paper's computation about named samplers): {hits}")
