"""What the per-pod bookkeeping shortcuts share or skip gives what recomputing everything gives.

A PodInfo built ``like`` an earlier one of the same pod, the assumed pod's PodInfo, a bound
pod replacing its assumed self in the cache, the Score totals that leave out uniform plugins,
and the Event names the recorder makes.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from apiserver.client.events import event_name, event_stamp
from scheduler import schedule_one
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.testing import container, make_node, make_pod, node_info

_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def _facts(pi: PodInfo) -> dict[str, Any]:
    out = {slot: getattr(pi, slot) for slot in PodInfo.__slots__ if slot != "pod"}
    out["pod"] = pi.pod
    return out


def _pods() -> list[dict[str, Any]]:
    return [
        make_pod("plain"),
        make_pod("req", requests={"cpu": "250m", "memory": "1Gi"}, priority=7),
        make_pod("ports", host_ports=[8080], labels={"app": "a"}),
        make_pod("anti", affinity=_ANTI, labels={"app": "a"}, start_time="2026-01-01T00:00:00Z"),
        make_pod(
            "init",
            containers=[container(requests={"cpu": "1"})],
            init_containers=[container("i", requests={"cpu": "3"})],
            overhead={"cpu": "100m"},
        ),
    ]


def test_a_podinfo_like_an_earlier_one_equals_a_fresh_one() -> None:
    for pod in _pods():
        first = PodInfo(pod)
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = "n1"
        bound["metadata"]["resourceVersion"] = "9"
        bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        assumed = first.on_node("n1")
        assert _facts(PodInfo(bound, assumed)) == _facts(PodInfo(bound))
        shared = PodInfo(bound, assumed)
        assert shared.requests is assumed.requests and shared.shares_spec_facts(assumed)
        # a status update of the bound pod shares too; its startTime is read anew
        running = copy.deepcopy(bound)
        running["status"]["startTime"] = "2026-02-02T00:00:00Z"
        assert _facts(PodInfo(running, shared)) == _facts(PodInfo(running))


def test_a_changed_spec_or_namespace_is_parsed_again() -> None:
    pod = make_pod("p", requests={"cpu": "1"})
    first = PodInfo(pod)
    resized = copy.deepcopy(pod)
    resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    again = PodInfo(resized, first)
    assert again.requests == {"cpu": 2000} and not again.shares_spec_facts(first)
    other_ns = make_pod("p", "other", requests={"cpu": "1"}, affinity=_ANTI)
    moved = PodInfo(other_ns, PodInfo(make_pod("p", requests={"cpu": "1"}, affinity=_ANTI)))
    assert [t.namespaces for t in moved.required_anti_affinity_terms] == [frozenset({"other"})]


def test_the_assumed_podinfo_is_the_pod_on_its_node() -> None:
    for pod in _pods():
        pi = PodInfo(pod)
        assumed = pi.on_node("n7")
        expected = PodInfo({**pod, "spec": {**pod["spec"], "nodeName": "n7"}})
        assert _facts(assumed) == _facts(expected)
        assert "nodeName" not in pod["spec"]  # the queued pod is left alone


def _node_state(ni: NodeInfo) -> tuple[Any, ...]:
    return (
        [p.key for p in ni.pods],
        [p.pod for p in ni.pods],
        [p.key for p in ni.pods_with_affinity],
        [p.key for p in ni.pods_with_required_anti_affinity],
        dict(ni.requested),
        ni.non_zero_cpu,
        ni.non_zero_memory,
        len(ni.used_ports),
    )


def _bound(pod: dict[str, Any], node: str, rv: str) -> dict[str, Any]:
    out = copy.deepcopy(pod)
    out["spec"]["nodeName"] = node
    out["metadata"]["resourceVersion"] = rv
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return out


def test_confirming_assumed_pods_leaves_the_cache_as_adding_the_bound_pods_does() -> None:
    pods = _pods()
    fast, plain = Cache(), Cache()
    for c in (fast, plain):
        c.add_node(make_node("n1", cpu="16", memory="64Gi"))
        c.add_node(make_node("n2", cpu="16", memory="64Gi"))
    bound = []
    for i, pod in enumerate(pods):
        node = "n1" if i % 2 == 0 else "n2"
        fast.assume_pod(pod, node, PodInfo(pod))
        bound.append(_bound(pod, node, str(10 + i)))
    # confirmations arrive in another order than the assumptions
    for b in reversed(bound):
        gen = fast.nodes[b["spec"]["nodeName"]].generation
        fast.add_pod(b)
        assert fast.nodes[b["spec"]["nodeName"]].generation > gen
    for b in reversed(bound):
        plain.assume_pod(copy.deepcopy(b))
    for b in reversed(bound):
        plain.add_pod(b)
    assert fast.assumed_pod_keys() == set() == plain.assumed_pod_keys()
    for name in ("n1", "n2"):
        assert _node_state(fast.nodes[name]) == _node_state(plain.nodes[name])
    assert fast.index.totals == plain.index.totals
    # a status update replaces the pod in place; a changed request is accounted anew
    running = copy.deepcopy(bound[1])
    running["status"]["phase"] = "Running"
    fast.update_pod(bound[1], running)
    assert fast.nodes["n2"].pods[-1].pod is running
    resized = copy.deepcopy(running)
    resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    before = fast.nodes["n2"].requested["cpu"]
    fast.update_pod(running, resized)
    assert fast.nodes["n2"].requested["cpu"] == before - 250 + 2000
    assert fast.index.free("n2", "cpu") == 16000 - fast.nodes["n2"].requested["cpu"]


def test_a_bound_pod_landing_elsewhere_moves_off_its_assumed_node() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    pod = make_pod("p", requests={"cpu": "1"})
    cache.assume_pod(pod, "n1", PodInfo(pod))
    cache.add_pod(_bound(pod, "n2", "5"))
    assert not cache.nodes["n1"].pods and [p.key for p in cache.nodes["n2"].pods] == ["default/p"]
    assert cache.index.free("n1", "cpu") == 4000 and cache.index.free("n2", "cpu") == 3000


def _cluster(rng: random.Random) -> Cache:
    cache = Cache()
    prefer = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    for i in range(40):
        cache.add_node(
            make_node(f"n{i:02d}", cpu=rng.choice(["2", "4", "8"]), taints=[prefer] if i % 7 == 0 else None)
        )
        for j in range(rng.randrange(3)):
            cache.add_pod(make_pod(f"e{i}-{j}", node_name=f"n{i:02d}", requests={"cpu": "500m"}))
    return cache


def test_totals_without_uniform_plugins_rank_nodes_as_the_full_totals_do() -> None:
    rng = random.Random(11)
    for tainted in (True, False):
        cache = _cluster(rng)
        if not tainted:
            for i in range(0, 40, 7):
                cache.update_node(None, make_node(f"n{i:02d}", cpu="4"))
        snap = cache.snapshot()
        fw = Framework(default_profile(), Handle(rng=random.Random(1)), registry=default_registry())
        fw.handle.snapshot = snap
        nodes = snap.list()
        for pod in (make_pod("p", requests={"cpu": "1"}), make_pod("q")):
            pi = PodInfo(pod)
            full = schedule_one.prioritize_nodes(fw, CycleState(), pi, nodes)
            assert all(ns.total_score == sum(ns.scores.values()) for ns in full)
            totals = schedule_one.prioritize_totals(fw, CycleState(), pi, nodes)
            offsets = {ns.total_score - t for ns, t in zip(full, totals, strict=True)}
            assert len(offsets) == 1  # the same ranking, ties and all
            if not tainted:
                assert offsets == {3 * 100}  # TaintToleration's uniform 100, weight 3


def test_taint_toleration_uniform_score_is_its_normalized_column() -> None:
    plugin = TaintToleration()
    clean = [node_info(make_node("a")), node_info(make_node("b"))]
    pi = PodInfo(make_pod("p"))
    state = CycleState()
    plugin.pre_score(state, pi, clean)
    column = plugin.normalize_scores(state, pi, clean, plugin.score_nodes(state, pi, clean))
    assert column == [plugin.uniform_score(state, pi, clean)] * 2
    tainted = [*clean, node_info(make_node("c", taints=[{"key": "k", "effect": "NoSchedule"}]))]
    assert plugin.uniform_score(state, pi, tainted) is None


def test_event_names_are_client_gos_and_never_repeat() -> None:
    stamp = event_stamp(1_800_000_000.25)
    assert event_name("web-0", stamp) == f"web-0.{1_800_000_000_250_000_000:x}"
    again = event_stamp(1_800_000_000.25, stamp)  # a frozen clock
    assert again > stamp and event_name("web-0", again) != event_name("web-0", stamp)


def test_remembered_resource_facts_equal_computing_them() -> None:
    from fractions import Fraction

    from scheduler.nodeinfo import non_zero_requests, pod_requests_units, resource_facts

    pods = [
        *_pods(),
        make_pod("tiny", containers=[container("a", {"cpu": "0.5m"}), container("b", {"cpu": "0.5m"})]),
        make_pod("sidecar", init_containers=[container("s", {"memory": "1Gi"}, restart_policy="Always")]),
        make_pod("exact", requests={"cpu": Fraction(3, 2)}),  # type: ignore[dict-item]
    ]
    pods.append(copy.deepcopy(pods[1]))
    pods[-1]["metadata"]["name"] = "req-twin"
    for _ in range(2):  # the second round reads the memo
        for pod in pods:
            assert resource_facts(pod) == (pod_requests_units(pod), *non_zero_requests(pod)), pod
