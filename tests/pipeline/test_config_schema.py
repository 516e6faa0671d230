"""workflow/schemas/config.schema.yaml: every key has its `default` (or is required, or says `no default` and
who needs it), and each default is the value the code uses where the key is absent."""

import ast
import inspect

import numpy as np
import pytest
import yaml

from dpsampling import grids
from dpsampling.engine import accountant
from dpsampling.samplers import shuffle


@pytest.fixture(scope="module")
def schema(repo_root):
    return yaml.safe_load((repo_root / "workflow" / "schemas" / "config.schema.yaml").read_text())


def _objects(node, path="#"):
    """Every (path, object schema with `properties`) in the schema, $defs included."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield path, node
        for key, value in node.items():
            yield from _objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _objects(value, f"{path}/{i}")


def test_every_key_has_a_default_or_says_why_not(schema):
    missing = []
    for path, obj in _objects(schema):
        if path == "#":  # the computations: one absent from the config is not run (the root's $comment)
            assert "not run" in schema["$comment"]
            continue
        if "/allOf/" in path:  # a range's start/stop narrowed to the axis' type: keys required by $defs/range_of
            continue
        required = set(obj.get("required", ()))
        covered = obj.get("$comment", "").startswith("A grid parameter has no default unless it says so")
        for name, sub in obj["properties"].items():
            if "default" in sub or name in required:
                continue
            if str(sub.get("$comment", "")).startswith("no default") or covered:
                continue
            missing.append(f"{path}/properties/{name}")
    assert not missing, f"keys without a default, not required and not saying why: {missing}"


def _settings(schema):
    return schema["$defs"]["computation"]["properties"]["settings"]["properties"]


def _script_defaults(repo_root, script, function):
    """{argument: default} of scripts/<script>.py's ``function``, read with ast (scripts import Snakemake's
    ``snakemake`` object at run time, so they are not imported here)."""
    tree = ast.parse((repo_root / "scripts" / f"{script}.py").read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    args = fn.args.args[len(fn.args.args) - len(fn.args.defaults):]
    return {a.arg: ast.literal_eval(d) for a, d in zip(args, fn.args.defaults)}


def _get_defaults(repo_root, script):
    """{key: default} of every ``p.get("key", default)`` in scripts/<script>.py."""
    out = {}
    for n in ast.walk(ast.parse((repo_root / "scripts" / f"{script}.py").read_text())):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "p" and len(n.args) == 2):
            out[ast.literal_eval(n.args[0])] = ast.literal_eval(n.args[1])
    return out


@pytest.mark.parametrize("script,function", [
    ("balls_and_bins", "compute_point"), ("sampler_audit", "compute_point"), ("certified_intervals", "compute_point"),
    ("truncation_cost", "compute_point"), ("phased_runs", "compute_point"),
    ("deterministic_vs_poisson", "compute_point"), ("_samplers", "sampler_result_row"),
    ("a_minus_b", "compute_points"), ("add_remove_crossing", "compute_point"), ("conjecture12", "compute_point"),
    ("laplace_substitution", "compute_point"), ("rr_counterexample", "compute_point"),
])
def test_script_defaults_are_the_schema_defaults(repo_root, schema, script, function):
    settings = _settings(schema)
    for name, value in _script_defaults(repo_root, script, function).items():
        if name not in settings or name == "rel_tol":  # rel_tol: the workflow always passes it (test below)
            continue
        if value is None and name in ("finest_discretization", "c_grid"):  # None: the library's (test below)
            continue
        assert "default" in settings[name], f"{script}.{function} has a default for {name}, the schema none"
        assert value == settings[name]["default"], (script, name)


def test_grid_parameter_defaults_are_the_scripts(repo_root, schema):
    params = schema["$defs"]["params"]["properties"]
    assert _get_defaults(repo_root, "balls_and_bins")["mc_seed"] == params["mc_seed"]["default"]
    assert _get_defaults(repo_root, "_samplers")["method"] == params["method"]["default"]


def test_library_defaults(schema):
    settings = _settings(schema)
    assert settings["finest_discretization"]["default"] == accountant.FINEST_DISCRETIZATION
    np.testing.assert_array_equal(shuffle.c_grid_from_spec(settings["c_grid"]["default"]), shuffle.DEFAULT_C_GRID)
    axis = {"start": 1, "stop": 2, "num": 5}
    spacing = schema["$defs"]["range_of"]["properties"]["spacing"]["default"]
    np.testing.assert_array_equal(grids.expand_axis("x", axis), grids.expand_axis("x", {**axis, "spacing": spacing}))
    block = {"fixed": {"a": 1}, "grid": [{"b": [1, 2, 3]}], "n_chunks": 2}
    chunk_by = schema["$defs"]["computation"]["properties"]["chunk_by"]["default"]
    assert grids.build(block) == grids.build({**block, "chunk_by": chunk_by})
    assert "rel_tol" in inspect.signature(accountant.epsilon).parameters


def test_workflow_applies_its_defaults(schema):
    config = {"c": {"fixed": {}, "grid": [{"q": 0.1}], "n_chunks": 1}, "d": {"fixed": {}, "grid": [{"q": 0.1}],
              "n_chunks": 1, "settings": {"rel_tol": 0.01}}, "claims": {"file": "x"}, "gallery": {}}
    grids.apply_workflow_defaults(config, schema)
    assert config["c"]["settings"] == {"rel_tol": _settings(schema)["rel_tol"]["default"]}
    assert config["c"]["settings"] == schema["$defs"]["computation"]["properties"]["settings"]["default"]
    assert config["d"]["settings"] == {"rel_tol": 0.01}
    assert config["claims"]["n_chunks"] == schema["properties"]["claims"]["properties"]["n_chunks"]["default"]
    gallery = schema["properties"]["gallery"]["properties"]
    assert config["gallery"] == {"figures": gallery["figures"]["default"], "width": gallery["width"]["default"]}
