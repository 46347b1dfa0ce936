"""KEP-6277 "Controller Workflow", counted: a gang StatefulSet costs the controller exactly the
requests kube's StatefulSet controller and its Workload integration make, once each.

The controller runs over a client that counts what it sends (its informers' lists and watches
included): after the set is created, every write request (its Events included) and every read
is tallied by verb and resource. A status write with equal content (which the server stores as
no change, so no resourceVersion shows it), a patch of the Workload or PodGroup it just
created, or a read of what its informers hold would each show here.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from apiserver.client.interface import CONTROLLERREVISIONS, GVR, PODS, STATEFULSETS
from apiserver.meta import key_of
from controllers.manager import STATEFULSET
from controllers.testing import observed
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import (
    GANG,
    NS,
    pod_groups,
    settled,
    start_statefulset_controller,
    sts_manifest,
    wait_pods,
    workloads,
)

pytestmark = pytest.mark.anyio

_COUNTED = ("create", "update", "update_status", "patch", "delete", "delete_collection", "get", "list")


class CountingClient:
    """The controller's client, counting its requests by (verb, resource) once ``counting``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.counting = False
        self.requests: Counter[tuple[str, str]] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in _COUNTED:
            return attr

        def counted(gvr: GVR, *args: Any, **kwargs: Any) -> Any:
            if self.counting:
                self.requests[(name, gvr.resource)] += 1
            return attr(gvr, *args, **kwargs)

        return counted


@pytest.mark.parametrize("replicas", [3, 1])
async def test_a_gang_set_costs_the_controller_kubes_requests_once(
    cp: ControlPlane, client: Any, replicas: int
) -> None:
    counting = CountingClient(cp.client(STATEFULSET))
    ctrl = await start_statefulset_controller(cp, counting)
    counting.counting = True
    await client.create(STATEFULSETS, sts_manifest("db", replicas, GANG, policy="Parallel"), NS)
    await wait_pods(client, "db", replicas)
    await settled(ctrl, client, "db")
    # every sync the controller's own objects cause has run: its informers hold each of them as
    # stored, and the syncs they enqueued are done
    hook = ctrl.scheduling_hook
    for informer, objs in (
        (ctrl.pods, (await client.list(PODS, NS))["items"]),
        (ctrl.revisions, (await client.list(CONTROLLERREVISIONS, NS))["items"]),
        (hook.workloads, await workloads(client)),
        (hook.pod_groups, await pod_groups(client)),
    ):
        for o in objs:
            rv = o["metadata"]["resourceVersion"]
            await observed(
                informer, key_of(o), lambda c, rv=rv: c is not None and c["metadata"]["resourceVersion"] == rv
            )
    await settled(ctrl, client, "db")
    await ctrl.sync(f"{NS}/db")  # what any later event of the settled set causes
    await ctrl.recorder.flush()

    assert dict(counting.requests) == {
        ("create", "controllerrevisions"): 1,
        ("create", "workloads"): 1,
        ("create", "podgroups"): 1,
        ("create", "pods"): replicas,
        ("update_status", "statefulsets"): 1,
        # SuccessfulCreate per pod, WorkloadCreated, PodGroupCreated: each written once
        ("create", "events"): replicas + 2,
    }
    sts = await client.get(STATEFULSETS, "db", NS)
    assert sts["status"]["replicas"] == replicas and sts["status"]["observedGeneration"] == 1
