"""A run of phases (:mod:`dpsampling.engine.phases`) against dp_accounting's PLDAccountant composing the same events.

Runs (q = 256/60000, δ = 1e-5): the issue's two Poisson phases (σ 1.1 then 0.9, 7050 steps each); ten such runs
composed (equal settings merge: two groups of 70 500 steps); ten distinct runs (a hyper-parameter search: σ 0.9 …
1.35 in the first phase, 0.9 in the second, 7050 steps each: 11 groups).  Per run: our certified interval, its
relative width, CPU seconds from cold caches (one process; the first run pays the imports' warm-up), and
dp_accounting's PLDAccountant (pessimistic, connect-the-dots) at 10× finer discretisation than ours reached, with its
CPU seconds, and whether our interval contains it.  Then σ calibration of the two phases scaled together
(:func:`dpsampling.phases.sigma`, ε = 3): our bracket of the multiplier and its CPU seconds, against
dp_accounting's ``calibrate_dp_mechanism`` on a PLDAccountant of the same run (at the discretisation ours reached
and at 10× finer), its CPU seconds and whether its multiplier lies in our bracket.
Run: ``PYTHONPATH=. python bench/bench_phases.py [--no-reference]``.
"""

from __future__ import annotations

import argparse
import time

Q = 256 / 60000
RUNS = {
    "two phases": [(1.1, Q, 7050), (0.9, Q, 7050)],
    "ten runs of them": [(1.1, Q, 7050), (0.9, Q, 7050)] * 10,
    "ten distinct runs": [p for s in (0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35)
                          for p in ((s, Q, 7050), (0.9, Q, 7050))],
}


def _clear():
    from dpsampling.engine import dominated_pld, phases, pld

    for f in (pld.composed, pld._upper_pmfs, pld.one_step, dominated_pld.composed, dominated_pld.one_step,
              phases.upper_pmfs, phases.lower_pmfs):
        f.cache_clear()


def _reference(run, d):
    import dp_accounting as dpa

    acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=d)
    for sigma, q, steps in run:
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    return acc.get_epsilon(1e-5)


TARGET_EPSILON = 3.0


def _reference_sigma(run, d):
    """dp_accounting's calibrate_dp_mechanism: the multiplier c of the run's σ for ε = TARGET_EPSILON."""
    import dp_accounting as dpa

    def accountant():
        return dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=d)

    def event(c):
        return dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(c * s)),
                                                            steps) for s, q, steps in run])

    return dpa.calibrate_dp_mechanism(accountant, event, TARGET_EPSILON, 1e-5,
                                      dpa.LowerEndpointAndGuess(0.5, 1.0), tol=1e-5)


def calibration(reference):
    """σ calibration of the two phases scaled together: ours vs dp_accounting's calibrate_dp_mechanism."""
    from dpsampling import phases

    run = RUNS["two phases"]
    _clear()
    t = time.process_time()
    r = phases.sigma([phases.Phase("poisson", s, q, steps) for s, q, steps in run], TARGET_EPSILON, 1e-5)
    ours = time.process_time() - t
    width = (r.upper - r.lower) / r.upper
    print(f"\nσ calibration, two phases (σ 1.1, 0.9) × c, ε = {TARGET_EPSILON:g}, δ = 1e-5: ours c in "
          f"[{r.lower:.6f}, {r.upper:.6f}] (rel. width {width:.1e}, {r.accuracy['evaluations']} evaluations), "
          f"{ours:.2f} CPU s", flush=True)
    if reference:
        d = r.accuracy["discretization"]
        for dd in (d, d / 10):
            t = time.process_time()
            c = _reference_sigma(run, dd)
            print(f"dp_accounting calibrate_dp_mechanism at d = {dd:g}: c = {c:.6f}, {time.process_time() - t:.1f} "
                  f"CPU s, in our bracket: {r.lower <= c <= r.upper}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    from dpsampling.engine import phases

    phases.epsilon(1e-5, [(1.0, 0.01, 10), (2.0, 0.01, 10)], discretization=1e-2)  # imports and first calls
    print("| run | ours [lower, upper] | rel. width | d | CPU s | dp_accounting PLD at d/10 | CPU s | inside |")
    print("|---|---|---|---|---|---|---|---|")
    for name, run in RUNS.items():
        _clear()
        t = time.process_time()
        r = phases.epsilon(1e-5, run)
        ours = time.process_time() - t
        d = r.accuracy["discretization"]
        ref, ref_t, inside = "—", "—", "—"
        if not args.no_reference:
            t = time.process_time()
            value = _reference(run, d / 10)
            ref_t, ref, inside = f"{time.process_time() - t:.1f}", f"{value:.6f}", r.lower <= value <= r.upper
        width = (r.upper - r.lower) / r.upper
        print(f"| {name} | [{r.lower:.6f}, {r.upper:.6f}] | {width:.1e} | {d:g} | {ours:.2f} | {ref} | {ref_t} | "
              f"{inside} |", flush=True)
    calibration(not args.no_reference)


if __name__ == "__main__":
    main()
