"""App. B.1 randomized-response counterexample, exact rationals (Lebeda et al. 2024)."""

import math
from fractions import Fraction as F

import numpy as np
import pytest

from dpsampling.papers.lebeda import randomized_response as rr


def test_distributions_as_printed():
    assert rr.subsampled(False) == {0: F(3, 4), 1: F(1, 4)}
    assert rr.subsampled(True) == {0: F(1, 2), 1: F(1, 2)}  # 1/2·3/4 + 1/2·1/4
    P, Q = rr.paper_pair()
    assert P == {(0, 0): F(9, 16), (0, 1): F(3, 16), (1, 0): F(3, 16), (1, 1): F(1, 16)}
    assert set(Q.values()) == {F(1, 4)}
    assert sum(P.values()) == 1 and sum(Q.values()) == 1


def test_four_paper_values_exactly():
    v = rr.paper_values()
    assert v["H_4/3(P||Q)"] == F(11, 48)
    assert v["H_4/3(Q||P)"] == F(1, 6)
    assert v["H_2(P||Q)"] == F(1, 16)
    assert v["H_2(Q||P)"] == F(1, 8)
    assert all(isinstance(x, F) for x in v.values())
    assert rr.k2_crossing_both_ways()


def test_prop11_k1_remove_dominates_k2_crosses_exactly():
    assert rr.k1_remove_dominates()
    # add > remove exactly on α ∈ (1, 5/3): diff = 3(α-1)/16 on [1, 4/3], (5 - 3α)/16 on [4/3, 9/4)
    assert rr.add_above_remove_alpha_intervals(2) == [(F(1), F(5, 3))]
    (lo, hi), = rr.add_above_remove_eps_intervals(2)
    assert lo == 0.0 and hi == pytest.approx(math.log(5 / 3), abs=1e-15)
    P, Q = rr.paper_pair()
    assert rr.hockey_stick(P, Q, F(5, 3)) == rr.hockey_stick(Q, P, F(5, 3))


def test_curve_pieces_match_direct_sum():
    rng = np.random.default_rng(0)
    for P, Q in [rr.paper_pair(), rr.paper_pair()[::-1], rr.paper_pair(3, F(1, 3))]:
        pieces = rr.curve_pieces(P, Q)
        for _ in range(50):
            a = F(int(rng.integers(0, 500)), 100)
            _, _, A, B = next(p for p in pieces if a >= p[0] and (p[1] is None or a < p[1]))
            assert A - a * B == rr.hockey_stick(P, Q, a)
    # the float curve agrees with the exact value at ε = ln(4/3) and ln 2
    add, rem = rr.add_remove_curves([math.log(4 / 3), math.log(2.0)])
    assert add == pytest.approx([11 / 48, 1 / 16], abs=1e-15)
    assert rem == pytest.approx([1 / 6, 1 / 8], abs=1e-15)


def test_curve_limits():
    add, rem = rr.add_remove_curves([-30.0, 0.0, math.log(9 / 4), math.log(4), 5.0])
    assert add[0] == pytest.approx(1.0) and rem[0] == pytest.approx(1.0)
    assert add[1] == rem[1] == pytest.approx(5 / 16)  # TV distance, symmetric
    assert add[2] == 0.0 and rem[3] == 0.0 and add[4] == rem[4] == 0.0


@pytest.mark.parametrize("call,name", [
    (lambda: rr.subsampled(True, q=0), "q must be"), (lambda: rr.subsampled(True, q=F(3, 2)), "q must be"),
    (lambda: rr.mechanism(2), "b"), (lambda: rr.mechanism(0, p_keep=0), "p_keep"),
    (lambda: rr.power({0: F(1), 1: F(0)}, 0), "steps"), (lambda: rr.hockey_stick({}, {}, -1), "alpha"),
    (lambda: rr.paper_value("H_3"), "name"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_pipeline_helpers():
    assert rr._frac("q", 0.1) == F(1, 10) and rr._frac("q", np.float64(0.5)) == F(1, 2)
    v = rr.exact_values(2, 0.5)
    assert v[("add", F(4, 3))] == F(11, 48) and v[("remove", F(2))] == F(1, 8)
    assert rr.crossing_ks(8) == [2, 3, 5, 6, 7, 8]  # k = 4: remove dominates for all α ≥ 1
    assert rr.add_above_remove_alpha_intervals(4) == []
    assert not rr.no_pair_realizes_each_k(2, 8) and rr.no_pair_realizes_each_k(2, 3)
