"""KEP-6277 crash recovery ("a restart mid-workflow … recoverable"), issue 25 K1: the control plane is
restarted on its ``--data-dir`` at every step of a gang StatefulSet's life — create, rolling update,
scale, delete — and every time it converges.

The scene of the issue: a 4-replica gang (``Parallel``, 2-CPU pods) on five 2-CPU nodes. Each step
changes the StatefulSet, waits for the mid-way state the issue names (for the rollout: one member
updated and Running while an old one remains), stops the whole plane and opens a new one on the
same SQLite directory. The new plane starts its controllers and node agent first and its scheduler
only once the controllers have had their say (what a kill -9 leaves: the restarted controllers
create the replacement before the scheduler holds its Lease). The replacement is then pending and
listed before a bound sibling of a higher ordinal, the order that used to leave it held at
PreEnqueue for good; the step must still converge: every member Running on the update revision.

Rounds repeat the whole life on a fresh directory. The staged start makes the race happen on
every restart where a replacement is pending (before the fix, the first rollout restart left
``db-2`` Pending with no node, as the issue found it, every time), so two rounds — six restarts
with pending members, about 35 s — cover what a 1-in-5 race would need many runs to show.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from apiserver.storage.options import StorageOptions, open_storage
from controllers.fleet import parse_fleet
from gangplane.controlplane import SCHEDULER, ControlPlane, ControlPlaneOptions, default_components
from gangplane.testing.waiters import wait_for, wait_list

pytestmark = pytest.mark.anyio
NS = "default"
ROUNDS = 2
FLEET = {"nodes": [{"name": "n-{i}", "count": 5, "capacity": {"cpu": "2", "memory": "8Gi", "pods": "10"}}]}


def gang_set(replicas: int, image: str = "registry.k8s.io/pause:3.10") -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": "2"}}}]
                },
            },
        },
    }


class Plane:
    """One control plane on ``data_dir``; :meth:`restart` replaces it with a new one on the same dir."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.cp: ControlPlane | None = None

    async def open(self, before_scheduler: Callable[[Any], Any] | None = None) -> Any:
        storage = open_storage(StorageOptions(data_dir=str(self.data_dir)))
        cp = ControlPlane(
            ControlPlaneOptions(storage=storage, bookmark_interval=0.5, client_bookmark_interval=0.2)
        )
        names = default_components(cp, parse_fleet(FLEET))
        self.cp = cp
        await cp.start([n for n in names if n != SCHEDULER])
        client = cp.client("test")
        if before_scheduler is not None:
            await before_scheduler(client)
        await cp.start([SCHEDULER])
        return client

    async def restart(self, before_scheduler: Callable[[Any], Any] | None = None) -> Any:
        assert self.cp is not None
        await self.cp.stop()
        return await self.open(before_scheduler)

    async def close(self) -> None:
        if self.cp is not None:
            await self.cp.stop()


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[Plane]:
    p = Plane(tmp_path / "data")
    try:
        yield p
    finally:
        await p.close()


def _running(p: Obj) -> bool:
    return (p.get("status") or {}).get("phase") == "Running" and bool(p["spec"].get("nodeName"))


def _revision(p: Obj) -> str:
    return (p["metadata"].get("labels") or {}).get("controller-revision-hash", "")


async def _pods(client: Any, cond: Callable[[list[Obj]], bool], what: str, timeout: float = 30) -> list[Obj]:
    return await wait_list(
        client, PODS, cond, namespace=NS, label_selector="app=db", timeout=timeout, what=what
    )


async def _converged(client: Any, replicas: int) -> None:
    """Every member Running on the StatefulSet's update revision (what the user waits for)."""

    async def update_revision() -> str:
        def observed(o: Obj | None) -> bool:
            st = (o or {}).get("status") or {}
            gen = (o or {}).get("metadata", {}).get("generation")
            return bool(st.get("updateRevision")) and st.get("observedGeneration") == gen

        ss = await wait_for(client, gvr=STATEFULSETS, name="db", namespace=NS, condition=observed, timeout=30)
        assert ss is not None
        return ss["status"]["updateRevision"]

    def done(items: list[Obj]) -> bool:
        return len(items) == replicas and all(_running(p) for p in items)

    for _ in range(3):  # the revision may move while we look: look again
        want = await update_revision()
        items = await _pods(
            client,
            lambda items, want=want: done(items) and all(_revision(p) == want for p in items),
            f"{replicas} db pods Running on revision {want}",
        )
        if want and want == await update_revision():
            assert sorted(p["metadata"]["name"] for p in items) == [f"db-{i}" for i in range(replicas)]
            return
    raise AssertionError("the StatefulSet's update revision kept moving")


async def _controllers_settle(client: Any) -> None:
    """Give the restarted controllers their say before the scheduler starts: until every desired
    member exists and none is terminating (a replacement, if one was due, is created — and
    pending, since no scheduler runs yet)."""

    async def desired() -> int:
        ss = await client.get(STATEFULSETS, "db", NS)
        return int(ss["spec"].get("replicas", 0))

    n = await desired()

    def settled(items: list[Obj]) -> bool:
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        return len(live) == len(items) >= n

    await _pods(client, settled, f"{n} db pods created, none terminating")


async def test_a_gang_statefulset_converges_after_a_restart_at_every_step(plane: Plane) -> None:
    for round_ in range(ROUNDS):
        if round_:
            await plane.close()
            plane.data_dir = plane.data_dir.with_name(f"data-{round_}")
        client = await plane.open()

        # create: restart once the first member exists
        await client.create(STATEFULSETS, gang_set(4), NS)
        await _pods(client, lambda items: len(items) >= 1, "a db pod")
        client = await plane.restart(_controllers_settle)
        await _converged(client, 4)

        # rolling update: restart with one member updated and Running and an old one left
        ss = await client.get(STATEFULSETS, "db", NS)
        old = ss["status"]["currentRevision"]
        await client.patch(
            STATEFULSETS,
            "db",
            {"spec": {"template": {"metadata": {"annotations": {"round": str(round_)}}}}},
            NS,
        )
        await _pods(
            client,
            lambda items, old=old: (
                any(_running(p) and _revision(p) != old for p in items)
                and any(_revision(p) == old for p in items)
            ),
            "one member updated and Running, one old left",
        )
        client = await plane.restart(_controllers_settle)
        await _converged(client, 4)

        # scale: restart once the fifth member exists
        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 5}}, NS)
        await _pods(client, lambda items: len(items) >= 5, "5 db pods")
        client = await plane.restart(_controllers_settle)
        await _converged(client, 5)

        # delete: restart right after the delete; the members, the Workload and the PodGroup go
        await client.delete(STATEFULSETS, "db", NS)
        client = await plane.restart()
        await _pods(client, lambda items: not items, "no db pods")
        await wait_list(client, PODGROUPS, lambda items: not items, namespace=NS, what="no PodGroups")
        await wait_list(client, WORKLOADS, lambda items: not items, namespace=NS, what="no Workloads")
