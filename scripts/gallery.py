"""The README gallery: small PNGs of the key figures, their manifest and the claims summary line.

Writes docs/gallery/<name>.png (resized to the configured width, palette PNG), docs/gallery/manifest.json
(per figure: the sha256 of its config block and of the image) and, if README.md sits next to the Snakefile,
replaces the text between its `<!-- gallery:start -->` and `<!-- gallery:end -->` markers."""

import hashlib
import io
import json
from pathlib import Path

import _pipeline
import pandas as pd
from PIL import Image

START, END = "<!-- gallery:start -->", "<!-- gallery:end -->"


def small_png(src, width) -> bytes:
    im = Image.open(src).convert("RGB")
    if im.width > width:
        im = im.resize((width, round(im.height * width / im.width)), Image.LANCZOS)
    buf = io.BytesIO()
    im.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def claims_line(claims_csv) -> str:
    t = pd.read_csv(claims_csv)
    n, ok = len(t), int((t["status"] == "reproduced").sum())
    return (f"**Claims:** {ok} of the {n} numbers printed in the {t['paper'].nunique()} papers that we check are "
            f"reproduced; {n - ok} differ, each with the reason (`figures/claims.md`).")


def section(names, line) -> str:
    cells = " ".join(f'<img src="docs/gallery/{n}.png" alt="{n}" width="49%">' for n in names)
    return f"{START}\n<p>{cells}</p>\n\n{line}\n{END}"


def main(smk):
    log = _pipeline.logger(smk)
    names, manifest = list(smk.params.names), {"width": smk.params.width, "figures": {}}
    for name, src, dst in zip(names, smk.input.figures, smk.output.images):
        data = small_png(src, smk.params.width)
        _pipeline._atomic(dst, lambda tmp, data=data: Path(tmp).write_bytes(data))
        manifest["figures"][name] = {"config_sha256": smk.params.hashes[name],
                                     "image_sha256": hashlib.sha256(data).hexdigest()}
        log.info("%s: %d bytes", dst, len(data))
    line = claims_line(smk.input.claims)
    manifest["claims_line"] = line
    _pipeline.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", smk.output.manifest)
    readme = Path("README.md")
    if readme.exists() and START in readme.read_text():
        text = readme.read_text()
        head, rest = text.split(START, 1)
        _pipeline.write_text(head + section(names, line) + rest.split(END, 1)[1], readme)
        log.info("README.md gallery section updated")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 - injected by Snakemake
