"""The README gallery (docs/gallery/) is current for the committed config: one image per configured figure, each
recorded in the manifest with the hash of the config block it was computed from, and the README shows them and the
claims summary line.  Regenerate with `snakemake --cores all gallery` when this fails."""

import hashlib
import json
import re

import pytest
import yaml
from snakemake.utils import validate

from dpsampling import grids

REGENERATE = "regenerate with `snakemake --cores all gallery` (paper grade) and commit docs/gallery/ and README.md"


@pytest.fixture(scope="module")
def committed(repo_root):
    config = yaml.safe_load((repo_root / "config" / "config.yaml").read_text())
    schema = repo_root / "workflow" / "schemas" / "config.schema.yaml"
    validate(config, str(schema), set_default=False)  # then the defaults the run fills (workflow/rules/common.smk)
    grids.apply_workflow_defaults(config, yaml.safe_load(schema.read_text()))
    manifest = json.loads((repo_root / "docs" / "gallery" / "manifest.json").read_text())
    return config, manifest


def config_hash(block):  # as workflow/rules/gallery.smk
    return hashlib.sha256(json.dumps(block, sort_keys=True, default=str).encode()).hexdigest()


def test_gallery_lists_the_configured_figures(committed):
    config, manifest = committed
    assert sorted(manifest["figures"]) == sorted(config["gallery"]["figures"]), REGENERATE
    assert manifest["width"] == config["gallery"]["width"], REGENERATE


def test_each_image_is_current_for_the_committed_config(committed, repo_root):
    config, manifest = committed
    for name, entry in manifest["figures"].items():
        assert entry["config_sha256"] == config_hash(config[name]), f"{name}: config block changed; {REGENERATE}"
        data = (repo_root / "docs" / "gallery" / f"{name}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert hashlib.sha256(data).hexdigest() == entry["image_sha256"], f"{name}.png edited by hand; {REGENERATE}"
        assert len(data) < 300_000, f"{name}.png is {len(data)} bytes: keep the gallery small"


def test_readme_shows_the_gallery_and_claims_line(committed, repo_root):
    _, manifest = committed
    readme = (repo_root / "README.md").read_text()
    section = re.search(r"<!-- gallery:start -->(.*?)<!-- gallery:end -->", readme, re.S)
    assert section, "README.md has no gallery section"
    for name in manifest["figures"]:
        assert f"docs/gallery/{name}.png" in section.group(1)
    assert manifest["claims_line"] in section.group(1)
    assert readme.index("<!-- gallery:start -->") < readme.index("## Set-up"), "the gallery comes first"


@pytest.mark.pipeline
def test_claims_line_matches_the_smoke_run(committed, smoke_run):
    """The claims table does not depend on the figure grids, so the smoke run must give the committed line."""
    import sys

    sys.path.insert(0, str(smoke_run / "scripts"))
    import gallery

    _, manifest = committed
    assert gallery.claims_line(smoke_run / "results" / "claims" / "claims.csv") == manifest["claims_line"], REGENERATE
