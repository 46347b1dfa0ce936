"""gangplane's scheduling records: what each attempt of each pod and PodGroup cycle decided, and why.

A record is a ``scheduling.gangplane.dev/v1alpha1`` SchedulingRecord named ``pod.<name>`` or
``podgroup.<name>``; these tests read them through the API, as a user (or ``gangplane explain``)
does.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import NODES, PODGROUPS, PODS
from gangplane.controlplane import ControlPlane
from scheduler.component import register_scheduler
from scheduler.records import SCHEDULINGRECORDS, RecordLimits
from scheduler.records.explain import render
from scheduler.scheduler import Scheduler
from tests.helpers import wait_for_object
from tests.integration.podgroup_support import RACK, member, pod_group, wait_pod_group
from tests.integration.scheduler_support import (
    create_nodes,
    create_priority_classes,
    node,
    pod,
    wait_bound,
)

pytestmark = pytest.mark.anyio
Obj = dict[str, Any]


async def start(cp: ControlPlane, records: bool | RecordLimits = True) -> Scheduler:
    register_scheduler(cp, records=records)
    comp = await cp.start_component("scheduler")
    assert isinstance(comp, Scheduler)
    return comp


async def record(client: Any, name: str, cond: Any = lambda o: o is not None, ns: str = "default") -> Obj:
    r = await wait_for_object(client, SCHEDULINGRECORDS, name, ns, cond)
    assert r is not None
    return r


def last(r: Obj | None) -> Obj:
    return ((r or {}).get("attempts") or [{}])[-1]


async def test_a_scheduled_pod_records_the_scores_and_the_choice(cp: ControlPlane, client: Any) -> None:
    await create_nodes(client, [node("big", cpu="8"), node("small", cpu="2"), node("tiny", cpu="1")])
    await start(cp)
    await client.create(PODS, pod("web", cpu="500m"))
    bound = await wait_bound(client, "web")
    r = await record(client, "pod.web", lambda o: last(o).get("result") == "Scheduled")
    assert r["subject"] == {"kind": "Pod", "name": "web", "uid": bound["metadata"]["uid"]}
    assert r["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": bound["metadata"]["uid"]}
    ]
    a = last(r)
    assert a["selectedNode"] == bound["spec"]["nodeName"] == "big"
    assert a["nodes"] == {"total": 3, "feasible": 3, "rejected": 0}
    top = a["score"]["top"]
    assert top[0]["node"] == "big" and top[0]["total"] == max(t["total"] for t in top)
    fit = top[0]["plugins"]["NodeResourcesFit"]
    assert fit["raw"] >= fit["score"] > 0  # weight 1, normalised by its own maximum
    assert {"name": "TaintToleration", "weight": 3} in a["score"]["plugins"]
    assert "Result: Scheduled -> big" in render(r)


async def test_every_filter_rejection_is_recorded_per_plugin_node_and_reason(
    cp: ControlPlane, client: Any
) -> None:
    tainted = node("tainted", cpu="8")
    tainted["spec"]["taints"] = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    await create_nodes(client, [node("a", cpu="2"), node("b", cpu="2"), tainted])
    await start(cp, RecordLimits(attempts_per_subject=2))
    await client.create(PODS, pod("huge", cpu="4"))
    r = await record(client, "pod.huge", lambda o: last(o).get("result") == "Unschedulable")
    a = last(r)
    assert a["message"].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    )
    by_plugin = {f["plugin"]: f for f in a["filter"]}
    assert by_plugin["NodeResourcesFit"]["nodes"] == 2
    assert by_plugin["NodeResourcesFit"]["reasons"] == [
        {"reason": "Insufficient cpu", "nodes": 2, "examples": ["a", "b"]}
    ]
    assert by_plugin["TaintToleration"]["reasons"][0]["examples"] == ["tainted"]
    assert a["preemption"]["candidatesFound"] == 0
    # each new node is another attempt; only the newest two are kept, all are counted
    for i in range(3):
        await client.create(NODES, node(f"more-{i}", cpu="1"))
        await record(client, "pod.huge", lambda o, n=i: o is not None and o["totalAttempts"] >= n + 2)
    r = await record(client, "pod.huge", lambda o: o["totalAttempts"] >= 4)
    assert len(r["attempts"]) == 2
    assert [x["attempt"] for x in r["attempts"]] == sorted(x["attempt"] for x in r["attempts"])
    text = render(r)
    assert "NodeResourcesFit" in text and "Insufficient cpu" in text


async def test_a_waiting_gang_records_why_each_placement_was_dropped(cp: ControlPlane, client: Any) -> None:
    nodes = [node(f"r{r}-n{i}", cpu="4", **{RACK: f"rack-{r}"}) for r in range(2) for i in range(2)]
    await create_nodes(client, nodes)
    await start(cp)
    await client.create(PODGROUPS, pod_group("train", 3, topology=RACK))
    for i in range(3):
        await client.create(PODS, member(f"train-{i}", "train", cpu="3"))
    await wait_pod_group(client, "train", "False")
    r = await record(client, "podgroup.train", lambda o: last(o).get("result") == "Unschedulable")
    assert r["subject"]["kind"] == "PodGroup"
    assert r["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    a = last(r)
    assert a["cycle"] == "PodGroup" and a["placementsTotal"] == 2
    placements = {p["name"]: p for p in a["placements"]}
    assert set(placements) == {"rack-0", "rack-1"}
    # rack-0 was tried pod by pod: two fit, the third did not, and NodeResourcesFit says where
    p = placements["rack-0"]
    assert p["outcome"] == "Dropped"
    assert p["why"] == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
    assert p["podsFit"] == 2 and p["podsTried"] == 3
    first = p["firstUnplacedPod"]
    assert first["pod"].startswith("default/train-")
    (fit,) = first["filter"]
    assert fit["plugin"] == "NodeResourcesFit" and fit["nodes"] == 2
    assert fit["reasons"] == [{"reason": "Insufficient cpu", "nodes": 2, "examples": ["r0-n0", "r0-n1"]}]
    # rack-1 could not hold 9 cpu by its free capacity: passed over without a Filter call
    assert placements["rack-1"]["outcome"] == "Skipped"
    assert "free capacity" in placements["rack-1"]["why"]
    # each member's own record points at the group cycle
    m = last(await record(client, "pod.train-0", lambda o: bool(o and o["attempts"])))
    assert m["cycle"] == "PodGroup" and m["podGroup"] == "train" and m["result"] == "Unschedulable"
    text = render(r)
    assert "rack-0" in text and "Dropped" in text and "minCount (3) cannot be satisfied" in text


async def test_a_placed_gang_records_the_chosen_placement(cp: ControlPlane, client: Any) -> None:
    nodes = [node(f"r0-n{i}", cpu="4", **{RACK: "rack-0"}) for i in range(2)]
    nodes += [node(f"r1-n{i}", cpu="4", **{RACK: "rack-1"}) for i in range(3)]
    await create_nodes(client, nodes)
    await start(cp)
    await client.create(PODGROUPS, pod_group("db", 3, topology=RACK))
    for i in range(3):
        await client.create(PODS, member(f"db-{i}", "db", cpu="3"))
    r = await record(client, "podgroup.db", lambda o: last(o).get("result") == "Scheduled")
    a = last(r)
    assert a["selectedPlacement"] == "rack-1"
    assert sorted(a["assignments"]) == ["default/db-0", "default/db-1", "default/db-2"]
    assert all(n.startswith("r1-") for n in a["assignments"].values())
    rack0 = next(p for p in a["placements"] if p["name"] == "rack-0")
    assert rack0["outcome"] in ("Dropped", "Skipped")
    m = last(await record(client, "pod.db-1", lambda o: last(o).get("result") == "Scheduled"))
    assert m["selectedNode"] == a["assignments"]["default/db-1"]


async def test_a_gang_over_equal_racks_records_the_racks_decided_by_capacity(
    cp: ControlPlane, client: Any
) -> None:
    # three empty racks: the first is tried pod by pod and chosen; the other two could only tie
    nodes = [node(f"r{r}-n{i}", cpu="4", **{RACK: f"rack-{r}"}) for r in range(3) for i in range(2)]
    await create_nodes(client, nodes)
    await start(cp)
    await client.create(PODGROUPS, pod_group("web", 4, topology=RACK))
    for i in range(4):
        await client.create(PODS, member(f"web-{i}", "web", cpu="1"))
    r = await record(client, "podgroup.web", lambda o: last(o).get("result") == "Scheduled")
    a = last(r)
    assert a["selectedPlacement"] == "rack-0" and a["placementsConsidered"] == 3
    placements = {p["name"]: p for p in a["placements"]}
    assert placements["rack-0"]["outcome"] == "Chosen" and placements["rack-0"]["podsTried"] == 4
    for name in ("rack-1", "rack-2"):
        p = placements[name]
        assert p["outcome"] == "Dropped" and p["podsFit"] == 4 and p["score"] == placements["rack-0"]["score"]
        assert "computed from the domain's free capacity" in p["why"]
    for i in range(4):
        bound = await wait_bound(client, f"web-{i}")
        assert bound["spec"]["nodeName"].startswith("r0-")


async def test_a_preemption_records_candidates_victims_and_why(cp: ControlPlane, client: Any) -> None:
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", cpu="2"), node("n2", cpu="2")])
    await start(cp)
    on: dict[str, str] = {}
    for i in (1, 2):
        await client.create(PODS, pod(f"low-{i}", cpu="2", priority_class="low", grace=0))
        on[(await wait_bound(client, f"low-{i}"))["spec"]["nodeName"]] = f"default/low-{i}"
    await client.create(PODS, pod("vip", cpu="2", priority_class="high"))
    r = await record(
        client, "pod.vip", lambda o: any("preemption" in x for x in (o or {}).get("attempts") or [])
    )
    a = next(x for x in r["attempts"] if "preemption" in x)
    p = a["preemption"]
    assert p["candidatesFound"] == 2
    assert p["chosen"] in ("n1", "n2")
    (victim,) = p["victims"]
    assert victim["pod"] == on[p["chosen"]]
    assert victim["priority"] == 10
    assert victim["reason"] == "priority 10 < preemptor's 1000; the pod does not fit with it"
    assert a["nominatedNode"] == p["chosen"]
    text = render(r)
    assert "VICTIM" in text and "priority 10 < preemptor's 1000" in text


async def test_records_are_off_unless_asked_for(cp: ControlPlane, client: Any) -> None:
    await create_nodes(client, [node("n1")])
    sched = await start(cp, records=False)
    await client.create(PODS, pod("quiet"))
    await wait_bound(client, "quiet")
    assert sched.records is None
    assert (await client.list(SCHEDULINGRECORDS, "default"))["items"] == []


async def test_records_beyond_the_overall_cap_are_deleted(cp: ControlPlane, client: Any) -> None:
    await create_nodes(client, [node("n1", cpu="8")])
    sched = await start(cp, RecordLimits(subjects=2))
    for i in range(3):
        await client.create(PODS, pod(f"p{i}"))
        await wait_bound(client, f"p{i}")
        await record(client, f"pod.p{i}")
    assert sched.records is not None
    await sched.records.flush()
    names = {o["metadata"]["name"] for o in (await client.list(SCHEDULINGRECORDS, "default"))["items"]}
    assert names == {"pod.p1", "pod.p2"}


async def test_a_gang_preemption_records_its_victims_and_why(cp: ControlPlane, client: Any) -> None:
    await create_priority_classes(client)
    await create_nodes(
        client, [node(f"r{r}-n{i}", "2", **{RACK: f"rack-{r}"}) for r in range(2) for i in range(2)]
    )
    for i in range(4):  # lone low-priority pods fill rack-1; rack-0 is full of them too
        await client.create(
            PODS,
            pod(
                f"lone-{i}", cpu="1", priority_class="low", grace=0, extra_spec={"nodeName": f"r1-n{i // 2}"}
            ),
        )
        await client.create(
            PODS,
            pod(
                f"other-{i}", cpu="1", priority_class="low", grace=0, extra_spec={"nodeName": f"r0-n{i // 2}"}
            ),
        )
    await start(cp)
    await client.create(PODGROUPS, pod_group("train", 4, topology=RACK, priority_class="high"))
    for i in range(4):
        await client.create(PODS, member(f"train-{i}", "train", priority_class="high", grace=0))
    r = await record(
        client, "podgroup.train", lambda o: any("preemption" in a for a in (o or {}).get("attempts") or [])
    )
    a = next(x for x in r["attempts"] if "preemption" in x)
    assert a["result"] == "WaitingOnPreemption"
    p = a["preemption"]
    assert p["victimUnits"] == 4 and p["message"] == "found a placement for podgroup, preempting 4 victims"
    for v in p["victims"]:
        assert v["priority"] == 10 and v["reason"] == "priority 10 < the PodGroup's 1000"
    (pods,) = {tuple(sorted(n for v in p["victims"] for n in v["pods"]))}
    assert pods in (
        tuple(f"default/lone-{i}" for i in range(4)),
        tuple(f"default/other-{i}" for i in range(4)),
    )
    assert sorted(a["nominations"]) == [f"default/train-{i}" for i in range(4)]
    text = render(r)
    assert "Preemption (workload-aware): 4 victim unit(s)" in text
    assert "VICTIM" in text and "the PodGroup's 1000" in text
    await record(client, "podgroup.train", lambda o: last(o).get("result") == "Scheduled")
