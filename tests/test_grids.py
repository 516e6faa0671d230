
import pytest

from dpsampling import grids


def block(**over):
    b = {"fixed": {"delta": 1e-6, "steps": 10}, "n_chunks": 3,
         "grid": [{"sampler": "poisson", "epsilon": [1, 2], "q": {"start": 1e-3, "stop": 1.0, "num": 4, "spacing": "log"}}]}
    b.update(over)
    return b


def test_build_product_and_fixed():
    pts = grids.build(block())
    assert len(pts) == 8
    assert {p["epsilon"] for p in pts} == {1, 2}
    assert pts[0]["q"] == pytest.approx(1e-3) and pts[3]["q"] == pytest.approx(1.0)
    assert all(p["delta"] == 1e-6 and 0 <= p["chunk"] < 3 for p in pts)


def test_ids_stable_and_one_change_touches_one_chunk():
    a = grids.build(block())
    b = grids.build(block(grid=[{"sampler": "poisson", "epsilon": [1, 3],
                                 "q": {"start": 1e-3, "stop": 1.0, "num": 4, "spacing": "log"}}]))
    changed = {p["point_id"] for p in a} ^ {p["point_id"] for p in b}
    assert len(changed) == 8  # 4 points removed (ε=2), 4 added (ε=3)
    kept = {p["point_id"]: p["chunk"] for p in a if p["epsilon"] == 1}
    assert all(kept[p["point_id"]] == p["chunk"] for p in b if p["epsilon"] == 1)
    assert grids.point_id({"a": 1, "b": 0.1}) == grids.point_id({"b": 0.1 + 1e-17, "a": 1})


def test_duplicates_removed_and_chunks_partition():
    b = block(grid=[{"epsilon": [1, 2]}, {"epsilon": [2, 3]}])
    pts = grids.build(b)
    assert sorted(p["epsilon"] for p in pts) == [1, 2, 3]
    assert sum(len(grids.chunk(pts, i)) for i in range(3)) == 3


@pytest.mark.parametrize("axis,msg", [
    ([], "empty"), ({"start": 1, "stop": 0, "num": 3}, "start must be <= stop"),
    ({"start": 0, "stop": 1, "num": 3, "spacing": "log"}, "log spacing"), ({"start": 0, "stop": 1}, "num"),
    ({"start": 0, "stop": 1, "num": 0}, "num must be >= 1"), ({"start": 0.1, "stop": 1, "num": 2, "spacing": "cubic"}, "spacing"),
])
def test_bad_axis_names_the_key(axis, msg):
    with pytest.raises(ValueError, match=msg) as e:
        grids.expand_axis("q", axis)
    assert "'q'" in str(e.value)


def test_chunk_by_keeps_curves_together():
    b = block(chunk_by=["epsilon"], n_chunks=7)
    pts = grids.build(b)
    by_eps = {}
    for p in pts:
        by_eps.setdefault(p["epsilon"], set()).add(p["chunk"])
    assert all(len(c) == 1 for c in by_eps.values())
