"""WOR under replace-one (substitution): composing each σ/2 direction apart vs one pair dominating both.

Lebeda et al. 2024 (Thm 14, after ZDW22 Prop. 30) bound one WOR step under substitution by the remove pair of the
q-subsampled Gaussian at σ/2 for ε ≥ 0 and by the add pair below; neither dominates for every ε, so the larger of
the two directions' compositions (WOR's add/remove answer, samplers/wor.py, proven under add/remove: Lebeda Prop. 9)
is not a proven bound under substitution (their §7), while the composition of one pair dominating both is (their §8;
engine/replace_one.max_pair_one_step): WOR's replace-one answer (samplers/relations.py, ``max_pair``).  Printed for
MNIST (q = 256/60000, δ 1e-5, σ 1.1 → 0.55 per direction, 14 100 steps) at d = 1e-3 and 1e-4: the per-direction
values, the max-pair value, dp_accounting's RDP for the same SampledWithoutReplacementDpEvent, and the lower ends of
the direction mixtures remove^k ⊗ add^(T−k) (each realised by an adversary flipping the record's gradient sign).
Run: ``PYTHONPATH=. python bench/study_wor_replace_one.py``.
"""

from __future__ import annotations

import time

Q, SIGMA, T, DELTA = 256 / 60000, 0.55, 14100, 1e-5


def main():
    import dp_accounting as dpa

    from dpsampling.engine import dominated_pld, phases, pld, replace_one
    from dpsampling.engine.reading import epsilon_for_delta_lower

    rdp = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SampledWithoutReplacementDpEvent(60000, 256, dpa.GaussianDpEvent(SIGMA)), T)
    print(f"RDP (dp_accounting, replace-one WOR): {rdp.get_epsilon(DELTA):.4f}")
    for d in (1e-3, 1e-4):
        t = time.process_time()
        per = [pld.certified_epsilon(DELTA, SIGMA, Q, T, direction, d) for direction in ("remove", "add")]
        both = phases.certified_epsilon(DELTA, phases.groups([(SIGMA, Q, T, "max_of_directions")]), "add_remove", d)
        print(f"d {d:g}: per direction (remove, add) {per[0]:.4f}, {per[1]:.4f}; one pair dominating both "
              f"{both:.4f} ({time.process_time() - t:.1f} CPU s)")
    for k in (T, 12000, 7050):
        parts = [phases.Composed(*dominated_pld.composed(SIGMA, Q, n, 1e-3, dr), dominated_pld.FOLD_MASS)
                 for n, dr in ((k, "remove"), (T - k, "add")) if n]
        c = parts[0] if len(parts) == 1 else phases.convolve(parts, False)
        lo = epsilon_for_delta_lower(c.pmf, DELTA + c.fold + pld.rounding_at(c.pmf, c.err2, -float("inf")))
        print(f"lower end of remove^{k} ⊗ add^{T - k}: {lo:.4f}")


if __name__ == "__main__":
    main()
