"""The window-sum geometric kernel against PLD_accounting's own: the same bins, each to ~1e-12 relative, and the
same one-direction bounds end to end."""

import math

import numpy as np
import pytest

from dpsampling.engine import allocation_pld as pa


def _geometric_dist(rng, n, step, anchor, index_0, zero_tail):
    """A random distribution on the geometric lattice anchor·e^{step·k}, k = index_0 … index_0 + n − 1, with
    probabilities spread over 30 orders of magnitude, a zero tail of ``zero_tail`` bins (as PLD_accounting pads)
    and small boundary atoms."""
    from PLD_accounting.discrete_dist import DenseDiscreteDist, Domain, GridSpec
    from PLD_accounting.types import SpacingType

    p = np.exp(rng.uniform(-70.0, 0.0, n)) * np.exp(-0.5 * np.linspace(-4.0, 4.0, n) ** 2)
    p[n - zero_tail:] = 0.0
    p_min, p_max = 1e-12, 1e-13
    p *= (1.0 - p_min - p_max) / math.fsum(p)
    grid = GridSpec(step=step, n=n, spacing_type=SpacingType.GEOMETRIC, anchor=anchor, index_0=index_0)
    return DenseDiscreteDist(grid=grid, prob_arr=p, p_min=p_min, p_max=p_max, domain=Domain.POSITIVES)


@pytest.mark.parametrize("case", ["self", "same_lattice", "shifted", "far_apart"])
@pytest.mark.parametrize("bound", ["DOMINATES", "IS_DOMINATED"])
def test_windowed_kernel_is_pld_accountings_geometric_convolution(case, bound):
    # the window-sum kernel (dpsampling.engine.geometric_kernel) must give PLD_accounting's own convolution:
    # the same output lattice, each bin above 1e-12 to ≤ 1e-12 relative, all bins and the boundary atoms to
    # 1e-15 absolute (that every pair lands in the bin PLD_accounting rounds it to is checked on the raw
    # kernels in the next test: the same zero bins).  Cases: a squaring step (same array), two distributions on one lattice, shifted
    # by 300 bins, and 4000 bins apart (the pairs then split into runs of constant shift, not of constant g)
    import PLD_accounting.geometric_convolution as gc
    from PLD_accounting.types import BoundType

    from dpsampling.engine.geometric_kernel import geometric_kernel

    rng = np.random.default_rng(11)
    step = 2e-3
    d1 = _geometric_dist(rng, 3000, step, 1.0, -1500, 40)
    d2 = {"self": d1, "same_lattice": _geometric_dist(rng, 3000, step, 1.0, -1500, 0),
          "shifted": _geometric_dist(rng, 2500, step, 1.0, -1200, 7),
          "far_apart": _geometric_dist(rng, 2000, step, 1.0, 2500, 0)}[case]
    bt = BoundType[bound]
    kw = {"dist_1": d1, "dist_2": d2, "tail_truncation": 0.0, "bound_type": bt}
    ref = gc.geometric_convolve(**kw)
    with geometric_kernel():
        ours = gc.geometric_convolve(**kw)
    # PLD_accounting then repairs each kernel's own rounding drift of the total mass (here +1.5e-18 for ours,
    # −2.2e-18 for its own, against the exact sum) at an edge, which can empty edge bins of ~1e-28 that
    # truncate_edges then trims: compare on the common lattice
    assert (ours.grid.step, ours.grid.anchor, ours.grid.index_0) == (ref.grid.step, ref.grid.anchor, ref.grid.index_0)
    n = max(ours.prob_arr.size, ref.prob_arr.size)
    p_ours, p_ref = (np.pad(x.prob_arr, (0, n - x.prob_arr.size)) for x in (ours, ref))
    big = p_ref > 1e-12
    assert np.max(np.abs(p_ours[big] / p_ref[big] - 1)) <= 1e-12
    assert np.sum(np.abs(p_ours - p_ref)) <= 1e-15
    assert abs(ours.p_min - ref.p_min) <= 1e-15 and abs(ours.p_max - ref.p_max) <= 1e-15


def test_windowed_kernel_restores_the_library_kernel_and_ignores_the_thread_count():
    # the kernel is swapped in only inside geometric_kernel(); its result does not depend on how many
    # numba threads run its parts (each part is summed by one thread, the parts are added in a fixed order)
    import numba
    import PLD_accounting.geometric_convolution as gc

    from dpsampling.engine.geometric_kernel import geometric_kernel, windowed_geometric_kernel

    library = gc._geometric_kernel
    with geometric_kernel():
        assert gc._geometric_kernel is windowed_geometric_kernel
    assert gc._geometric_kernel is library
    rng = np.random.default_rng(3)
    a, b = _geometric_dist(rng, 2000, 1e-3, 1.0, 0, 5).prob_arr, _geometric_dist(rng, 2000, 1e-3, 1.0, 0, 0).prob_arr
    shift = np.ceil(np.log1p(np.exp(np.arange(2000) * 1e-3)) / 1e-3).astype(np.int64)
    kw = {"pmf_base": a, "pmf_scaled": b, "delta_lohi": shift, "delta_hilo": shift,
          "diagonal_bins": np.full(2000, shift[0]), "output_size": 2000 + int(shift[0]) + 2}
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = windowed_geometric_kernel(**kw)
        numba.set_num_threads(max(1, min(2, numba.config.NUMBA_NUM_THREADS)))
        two = windowed_geometric_kernel(**kw)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two)
    theirs = library(**kw)
    # the same bins hold mass; each to 1e-12 relative, or 1e-27 absolute (window sums in deep tails: module doc)
    assert np.array_equal(one == 0, theirs == 0) and np.all(np.abs(one - theirs) <= 1e-12 * theirs + 1e-27)


@pytest.mark.parametrize("bound,direction", [("upper", "remove"), ("lower", "add"), ("upper", "add")])
def test_directional_bounds_with_the_windowed_kernel_equal_pld_accountings(bound, direction, monkeypatch):
    # end to end: one direction's PMF from PLD_accounting with its own kernel and with ours (the default):
    # the kernels differ only in the order of additions, and PLD_accounting repairs each one's drift of the
    # total mass (~1e-17 per convolution, see above) at an edge, so δ(ε) agrees to 1e-15 absolute and ε(δ)
    # at δ = 1e-6 to ~1e-15/δ relative (measured ≤ 3e-11; asserted 1e-9)
    import PLD_accounting.geometric_convolution as gc

    import dpsampling.engine.geometric_kernel as gk

    args = (1.0, 50, 2, bound, direction, 0.03, 1e-9)
    ours = pa.directional_pmf.__wrapped__(*args)
    monkeypatch.setattr(gk, "windowed_geometric_kernel", gc._geometric_kernel)  # geometric_kernel() swaps in theirs
    theirs = pa.directional_pmf.__wrapped__(*args)
    eps = ours.get_epsilon_for_delta(1e-6)
    assert eps > 0 and theirs.get_epsilon_for_delta(1e-6) == pytest.approx(eps, rel=1e-9)
    for e in (0.5 * eps, eps, 2 * eps):
        assert abs(ours.get_delta_for_epsilon(e) - theirs.get_delta_for_epsilon(e)) <= 1e-15
