#!/usr/bin/env bash
# The install check: what a user gets from the wheel on a fresh machine.  Builds the wheel from a clean copy of the
# sources (the files git tracks) and installs it with pip into a fresh virtual environment resolving every dependency
# from the package index (no editable install, nothing borrowed from another environment), in two stages:
#
#   1. the core install (`pip install dpsampling`): the pipeline's stack (snakemake, matplotlib, numba,
#      PLD_accounting, pygments, pyyaml) is absent; from a directory outside the repository the installed `dpsampling`
#      console script runs the README's audit example (the command read from the README), `python -m dpsampling
#      --help`, a statement, and `--plot` says which extra to install.  The audit and --help must print the same text
#      as the development environment, and the audit exactly the README's block.
#   2. the pipeline extra (`pip install 'dpsampling[pipeline]'`) added to the same venv: snakemake runs, `audit
#      --per-epoch --plot` writes its PNG, and the README's Python API call prints the development environment's
#      numbers to the last digit (the allocation kernels are numba's in both).
#
#   tests/install/run.sh
#
# Exit codes: 0 passed, 1 failed, 77 SKIPPED (printed with the reason: the package index is unreachable, or pip
# cannot install the wheel's dependencies).  Interpreters: the wheel and the venv are made by $DPSAMPLING_BASE_PYTHON
# (default python3, the interpreter a user starts from); the development environment compared against is
# $DPSAMPLING_PYTHON, else ./.venv/bin/python (the README's test command makes it).  pip uses its usual cache, so
# after the README's test command the dependencies come from it (timings: docs/benchmarks.md).  Each stage prints
# the venv's size (du -sh).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${DPSAMPLING_BASE_PYTHON:-python3}
START=$(date +%s)
skip() { echo "INSTALL CHECK SKIPPED: $*"; exit 77; }
fail() { echo "INSTALL CHECK FAILED: $*" >&2; exit 1; }
say() { echo "[install $(($(date +%s) - START))s] $*"; }

if [[ -n "${DPSAMPLING_PYTHON:-}" ]]; then DEV=$DPSAMPLING_PYTHON
elif [[ -x "$REPO/.venv/bin/python" ]]; then DEV="$REPO/.venv/bin/python"
else fail "no development environment to compare with: run the README's test command first, or set DPSAMPLING_PYTHON"; fi
[[ $DEV == */* ]] && DEV="$(cd "$(dirname "$DEV")" && pwd)/$(basename "$DEV")"  # absolute: the runs cd elsewhere
"$DEV" -c "import dpsampling" 2>/dev/null || fail "$DEV cannot import dpsampling: pip install -e '.[test,pipeline]' first"
"$BASE" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null || fail "$BASE is not Python >= 3.11"

# The throw-away venv goes to memory (/dev/shm) where it can: on a disk mounted with `discard`, deleting its ~800 MB
# at exit took 50-70 s (docs/benchmarks.md).  DPSAMPLING_INSTALL_TMP overrides; else $TMPDIR or /tmp.
TMPBASE=${DPSAMPLING_INSTALL_TMP:-}
if [[ -z $TMPBASE && -d /dev/shm && -w /dev/shm ]] && \
    (( $(df -Pk /dev/shm | awk 'NR == 2 {print $4}') > 3 * 1024 * 1024 )); then
    probe=$(mktemp /dev/shm/dpsampling_exec.XXXXXX) && printf '#!/bin/sh\n' >"$probe" && chmod +x "$probe" &&
        "$probe" 2>/dev/null && TMPBASE=/dev/shm  # a venv's python must be able to run there (no noexec)
    rm -f "$probe"
fi
WORK=$(mktemp -d "${TMPBASE:-${TMPDIR:-/tmp}}/dpsampling_install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# the user's view: no PYTHONPATH or active venv leaking in, one OpenBLAS thread as in the tests
clean() { env -u PYTHONPATH -u PYTHONHOME -u VIRTUAL_ENV OPENBLAS_NUM_THREADS=1 "$@"; }
# the development environment as the caller set it up (its PYTHONPATH kept); one OpenBLAS thread as well, since the
# thread count changes the last digits of some numbers (e.g. the 10th of a calibrated σ's lower end)
dev() { env OPENBLAS_NUM_THREADS=1 "$DEV" "$@"; }

# --- the package index -------------------------------------------------------------------------------------------
# the wheel's build backend (setuptools, pyproject.toml's build-system) comes from the index like everything else
clean "$BASE" -m pip download -q --no-deps --timeout 30 --retries 1 -d "$WORK/probe" "setuptools>=68" \
    >"$WORK/probe.log" 2>&1 || { tail -3 "$WORK/probe.log"; skip "the package index is unreachable (pip cannot fetch setuptools)"; }

# --- the wheel, from a clean copy of the sources -----------------------------------------------------------------
mkdir -p "$WORK/src"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # the files a clone has (their working-tree contents): no build/, results/ or egg-info left by earlier runs
    (cd "$REPO" && git ls-files -z | xargs -0 tar -cf - --no-recursion --ignore-failed-read) | tar -xf - -C "$WORK/src"
else
    (cd "$REPO" && tar -cf - --exclude=__pycache__ --exclude='*.egg-info' pyproject.toml README.md dpsampling) |
        tar -xf - -C "$WORK/src"
fi
say "building the wheel ($("$BASE" -m pip --version | cut -d' ' -f1-2))"
clean "$BASE" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src" >"$WORK/wheel.log" 2>&1 ||
    { tail -20 "$WORK/wheel.log"; fail "pip wheel could not build the wheel (its last lines above)"; }
WHEEL=$(ls "$WORK"/dist/dpsampling-*.whl)

# --- a fresh venv, the wheel and its dependencies from the index -------------------------------------------------
clean "$BASE" -m venv "$WORK/venv"
V="$WORK/venv/bin"
say "pip install $(basename "$WHEEL") into a fresh venv: the core install (dependencies from the index)"
t0=$(date +%s)
clean "$V/pip" install "$WHEEL" >"$WORK/pip.log" 2>&1 ||
    { tail -5 "$WORK/pip.log"; skip "pip could not install the wheel's dependencies (its last lines above)"; }
ndist=$(clean "$V/python" -c "import importlib.metadata as m; print(len(list(m.distributions())))")
say "installed in $(($(date +%s) - t0)) s: $ndist distributions, venv $(du -sh "$WORK/venv" | cut -f1),"\
" downloads taken from pip's cache: $(grep -c 'Using cached' "$WORK/pip.log" || true)"

# --- outside the repository: the installed package against the development environment --------------------------
mkdir "$WORK/elsewhere"
cd "$WORK/elsewhere"
where=$(clean "$V/python" -c "import dpsampling; print(dpsampling.__file__)")
[[ $where == "$WORK/venv/"* ]] || fail "the fresh venv imports dpsampling from $where, not from its own site-packages"

# the README's audit example, its command and output as printed there
clean "$V/python" - "$REPO/README.md" "$WORK/readme" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"```console\n\$ (dpsampling audit [^\n]*)\n(.*?)```", text, re.S)
if not m:
    sys.exit("README.md has no ```console block starting with '$ dpsampling audit'")
open(sys.argv[2] + ".cmd", "w").write(m.group(1).split(maxsplit=1)[1] + "\n")
open(sys.argv[2] + ".out", "w", encoding="utf-8").write(m.group(2))
EOF
read -r -a AUDIT <"$WORK/readme.cmd"
versions() { "$@" -c "import importlib.metadata as m; print(*sorted({f'{d.metadata[\"Name\"]}=={d.version}'
                             for d in m.distributions()}), sep='\n')"; }
same() {  # same <what> <file a> <file b>: identical text, else the diff, the distributions that differ, and fail
    diff -u "$2" "$3" >"$WORK/diff" && return
    cat "$WORK/diff"
    echo "distributions only in the development environment (<) or only in the fresh venv (>):"
    diff <(versions dev) <(versions clean "$V/python") | grep '^[<>]' || true
    fail "$1 differ (diff above)"
}
say "dpsampling ${AUDIT[*]}"
clean "$V/dpsampling" "${AUDIT[@]}" >"$WORK/audit.installed" || fail "the installed console script failed"
dev -m dpsampling "${AUDIT[@]}" >"$WORK/audit.dev" || fail "the development environment's audit failed"
same "the installed and the development audit" "$WORK/audit.dev" "$WORK/audit.installed"
same "README.md's audit block and the installed audit" "$WORK/readme.out" "$WORK/audit.installed"

say "python -m dpsampling --help"
clean "$V/python" -m dpsampling --help >"$WORK/help.installed" || fail "python -m dpsampling --help failed"
clean "$V/dpsampling" --help >"$WORK/help.script" || fail "dpsampling --help failed"
dev -m dpsampling --help >"$WORK/help.dev" || fail "the development environment's --help failed"
same "python -m dpsampling --help and dpsampling --help" "$WORK/help.script" "$WORK/help.installed"
same "the installed and the development --help" "$WORK/help.dev" "$WORK/help.installed"

say "the core install: the pipeline's stack is absent"
clean "$V/python" - <<'EOF' || fail "the core install pulled in a package of the 'pipeline' extra"
import importlib.util, sys
present = [m for m in ("snakemake", "matplotlib", "numba", "PLD_accounting", "pygments", "yaml")
           if importlib.util.find_spec(m) is not None]
sys.exit(f"present without the extra: {present}" if present else 0)
EOF
say "dpsampling statement (core)"
clean "$V/dpsampling" statement --dataset-size 60000 --batch-size 256 --epochs 60 --sigma 1.1 --delta 1e-5 \
    --sampler poisson >"$WORK/statement.installed" || fail "dpsampling statement failed in the core install"
grep -q "60000 examples" "$WORK/statement.installed" || fail "the statement does not describe the run"
say "--plot without the extra names it"
rc=0; clean "$V/dpsampling" "${AUDIT[@]}" --plot "$WORK/core.png" >"$WORK/plot.out" 2>"$WORK/plot.err" || rc=$?
[[ $rc -eq 2 && ! -e "$WORK/core.png" ]] || fail "--plot without matplotlib: exit $rc (expected 2), or a file was left"
grep -q "pip install 'dpsampling\[pipeline\]'" "$WORK/plot.err" || { cat "$WORK/plot.err"; fail "--plot does not name the extra"; }

# --- stage 2: the pipeline extra --------------------------------------------------------------------------------
say "pip install '$(basename "$WHEEL")[pipeline]' into the same venv"
t0=$(date +%s)
clean "$V/pip" install "$WHEEL[pipeline]" >"$WORK/pip2.log" 2>&1 ||
    { tail -5 "$WORK/pip2.log"; skip "pip could not install the pipeline extra's dependencies (its last lines above)"; }
say "installed in $(($(date +%s) - t0)) s: venv $(du -sh "$WORK/venv" | cut -f1) with the pipeline extra"
clean "$V/snakemake" --version >/dev/null || fail "snakemake does not run after installing the pipeline extra"
clean "$V/dpsampling" "${AUDIT[@]}" --per-epoch --plot "$WORK/per_epoch.png" >/dev/null ||
    fail "audit --per-epoch --plot failed with the pipeline extra"
head -c 4 "$WORK/per_epoch.png" | grep -q PNG || fail "--plot did not write a PNG"

say "the Python API (README: dpsampling.audit(...))"
API='
import dpsampling
df = dpsampling.audit(60000, 256, epochs=60, sigma=1.1, delta=1e-5)
for r in df.itertuples():
    print(r.sampler, repr(r.value), r.kind, r.method, repr(r.lower), repr(r.upper), sep=" | ")
print(*df.attrs["verdicts"], sep="\n")
r = dpsampling.account("poisson", "sigma", (3.0, 1e-5), steps=235, epochs=60, q=256 / 60000)
print(repr(r.value), r.kind, r.method, repr(r.lower), repr(r.upper), sep=" | ")
'
clean "$V/python" -c "$API" >"$WORK/api.installed" || fail "the Python API call failed in the fresh venv"
dev -c "$API" >"$WORK/api.dev" || fail "the Python API call failed in the development environment"
same "the installed and the development Python API results" "$WORK/api.dev" "$WORK/api.installed"
say "passed: the wheel installs with its dependencies and prints what the development environment prints"
