"""No layer above ``samplers/`` names a sampler: the audit, the statement, the command line, the references, the
engine and the integrations read the sampler's spec (``dpsampling.samplers.spec.SamplerSpec``) instead.

Read with ``ast``: every string constant of a generic module that is a registered sampler's name, or contains one
with an underscore as a word (``balls_and_bins`` inside a label), is a literal naming a sampler.  Docstrings are
excepted, and so is one table per integration module: a module-level assignment to ``SAMPLER_NAMES`` (the
library's own names mapped to ours).
"""

import ast
import re
from pathlib import Path

import pytest

from dpsampling import samplers

PKG = Path(__file__).resolve().parents[1] / "dpsampling"
#: the generic layers: the package's top modules, the engine and the integrations (samplers/ and papers/ are
#: about named samplers by design)
GENERIC = sorted([*PKG.glob("*.py"), *(PKG / "engine").rglob("*.py"), *(PKG / "integrations").rglob("*.py")])
#: the one table an integration module may keep
TABLE = "SAMPLER_NAMES"


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
