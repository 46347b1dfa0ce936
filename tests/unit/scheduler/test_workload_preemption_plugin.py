"""WorkloadAwarePreemption (PodGroupPostFilter) against a snapshot and a stand-in group algorithm.

The ``schedule`` callback here is a first-fit of the group's pods by cpu over the snapshot as
it is (the real PodGroup cycle supplies its own); the plugin must only change the snapshot
through forget/assume, leave it as it found it, and actuate victims through the API.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS
from featuregates import FeatureGate
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.interfaces import PodAssignment, PodGroupInfo
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.workload_preemption import WorkloadAwarePreemption, resolve_preemption_policy
from scheduler.podgroups import PodGroupState
from scheduler.status import Code, Status
from scheduler.testing import FakeClock, RecordingClient, make_node, make_pod, snapshot_of

MILLI = 1000


def member(name: str, group: str, node: str = "", cpu: str = "1", prio: int = 0, **kw: Any) -> Obj:
    p = make_pod(
        name, node_name=node, priority=prio, requests={"cpu": cpu}, start_time="2026-01-01T00:00:00Z", **kw
    )
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


def podgroup(name: str, priority: int, mode: str = "single", min_count: int = 1, **spec: Any) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": min_count}},
            "disruptionMode": {mode: {}},
            "priority": priority,
            **spec,
        },
    }


class Cluster:
    def __init__(
        self, nodes: list[Obj], placed: list[Obj], groups: list[Obj], gates: str = "", pdbs: list[Obj] = ()
    ) -> None:  # type: ignore[assignment]
        self.snapshot = snapshot_of(nodes, placed)
        self.groups = {g["metadata"]["name"]: g for g in groups}
        self.states: dict[str, PodGroupState] = {}
        for p in placed:
            name = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
            if name:
                st = self.states.setdefault(name, PodGroupState(f"default/{name}"))
                st.assigned[f"default/{p['metadata']['name']}"] = p["spec"]["nodeName"]
        self.client = RecordingClient(placed)
        self.events: list[tuple[Any, ...]] = []
        handle = Handle(
            snapshot=self.snapshot,
            clock=FakeClock(),
            client=self.client,
            gates=FeatureGate.from_string(gates),
            get_pod_group=lambda ns, n: self.groups.get(n),
            pod_group_state=lambda ns, n: self.states.get(n),
            list_pdbs=lambda: list(pdbs),
            record_event=lambda *a: self.events.append(a),
        )
        self.fw = Framework(default_profile(), handle, registry=default_registry())
        self.plugin = WorkloadAwarePreemption({}, handle)
        self.calls = 0

    def schedule_for(self, group: PodGroupInfo) -> Any:
        """First fit by cpu; feasible when at least minCount pods fit."""
        need = group.spec["schedulingPolicy"]["gang"]["minCount"]

        def schedule() -> tuple[list[PodAssignment], Status | None]:
            self.calls += 1
            free = {ni.name: ni.free("cpu") for ni in self.snapshot.list()}
            out = []
            for pi in group.pods:
                want = pi.requests.get("cpu", 0)
                node = next((n for n in sorted(free) if free[n] >= want), "")
                if node:
                    free[node] -= want
                out.append(PodAssignment(pi, node))
            fit = sum(1 for a in out if a.node_name)
            if fit < need:
                return out, Status(
                    Code.UNSCHEDULABLE, f"minCount ({need}) cannot be satisfied: {fit} scheduled, 0 remaining"
                )
            return out, None

        return schedule

    async def preempt(self, group_name: str, pods: list[Obj]) -> tuple[Any, Status | None]:
        pg = self.groups[group_name]
        info = PodGroupInfo(
            "default", group_name, pg, [PodInfo(p) for p in pods], PodGroupState(f"default/{group_name}")
        )
        before = {ni.name: (len(ni.pods), ni.free("cpu")) for ni in self.snapshot.list()}
        result, status = await self.plugin.pod_group_post_filter(CycleState(), info, self.schedule_for(info))
        assert {ni.name: (len(ni.pods), ni.free("cpu")) for ni in self.snapshot.list()} == before
        return result, status

    def deleted(self) -> list[str]:
        return sorted(c[1][1] for c in self.client.calls if c[0] == "delete" and c[1][0] == PODS)

    def pod_group_patches(self) -> list[tuple[str, Obj]]:
        return [(c[1][1], c[1][2]) for c in self.client.calls if c[0] == "patch" and c[1][0] == PODGROUPS]


NODES = [make_node(f"n{i}", cpu="1") for i in range(4)]


def sts_pods(group: str, n: int, prio: int = 1) -> list[Obj]:
    return [member(f"{group}-{i}", group, node=f"n{i}", prio=prio) for i in range(n)]


@pytest.mark.anyio
async def test_disruption_mode_all_victim_is_evicted_entirely() -> None:
    c = Cluster(NODES, sts_pods("low", 4), [podgroup("low", 1, "all", 4), podgroup("high", 10)])
    result, status = await c.preempt("high", [member("high-0", "high", prio=10)])
    assert status is not None and status.is_success()
    assert c.deleted() == ["low-0", "low-1", "low-2", "low-3"]  # the whole set, not a subset
    assert result.nominated_node_names == {"default/high-0": "n0"}
    ((name, patch),) = c.pod_group_patches()
    (cond,) = patch["status"]["conditions"]
    assert name == "low" and (cond["type"], cond["reason"]) == ("DisruptionTarget", "PreemptionByScheduler")
    assert cond["message"] == "default-scheduler: preempting to accommodate a higher priority pod group"
    marks = [c_ for c_ in c.client.calls if c_[0] == "patch" and c_[1][0] == PODS]
    assert len(marks) == 4
    assert marks[0][1][2]["status"]["conditions"][0]["message"].endswith("a higher priority pod group")
    assert [e[2] for e in c.events] == ["Preempted"] * 4
    assert c.events[0][4] == "Preempted by podgroup uid-high on node n0"


@pytest.mark.anyio
async def test_disruption_mode_single_preempts_only_as_many_as_needed() -> None:
    c = Cluster(
        NODES, sts_pods("low", 4), [podgroup("low", 1, "single", 4), podgroup("high", 10, min_count=2)]
    )
    result, status = await c.preempt("high", [member(f"high-{i}", "high", prio=10) for i in range(2)])
    assert status is not None and status.is_success()
    assert len(c.deleted()) == 2
    assert c.pod_group_patches() == []
    assert sorted(result.nominated_node_names.values()) == sorted(f"n{d[-1]}" for d in c.deleted())


@pytest.mark.anyio
async def test_no_victim_is_touched_unless_the_whole_group_then_fits() -> None:
    c = Cluster(
        NODES, sts_pods("low", 4), [podgroup("low", 1, "single", 4), podgroup("high", 10, min_count=5)]
    )
    result, status = await c.preempt("high", [member(f"high-{i}", "high", prio=10) for i in range(5)])
    assert result is None and status is not None and status.code == Code.UNSCHEDULABLE
    assert (
        status.message() == "pod group preemption: minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"
    )
    assert c.client.calls == []


@pytest.mark.anyio
async def test_equal_and_higher_priority_pods_and_groups_are_not_victims() -> None:
    placed = sts_pods("peer", 2, prio=10) + [
        member("lone", "", node="n2", prio=50),
        member("x", "", node="n3", prio=10),
    ]
    for p in placed[2:]:
        del p["spec"]["schedulingGroup"]
    c = Cluster(NODES, placed, [podgroup("peer", 10), podgroup("high", 10)])
    result, status = await c.preempt("high", [member("high-0", "high", prio=10)])
    assert result is None and status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == "pod group preemption: No preemption victims found for incoming preemptor"


@pytest.mark.anyio
async def test_victim_priority_is_its_pod_group_priority() -> None:
    # the pods say 100 but their PodGroup says 1: they are victims of a priority-10 group
    c = Cluster(NODES[:1], sts_pods("low", 1, prio=100), [podgroup("low", 1), podgroup("high", 10)])
    _, status = await c.preempt("high", [member("high-0", "high", prio=10)])
    assert status is not None and status.is_success() and c.deleted() == ["low-0"]


@pytest.mark.anyio
async def test_pdb_protected_victims_are_reprieved_first() -> None:
    placed = [
        member("db", "", node="n0", prio=1, labels={"app": "db"}),
        member("web", "", node="n1", prio=2),
    ]
    for p in placed:
        del p["spec"]["schedulingGroup"]
    pdb = {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    c = Cluster(NODES[:2], placed, [podgroup("high", 10)], pdbs=[pdb])
    _, status = await c.preempt("high", [member("high-0", "high", prio=10)])
    assert status is not None and status.is_success()
    assert c.deleted() == ["web"]  # the lower-priority pod is protected by its budget


@pytest.mark.anyio
async def test_preemption_policy_never_is_honoured() -> None:
    c = Cluster(NODES, sts_pods("low", 4), [podgroup("low", 1), podgroup("high", 10)])
    never = member("high-0", "high", prio=10, preemption_policy="Never")
    result, status = await c.preempt("high", [never])
    assert result is None and status is not None
    assert (status.code, status.message()) == (
        Code.UNSCHEDULABLE,
        "pod group preemption: not eligible due to preemptionPolicy=Never.",
    )
    assert c.client.calls == []


def test_preemption_policy_source_follows_the_pod_group_preemption_policy_gate() -> None:
    pods = [PodInfo(make_pod("a", preemption_policy="Never"))]
    assert resolve_preemption_policy(podgroup("g", 1), pods, pod_group_policy=False) == "Never"
    assert resolve_preemption_policy(podgroup("g", 1), pods, pod_group_policy=True) == "PreemptLowerPriority"
    never = podgroup("g", 1, preemptionPolicy="Never")
    assert resolve_preemption_policy(never, [PodInfo(make_pod("b"))], pod_group_policy=True) == "Never"


@pytest.mark.anyio
async def test_a_group_waits_for_its_earlier_victims_to_terminate() -> None:
    terminating = member(
        "low-0",
        "low",
        node="n0",
        prio=1,
        deletion_timestamp="2026-01-01T00:00:00Z",
        conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    )
    c = Cluster(NODES[:1], [terminating], [podgroup("low", 1), podgroup("high", 10)])
    waiting = member("high-0", "high", prio=10, nominated_node_name="n0")
    result, status = await c.preempt("high", [waiting])
    assert result is None and status is not None
    assert (
        status.message()
        == "pod group preemption: not eligible due to a terminating pod on the nominated node."
    )


@pytest.mark.anyio
async def test_disabled_without_generic_workload() -> None:
    c = Cluster(
        NODES, sts_pods("low", 4), [podgroup("low", 1), podgroup("high", 10)], gates="GenericWorkload=false"
    )
    result, status = await c.preempt("high", [member("high-0", "high", prio=10)])
    assert result is None and status is not None and status.code == Code.UNSCHEDULABLE
    assert c.client.calls == []


@pytest.mark.anyio
async def test_victims_already_deleted_are_not_preempted_again_while_the_cache_still_shows_them() -> None:
    c = Cluster(NODES, sts_pods("low", 4), [podgroup("low", 1, "all", 4), podgroup("high", 10)])
    high = [member("high-0", "high", prio=10)]
    _, status = await c.preempt("high", high)
    assert status is not None and status.is_success()
    writes = len(c.client.calls)
    # the snapshot still holds the deleted victims (their delete events have not arrived)
    result, status = await c.preempt("high", high)
    assert status is not None and status.is_success()
    assert (
        status.message() == "pod group preemption: pod group is waiting for podgroup preemption to complete"
    )
    assert result.nominated_node_names == {"default/high-0": "n0"}
    assert len(c.client.calls) == writes  # nothing written again
