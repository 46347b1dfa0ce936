"""KEP-6277 integration with the scheduler in the loop (StatefulSet controller + scheduler + simulated
kubelets): scale-up joins the existing PodGroup ("Scale-up ... verify new pods join the existing
PodGroup"), scale to zero and back re-forms the gang against the same PodGroup, and an
OrderedReady StatefulSet with a basic, topology-constrained Workload stays sequential and co-located.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import NODES, PODGROUPS, PODS, STATEFULSETS
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import (
    GANG,
    NS,
    start_statefulset_controller,
    sts_manifest,
    wait_min_count,
    wait_single,
)
from tests.integration.podgroup_support import RACK, scheduled_condition, wait_pod_group
from tests.integration.scheduler_support import (
    create_nodes,
    node,
    node_name,
    start_node_agent,
    start_scheduler,
)

pytestmark = pytest.mark.anyio


def with_cpu(sts: Obj, cpu: str) -> Obj:
    sts["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return sts


async def app_pods(client: Any, app: str) -> list[Obj]:
    return (await client.list(PODS, NS, label_selector=f"app={app}"))["items"]


async def wait_bound_count(client: Any, app: str, n: int, timeout: float = 20) -> list[Obj]:
    def ok(items: list[Obj]) -> bool:
        mine = [p for p in items if (p["metadata"].get("labels") or {}).get("app") == app]
        return len(mine) == n and all(node_name(p) for p in mine)

    items = await wait_for_list(client, PODS, NS, ok, timeout)
    return [p for p in items if (p["metadata"].get("labels") or {}).get("app") == app]


async def test_scale_up_3_to_5_joins_the_existing_pod_group(cp, client) -> None:
    await create_nodes(client, [node("n1", "4")])
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
    first = await wait_bound_count(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    name = pg["metadata"]["name"]
    await wait_pod_group(client, name, "True")
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 5}}, NS)
    await wait_min_count(client, PODGROUPS, name, 5)

    # 3 bound + room for 1 more: minCount 5 cannot be met, the 2 new pods stay unbound
    def two_failed(items: list[Obj]) -> bool:
        new = [p for p in items if p["metadata"]["name"] in ("db-3", "db-4")]
        return len(new) == 2 and all(
            any(
                c.get("type") == "PodScheduled" and c.get("status") == "False"
                for c in p["status"].get("conditions") or []
            )
            for p in new
        )

    items = await wait_for_list(client, PODS, NS, two_failed, 20)
    new = [p for p in items if p["metadata"]["name"] in ("db-3", "db-4")]
    assert not any(node_name(p) for p in new)
    # the pod that fit by itself carries the group's message, the other its own FitError
    msgs = {next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")["message"] for p in new}
    assert msgs == {
        # workload-aware preemption ran too, with nothing of lower priority to take
        "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"
        ", pod group preemption: No preemption victims found for incoming preemptor",
        "0/1 nodes are available: 1 Insufficient cpu.",
    }
    await client.create(NODES, node("n2", "4"))
    pods = await wait_bound_count(client, "db", 5)
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {name}
    assert {p["metadata"]["uid"] for p in first} <= {p["metadata"]["uid"] for p in pods}
    assert [o["metadata"]["uid"] for o in (await client.list(PODGROUPS, NS))["items"]] == [
        pg["metadata"]["uid"]
    ]


async def test_scale_to_zero_and_back_reforms_the_gang_against_the_same_pod_group(cp, client) -> None:
    await create_nodes(client, [node("n1", "8")])
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
    await wait_bound_count(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    name = pg["metadata"]["name"]
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 0}}, NS)
    await wait_for_list(
        client,
        PODS,
        NS,
        lambda items: not any((p["metadata"].get("labels") or {}).get("app") == "db" for p in items),
        20,
    )
    await wait_min_count(client, PODGROUPS, name, 1)
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 3}}, NS)
    pods = await wait_bound_count(client, "db", 3)
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {name}
    after = await client.get(PODGROUPS, name, NS)
    assert after["metadata"]["uid"] == pg["metadata"]["uid"]
    assert after["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
    cond = scheduled_condition(after)
    assert cond is not None and cond["status"] == "True"


async def test_ordered_ready_basic_topology_is_sequential_and_co_located(cp, client) -> None:
    nodes = [node(f"r{r}-n{i}", "2", **{RACK: f"rack-{r}"}) for r in range(3) for i in range(2)]
    await create_nodes(client, nodes)
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    scheduling = {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": RACK}]}}
    rv = (await client.list(PODS, NS))["metadata"]["resourceVersion"]
    timeline: list[tuple[str, str]] = []  # (event, pod) in watch order

    async def watch() -> None:
        async for ev in client.watch(PODS, NS, resource_version=rv, label_selector="app=seq"):
            if ev.type == "ADDED":
                timeline.append(("added", ev.object["metadata"]["name"]))
            elif (
                ev.type == "MODIFIED"
                and any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in ev.object["status"].get("conditions") or []
                )
                and ("ready", ev.object["metadata"]["name"]) not in timeline
            ):
                timeline.append(("ready", ev.object["metadata"]["name"]))

    watcher = asyncio.create_task(watch())
    await client.create(
        STATEFULSETS, with_cpu(sts_manifest("seq", 3, scheduling, policy="OrderedReady"), "1"), NS
    )

    def all_ready(items: list[Obj]) -> bool:
        mine = [p for p in items if (p["metadata"].get("labels") or {}).get("app") == "seq"]
        return len(mine) == 3 and all(
            any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in p["status"].get("conditions") or []
            )
            for p in mine
        )

    items = await wait_for_list(client, PODS, NS, all_ready, 30)
    mine = sorted(
        (p for p in items if p["metadata"]["labels"].get("app") == "seq"), key=lambda p: p["metadata"]["name"]
    )
    racks = set()
    for p in mine:
        n = await client.get(NODES, node_name(p))
        racks.add(n["metadata"]["labels"][RACK])
    assert len(racks) == 1
    # sequential: each pod was created only after the one before it was Ready (OrderedReady)
    for i in (1, 2):
        assert timeline.index(("ready", f"seq-{i - 1}")) < timeline.index(("added", f"seq-{i}"))
    while not watcher.done():
        watcher.cancel()
        await asyncio.wait({watcher}, timeout=0.1)
    pg = await wait_single(client, PODGROUPS)
    await wait_pod_group(client, pg["metadata"]["name"], "True")


async def test_rolling_update_replacements_rejoin_their_placed_gang(cp, client) -> None:
    await create_nodes(client, [node("n1", "4")])
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    body = with_cpu(sts_manifest("db", 3, GANG), "1")
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    await client.create(STATEFULSETS, body, NS)
    first = await wait_bound_count(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    await client.patch(
        STATEFULSETS,
        "db",
        {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}},
        NS,
    )

    def updated(items: list[Obj]) -> bool:
        mine = [p for p in items if (p["metadata"].get("labels") or {}).get("app") == "db"]
        return (
            len(mine) == 3
            and all((p["metadata"].get("annotations") or {}).get("rev") == "2" for p in mine)
            and all(node_name(p) for p in mine)
        )

    items = await wait_for_list(client, PODS, NS, updated, 30)
    mine = [p for p in items if (p["metadata"].get("labels") or {}).get("app") == "db"]
    assert not {p["metadata"]["uid"] for p in mine} & {p["metadata"]["uid"] for p in first}
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in mine} == {pg["metadata"]["name"]}
