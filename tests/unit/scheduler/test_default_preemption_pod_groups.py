"""DefaultPreemption (single-pod preemptor) respects a victim's PodGroup (1.37, GenericWorkload):
a member counts at its group's priority, a ``disruptionMode: all`` group is reprieved or evicted
entirely (members on other nodes included, DisruptionTarget on the PodGroup too), and without
GenericWorkload every pod is a victim alone at its own priority."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS
from featuregates import FeatureGate
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import NodeToStatus
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.default_preemption import DefaultPreemption
from scheduler.podgroups import PodGroupState
from scheduler.status import Code, Status
from scheduler.testing import FakeClock, RecordingClient, make_node, make_pod, snapshot_of

ON = FeatureGate()
OFF = FeatureGate.from_string("GenericWorkload=false")


def member(name: str, group: str, node: str, cpu: str = "1", prio: int = 0) -> Obj:
    p = make_pod(
        name, node_name=node, priority=prio, requests={"cpu": cpu}, start_time="2026-01-01T00:00:00Z"
    )
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


def plain(name: str, node: str, cpu: str = "1", prio: int = 1) -> Obj:
    return make_pod(
        name, node_name=node, priority=prio, requests={"cpu": cpu}, start_time="2026-01-01T00:00:00Z"
    )


def group(name: str, mode: str, priority: int = 1, generation: int = 1) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "generation": generation},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "disruptionMode": {mode: {}},
            "priority": priority,
        },
    }


def setup(
    nodes: list[Obj], pods: list[Obj], groups: list[Obj], gates: FeatureGate = ON, **kw: Any
) -> tuple[Framework, DefaultPreemption]:
    snap = snapshot_of(nodes, pods)
    by_name = {g["metadata"]["name"]: g for g in groups}
    states: dict[str, PodGroupState] = {}
    for p in pods:
        name = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
        if name:
            st = states.setdefault(name, PodGroupState(f"default/{name}"))
            st.assigned[f"default/{p['metadata']['name']}"] = p["spec"]["nodeName"]
    handle = Handle(
        snapshot=snap,
        clock=FakeClock(),
        gates=gates,
        get_pod_group=lambda ns, n: by_name.get(n),
        pod_group_state=lambda ns, n: states.get(n),
        **kw,
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    plugin = fw.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return fw, plugin


def victims_on(fw: Framework, plugin: DefaultPreemption, pod: Obj, node: str) -> list[str]:
    state = CycleState()
    pi = PodInfo(pod)
    snap = fw.handle.snapshot
    assert snap is not None
    fw.run_pre_filter_plugins(state, pi, snap.list())
    ni = snap.get(node)
    assert ni is not None
    victims, _, status = plugin.select_victims_on_node(state, pi, ni.clone(), [])
    assert status is None or status.is_success(), status
    return sorted(v.name for v in victims)


NODES = [make_node("n1", cpu="2"), make_node("n2", cpu="2")]


def test_an_all_group_is_evicted_entirely_members_on_other_nodes_included() -> None:
    pods = [member("g-0", "g", "n1", cpu="2"), member("g-1", "g", "n2", cpu="2")]
    fw, plugin = setup(NODES, pods, [group("g", "all")])
    assert victims_on(fw, plugin, make_pod("p", priority=10, requests={"cpu": "1"}), "n1") == ["g-0", "g-1"]


def test_a_single_group_loses_only_the_pod_in_the_way() -> None:
    pods = [member("g-0", "g", "n1", cpu="2"), member("g-1", "g", "n2", cpu="2")]
    fw, plugin = setup(NODES, pods, [group("g", "single")])
    assert victims_on(fw, plugin, make_pod("p", priority=10, requests={"cpu": "1"}), "n1") == ["g-0"]


def test_an_all_group_is_reprieved_entirely_when_a_lone_pod_is_enough() -> None:
    pods = [member("g-0", "g", "n1"), member("g-1", "g", "n2"), plain("x", "n1")]
    fw, plugin = setup(NODES, pods, [group("g", "all")])
    # the group outranks the lone pod at equal priority: the lone pod goes, the group stays
    assert victims_on(fw, plugin, make_pod("p", priority=10, requests={"cpu": "1"}), "n1") == ["x"]


def test_members_count_at_their_group_priority() -> None:
    pods = [member("g-0", "g", "n1", cpu="2", prio=100)]
    fw, plugin = setup(NODES[:1], pods, [group("g", "single", priority=1)])
    assert victims_on(fw, plugin, make_pod("p", priority=10, requests={"cpu": "1"}), "n1") == ["g-0"]


def test_without_generic_workload_every_pod_is_a_victim_alone_at_its_own_priority() -> None:
    pods = [member("g-0", "g", "n1", cpu="2"), member("g-1", "g", "n2", cpu="2")]
    fw, plugin = setup(NODES, pods, [group("g", "all")], gates=OFF)
    assert victims_on(fw, plugin, make_pod("p", priority=10, requests={"cpu": "1"}), "n1") == ["g-0"]
    fw, plugin = setup(
        NODES[:1], [member("h-0", "h", "n1", cpu="2", prio=100)], [group("h", "single")], gates=OFF
    )
    state, pi = CycleState(), PodInfo(make_pod("p", priority=10, requests={"cpu": "1"}))
    assert fw.handle.snapshot is not None
    fw.run_pre_filter_plugins(state, pi, fw.handle.snapshot.list())
    ni = fw.handle.snapshot.get("n1")
    assert ni is not None
    victims, _, status = plugin.select_victims_on_node(state, pi, ni.clone(), [])
    assert (
        victims == []
        and status is not None
        and status.reasons == ["No preemption victims found for incoming pod"]
    )


@pytest.mark.anyio
async def test_preempting_an_all_group_marks_the_pod_group_and_deletes_every_member() -> None:
    pods = [member("g-0", "g", "n1", cpu="2"), member("g-1", "g", "n2", cpu="2")]
    client = RecordingClient(pods)
    fw, plugin = setup(NODES, pods, [group("g", "all", generation=3)], client=client)
    snap = fw.handle.snapshot
    assert snap is not None
    state, pi = CycleState(), PodInfo(make_pod("p", priority=10, requests={"cpu": "1"}))
    fw.run_pre_filter_plugins(state, pi, snap.list())
    statuses = NodeToStatus()
    for n in ("n1", "n2"):
        statuses.set(n, Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    result, status = await plugin.post_filter(state, pi, statuses)
    assert status is not None and status.is_success() and result is not None
    deleted = sorted(c[1][1] for c in client.calls if c[0] == "delete" and c[1][0] == PODS)
    assert deleted == ["g-0", "g-1"]
    (pg_patch,) = [c for c in client.calls if c[0] == "patch" and c[1][0] == PODGROUPS]
    assert pg_patch[1][1] == "g" and pg_patch[2]["subresource"] == "status"
    (cond,) = pg_patch[1][2]["status"]["conditions"]
    assert {k: cond[k] for k in ("type", "status", "reason", "message", "observedGeneration")} == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
        "observedGeneration": 3,
    }


@pytest.mark.anyio
async def test_a_basic_group_pod_preempts_one_by_one_a_gang_pod_does_not() -> None:
    basic = {
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}}},
    }
    gang = group("g", "single", priority=10)
    victim = plain("x", "n1", cpu="2")
    fw, plugin = setup(NODES[:1], [victim], [basic, gang], client=RecordingClient([victim]))
    statuses = NodeToStatus()
    statuses.set("n1", Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    for name, want in (
        ("b", None),
        ("g", "preemption: not eligible due to workload aware preemption enabled"),
    ):
        p = make_pod(f"{name}-0", priority=10, requests={"cpu": "1"})
        p["spec"]["schedulingGroup"] = {"podGroupName": name}
        state, pi = CycleState(), PodInfo(p)
        assert fw.handle.snapshot is not None
        fw.run_pre_filter_plugins(state, pi, fw.handle.snapshot.list())
        result, status = await plugin.post_filter(state, pi, statuses)
        if want is None:
            assert status is not None and status.is_success() and result is not None
            assert result.nominated_node_name == "n1"
        else:
            assert status is not None and status.message() == want
