"""The composition root with leader election on (``gangplane serve``'s default): the controllers run
only while this process holds ``kube-system/kube-controller-manager``, the scheduler while it holds
``kube-system/kube-scheduler``; a lost lease stops them and a regained one restarts them, which then
resume from the stored state. Time is a FakeClock stepped by the test.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.client.interface import EVENTS, LEASES, PODS, STATEFULSETS
from apiserver.client.leaderelection import LeaderElectionConfig, LeaderElectionRecord
from apiserver.meta import FakeClock, rfc3339_micro
from controllers.manager import STATEFULSET
from controllers.testing import statefulset
from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
from scheduler.component import COMPONENT_NAME as SCHEDULER
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.scheduler_support import create_nodes, node, node_name

pytestmark = pytest.mark.anyio
NS = "kube-system"
KCM, SCHED = "kube-controller-manager", "kube-scheduler"
IDENTITY = re.compile(rf"^{re.escape(socket.gethostname())}_[0-9a-f-]{{36}}$")


@pytest.fixture
async def env() -> AsyncIterator[tuple[ControlPlane, FakeClock, list[str]]]:
    clock = FakeClock()
    plane = ControlPlane(
        ControlPlaneOptions(clock=clock, client_bookmark_interval=0.2, leader_election=LeaderElectionConfig())
    )
    names = default_components(plane, None, "statefulset")
    try:
        yield plane, clock, names
    finally:
        await plane.stop()


async def step(cp: ControlPlane, clock: FakeClock, seconds: float) -> None:
    """Step the clock; wait until every elector has made its next acquire/renew round."""
    before = {lease: e.rounds for lease, e in cp.electors.items()}
    clock.step(seconds)
    for e in cp.electors.values():
        e.poke()
    for lease, e in cp.electors.items():
        await asyncio.wait_for(e.wait_rounds(before[lease] + 1), 10)


async def holder(client: Any, lease: str) -> dict[str, Any]:
    return (await client.get(LEASES, lease, NS))["spec"]


async def held_by(client: Any, lease: str, identity: str, clock: FakeClock) -> None:
    """Write ``lease`` as another process holding it would (a fresh renewal by ``identity``)."""
    now = rfc3339_micro(clock.now())
    spec = LeaderElectionRecord(identity, 15, now, now, 0).to_spec()
    try:
        cur = await client.get(LEASES, lease, NS)
    except Exception:  # noqa: BLE001 - not there yet
        await client.create(LEASES, {"metadata": {"name": lease, "namespace": NS}, "spec": spec}, NS)
        return
    cur["spec"] = {**spec, "leaseTransitions": cur["spec"].get("leaseTransitions", 0) + 1}
    await client.update(LEASES, cur, NS)


async def web_pods_bound(client: Any, n: int) -> list[dict[str, Any]]:
    return await wait_for_list(
        client,
        PODS,
        "default",
        lambda items: len(items) == n and all(node_name(p) for p in items),
        label_selector="app=web",
    )


async def test_a_lone_control_plane_takes_every_lease_at_once(
    env: tuple[ControlPlane, FakeClock, list[str]],
) -> None:
    cp, clock, names = env
    client = cp.client("test")
    await cp.start(names)
    assert set(cp.components) == {STATEFULSET, SCHEDULER}
    for lease in (KCM, SCHED):
        spec = await holder(client, lease)
        assert IDENTITY.match(spec["holderIdentity"]), spec
        assert spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 0
    assert (await holder(client, KCM))["holderIdentity"] != (await holder(client, SCHED))["holderIdentity"]
    await create_nodes(client, [node("n1")])
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    await web_pods_bound(client, 2)
    events = await wait_for_list(client, EVENTS, NS, lambda items: len(items) == 2)
    assert {(e["source"]["component"], e["reason"]) for e in events} == {
        (KCM, "LeaderElection"),
        (SCHED, "LeaderElection"),
    }
    assert all(e["message"].endswith(" became leader") for e in events)


async def test_components_wait_while_another_process_holds_the_lease_then_take_over(
    env: tuple[ControlPlane, FakeClock, list[str]],
) -> None:
    cp, clock, names = env
    client = cp.client("test")
    for lease in (KCM, SCHED):
        await held_by(client, lease, "other-host_1", clock)
    await cp.start(names)
    assert cp.components == {} and all(not e.leading for e in cp.electors.values())
    await create_nodes(client, [node("n1")])
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    await step(cp, clock, 10.0)  # the other process died at t=0: its leases are still valid
    assert cp.components == {}
    assert (await client.list(PODS, "default"))["items"] == []
    await step(cp, clock, 6.0)  # t=16: both leases expired, this process takes them over
    assert set(cp.components) == {STATEFULSET, SCHEDULER}
    await web_pods_bound(client, 2)
    for lease in (KCM, SCHED):
        spec = await holder(client, lease)
        assert IDENTITY.match(spec["holderIdentity"]) and spec["leaseTransitions"] == 1


async def test_a_lost_lease_stops_the_controllers_and_a_regained_one_resumes_them(
    env: tuple[ControlPlane, FakeClock, list[str]],
) -> None:
    cp, clock, names = env
    client = cp.client("test")
    await cp.start(names)
    first = cp.components[STATEFULSET]
    await create_nodes(client, [node("n1")])
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    before = await web_pods_bound(client, 2)
    await held_by(client, KCM, "rival_9", clock)  # another process believes it holds the lease
    await step(cp, clock, 2.0)  # the renewal fails, the controllers still run (renew deadline 10 s)
    assert STATEFULSET in cp.components
    await step(cp, clock, 10.0)  # 10 s without a renewal: the controllers stop, the scheduler runs on
    assert STATEFULSET not in cp.components and SCHEDULER in cp.components
    assert not cp.electors[KCM].leading and cp.electors[SCHED].leading
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 3}}, "default")
    assert len((await client.list(PODS, "default", label_selector="app=web"))["items"]) == 2
    events = await wait_for_list(
        client, EVENTS, NS, lambda items: any(e["message"].endswith(" stopped leading") for e in items)
    )
    assert [e["source"]["component"] for e in events if e["message"].endswith(" stopped leading")] == [KCM]
    await step(cp, clock, 6.0)  # the rival never renewed: its lease expired at t=17, ours again
    assert cp.components[STATEFULSET] is not first
    pods = await web_pods_bound(client, 3)
    # the restarted controller resumed: the two old pods are the same objects, one pod was added
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}
    assert all(uids[p["metadata"]["name"]] == p["metadata"]["uid"] for p in before)
    spec = await holder(client, KCM)
    assert spec["holderIdentity"] == cp.electors[KCM].identity and spec["leaseTransitions"] == 2


async def test_a_graceful_stop_releases_the_leases_and_a_restart_leads_at_once(
    env: tuple[ControlPlane, FakeClock, list[str]],
) -> None:
    cp, clock, names = env
    client = cp.client("test")
    await cp.start(names)
    identities = {lease: (await holder(client, lease))["holderIdentity"] for lease in (KCM, SCHED)}
    await cp.stop_components()
    assert cp.components == {} and cp.electors == {}
    for lease in (KCM, SCHED):
        spec = await holder(client, lease)
        assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    await cp.start(names)
    assert set(cp.components) == {STATEFULSET, SCHEDULER}
    for lease in (KCM, SCHED):
        spec = await holder(client, lease)
        assert spec["holderIdentity"] not in ("", identities[lease]) and spec["leaseTransitions"] == 1
    # a crash (no release) instead: the next start has to wait the lease out
    await cp.stop_components(release=False)
    await cp.start(names)
    assert cp.components == {}
    await step(cp, clock, 16.0)
    assert set(cp.components) == {STATEFULSET, SCHEDULER}
    obj = await wait_for_object(
        client, LEASES, KCM, NS, lambda o: o is not None and o["spec"]["leaseTransitions"] == 2
    )
    assert obj is not None
