"""The node lifecycle controller's incremental monitor pass equals the full one.

Two control planes on fake clocks live the same random history (nodes created in zones or
without one, Ready heartbeats True/False, Lease renewals, label edits, deletions, silences long
enough to cross the grace periods, every zone down); one runs the controller with
``incremental=True`` (what a pass derives from an unchanged Node is kept by resourceVersion),
the other with the full recomputation. After every step the observable state must be the same:
node taints and conditions, pod conditions, events, zone states and rows, queued taints and the
next monitor deadline.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, LEASES, NODES, PODS, Client
from apiserver.meta import FakeClock, rfc3339, rfc3339_micro
from apiserver.server.localclient import LocalClient
from apiserver.server.loopshare import LoopShare
from controllers.nodelifecycle import NodeLifecycleController, node_lifecycle_factory
from controllers.nodelifecycle.controller import MONITOR, NODE_LEASE_NAMESPACE
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

pytestmark = pytest.mark.anyio

NAMES = [f"n{i}" for i in range(10)]
ZONES = ["za", "zb", None]


@dataclass
class Plane:
    cp: ControlPlane
    clock: FakeClock
    lc: NodeLifecycleController

    @property
    def client(self) -> Client:
        # the history's requests turn before each one, as the in-process client's all did when
        # this test was written: a step and the snapshot after it rely on the controller's
        # informers having been given the loop between the history's requests (``wait_idle``
        # counts only keys already enqueued); ``LoopShare`` lets four requests of a step run at once
        return LocalClient(self.cp.api, "history", loop_share=LoopShare(every=True))

    async def idle(self) -> None:
        await self.lc.wait_idle(5.0)


async def start(incremental: bool) -> Plane:
    clock = FakeClock()
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate(), clock=clock))
    cp.register("node-lifecycle-controller", node_lifecycle_factory(incremental=incremental))
    lc = await cp.start_component("node-lifecycle-controller")
    assert isinstance(lc, NodeLifecycleController)
    return Plane(cp, clock, lc)


async def ignore(code: int, coro: Any) -> Any:
    try:
        return await coro
    except errors.StatusError as e:
        if e.code not in (code, 404, 409):
            raise
        return None


async def heartbeat(p: Plane, name: str, status: str | None) -> None:
    """Kubelet's status post: the Ready condition (status None: a node that never posted one)."""
    node = await ignore(404, p.client.get(NODES, name))
    if node is None or status is None:
        return
    now = rfc3339(p.clock.now())
    conds = [c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") != "Ready"]
    old = next(
        (c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {}
    )
    moved = old.get("status") != status
    conds.append(
        {
            "type": "Ready",
            "status": status,
            "reason": "KubeletReady" if status == "True" else "KubeletNotReady",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now if moved else old.get("lastTransitionTime", now),
        }
    )
    await ignore(
        409,
        p.client.update_status(
            NODES, {**node, "status": {**(node.get("status") or {}), "conditions": conds}}
        ),
    )


async def create(p: Plane, name: str, zone: str | None, ready: str | None) -> None:
    labels = {"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "r"} if zone else {}
    body: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    if await ignore(409, p.client.create(NODES, body)) is None:
        return
    await heartbeat(p, name, ready)
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{name}"},
        "spec": {"nodeName": name, "containers": [{"name": "c", "image": "busybox"}]},
    }
    made = await ignore(409, p.client.create(PODS, pod, "default"))
    if made is not None:
        ready_cond = {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(p.clock.now())}
        await p.client.update_status(
            PODS, {**made, "status": {"phase": "Running", "conditions": [ready_cond]}}, "default"
        )


async def renew(p: Plane, name: str) -> None:
    ts = rfc3339_micro(p.clock.now())
    lease = await ignore(404, p.client.get(LEASES, name, NODE_LEASE_NAMESPACE))
    if lease is None:
        body: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": NODE_LEASE_NAMESPACE},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": ts},
        }
        await ignore(409, p.client.create(LEASES, body, NODE_LEASE_NAMESPACE))
    else:
        await ignore(
            409,
            p.client.update(
                LEASES, {**lease, "spec": {**lease["spec"], "renewTime": ts}}, NODE_LEASE_NAMESPACE
            ),
        )


async def touch(p: Plane, name: str, value: str) -> None:
    """A label edit: a new resourceVersion with nothing the controller reads changed."""
    await ignore(404, p.client.patch(NODES, name, {"metadata": {"labels": {"touched": value}}}))


async def apply(p: Plane, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "create":
        await create(p, *op[1:])
    elif kind == "beat":
        await heartbeat(p, op[1], op[2])
    elif kind == "renew":
        await renew(p, op[1])
    elif kind == "touch":
        await touch(p, op[1], op[2])
    elif kind == "delete":
        await ignore(404, p.client.delete(NODES, op[1]))
    elif kind == "step":
        p.clock.step(op[1])
        p.lc.timers.fire_due()
    await p.idle()


def history(seed: int, steps: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    ops: list[tuple[Any, ...]] = [("create", n, rng.choice(ZONES), "True") for n in NAMES[:6]]
    for i in range(steps):
        r = rng.random()
        name = rng.choice(NAMES)
        if r < 0.06:
            ops.append(("create", name, rng.choice(ZONES), rng.choice(["True", "True", "False", None])))
        elif r < 0.09:
            ops.append(("delete", name))
        elif r < 0.14:
            ops.append(("touch", name, str(i)))
        elif r < 0.50:
            # a live kubelet posts True; a sick one False; some stay silent for whole stretches
            ops.append(("beat", name, "True" if rng.random() < 0.8 else "False"))
        elif r < 0.70:
            ops.append(("renew", name))
        else:
            ops.append(("step", rng.choice([1.0, 5.0, 5.0, 10.0, 20.0, 45.0])))
    return ops


async def snapshot(p: Plane) -> dict[str, Any]:
    nodes = (await p.client.list(NODES))["items"]
    pods = (await p.client.list(PODS, "default"))["items"]
    events = (await p.client.list(EVENTS, "default"))["items"]
    lc = p.lc
    return {
        "nodes": sorted(
            (
                n["metadata"]["name"],
                repr((n.get("spec") or {}).get("taints")),
                repr((n.get("status") or {}).get("conditions")),
            )
            for n in nodes
        ),
        "pods": sorted(
            (q["metadata"]["name"], repr((q.get("status") or {}).get("conditions"))) for q in pods
        ),
        "events": sorted(
            (
                e["involvedObject"]["kind"],
                e["involvedObject"]["name"],
                e["type"],
                e["reason"],
                e["message"],
                e.get("count"),
            )
            for e in events
        ),
        "zones": lc.zone_states(),
        "rows": lc.zone_rows(),
        "queued": {z: lc.pending_taints(z) for z in lc.zone_states()},
        "next_monitor": lc.timers.due_at(MONITOR),
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_incremental_monitor_pass_equals_the_full_one_on_random_histories(seed: int) -> None:
    inc, full = await start(True), await start(False)
    try:
        seen_taint = seen_not_ready = False
        for i, op in enumerate(history(seed, 260)):
            await apply(inc, op)
            await apply(full, op)
            a, b = await snapshot(inc), await snapshot(full)
            assert a == b, f"seed {seed}, step {i} {op}"
            seen_taint |= any("NoExecute" in n[1] for n in a["nodes"])
            seen_not_ready |= any(e[3] == "NodeNotReady" for e in a["events"])
        # the history did reach the paths under test
        assert seen_taint and seen_not_ready
    finally:
        await inc.cp.stop()
        await full.cp.stop()
