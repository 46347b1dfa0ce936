"""Workload-aware preemption with a topology constraint (KEP-5710 with KEP-5732): the group
algorithm re-run with victims removed picks the rack, so the preemptor takes the rack whose
victims are least important - here the rack of four lone low-priority pods, while a
``disruptionMode: all`` group of the same priority (a group outranks lone pods) keeps its rack.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS
from tests.integration.podgroup_support import RACK, member, pod_group, wait_members_bound, wait_pod_group
from tests.integration.scheduler_support import (
    create_nodes,
    create_priority_classes,
    node,
    node_name,
    pod,
    start_scheduler,
)

pytestmark = pytest.mark.anyio


async def test_a_rack_constrained_gang_preempts_the_rack_of_the_least_important_victims(
    cp: Any, client: Any
) -> None:
    await create_priority_classes(client)
    await create_nodes(
        client, [node(f"r{r}-n{i}", "2", **{RACK: f"rack-{r}"}) for r in range(2) for i in range(2)]
    )
    low = pod_group("low", 4, priority_class="low")
    low["spec"]["disruptionMode"] = {"all": {}}
    await client.create(PODGROUPS, low)
    for i in range(4):  # the group fills rack-0, four lone pods fill rack-1
        await client.create(
            PODS,
            member(
                f"low-{i}", "low", priority_class="low", grace=0, extra_spec={"nodeName": f"r0-n{i // 2}"}
            ),
        )
        await client.create(
            PODS,
            pod(
                f"lone-{i}", cpu="1", priority_class="low", grace=0, extra_spec={"nodeName": f"r1-n{i // 2}"}
            ),
        )
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("train", 4, topology=RACK, priority_class="high"))
    for i in range(4):
        await client.create(PODS, member(f"train-{i}", "train", priority_class="high", grace=0))
    bound = await wait_members_bound(client, "train", 4, timeout=20)
    assert {node_name(p)[:2] for p in bound} == {"r1"}
    await wait_pod_group(client, "train", "True")
    names = {p["metadata"]["name"] for p in (await client.list(PODS, "default"))["items"]}
    assert {f"low-{i}" for i in range(4)} <= names  # the group was reprieved as a whole
    assert not names & {f"lone-{i}" for i in range(4)}  # the lone pods were preempted
