"""`snakemake --report` from the smoke run: every figure and table marked report(...) in the rule modules is in
the self-contained HTML, and headless Chromium renders the page with them (skipped, with the reason, if no
Chromium is installed)."""

import base64
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import snakemake_fork

pytestmark = pytest.mark.pipeline

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def report_outputs(repo_root):
    """Every file a rule module marks with report(...): the figures and tables the report must show."""
    found = []
    for smk in sorted((repo_root / "workflow" / "rules").glob("*.smk")):
        found += re.findall(r'report\(\s*"([^"]+)"', smk.read_text())
    return found


@pytest.fixture(scope="module")
def report(smoke_run):
    out = snakemake_fork.run(["--configfile", "config/smoke.yaml", "--report", "report.html"], cwd=smoke_run)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return smoke_run / "report.html"


def test_every_figure_and_table_is_in_the_report(report, repo_root, smoke_run):
    outputs = report_outputs(repo_root)
    assert len(outputs) >= 15  # one per computation
    html = report.read_text()
    for path in outputs:
        assert Path(path).name in html, f"{path} missing from the report"
        # the file itself is embedded (base64 data URI), not just named
        data = base64.b64encode((smoke_run / path).read_bytes()).decode()
        assert data[:2000] in html, f"{path}: content not embedded"


def chromium():
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                None)


def run_chromium(browser, *args):
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def categories(repo_root):
    found = set()
    for smk in (repo_root / "workflow" / "rules").glob("*.smk"):
        found |= set(re.findall(r'category="([^"]+)"', smk.read_text()))
    return found


def test_report_renders_in_headless_chromium(report, repo_root, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (apt-get install chromium): the report's rendering is not checked")
    out = run_chromium(browser, "--dump-dom", report.as_uri())
    assert out.returncode == 0 and "<html" in out.stdout, out.stderr[-2000:]
    rendered = re.sub(r"<script\b.*?</script>", "", out.stdout, flags=re.S)  # what the JavaScript app built
    raw = re.sub(r"<script\b.*?</script>", "", report.read_text(), flags=re.S)
    for category in sorted(categories(repo_root)):  # the results menu, built from the embedded results
        assert category in rendered and category not in raw, f"category {category!r} not rendered"
    for path in report_outputs(repo_root):  # every figure/table is loaded in the page
        assert Path(path).name in out.stdout, f"{path} not in the rendered page"
    shot = tmp_path / "report.png"
    out = run_chromium(browser, "--window-size=1400,1000", f"--screenshot={shot}", report.as_uri())
    from PIL import Image

    colours = Image.open(shot).convert("RGB").getcolors(1 << 24)
    assert len(colours) > 50, f"the screenshot is (nearly) blank: {len(colours)} colours"
