"""The PodGroup cycle's parts, one at a time: group state in the cache, the snapshot journal and
topology domains, the queue's group operations, the GangScheduling / TopologyPlacement /
PodGroupPodsCount plugins, the algorithm on a snapshot, validation and the condition writer."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from featuregates import FeatureGate
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.interfaces import CycleState, Handle, PodGroupInfo
from scheduler.nodeinfo import CPU, PodInfo
from scheduler.plugins.gang_scheduling import GangScheduling
from scheduler.plugins.topology_placement import TopologyPlacement
from scheduler.podgroup_algorithm import PodGroupAlgorithm, num_feasible_placements_to_find
from scheduler.podgroup_status import desired_conditions
from scheduler.podgroups import ASSIGNED, PodGroupState, PodGroupStates
from scheduler.queue import ACTIVE, GATED, SchedulingQueue
from scheduler.schedule_one_podgroup import gang_unschedulable_message, validate_group
from scheduler.status import Code
from scheduler.testing import FakeClock, make_node, make_pod

RACK = "topology.kubernetes.io/rack"


def pg(name: str = "g", min_count: int | None = 2, topology: str = "", priority: int | None = None) -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "namespace": "default", "generation": 1}, "spec": spec}


def member(name: str, group: str = "g", **kw: Any) -> Obj:
    p = make_pod(name, **kw)
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


def cache_with(nodes: list[Obj], groups: list[Obj] = ()) -> Cache:  # type: ignore[assignment]
    c = Cache()
    for n in nodes:
        c.add_node(n)
    for g in groups:
        c.add_pod_group(g)
    return c


def framework_for(cache: Cache) -> Framework:
    handle = Handle(
        gates=FeatureGate(), get_pod_group=cache.get_pod_group, pod_group_state=cache.pod_group_state
    )
    return Framework(default_profile(), handle, registry=default_registry())


def group_info(cache: Cache, pods: list[Obj], name: str = "g") -> PodGroupInfo:
    state = cache.pod_group_state("default", name) or PodGroupState(f"default/{name}")
    return PodGroupInfo(
        "default", name, cache.get_pod_group("default", name), [PodInfo(p) for p in pods], state
    )


# --- group state -----------------------------------------------------------------------------


def test_group_state_follows_a_pod_from_pending_to_assumed_to_bound_and_back() -> None:
    c = cache_with([make_node("n1")], [pg()])
    p = member("a")
    c.add_unscheduled_pod(p)
    st = c.pod_group_state("default", "g")
    assert st is not None and (st.all_count(), st.scheduled_count()) == (1, 0)
    c.assume_pod(p, "n1")
    assert st.scheduled_count() == 1 and st.scheduled_nodes() == {"n1"}
    c.forget_pod(p)
    assert (st.all_count(), st.scheduled_count()) == (1, 0)
    c.add_pod({**p, "spec": {**p["spec"], "nodeName": "n1"}})
    assert c.pod_group_state("default", "g") is st and st.assigned == {"default/a": "n1"}
    c.remove_pod({**p, "spec": {**p["spec"], "nodeName": "n1"}})
    assert c.pod_group_state("default", "g") is None


def test_pods_without_a_group_are_not_tracked() -> None:
    states = PodGroupStates()
    states.set(make_pod("plain"), ASSIGNED, "n1")
    assert len(states) == 0


# --- snapshot journal and domains ------------------------------------------------------------


def test_restore_undoes_assumed_pods_and_their_index_entries() -> None:
    c = cache_with(
        [make_node("n1", cpu="4", labels={RACK: "r0"}), make_node("n2", cpu="4", labels={RACK: "r1"})]
    )
    snap = c.snapshot()
    rack = snap.domains(RACK)
    assert rack.values() == ["r0", "r1"] and rack.domains["r0"].total_free(CPU) == 4000
    mark = snap.backup()
    snap.assume_pod(PodInfo(make_pod("x", requests={"cpu": "3"}, node_name="n1")), "n1")
    assert snap.get("n1").free(CPU) == 1000
    assert rack.domains["r0"].total_free(CPU) == 1000 and rack.domains["r0"].max_free(CPU) == 1000
    assert snap.candidate_nodes({CPU: 2000}) == {"n2"}
    snap.restore(mark)
    assert snap.get("n1").free(CPU) == 4000
    # the rollback reindexes lazily: the domains read through the snapshot are current
    assert snap.domains(RACK).domains["r0"].total_free(CPU) == 4000
    assert snap.candidate_nodes({CPU: 2000}) == {"n1", "n2"}


def test_a_relabelled_node_moves_between_domains_and_unlabelled_nodes_are_in_none() -> None:
    c = cache_with([make_node("n1", labels={RACK: "r0"}), make_node("n2")])
    snap = c.snapshot()
    rack = snap.domains(RACK)
    assert rack.values() == ["r0"] and rack.value_of("n2") is None
    c.update_node(None, make_node("n1", labels={RACK: "r9"}))
    c.update_snapshot(snap)
    assert rack.values() == ["r9"] and rack.domains["r9"].node_names() == ["n1"]


# --- queue -----------------------------------------------------------------------------------


def new_queue(cache: Cache) -> SchedulingQueue:
    fw = framework_for(cache)
    return SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw})


def test_gang_members_are_held_until_min_count_then_popped_together() -> None:
    c = cache_with([make_node("n1")], [pg(min_count=3)])
    q = new_queue(c)
    pods = [member(f"m{i}") for i in range(3)]
    for p in pods[:2]:
        c.add_unscheduled_pod(p)
        q.add(p)
        assert q.where(p) == GATED
    assert q.get(pods[0]["metadata"]["uid"]).gating_status.message() == (
        "waiting for minCount pods from a gang to appear in scheduling queue"
    )
    c.add_unscheduled_pod(pods[2])
    q.add(pods[2])
    assert [q.where(p) for p in pods] == [ACTIVE] * 3
    first = q.pop_nowait()
    rest = q.pop_group_members("default/g", exclude=first.uid)
    assert sorted([first.key] + [r.key for r in rest]) == ["default/m0", "default/m1", "default/m2"]
    assert q.pop_nowait() is None
    assert q.pending_pod_groups() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_a_pod_group_appearing_lets_its_waiting_members_in() -> None:
    c = cache_with([make_node("n1")])
    q = new_queue(c)
    p = member("m0")
    c.add_unscheduled_pod(p)
    q.add(p)
    assert q.get(p["metadata"]["uid"]).gating_status.message() == (
        'waiting for pod\'s pod group "g" to appear in scheduling queue'
    )
    assert q.pending_pod_groups()["gated"] == 1
    c.add_pod_group(pg(min_count=1))
    assert q.pod_group_changed("default/g") == 1
    assert q.where(p) == ACTIVE


# --- plugins ---------------------------------------------------------------------------------


def test_placement_feasible_messages_are_upstreams() -> None:
    c = cache_with([make_node("n1")], [pg(min_count=5)])
    plugin = GangScheduling({}, framework_for(c).handle)
    group = group_info(c, [member("a")])
    s = plugin.placement_feasible(CycleState(), group, 4, 0)
    assert (
        s.code == Code.UNSCHEDULABLE
        and s.message() == "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"
    )
    s = plugin.placement_feasible(CycleState(), group, 3, 2)
    assert (
        s.code == Code.WAIT and s.message() == "minCount (5) is not yet satisfied: 3 scheduled, 2 remaining"
    )
    assert plugin.placement_feasible(CycleState(), group, 5, 0) is None


def test_gang_scheduling_is_inert_without_generic_workload() -> None:
    c = cache_with([make_node("n1")])
    handle = Handle(
        gates=FeatureGate().with_overrides({"GenericWorkload": False}), get_pod_group=c.get_pod_group
    )
    assert GangScheduling({}, handle).pre_enqueue(PodInfo(member("a"))) is None


def test_topology_placements_one_per_value_pinned_by_placed_members() -> None:
    nodes = [make_node(f"n{i}", labels={RACK: f"r{i % 2}"}) for i in range(4)] + [make_node("loose")]
    c = cache_with(nodes, [pg(topology=RACK)])
    snap = c.snapshot()
    plugin = TopologyPlacement({}, Handle(gates=FeatureGate()))
    placements, s = plugin.generate_placements(CycleState(), group_info(c, [member("a")]), snap)
    assert s is None
    assert [(p.name, p.node_names) for p in placements] == [("r0", ["n0", "n2"]), ("r1", ["n1", "n3"])]
    c.add_pod({**member("placed"), "spec": {**member("placed")["spec"], "nodeName": "n3"}})
    placements, _ = plugin.generate_placements(CycleState(), group_info(c, [member("a")]), snap)
    assert [p.name for p in placements] == ["r1"]


def test_topology_without_labelled_nodes_says_so() -> None:
    c = cache_with([make_node("n1")], [pg(topology="example.com/block")])
    plugin = TopologyPlacement({}, Handle(gates=FeatureGate()))
    placements, s = plugin.generate_placements(CycleState(), group_info(c, [member("a")]), c.snapshot())
    assert placements is None and s.message() == "no nodes found with topology label 'example.com/block'"


# --- the algorithm ---------------------------------------------------------------------------


def test_algorithm_places_the_gang_or_nothing_and_leaves_the_snapshot_untouched() -> None:
    c = cache_with([make_node("n1", cpu="2"), make_node("n2", cpu="2")], [pg(min_count=3)])
    snap = c.snapshot()
    fw = framework_for(c)
    pods = [member(f"m{i}", requests={"cpu": "1"}) for i in range(3)]
    result = PodGroupAlgorithm(fw).run(CycleState(), group_info(c, pods), snap)
    assert result.success and len(result.placement.fitting()) == 3
    assert snap.get("n1").free(CPU) == 2000 and snap.get("n2").free(CPU) == 2000
    big = [member(f"b{i}", requests={"cpu": "1500m"}) for i in range(3)]
    result = PodGroupAlgorithm(fw).run(CycleState(), group_info(c, big), snap)
    assert not result.success
    assert result.status.message() == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
    assert gang_unschedulable_message(group_info(c, big), result) == (
        "the cluster fits 2 of 3; the other 1: Insufficient cpu"
    )
    assert snap.get("n1").free(CPU) == 2000


def test_algorithm_reports_placements_when_no_rack_fits() -> None:
    nodes = [make_node(f"n{i}", cpu="2", labels={RACK: f"r{i}"}) for i in range(2)]
    c = cache_with(nodes, [pg(min_count=2, topology=RACK)])
    pods = [member(f"m{i}", requests={"cpu": "2"}) for i in range(2)]
    result = PodGroupAlgorithm(framework_for(c)).run(CycleState(), group_info(c, pods), c.snapshot())
    assert result.status.message() == (
        "0/2 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    )


@pytest.mark.parametrize(
    ("placements", "nodes", "want"), [(4, 22, 4), (50, 5000, 5), (50, 99, 50), (100, 100000, 5)]
)
def test_placements_to_find_scale_with_the_cluster(placements: int, nodes: int, want: int) -> None:
    assert num_feasible_placements_to_find(placements, nodes) == want


# --- validation and status -------------------------------------------------------------------


def test_validation_names_the_first_mismatch_as_upstream() -> None:
    c = cache_with([make_node("n1")], [pg(priority=10)])
    group = group_info(c, [member("a", priority=10), member("b", priority=5)])
    assert validate_group(group, []) == (
        "all pods in a pod group hierarchy should have the same priority as the root pod group's priority, "
        'got 5 ("b") and 10 ("default/g")'
    )
    group = group_info(c, [member("a", priority=10), member("b", priority=10, scheduler_name="other")])
    assert validate_group(group, []) == (
        "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
        '"other" ("b") and "default-scheduler" ("a")'
    )
    group = group_info(c, [member("a", priority=10), member("b", priority=10, preemption_policy="Never")])
    assert validate_group(group, []) == (
        'all pods in a pod group hierarchy should have the same preemption policy, got Never ("b") and '
        'PreemptLowerPriority ("a")'
    )


def test_condition_is_terminal_once_true_and_not_rewritten_when_unchanged() -> None:
    group = pg()
    conds = desired_conditions(group, "False", "Unschedulable", "m", "2026-01-01T00:00:00Z")
    assert conds == [
        {
            "type": "PodGroupInitiallyScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "m",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    group["status"] = {"conditions": conds}
    assert desired_conditions(group, "False", "Unschedulable", "m", "2026-01-01T00:01:00Z") is None
    changed = desired_conditions(group, "False", "Unschedulable", "m2", "2026-01-01T00:01:00Z")
    assert changed[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    group["status"] = {
        "conditions": desired_conditions(group, "True", "Scheduled", "", "2026-01-01T00:02:00Z")
    }
    assert group["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:02:00Z"
    assert desired_conditions(group, "False", "Unschedulable", "m", "2026-01-01T00:03:00Z") is None
