"""A hash of the library code a pipeline script runs, so that editing it reruns that script's jobs.

``code_hash(script)`` walks the ``import``/``from`` statements (with :mod:`ast`, every statement,
including imports inside functions) starting at the script, follows every module that resolves to a
file of the ``dpsampling`` package or of the scripts folder (``_pipeline``, ``_style``), and hashes
the sources of all modules reached (transitively, each package's ``__init__.py`` included because
Python runs it).  Nothing is imported to compute it, and the module list comes from the import graph,
not from a hand-kept table, so it keeps working when modules move into subpackages.  Third-party
libraries are covered by the ``version_*`` columns, not here.

Used at workflow parse time (``workflow/rules/common.smk``), once per script, as a ``params:`` value
of every rule that runs the script (Snakemake's ``params`` rerun trigger) and written as the
``code_hash`` column of every result row.  Stdlib only.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

PACKAGE = "dpsampling"


@lru_cache(maxsize=None)
def package_root() -> Path:
    """The folder holding the ``dpsampling`` package that ``import dpsampling`` would use."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"cannot locate the {PACKAGE} package (is it installed or on PYTHONPATH?)")
    return Path(list(spec.submodule_search_locations)[0]).resolve().parent


@lru_cache(maxsize=None)
def _module_file(name: str, script_dir: Path) -> Path | None:
    """The source file of module ``name`` if it is ours (dpsampling.* or a script helper), else None."""
    parts = name.split(".")
    if parts[0] == PACKAGE:
        base = package_root().joinpath(*parts)
    elif len(parts) == 1:
        base = script_dir / parts[0]
    else:
        return None
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f.resolve()
    return None


def _module_name(path: Path) -> str | None:
    """Dotted name of a dpsampling file (None for a script helper)."""
    try:
        rel = path.relative_to(package_root() / PACKAGE)
    except ValueError:
        return None
    rel = Path(PACKAGE) / rel
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@lru_cache(maxsize=None)
def _imported_names(path: Path) -> frozenset[str]:
    """Every module name the file may import (``from a import b`` yields a and a.b)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    me = _module_name(path)
    is_pkg = path.name == "__init__.py"
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against our package
                if me is None:
                    continue
                pkg = me.split(".") if is_pkg else me.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            else:
                base = node.module
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    out = set()
    for n in names:  # importing a.b.c runs a/__init__ and a/b/__init__ too
        parts = n.split(".")
        out.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(out)


def modules(script, extra=()) -> list[Path]:
    """The files of our modules reached from ``script`` (and from the dotted module names ``extra``)."""
    script = Path(script).resolve()
    script_dir = script.parent
    seen, todo = set(), [script]
    for name in extra:
        f = _module_file(name, script_dir)
        if f is not None:
            todo.append(f)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for name in _imported_names(f):
            g = _module_file(name, script_dir)
            if g is not None and g not in seen:
                todo.append(g)
    seen.discard(script)  # the script itself is Snakemake's `code` trigger already
    return sorted(seen)


def _label(f: Path) -> str:
    name = _module_name(f)
    return name if name is not None else f"scripts/{f.name}"


def code_hash(script, extra=()) -> str:
    """12 hex digits of SHA-256 over (label, source) of every module reached from ``script``."""
    h = hashlib.sha256()
    for f in sorted(modules(script, extra), key=_label):
        h.update(_label(f).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]
