"""environment.yml and pyproject.toml name the same dependencies; README and CI agree."""

import re
import tomllib

import yaml


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject(repo_root):
    # the conda route runs the pipeline: the core dependencies plus the `pipeline` extra
    project = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + project["optional-dependencies"]["pipeline"]
    env = yaml.safe_load((repo_root / "environment.yml").read_text())["dependencies"]
    conda = {_name(d) for d in env if isinstance(d, str)} - {"python", "pip"}
    pip = {_name(d) for d in next(d["pip"] for d in env if isinstance(d, dict)) if not d.startswith("-")}
    pyproject = {_name(d): d for d in deps}
    assert set(pyproject) == conda | pip
    # and the same version constraints on both sides
    pip_list = next(d["pip"] for d in env if isinstance(d, dict))
    env_specs = {_name(d): d.replace(" ", "") for d in [*env, *pip_list] if isinstance(d, str) and not d.startswith("-")}
    for name, req in pyproject.items():
        assert env_specs[name] == req.replace(" ", ""), name


def test_ci_runs_the_readme_test_command(repo_root):
    readme = (repo_root / "README.md").read_text()
    lines = [ln for ln in (repo_root / ".ci" / "run").read_text().splitlines() if ln and not ln.startswith("#")]
    commands = [ln for ln in lines if not ln.startswith(("set ", "cd ", "export ", "trap "))]
    assert commands[0] in readme  # the README's test command, first
    def step(script):
        return next(i for i, ln in enumerate(commands) if script in ln)

    slurm, install = step("tests/cluster/slurm_smoke.sh"), step("tests/install/run.sh")
    assert slurm > 0 and install > 0  # the cluster check and the install check after it (side by side)
    for script, rc in (("slurm_smoke.sh", "rc_cluster"), ("install/run.sh", "rc_install")):
        assert f"[[ ${rc} -eq 0 || ${rc} -eq 77 ]]" in commands, script  # each one's exit code checked
    assert step("tests/integrations/run.sh") > max(slurm, install)  # then the integrations (they write to .venv)
    assert "snakemake --cores all" in readme


#: what the pipeline and --plot need, kept out of the core install
PIPELINE_ONLY = {"snakemake", "matplotlib", "pygments", "mpmath", "pld-accounting", "numba", "pyyaml"}


def test_core_install_is_light_and_the_pipeline_an_extra(repo_root):
    project = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]
    core = {_name(d) for d in project["dependencies"]}
    assert core == {"numpy", "scipy", "pandas", "dp-accounting"}
    assert PIPELINE_ONLY <= {_name(d) for d in project["optional-dependencies"]["pipeline"]}
    readme = (repo_root / "README.md").read_text()
    assert "pip install -e '.[pipeline]' && .venv/bin/snakemake --cores all" in readme  # set-up command 1
    ci = (repo_root / ".ci" / "run").read_text()
    assert "'.[test,pipeline,slurm]'" in ci  # the test command installs the pipeline (the smoke run needs it)
