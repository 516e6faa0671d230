"""Runs of phases mixing samplers and relations (:mod:`dpsampling.samplers.phases`) against dp_accounting.

Runs (q = 256/60000, δ = 1e-5): Poisson σ 1.1 then WOR σ 1.8 (7050 steps each; replace-one); the Poisson schedule σ
1.1 then 0.9 under replace-one (``relation="replace_one"``); Poisson σ 1.1 (2000 steps) then a deterministic, a
shuffled or a balls-and-bins phase (σ 3, 235 steps × 5 epochs; zero-out).  Per run: our certified interval, its
relative width, CPU seconds from cold caches, and dp_accounting's pessimistic connect-the-dots PLDs at 10× finer
discretisation than ours reached: the composition of the same dominating pairs (``upper ref``: our upper end should
be at or just above it) and, for replace-one runs, of the ±C adversary's pairs (``lower ref``: the replace-one
pair of every Poisson and WOR phase at σ, which our lower end approaches from below); dp_accounting's RDP accountant
on the same events where it answers.  Run: ``PYTHONPATH=. python bench/bench_phases_mixed.py``.
"""

from __future__ import annotations

import time

Q = 256 / 60000


def _pld(sigma, q, steps, d, relation=None):
    import dp_accounting as dpa
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    kw = {} if relation is None else {"neighboring_relation": getattr(dpa.NeighboringRelation, relation)}
    if q == 1.0:
        return pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=True, value_discretization_interval=d,
                                              use_connect_dots=True).self_compose(steps)
    return pldlib.from_gaussian_mechanism(sigma, pessimistic_estimate=True, value_discretization_interval=d,
                                          sampling_prob=q, use_connect_dots=True, **kw).self_compose(steps)


def _compose(parts, d):
    out = None
    for part in parts:
        p = _pld(*part[:3], d, part[3] if len(part) > 3 else None)
        out = p if out is None else out.compose(p)
    return out.get_epsilon_for_delta(1e-5)


def _rdp(events):
    import dp_accounting as dpa

    try:
        acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        for event, count in events:
            acc.compose(event, count)
        return f"{acc.get_epsilon(1e-5):.4f}"
    except Exception as exc:  # noqa: BLE001 - a benchmark's note: RDP does not answer this event
        return f"— ({type(exc).__name__})"


def main():
    import dp_accounting as dpa

    from dpsampling import phases
    from dpsampling.phases import Phase

    later = [Phase("deterministic", 3.0, None, 235, 5)]
    runs = {
        "poisson σ1.1 + wor σ1.8 (7050 each)": ([Phase("poisson", 1.1, Q, 7050), Phase("wor", 1.8, Q, 7050)], None,
                                                [(1.1, Q, 7050, "REPLACE_ONE"), (0.9, Q, 7050)],
                                                [(1.1, Q, 7050, "REPLACE_ONE"), (1.8, Q, 7050, "REPLACE_ONE")],
                                                [(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(0.55)), 7050),
                                                 (dpa.SampledWithoutReplacementDpEvent(60000, 256,
                                                                                       dpa.GaussianDpEvent(0.9)),
                                                  7050)]),
        "poisson σ1.1 then 0.9 under replace-one": ([Phase("poisson", 1.1, Q, 7050), Phase("poisson", 0.9, Q, 7050)],
                                                    "replace_one",
                                                    [(1.1, Q, 7050, "REPLACE_ONE"), (0.9, Q, 7050, "REPLACE_ONE")],
                                                    [(1.1, Q, 7050, "REPLACE_ONE"), (0.9, Q, 7050, "REPLACE_ONE")],
                                                    None),
        "poisson σ1.1 (2000) + deterministic σ3 ×5": ([Phase("poisson", 1.1, Q, 2000)] + later, None,
                                                      [(1.1, Q, 2000), (3.0, 1.0, 5)], None, None),
        "poisson σ1.1 (2000) + shuffle σ3 ×5": ([Phase("poisson", 1.1, Q, 2000), Phase("shuffle", 3.0, None, 235, 5)],
                                                None, [(1.1, Q, 2000), (3.0, 1.0, 5)], None, None),
        "poisson σ1.1 (2000) + balls_and_bins σ3 ×5": ([Phase("poisson", 1.1, Q, 2000),
                                                        Phase("balls_and_bins", 3.0, None, 235, 5)], None,
                                                       [(1.1, Q, 2000), (3.0, 1.0, 5)], None, None),
    }
    phases.epsilon([Phase("poisson", 1.0, 0.01, 10), Phase("wor", 2.0, 0.01, 10)], 1e-5)  # imports, first calls
    print("| run | relation | ours [lower, upper] | rel. width | d | CPU s | upper ref (d/10) | lower ref (d/10) "
          "| refs CPU s | RDP (replace-one) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (run, relation, up_parts, lo_parts, rdp_events) in runs.items():
        t = time.process_time()
        r = phases.epsilon(run, 1e-5, relation=relation)
        ours = time.process_time() - t
        d = r.accuracy["discretization"]
        t = time.process_time()
        up = _compose(up_parts, d / 10)
        lo = f"{_compose(lo_parts, d / 10):.6f}" if lo_parts else "—"
        ref_t = time.process_time() - t
        rdp = _rdp(rdp_events) if rdp_events else "—"
        print(f"| {name} | {r.relation} | [{r.lower:.6f}, {r.upper:.6f}] | {(r.upper - r.lower) / r.upper:.3g} | "
              f"{d:g} | {ours:.2f} | {up:.6f} | {lo} | {ref_t:.1f} | {rdp} |", flush=True)
    truncated = {"dataset_size": 60000, "max_batch_size": 290}
    run = [Phase("poisson", 0.9, Q, 2000), Phase("truncated_poisson", 1.1, Q, 2000, options=truncated)]
    t = time.process_time()
    r = phases.epsilon(run, 1e-5)
    ours = time.process_time() - t
    t = time.process_time()
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(0.9)), 2000)
    acc.compose(dpa.TruncatedSubsampledGaussianDpEvent(60000, Q, 290, 1.1), 2000)
    ref = acc.get_epsilon(1e-5)
    print(f"\npoisson σ0.9 (2000) + truncated σ1.1 cap 290 (2000), add_remove: ours [{r.lower:.6f}, {r.upper:.6f}] "
          f"(width {(r.upper - r.lower) / r.upper:.3g}, d {r.accuracy['discretization']:g}, {ours:.2f} CPU s); "
          f"dp_accounting PLDAccountant with its TruncatedSubsampledGaussianDpEvent (d 1e-4): {ref:.6f} "
          f"({time.process_time() - t:.1f} CPU s)")


if __name__ == "__main__":
    main()
