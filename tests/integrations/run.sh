#!/usr/bin/env bash
# The integration step: install the extras [opacus,jax] into the environment of $DPSAMPLING_PYTHON (default
# ./.venv/bin/python), a CPU-only torch first, and run tests/integrations with the real libraries (Opacus on CPU
# PyTorch, JAX Privacy on CPU jax), including the README's integration snippets.
#
#   tests/integrations/run.sh
#
# Exit codes: 0 passed, 1 failed, 77 SKIPPED (printed with the reason: no CPU-only torch wheel reachable, or the
# package index cannot supply the extras).  torch: a local wheel torch==$TORCH+cpu (pip's find-links, e.g.
# PIP_FIND_LINKS) or PyTorch's CPU index; never the package index's default build, which pulls GPU libraries (GBs).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
TORCH=${DPSAMPLING_TORCH_VERSION:-2.13.0}
START=$(date +%s)
skip() { echo "INTEGRATION TESTS SKIPPED: $*"; exit 77; }
fail() { echo "INTEGRATION TESTS FAILED: $*" >&2; exit 1; }
say() { echo "[integrations $(($(date +%s) - START))s] $*"; }

if [[ -n "${DPSAMPLING_PYTHON:-}" ]]; then PY=$DPSAMPLING_PYTHON
elif [[ -x "$REPO/.venv/bin/python" ]]; then PY="$REPO/.venv/bin/python"
else PY=python3; fi
"$PY" -c "import dpsampling" 2>/dev/null || fail "$PY cannot import dpsampling: pip install -e '.[test]' first"
cpu_torch() { "$PY" -c "import sys, torch; sys.exit(torch.version.cuda is not None)" 2>/dev/null; }

if ! "$PY" -c "import torch" 2>/dev/null; then
    say "installing a CPU-only torch==$TORCH"
    # the +cpu pin matches CPU builds only: a local wheel (pip's find-links), else PyTorch's CPU index
    "$PY" -m pip install -q "torch==$TORCH+cpu" 2>/dev/null ||
        "$PY" -m pip install -q --timeout 30 --retries 1 --extra-index-url https://download.pytorch.org/whl/cpu \
            "torch==$TORCH+cpu" ||
        skip "no CPU-only torch==$TORCH+cpu: no local wheel (pip find-links) and https://download.pytorch.org/whl/cpu unreachable"
    cpu_torch || fail "the torch just installed is a CUDA build"
fi
say "installing the extras [opacus,jax] (torch $("$PY" -c 'import torch; print(torch.__version__)'))"
log=$(mktemp)
"$PY" -m pip install -q -e "$REPO[opacus,jax]" >"$log" 2>&1 ||
    { tail -5 "$log"; rm -f "$log"; skip "pip could not install the extras [opacus,jax] (its last lines above)"; }
rm -f "$log"
say "running tests/integrations"
cd "$REPO"
DPSAMPLING_REQUIRE_INTEGRATIONS=1 OPENBLAS_NUM_THREADS=1 "$PY" -m pytest -q -n 2 -p no:cacheprovider tests/integrations || fail "tests/integrations (see above)"
say "passed"
