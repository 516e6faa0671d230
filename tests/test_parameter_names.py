"""One name per concept in public signatures (ARCHITECTURE.md, "One word per concept"): ε is ``epsilon``, never
``eps``, in the parameters of every public function and method of the package and in the fields of its public
dataclasses.  Read with ``ast``; private functions (``_name``) and nested helpers are not signatures.
"""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "dpsampling"
#: the retired names: ε is ``epsilon``
RETIRED = {"eps": "epsilon"}
#: public functions still taking ``eps``, in modules other work was changing when the rest was renamed; to be
#: renamed there (the list may only shrink)
NOT_YET = {
}


def retired_names(source):
    """(line, function or class, name) of every retired name among the parameters of a public function or method
    and the annotated fields of a public class."""
    hits = []

    def visit(body, prefix=""):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                a = node.args
                hits.extend((node.lineno, prefix + node.name, x.arg)
                            for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg in RETIRED)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                hits.extend((f.lineno, node.name, f.target.id) for f in node.body
                            if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)
                            and f.target.id in RETIRED)
                visit(node.body, node.name + ".")

    visit(ast.parse(source).body)
    return hits


def test_the_check_finds_a_retired_name():
    src = ("def f(eps, delta):\n    pass\ndef _g(eps):\n    pass\nclass C:\n    eps: float\n"
           "    def m(self, *, eps=1):\n        def inner(eps):\n            pass\n")
    assert retired_names(src) == [(1, "f", "eps"), (6, "C", "eps"), (7, "C.m", "eps")]


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: p.relative_to(PKG).as_posix())
def test_no_retired_parameter_name(path):
    rel = path.relative_to(PKG).as_posix()
    hits = [h for h in retired_names(path.read_text()) if h[1] not in NOT_YET.get(rel, ())]
    assert not hits, f"dpsampling/{rel}: " + "; ".join(f"line {ln} {where}({name}): say {RETIRED[name]}"
                                                       for ln, where, name in hits)


def test_the_not_yet_list_only_names_what_is_left():
    for rel, names in NOT_YET.items():
        left = {where for _, where, _ in retired_names((PKG / rel).read_text())}
        assert names <= left, f"dpsampling/{rel}: renamed already, drop from NOT_YET: {sorted(names - left)}"
