"""The PodGroup cycle's shortcuts give what the plain computation gives.

A placement assumes many pods into the snapshot and undoes them all; the assumed PodInfo is a
copy, not a fresh parse; compiled selectors are shared. Each test compares the shortcut with
the computation it replaces.
"""

from __future__ import annotations

import random
from typing import Any

from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import NOTHING, PodInfo, compile_selector
from scheduler.podgroup_algorithm import _assumed
from scheduler.testing import make_pod
from tests.unit.scheduler.test_scheduler_fastpaths import _spread_cluster

RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


def _indexes(snap: Snapshot) -> dict[str, Any]:
    """Everything a snapshot indexes, in a comparable form."""
    from scheduler.plugins.pod_topology_spread import count_pods_matching

    web = compile_selector({"matchLabels": {"app": "web"}})
    spread = snap.spread_counts("t|web", ZONE, lambda ni: count_pods_matching(ni.pods, web, "default"))
    topo = snap.domains(ZONE)
    return {
        "pods": {n: sorted(p.key for p in ni.pods) for n, ni in snap.node_info_map.items()},
        "requested": {
            n: {r: v for r, v in ni.requested.items() if v} for n, ni in snap.node_info_map.items()
        },
        "free": snap.index.entries(),
        "totals": dict(snap.index.totals),
        "domains": {
            v: (
                list(d.names),
                {r: list(lst) for r, lst in d.index._by_resource.items()},
                dict(d.index.totals),
            )
            for v, d in topo.domains.items()
        },
        "spread": (dict(spread.by_value), dict(spread.nodes_counted())),
        "labels": snap._pod_labels.as_sets() if snap._pod_labels else None,
        "affinity": (sorted(snap._with_affinity), sorted(snap._with_anti_affinity)),
    }


def test_restore_after_many_assumes_and_forgets_leaves_the_indexes_as_they_were() -> None:
    """Undoing a placement (many pods per node, forgets among them) rebuilds every index exactly."""
    rng = random.Random(3)
    cache: Cache = _spread_cluster(rng)
    snap = cache.snapshot()
    snap.nodes_with_pod_labels("default", [("app", "web")])  # build the pod label index
    before = _indexes(snap)
    mark = snap.backup()
    names = snap.node_names
    for i in range(200):
        target = names[rng.randrange(10)]  # few nodes: each gets many pods
        pod = make_pod(f"g{i}", node_name=target, labels={"app": "web"}, requests={"cpu": "100m"})
        snap.assume_pod(PodInfo(pod), target)
        if i % 17 == 0:
            victim = snap.node_info_map[names[rng.randrange(60)]]
            if victim.pods:
                snap.forget_pod(victim.pods[0], victim.name)
    assert _indexes(snap) != before
    snap.restore(mark)
    assert _indexes(snap) == before
    # and the same as a snapshot taken afresh from the (untouched) cache
    fresh = cache.snapshot()
    fresh.nodes_with_pod_labels("default", [("app", "web")])
    assert _indexes(fresh)["free"] == before["free"]
    assert _indexes(fresh)["spread"] == before["spread"]


def _web_spread(snap: Snapshot) -> Any:
    from scheduler.plugins.pod_topology_spread import count_pods_matching

    web = compile_selector({"matchLabels": {"app": "web"}})
    got = snap.spread_counts("t|web", ZONE, lambda ni: count_pods_matching(ni.pods, web, "default"))
    return dict(got.by_value), dict(got.nodes_counted())


#: each index reader of a snapshot, as a comparable value
_READERS = {
    "spread": _web_spread,
    "labels": lambda snap: snap.nodes_with_pod_labels("default", [("app", "web")]),
    "domains": lambda snap: {v: dict(d.index.totals) for v, d in snap.domains(ZONE).domains.items()},
    "index": lambda snap: dict(snap.index.totals),
    "short_of": lambda snap: snap.short_of({"cpu": 1000}),
    "candidates": lambda snap: snap.candidate_nodes({"cpu": 2000}),
}


def test_deferred_index_catches_up_on_each_read_and_on_restore_like_an_immediate_one() -> None:
    """``assume_pod(..., defer_index=True)``: whichever index is read first afterwards
    (capacity, domains, spreading counts, pod labels, capacity hints), and every rollback (to a
    mark taken before or among the deferred assumes), sees what the immediate reindex gives."""
    for name, read in _READERS.items():
        rng = random.Random(5)
        cache: Cache = _spread_cluster(rng)
        now, later = cache.snapshot(), cache.snapshot()
        for snap in (now, later):
            _web_spread(snap)
            snap.nodes_with_pod_labels("default", [("app", "web")])
            snap.domains(ZONE)
        before = _indexes(now)
        names = now.node_names
        pods = []
        for i in range(120):
            target = names[rng.randrange(12)]
            pods.append((PodInfo(make_pod(f"g{i}", node_name=target, labels={"app": "web"})), target))
        first = (now.backup(), later.backup())
        for pod, target in pods[:60]:
            now.assume_pod(pod, target)
            later.assume_pod(pod, target, defer_index=True)
        middle = (now.backup(), later.backup())
        for pod, target in pods[60:]:
            now.assume_pod(pod, target)
            later.assume_pod(pod, target, defer_index=True)
        assert read(later) == read(now), name
        assert _indexes(later) == _indexes(now) != before
        inner = (0, 0)
        for k, (pod, target) in enumerate(pods[:30]):  # deferred again, a mark among them
            if k == 15:
                inner = (now.backup(), later.backup())
            again = PodInfo({**pod.pod, "metadata": {**pod.pod["metadata"], "name": "x" + pod.name}})
            later.assume_pod(again, target, defer_index=True)
            now.assume_pod(again, target)
        now.restore(inner[0])
        later.restore(inner[1])  # the first 15 stay assumed: their nodes' entries must catch up
        assert read(later) == read(now), name
        now.restore(middle[0])
        later.restore(middle[1])
        assert read(later) == read(now), name
        now.restore(first[0])
        later.restore(first[1])
        assert _indexes(later) == _indexes(now) == before


def test_assumed_pod_info_equals_a_fresh_parse_of_the_assumed_pod() -> None:
    pod = make_pod(
        "web-0",
        requests={"cpu": "250m", "memory": "1Gi"},
        labels={"app": "web"},
        host_ports=[8080],
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        priority=7,
        start_time="2026-01-01T00:00:00Z",
    )
    pi = PodInfo(pod)
    copy = _assumed(pi, "node-3")
    fresh = PodInfo({**pod, "spec": {**pod["spec"], "nodeName": "node-3"}})
    assert copy.pod == fresh.pod
    assert copy.pod["spec"]["nodeName"] == "node-3"
    assert "nodeName" not in pod["spec"]  # the queued pod is untouched
    for slot in PodInfo.__slots__:
        if slot in ("pod", "required_anti_affinity_terms"):
            continue
        assert getattr(copy, slot) == getattr(fresh, slot), slot
    assert copy.node_name == "node-3" and pi.node_name == ""
    assert len(copy.required_anti_affinity_terms) == len(fresh.required_anti_affinity_terms) == 1
    assert copy.has_required_anti_affinity and copy.host_ports == fresh.host_ports


def test_compiled_selectors_are_shared_and_match_alike() -> None:
    labels = [{"app": "web"}, {"app": "db"}, {"app": "web", "tier": "a"}, {}]
    for sel in (
        {"matchLabels": {"app": "web"}},
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}],
        },
        {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
        {},
    ):
        first = compile_selector(sel)
        assert compile_selector({**sel}) is first
        from apiserver.selectors import label_selector_from_dict

        plain = label_selector_from_dict(sel)
        assert [first.matches(ls) for ls in labels] == [plain.matches(ls) for ls in labels]
    # different selectors stay apart; malformed ones still match nothing
    assert compile_selector({"matchLabels": {"app": "db"}}) is not compile_selector(
        {"matchLabels": {"app": "web"}}
    )
    assert compile_selector({"matchLabels": {"a": 1}}) is NOTHING
    assert compile_selector({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}) is NOTHING
    assert compile_selector(None) is NOTHING


def test_a_scoped_placement_defers_the_cluster_index_and_catches_up_after_the_rollback() -> None:
    """Assumes under a topology scope answer from the domain's index; the cluster-wide index is
    current again once the scope is cleared, with or without a rollback."""
    from scheduler.testing import make_node

    cache = Cache()
    for i in range(12):
        cache.add_node(make_node(f"n{i:02d}", cpu="1", labels={RACK: f"r{i % 3}"}))
    snap = cache.snapshot()
    domain = snap.domains(RACK).domains["r0"]
    cpu = {"cpu": 600}
    before = _indexes(snap)
    mark = snap.backup()
    snap.scope = domain
    for name in domain.node_names():
        snap.assume_pod(PodInfo(make_pod(f"p-{name}", node_name=name, requests={"cpu": "600m"})), name)
    assert snap.candidate_nodes(cpu) == set()  # the domain's own index saw every assume
    snap.scope = None
    assert snap.candidate_nodes(cpu) == {f"n{i:02d}" for i in range(12) if i % 3}  # caught up
    snap.restore(mark)
    assert _indexes(snap) == before
    # rolled back while still scoped (the algorithm's order): the same
    snap.scope = domain
    snap.assume_pod(PodInfo(make_pod("q", node_name="n00", requests={"cpu": "600m"})), "n00")
    snap.restore(mark)
    snap.scope = None
    assert _indexes(snap) == before
