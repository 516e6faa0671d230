#!/usr/bin/env bash
# The cluster check: run the smoke pipeline (config/smoke.yaml) through a real single-node SLURM cluster
# with profiles/slurm and the SLURM executor plugin, and check that every results CSV is byte-identical to a
# local smoke run (timing-valued fields excepted, by column name) and that at most MAX_JOBS jobs were submitted.
#
#   tests/cluster/slurm_smoke.sh          (as root; installs slurm-wlm and munge with apt-get if missing)
#
# Exit codes: 0 passed, 1 failed, 77 SKIPPED (printed with the reason: not root, no apt-get, no package index,
# a SLURM controller already running).  The daemons this script starts are stopped by their pids on exit and
# any existing /etc/slurm/slurm.conf is restored.  Python (with snakemake and the slurm plugin): $DPSAMPLING_PYTHON,
# else ./.venv/bin/python if present, else python3.  Measured recipe: docs/cluster.md (timings: docs/benchmarks.md).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
MAX_JOBS=${MAX_JOBS:-40}
# Grouping: the profile's (workflow/rules/groups.smk: one SLURM job per computation and one for the claims; the
# grids job runs locally).  --cores 1: each group job asks for 1 CPU, so SLURM runs two side by side on the 2-CPU test node
# (inside, a computation's chunks still run side by side: this node does not bind jobs to their CPUs).
# Targets of both runs (default: everything); e.g. one table, for a quick check of the machinery itself.
read -r -a TARGETS <<<"${SLURM_SMOKE_TARGETS:-}"
START=$(date +%s)

cpu_used() { [[ -n ${CPUACCT:-} ]] && cat "$CPUACCT/cpuacct.usage" 2>/dev/null || true; }  # ns
skip() { echo "SLURM SMOKE TEST SKIPPED: $*"; exit 77; }
fail() { echo "SLURM SMOKE TEST FAILED: $*" >&2; exit 1; }
say() { echo "[slurm_smoke $(($(date +%s) - START))s] $*"; }

[[ $(id -u) -eq 0 ]] || skip "needs root (installs slurm-wlm/munge, writes /etc/slurm/slurm.conf, runs slurmd)"
if [[ -n "${DPSAMPLING_PYTHON:-}" ]]; then PY=$DPSAMPLING_PYTHON
elif [[ -x "$REPO/.venv/bin/python" ]]; then PY="$REPO/.venv/bin/python"
else PY=python3; fi
[[ $PY == */* ]] && PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"  # absolute: the runs cd elsewhere
"$PY" -c "import snakemake, snakemake_executor_plugin_slurm" 2>/dev/null ||
    fail "$PY lacks snakemake or the SLURM executor plugin: pip install -e '.[pipeline,slurm]'"

# --- SLURM and munge installed? ---------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
   ! command -v sbatch >/dev/null; then
    command -v apt-get >/dev/null || skip "slurm-wlm/munge are not installed and there is no apt-get"
    say "installing slurm-wlm and munge with apt-get"
    apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed (no package index reachable)"
    apt-cache show slurm-wlm >/dev/null 2>&1 || skip "the package index has no slurm-wlm"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null || fail "apt-get install failed"
fi
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    skip "a SLURM daemon is already running on this machine; this check only uses a cluster it starts itself"
fi

# --- cleanup: stop what we started (by pid), restore slurm.conf --------------------------------------------
TMP=$(mktemp -d /tmp/slurm_smoke.XXXXXX)
STARTED_PIDFILES=()
CLUSTER_STARTED=0
CONF=/etc/slurm/slurm.conf
BACKUP=""
stop_pid() {  # stop one process we started: TERM, up to 10 s, then KILL
    local pid=$1
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$? i pid
    if [[ $CLUSTER_STARTED == 1 ]]; then  # cancel our cluster's jobs while slurmctld still runs; wait for them
        scancel --quiet --user "$(id -un)" 2>/dev/null || true
        for _ in $(seq 30); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.5; done
    fi
    for ((i = ${#STARTED_PIDFILES[@]} - 1; i >= 0; i--)); do  # slurmd, slurmctld, munged: reverse start order
        [[ -s ${STARTED_PIDFILES[i]} ]] && stop_pid "$(cat "${STARTED_PIDFILES[i]}")"
    done
    if [[ -n ${CPUACCT:-} ]]; then  # any job step slurmd left behind is in our cgroup: stop it by its pid
        for pid in $(cat "$CPUACCT/cgroup.procs" 2>/dev/null); do stop_pid "$pid"; done
        for _ in 1 2 3 4 5; do rmdir "$CPUACCT" 2>/dev/null && break; sleep 1; done
    fi
    if [[ -n $BACKUP ]]; then mv -f "$BACKUP" "$CONF"; else rm -f "$CONF"; fi
    [[ ${KEEP_TMP:-0} == 1 ]] || rm -rf "$TMP"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- munge: reuse a running munged, else start one -----------------------------------------------------------
if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge: /run/munge 2>/dev/null || true
    [[ -s /etc/munge/munge.key ]] || { mungekey --create 2>/dev/null || create-munge-key -f; }
    munged --force
    STARTED_PIDFILES+=(/run/munge/munged.pid)
fi

# --- single-node slurm.conf (state, spool, pids and logs under $TMP) ---------------------------------------
mkdir -p "$TMP"/{state,spool,log} /etc/slurm
[[ -e $CONF ]] && { BACKUP="$TMP/slurm.conf.orig"; cp -p "$CONF" "$BACKUP"; }
REALMEM=$(slurmd -C | tr ' ' '\n' | sed -n 's/^RealMemory=//p')
cat >"$CONF" <<EOF
# written by tests/cluster/slurm_smoke.sh (restored on exit)
ClusterName=dpsampling
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$REALMEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
say "starting slurmctld and slurmd ($(nproc) CPUs, ${REALMEM} MB)"
slurmctld -f "$CONF" && STARTED_PIDFILES+=("$TMP/slurmctld.pid") && CLUSTER_STARTED=1
slurmd -f "$CONF" && STARTED_PIDFILES+=("$TMP/slurmd.pid")
# CPU accounting (best effort, measurement only): slurmd in a cgroup-v1 cpuacct group of its own, so that every
# job it starts is counted there; cpu_used prints nothing where that is not possible.
CPUACCT=""
for _ in $(seq 20); do [[ -s $TMP/slurmd.pid ]] && break; sleep 0.25; done
if [[ -d /sys/fs/cgroup/cpuacct && -s $TMP/slurmd.pid ]] && mkdir "/sys/fs/cgroup/cpuacct/${TMP##*/}" 2>/dev/null; then
    CPUACCT="/sys/fs/cgroup/cpuacct/${TMP##*/}"
    echo "$(cat "$TMP/slurmd.pid")" >"$CPUACCT/cgroup.procs" 2>/dev/null || { rmdir "$CPUACCT"; CPUACCT=""; }
fi
for _ in $(seq 60); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %T | grep -q idle || fail "the node did not come up: $(sinfo 2>&1)"

# --- the smoke pipeline, locally and through SLURM -----------------------------------------------------------
copy() { mkdir -p "$1" && cp -r "$REPO"/{Snakefile,workflow,config,scripts,profiles} "$1"/; }
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
copy "$TMP/slurm"
# The local reference: the test suite's smoke run when .ci/run kept it for us (DPSAMPLING_SMOKE_DIR, complete
# when .smoke_ok is there, made from the same workflow files), else a local smoke run of our own.
reference_reason() {
    local d=${DPSAMPLING_SMOKE_DIR:-}
    [[ -n $d ]] || { echo "DPSAMPLING_SMOKE_DIR is not set"; return; }
    [[ -f $d/.smoke_ok && -d $d/results ]] || { echo "no complete smoke run in $d (no .smoke_ok)"; return; }
    [[ ${#TARGETS[@]} -eq 0 ]] || { echo "SLURM_SMOKE_TARGETS is set (the reference must have the same targets)"; return; }
    local part
    for part in Snakefile workflow config scripts; do
        diff -rq -x __pycache__ "$REPO/$part" "$d/$part" >/dev/null 2>&1 ||
            { echo "$d/$part differs from this checkout's"; return; }
    done
}
WHY_LOCAL=$(reference_reason)
if [[ -z $WHY_LOCAL ]]; then
    LOCAL=$DPSAMPLING_SMOKE_DIR
    say "local reference: the test suite's smoke run in $LOCAL (.smoke_ok present), no second local run"
    LOCAL_LOG=("$LOCAL"/.snakemake/log/*.snakemake.log)  # named by start time; the run's is the last with steps
else
    LOCAL="$TMP/local"
    LOCAL_LOG="$TMP/local.log"
    copy "$LOCAL"
    say "local smoke run ($WHY_LOCAL)"
    (cd "$LOCAL" && "$PY" -m snakemake "${TARGETS[@]}" --cores 2 --configfile config/smoke.yaml >"$LOCAL_LOG" 2>&1) ||
        { tail -30 "$LOCAL_LOG"; fail "the local smoke run failed"; }
fi
# The profile as a user would edit it: partition = this cluster's, no account (there is no accounting here).
"$PY" - "$TMP/slurm/profiles/slurm/config.yaml" <<'EOF'
import sys, yaml
path = sys.argv[1]
prof = yaml.safe_load(open(path))
prof["default-resources"]["slurm_partition"] = "debug"
prof["default-resources"].pop("slurm_account", None)
yaml.safe_dump(prof, open(path, "w"), sort_keys=False)
EOF
say "smoke run through SLURM (profiles/slurm, --cores 1)"
T0=$(date +%s)
CPU0=$(cpu_used)
# Status checks: the first 2 s after a submission, then every 2 s; the plugin adds 10 s to the interval after
# every check that sees no job finish (and resets it when one does), so only the last job's end waits longer.
(cd "$TMP/slurm" && "$PY" -m snakemake "${TARGETS[@]}" --profile profiles/slurm --configfile config/smoke.yaml \
    --cores 1 --slurm-status-command squeue \
    --slurm-init-seconds-before-status-checks 2 --seconds-between-status-checks 2 >"$TMP/slurm.log" 2>&1) ||
    { tail -60 "$TMP/slurm.log"; for f in "$TMP"/slurm/.snakemake/slurm_logs/*/*.log "$TMP"/slurm/.snakemake/slurm_logs/*/*/*.log; do tail -20 "$f"; done 2>/dev/null
      fail "the smoke run through SLURM failed"; }
T1=$(date +%s)
# Where the wall time went: every SLURM job's submit/start/end (seconds from the start of the SLURM run) and CPUs.
scontrol show job -o 2>/dev/null | "$PY" "$REPO/tests/cluster/slurm_jobs.py" "$T0" || true
CPU1=$(cpu_used)
[[ -n $CPU0 && -n $CPU1 ]] && say "CPU time of everything slurmd ran (the SLURM jobs): $(( (CPU1 - CPU0) / 1000000000 )) s" \
    "over $((T1 - T0)) s wall on $(nproc) CPUs (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
JOBS=$(grep -c "_slurm_rpc_submit_batch_job: JobId=" "$TMP/log/slurmctld.log" || true)
LOCAL_JOBS=$( { cat "${LOCAL_LOG[@]}" 2>/dev/null | grep -Eo "^[0-9]+ of [0-9]+ steps" || true; } | tail -1 | cut -d' ' -f3)
say "SLURM run: $((T1 - T0)) s wall, $JOBS jobs submitted (local run: $LOCAL_JOBS jobs)"

# --- every results CSV byte-identical, timing-valued fields excepted -------------------------------------------
"$PY" "$REPO/tests/cluster/compare_results.py" "$LOCAL/results" "$TMP/slurm/results" || fail "results differ"
[[ $JOBS -ge 1 && $JOBS -le $MAX_JOBS ]] || fail "$JOBS SLURM jobs submitted (allowed: 1..$MAX_JOBS)"
say "SLURM SMOKE TEST PASSED: $JOBS SLURM jobs (local: $LOCAL_JOBS), SLURM run $((T1 - T0)) s, total $(($(date +%s) - START)) s"
