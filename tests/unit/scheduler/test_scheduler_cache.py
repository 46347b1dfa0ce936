"""The scheduler cache: assumed pods, incremental snapshots, and the capacity index."""

from __future__ import annotations

import random

import pytest

from apiserver.api.types import Obj
from scheduler import schedule_one
from scheduler.cache import Cache, CacheError, CapacityIndex, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import FitError
from scheduler.framework import CycleState, Framework
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import FakeClock, make_node, make_pod


def cpu_used(cache: Cache, node: str) -> int:
    return cache.nodes[node].requested.get("cpu", 0)


def test_assume_then_informer_add_confirms() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", requests={"cpu": "1"})
    cache.assume_pod(pod, "n1")
    assert cache.is_assumed_pod(pod) and cpu_used(cache, "n1") == 1000
    bound = make_pod("p", requests={"cpu": "1"}, node_name="n1")
    cache.add_pod(bound)
    assert not cache.is_assumed_pod(pod) and cpu_used(cache, "n1") == 1000
    assert cache.pod_count() == 1


def test_assumed_pod_that_landed_elsewhere_moves() -> None:
    cache = Cache()
    for n in ("n1", "n2"):
        cache.add_node(make_node(n))
    cache.assume_pod(make_pod("p", requests={"cpu": "1"}), "n1")
    cache.add_pod(make_pod("p", requests={"cpu": "1"}, node_name="n2"))
    assert (cpu_used(cache, "n1"), cpu_used(cache, "n2")) == (0, 1000)


def test_forget_undoes_assume() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", requests={"cpu": "1"})
    cache.assume_pod(pod, "n1")
    cache.forget_pod(pod)
    assert cpu_used(cache, "n1") == 0 and cache.pod_count() == 0


def test_a_confirmed_pod_cannot_be_forgotten() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.assume_pod(make_pod("q"), "n1")
    cache.add_pod(make_pod("q", node_name="n1"))
    with pytest.raises(CacheError):
        cache.forget_pod(make_pod("q", node_name="n1"))


def test_assuming_a_known_pod_is_an_error() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_pod(make_pod("p", node_name="n1"))
    with pytest.raises(CacheError):
        cache.assume_pod(make_pod("p"), "n1")


@pytest.mark.parametrize(
    ("name", "ttl", "finish", "advance", "expired"),
    [
        ("no ttl never expires (kube default)", 0.0, True, 3600, []),
        ("binding not finished yet", 30.0, False, 60, []),
        ("ttl not reached", 30.0, True, 29, []),
        ("ttl passed", 30.0, True, 31, ["default/p"]),
    ],
)
def test_assumed_pod_expiry(name: str, ttl: float, finish: bool, advance: float, expired: list[str]) -> None:
    clock = FakeClock()
    cache = Cache(clock, assumed_pod_ttl=ttl)
    cache.add_node(make_node("n1"))
    pod = make_pod("p", requests={"cpu": "1"})
    cache.assume_pod(pod, "n1")
    if finish:
        cache.finish_binding(pod)
    clock.step(advance)
    assert cache.cleanup_assumed_pods() == expired
    assert cpu_used(cache, "n1") == (0 if expired else 1000)


def test_expiry_ends_with_the_assumption() -> None:
    """A deadline belongs to one assumption: a confirmed pod, and a pod forgotten then assumed
    again whose new binding has not finished, never expire; a re-assumed pod expires from its
    own finished binding."""
    clock = FakeClock()
    cache = Cache(clock, assumed_pod_ttl=30.0)
    cache.add_node(make_node("n1"))
    confirmed, again = make_pod("c", requests={"cpu": "1"}), make_pod("a", requests={"cpu": "1"})
    for pod in (confirmed, again):
        cache.assume_pod(pod, "n1")
        cache.finish_binding(pod)
    cache.add_pod(make_pod("c", node_name="n1", requests={"cpu": "1"}))
    cache.forget_pod(again)
    cache.assume_pod(again, "n1")
    clock.step(31)
    assert cache.cleanup_assumed_pods() == []
    assert cache.is_assumed_pod(again) and not cache.is_assumed_pod(confirmed)
    cache.finish_binding(again)
    clock.step(31)
    assert cache.cleanup_assumed_pods() == ["default/a"]
    assert cpu_used(cache, "n1") == 1000 and cache.pod_count() == 1


def test_pod_update_and_delete() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    old = make_pod("p", node_name="n1", requests={"cpu": "1"})
    cache.add_pod(old)
    cache.update_pod(old, make_pod("p", node_name="n1", requests={"cpu": "2"}))
    assert cpu_used(cache, "n1") == 2000
    cache.remove_pod(old)
    assert cpu_used(cache, "n1") == 0 and cache.pod_count() == 0


def test_node_removed_with_pods_lingers_outside_snapshots() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    pod = make_pod("p", node_name="n1")
    cache.add_pod(pod)
    snap = cache.snapshot()
    cache.remove_node(make_node("n1"))
    cache.update_snapshot(snap)
    assert snap.node_names == ["n2"] and cache.node_count() == 1
    assert "n1" in cache.nodes  # still holds its pod
    cache.remove_pod(pod)
    assert "n1" not in cache.nodes
    cache.add_node(make_node("n1"))
    cache.update_snapshot(snap)
    assert list(snap.node_names) == ["n1", "n2"]


def test_pod_before_its_node() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p", node_name="late", requests={"cpu": "1"}))
    assert cache.snapshot().num_nodes() == 0
    cache.add_node(make_node("late"))
    snap = cache.snapshot()
    assert snap.get("late").requested["cpu"] == 1000  # type: ignore[union-attr]


def test_snapshot_copies_only_changed_nodes() -> None:
    cache = Cache()
    for i in range(5):
        cache.add_node(make_node(f"n{i}"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    before = {n: snap.get(n) for n in snap.node_names}
    cache.add_pod(make_pod("p", node_name="n3", requests={"cpu": "1"}))
    cache.update_snapshot(snap)
    after = {n: snap.get(n) for n in snap.node_names}
    assert [n for n in before if before[n] is not after[n]] == ["n3"]
    assert after["n3"].requested["cpu"] == 1000  # type: ignore[union-attr]
    assert after["n3"] is not cache.nodes["n3"]  # a copy, not the cache's own object
    cache.update_snapshot(snap)
    assert all(snap.get(n) is after[n] for n in after)  # nothing changed, nothing copied


def test_snapshot_local_assume_is_undone_by_the_next_update() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", cpu="2"))
    snap = cache.snapshot()
    snap.assume_pod(PodInfo(make_pod("gang-0", node_name="n1", requests={"cpu": "2"})), "n1")
    assert snap.get("n1").requested["cpu"] == 2000  # type: ignore[union-attr]
    assert snap.candidate_nodes({"cpu": 1}) == set()
    assert cache.nodes["n1"].requested.get("cpu", 0) == 0
    cache.update_snapshot(snap)
    assert snap.get("n1").requested.get("cpu", 0) == 0  # type: ignore[union-attr]
    assert snap.candidate_nodes({"cpu": 1}) == {"n1"}


def test_pods_with_affinity_lists() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}
            ]
        }
    }
    cache.add_pod(make_pod("p", node_name="n2", affinity=anti))
    snap = cache.snapshot()
    assert [n.name for n in snap.have_pods_with_affinity_list()] == ["n2"]
    assert [n.name for n in snap.have_pods_with_required_anti_affinity_list()] == ["n2"]


# --- capacity index ------------------------------------------------------------------------------


def brute_force(nodes: dict[str, NodeInfo], requests: dict[str, int]) -> set[str]:
    out = set()
    for name, ni in nodes.items():
        if ni.node is None or ni.free("pods") < 1:
            continue
        if all(ni.free(r) >= v for r, v in requests.items() if v > 0):
            out.add(name)
    return out


def test_candidate_nodes_match_a_brute_force_scan() -> None:
    rng = random.Random(7)
    cache = Cache()
    for i in range(200):
        extra = {"nvidia.com/gpu": str(rng.choice([4, 8]))} if i % 5 == 0 else None
        cache.add_node(
            make_node(
                f"n{i:03d}",
                cpu=str(rng.randint(2, 16)),
                memory=f"{rng.randint(4, 64)}Gi",
                pods="8",
                extra=extra,
            )
        )
    for j in range(600):
        node = f"n{rng.randrange(200):03d}"
        req = {"cpu": f"{rng.randint(1, 4) * 250}m", "memory": f"{rng.randint(1, 8)}Gi"}
        if rng.random() < 0.1:
            req["nvidia.com/gpu"] = "1"
        cache.add_pod(make_pod(f"p{j}", node_name=node, requests=req))
    snap = cache.snapshot()
    queries = [
        {},
        {"cpu": 2000},
        {"cpu": 500, "memory": 8 * 1024**3},
        {"nvidia.com/gpu": 2},
        {"nvidia.com/gpu": 8, "cpu": 1000},
        {"example.com/none": 1},
    ]
    for q in queries:
        want = brute_force(cache.nodes, q)
        assert cache.candidate_nodes(q) == want, q
        assert snap.candidate_nodes(q) == want, q


def test_capacity_index_handles_overcommitted_nodes() -> None:
    idx = CapacityIndex()
    ni = NodeInfo(make_node("n", cpu="1"), [PodInfo(make_pod("p", node_name="n", requests={"cpu": "2"}))])
    idx.update("n", ni)
    assert idx.free("n", "cpu") == -1000
    assert idx.candidates({"cpu": 1}) == set()
    assert idx.candidates({}) == {"n"}  # zero-request pods only need a pod slot
    idx.update("n", None)
    assert idx.candidates({}) == set()


# --- the index narrows Filter without changing any result ----------------------------------------


def big_cluster() -> tuple[Cache, list[Obj]]:
    rng = random.Random(3)
    cache = Cache()
    for i in range(400):
        labels = {"topology.kubernetes.io/zone": f"z{i % 4}"}
        extra = {"nvidia.com/gpu": "8"} if i % 20 == 0 else None
        cache.add_node(make_node(f"n{i:03d}", cpu="8", labels=labels, extra=extra))
    for j in range(1000):
        cache.add_pod(make_pod(f"p{j}", node_name=f"n{rng.randrange(400):03d}", requests={"cpu": "1"}))
    pods = [
        make_pod("gpu", requests={"nvidia.com/gpu": "4"}),
        make_pod("gpu-too-big", requests={"nvidia.com/gpu": "16"}),
        make_pod("cpu", requests={"cpu": "7"}),
        make_pod("zone-pinned", requests={"cpu": "7"}, node_selector={"topology.kubernetes.io/zone": "z1"}),
    ]
    return cache, pods


@pytest.mark.parametrize("pod_index", range(4))
def test_candidate_hint_gives_the_same_answer_as_a_full_scan(pod_index: int) -> None:
    cache, pods = big_cluster()
    pod = PodInfo(pods[pod_index])

    def run(use_hint: bool) -> tuple[list[str], str]:
        snap = cache.snapshot()
        fw = Framework(default_profile(), registry=default_registry())
        if not use_hint:
            fw._candidate_hint = lambda *a: None  # type: ignore[method-assign]
        state = CycleState()
        fw.handle.snapshot = snap
        try:
            feasible, diagnosis = schedule_one.find_nodes_that_fit(fw, state, pod, snap)
        except FitError as e:  # pragma: no cover - find_nodes_that_fit does not raise FitError
            return [], str(e)
        msg = str(FitError(pod.key, snap.num_nodes(), diagnosis)) if not feasible else ""
        return sorted(n.name for n in feasible), msg

    assert run(True) == run(False)
