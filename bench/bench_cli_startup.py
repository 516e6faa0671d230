"""Benchmark: the process cost of one ``dpsampling`` command, start-up included (issue 15: a Poisson
ε/δ query at T ≤ 1e5 ≤ 1 s of process time; ``--help`` and bad input ≤ 0.3 s).

Each command runs as a fresh ``python -m dpsampling.cli`` process; its cost is the CPU time (user + sys) of
that process (best and median of --repeat runs), since the machine may be shared.

Peer, same inputs and accuracy: a fresh Python process that imports dp_accounting and asks its own
``PLDAccountant`` for ε of ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)`` at the
discretisation our query ended at (one pessimistic PLD, no refinement, no lower bound: the least a
dp_accounting user pays once d is known).  ratio = ours / peer.  The floor row is a process that only imports
scipy.stats and scipy.signal, which dp_accounting's PLD modules import at module level (its
privacy_loss_mechanism freezes ``scipy.stats.norm``; pld.common imports scipy.signal), so no query that uses
dp_accounting's PLD can cost less.  A peer that is not installed is skipped with a message.

Usage: python bench/bench_cli_startup.py [--repeat N] [--steps 1e4 1e5]
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys

SIGMA, Q, DELTA = 1.0, 0.01, 1e-5

PEER = """
import sys
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
sigma, q, steps, delta, d = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=d)
acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
print(acc.get_epsilon(delta))
"""


def run(cmd):
    """(stdout, CPU seconds of the child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cost(cmd, repeat):
    times, out = [], None
    for _ in range(repeat):
        out, t = run(cmd)
        times.append(t)
    return out, min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--steps", type=float, nargs="+", default=[1e4, 1e5])
    a = ap.parse_args()
    cli = [sys.executable, "-m", "dpsampling.cli"]
    rows = []
    for name, argv, target in [("--help", ["--help"], 0.3), ("bad input (--q 2)",
                               ["epsilon", "--sigma", "1", "--q", "2", "--steps", "10", "--delta", "1e-5"], 0.3)]:
        out, best, med = cost(cli + argv, a.repeat)
        rows.append((name, best, med, None, target, f"exit {out.returncode}"))
    _, best, med = cost([sys.executable, "-c", "import scipy.stats, scipy.signal"], a.repeat)
    rows.append(("floor: import scipy.stats, scipy.signal", best, med, None, None, ""))
    try:
        import dp_accounting  # noqa: F401

        have_peer = True
    except ImportError:
        have_peer = False
        print("peer skipped: dp_accounting is not installed")
    for steps in map(int, a.steps):
        argv = ["epsilon", "--sampler", "poisson", "--sigma", f"{SIGMA:g}", "--q", f"{Q:g}", "--steps", str(steps),
                "--delta", f"{DELTA:g}"]
        out, best, med = cost(cli + argv, a.repeat)
        res = json.loads(out.stdout)
        peer = None
        if have_peer:
            d = res["accuracy"]["discretization"]
            pout, peer, _ = cost([sys.executable, "-c", PEER, str(SIGMA), str(Q), str(steps), str(DELTA), str(d)],
                                 a.repeat)
            if abs(float(pout.stdout) - res["upper"]) > 1e-9 * res["upper"]:
                print(f"T={steps}: peer ε {pout.stdout.strip()} != our upper bound {res['upper']}")
        note = f"ε ≤ {res['upper']:.6g}, d = {res['accuracy']['discretization']:g}"
        rows.append((f"epsilon poisson T={steps:.0e}", best, med, peer, 1.0, note))
    print(f"CPU seconds of one process (user+sys), best / median of {a.repeat}; σ={SIGMA:g}, q={Q:g}, δ={DELTA:g}")
    print(f"{'command':42} {'best':>6} {'median':>7} {'peer':>6} {'ratio':>6} {'target':>7}  note")
    for name, best, med, peer, target, note in rows:
        p = f"{peer:6.2f}" if peer is not None else f"{'-':>6}"
        r = f"{best / peer:6.2f}" if peer else f"{'-':>6}"
        t = f"{target:7.1f}" if target is not None else f"{'-':>7}"
        print(f"{name:42} {best:6.2f} {med:7.2f} {p} {r} {t}  {note}")


if __name__ == "__main__":
    main()
