"""The pipeline's phased runs (config/config.yaml, block ``phased_runs``; Poisson phases: Opacus accounts Poisson
only) against Opacus's own ``rdp`` and ``prv`` accountants given the same history of (σ, q, steps).

After each phase: our certified interval (:func:`dpsampling.phases.epsilon`) and its CPU seconds; Opacus's
``RDPAccountant`` and ``PRVAccountant`` (``get_epsilon(δ)``, its default eps_error 0.01: the upper end of its
estimate) with ``history`` set to the run's phases so far, each with its CPU seconds; and each peer's value ÷ our
upper end.  Opacus needs torch (not a pipeline dependency): run
``PYTHONPATH=. python bench/bench_phased_runs.py`` where ``import opacus`` works.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def runs():
    """(name, N, δ, [(σ, q, steps per epoch × epochs, text)]) of the config's phased runs."""
    block = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["phased_runs"]
    out = []
    for sub in block["grid"]:
        n, delta = int(block["fixed"]["dataset_size"]), float(block["fixed"]["delta"])
        for phases in sub["phases"]:
            out.append((sub["run"], n, delta,
                        [(float(p["sigma"]), int(p["batch_size"]) / n, math.ceil(n / int(p["batch_size"])) * int(p["epochs"]),
                          f"σ {p['sigma']:g}, B {p['batch_size']}, {p['epochs']} ep") for p in phases]))
    return out


def _timed(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def opacus_epsilon(kind, history, delta):
    from opacus.accountants import PRVAccountant, RDPAccountant

    acc = {"rdp": RDPAccountant, "prv": PRVAccountant}[kind]()
    acc.history = [(s, q, t) for s, q, t in history]
    return float(acc.get_epsilon(delta))


def main():
    from dpsampling import phases as P
    from dpsampling.engine.result import interval_text

    P.epsilon([P.Phase("poisson", 1.0, 0.01, 10), P.Phase("poisson", 2.0, 0.01, 10)], 1e-5)  # imports, first calls
    opacus_epsilon("rdp", [(1.0, 0.01, 10)], 1e-5)
    opacus_epsilon("prv", [(1.0, 0.01, 10)], 1e-5)
    print("| run | after phase | ours [lower, upper] | CPU s | Opacus rdp | ÷ ours | CPU s | Opacus prv | ÷ ours | "
          "CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, delta, phases in runs():
        for k in range(1, len(phases) + 1):
            done = phases[:k]
            ours, t_ours = _timed(lambda: P.epsilon([P.Phase("poisson", s, q, t) for s, q, t, _ in done], delta))
            history = [(s, q, t) for s, q, t, _ in done]
            rdp, t_rdp = _timed(lambda: opacus_epsilon("rdp", history, delta))
            try:
                prv, t_prv = _timed(lambda: opacus_epsilon("prv", history, delta))
                prv_text = f"{prv:.4f} | {prv / ours.upper:.4f} | {t_prv:.2f}"
            except Exception as exc:  # noqa: BLE001 - Opacus's prv fails on some histories: say so, keep going
                prv_text = f"fails ({type(exc).__name__}) | – | –"
            print(f"| {name} | {k}: {done[-1][3]} | {interval_text(ours.lower, ours.upper)} | {t_ours:.2f} | "
                  f"{rdp:.4f} | {rdp / ours.upper:.4f} | {t_rdp:.2f} | {prv_text} |", flush=True)


if __name__ == "__main__":
    main()
