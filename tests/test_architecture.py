"""The package's layers import downward only and have no import cycle (ARCHITECTURE.md).

engine/ imports nothing from samplers/ or papers/; samplers/ imports engine/ only; papers/ imports
engine/ and samplers/; claims.py, grids.py and cli.py sit on top.  Imports are read with ``ast``
(including imports inside functions), so a lazy import cannot hide a cycle.
"""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "dpsampling"
#: layer rank: a module may import only modules of a lower or equal rank (equal: same layer)
RANK = {"engine": 0, "samplers": 1, "papers": 2}
TOP = 3  # cli, claims, grids, __init__


def _module_name(path):
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _rank(module):
    parts = module.split(".")
    return RANK.get(parts[1], TOP) if len(parts) > 1 else TOP


def _imports(path, module):
    """Every dpsampling module imported by the file at ``path`` (absolute and relative imports)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "dpsampling"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dpsampling":
                continue
            out.add(target)
            out |= {f"{target}.{a.name}" for a in node.names}  # `from pkg import module`
    return {m for m in out if m in MODULES}


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
GRAPH = {m: _imports(p, m) - {m} for m, p in MODULES.items()}


def test_layers_exist():
    for layer in RANK:
        assert f"dpsampling.{layer}" in MODULES
    assert {"dpsampling.claims", "dpsampling.grids", "dpsampling.cli"} <= set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_downward(module):
    upward = sorted(t for t in GRAPH[module] if _rank(t) > _rank(module))
    assert not upward, f"{module} imports a higher layer: {upward}"


def test_no_import_cycle():
    # a package's __init__ importing its own submodules is not a cycle (Python loads the package first)
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in GRAPH.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path):
    """The checks can fail: a planted engine -> papers import is upward and, with papers -> engine, a cycle."""
    fake = tmp_path / "dpsampling"
    (fake / "engine").mkdir(parents=True)
    (fake / "papers").mkdir()
    for f in ("__init__.py", "engine/__init__.py", "papers/__init__.py"):
        (fake / f).write_text("")
    (fake / "engine" / "x.py").write_text("def f():\n    from dpsampling.papers import y\n")
    (fake / "papers" / "y.py").write_text("from ..engine import x\n")
    mods = {_module_name_in(fake, p): p for p in fake.rglob("*.py")}
    assert "dpsampling.papers.y" in _imports_in(fake, mods["dpsampling.engine.x"], "dpsampling.engine.x", mods)
    assert "dpsampling.engine.x" in _imports_in(fake, mods["dpsampling.papers.y"], "dpsampling.papers.y", mods)
    assert _rank("dpsampling.papers.y") > _rank("dpsampling.engine.x")


def _module_name_in(root, path):
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_in(root, path, module, mods):
    global MODULES
    saved, MODULES = MODULES, mods
    try:
        return _imports(path, module)
    finally:
        MODULES = saved


#: the longest function (def line to last line, docstring included) and module allowed below the top layer
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 800


def _long_functions(path, limit):
    tree = ast.parse(path.read_text())
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > limit]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _rank(m) < TOP))
def test_engine_samplers_and_papers_have_short_functions_and_modules(module):
    path = MODULES[module]
    assert _long_functions(path, MAX_FUNCTION_LINES) == [], f"{module}: split these into named steps"
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def test_the_length_check_sees_a_long_function(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n" + "    x = 1\n" * 60 + "\n\ndef g():\n    return 1\n")
    assert _long_functions(f, MAX_FUNCTION_LINES) == [("f", 61)]
