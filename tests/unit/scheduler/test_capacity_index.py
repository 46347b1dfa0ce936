"""The snapshot's lazy capacity index (sorted lists built only once a request exceeds a
resource's floor) answers every query as the eager index does, whatever the history: random
nodes (some without memory or with an extended resource), pods added and removed, nodes
resized and removed, and requests from tiny to larger than any node."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import CapacityIndex, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod

GPU = "example.com/gpu"


def _node(rng: random.Random, name: str) -> dict[str, Any]:
    extra = {GPU: str(rng.choice([1, 4, 8]))} if rng.random() < 0.3 else {}
    n = make_node(
        name,
        cpu=rng.choice(["2", "4", "32"]),
        memory=rng.choice(["1Gi", "8Gi", "64Gi"]),
        pods=rng.choice(["2", "5", "110"]),
        extra=extra,
    )
    if rng.random() < 0.1:
        del n["status"]["allocatable"]["memory"]  # a node without memory at all
    return n


def _requests(rng: random.Random) -> dict[str, int]:
    out: dict[str, int] = {}
    if rng.random() < 0.8:
        out["cpu"] = rng.choice([0, 100, 1000, 3000, 40000])
    if rng.random() < 0.6:
        out["memory"] = rng.choice([0, 2**20, 2**30, 2**36])
    if rng.random() < 0.2:
        out[GPU] = rng.choice([1, 2, 16])
    return out


def _pod(rng: random.Random, name: str) -> PodInfo:
    req = rng.choice([{}, {"cpu": "100m"}, {"cpu": "1500m", "memory": "3Gi"}, {"cpu": "1", GPU: "1"}])
    return PodInfo(make_pod(name, uid=name, requests=req))


@pytest.mark.parametrize("seed", range(12))
def test_a_lazy_index_answers_as_an_eager_one(seed: int) -> None:
    rng = random.Random(seed)
    eager, lazy = CapacityIndex(), CapacityIndex(lazy=True)
    infos: dict[str, NodeInfo] = {}
    names = [f"n{i:02d}" for i in range(25)]

    fresh = CapacityIndex(lazy=True)  # renewed now and then: its lists are not built yet

    def put(name: str, ni: NodeInfo | None) -> None:
        eager.update(name, ni)
        lazy.update(name, ni)
        fresh.update(name, ni)

    for name in names:
        infos[name] = NodeInfo(_node(rng, name))
        put(name, infos[name])
    for step in range(300):
        op = rng.random()
        name = rng.choice(names)
        if op < 0.45 and name in infos:
            infos[name].add_pod_info(_pod(rng, f"p{step}"))
            put(name, infos[name])
        elif op < 0.6 and name in infos and infos[name].pods:
            infos[name].remove_pod(rng.choice(infos[name].pods).key)
            put(name, infos[name])
        elif op < 0.65:
            infos.pop(name, None)
            put(name, None)
        elif op < 0.72:
            infos[name] = NodeInfo(_node(rng, name))  # (re)joins, maybe resized
            put(name, infos[name])
        if step % 25 == 0:
            fresh = CapacityIndex(lazy=True)
            for n, ni in sorted(infos.items()):
                fresh.update(n, ni)
        req = _requests(rng)
        if rng.random() < 0.5 and infos:
            # at a boundary: the least free amount of a resource, or one more
            r = rng.choice(["cpu", "memory", GPU])
            least = min(ni.free(r) for ni in infos.values())
            req[r] = max(1, least + rng.choice([0, 1]))
        want = eager.short_of(req)
        assert lazy.short_of(req) == want, (seed, step, req)
        assert fresh.short_of(req) == want, (seed, step, req)
        if rng.random() < 0.2:
            assert lazy.candidates(req) == eager.candidates(req), (seed, step, req)
        assert lazy.entries() == eager.entries()
        # both kept current node by node (most updates move a node's amounts in place) equal
        # an eager index built afresh from the nodes as they are
        rebuilt = CapacityIndex()
        for n, ni in infos.items():
            rebuilt.update(n, ni)
        assert eager.entries() == rebuilt.entries(), (seed, step)
        assert {r: list(lst) for r, lst in eager._by_resource.items() if lst} == {
            r: list(lst) for r, lst in rebuilt._by_resource.items() if lst
        }, (seed, step)
        for idx in (eager, lazy):
            assert idx._free == rebuilt._free, (seed, step)
            assert {r: c for r, c in idx._count.items() if c} == rebuilt._count, (seed, step)
            assert {r: v for r, v in idx.totals.items() if v} == {
                r: v for r, v in rebuilt.totals.items() if v
            }, (seed, step)
        assert {r: v for r, v in lazy.totals.items() if v} == {r: v for r, v in eager.totals.items() if v}
        assert len(lazy) == len(eager)
        assert lazy.free(name, "cpu") == eager.free(name, "cpu")


def test_a_cluster_with_room_builds_no_sorted_list() -> None:
    snap = Snapshot([NodeInfo(make_node(f"n{i}", cpu="32", memory="64Gi")) for i in range(20)])
    for i in range(40):
        snap.assume_pod(PodInfo(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "100m"})), f"n{i % 20}")
        assert snap.short_of({"cpu": 100, "memory": 2**20}) == (set(), None)
    assert snap.index._by_resource == {}
    # a request above the floor builds the list it needs, and the answers are exact
    snap.assume_pod(PodInfo(make_pod("big", uid="big", requests={"cpu": "30"})), "n3")
    assert snap.short_of({"cpu": 31_800}) == ({"n3"}, None)
    assert set(snap.index._by_resource) == {"cpu"}
    assert snap.short_of({"cpu": 31_850}) == (None, set())  # every node short: the fitting ones
