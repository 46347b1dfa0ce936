"""Test plan: "a dependent whose owner UID mismatches is collected" — and the other ways an
ownerReference can fail to resolve (another namespace, never existed, cluster scope rules)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONFIGMAPS, EVENTS, NAMESPACES, PVS
from controllers.garbagecollector import GarbageCollector
from controllers.manager import GARBAGE_COLLECTOR, register_controllers
from controllers.testing import observed, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import cm, wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def gc(cp: ControlPlane) -> AsyncIterator[GarbageCollector]:
    register_controllers(cp, "garbagecollector")
    c = await cp.start_component(GARBAGE_COLLECTOR)
    assert isinstance(c, GarbageCollector)
    yield c


def owned(name: str, owner_ref: Obj, ns: str = "default") -> Obj:
    body = cm(name, ns=ns)
    body["metadata"]["ownerReferences"] = [owner_ref]
    return body


def cm_ref(name: str, uid: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid}


async def settled(gc: GarbageCollector, ns: str, name: str) -> None:
    """The collector has seen ``ns/name`` and finished everything that caused."""
    await observed(gc.informers.informer(CONFIGMAPS), f"{ns}/{name}", lambda o: o is not None)
    await gc.wait_idle()


async def test_dependent_of_an_owner_with_another_uid_is_collected(client: Any, gc: GarbageCollector) -> None:
    await client.create(CONFIGMAPS, cm("owner"), "default")
    await client.create(CONFIGMAPS, owned("dep", cm_ref("owner", "not-the-live-uid")), "default")
    await wait_object(client, CONFIGMAPS, "dep", "default", lambda o: o is None)
    assert (await client.get(CONFIGMAPS, "owner", "default"))["metadata"]["name"] == "owner"


async def test_dependent_of_an_owner_that_never_existed_is_collected(
    client: Any, gc: GarbageCollector
) -> None:
    await client.create(CONFIGMAPS, owned("dep", cm_ref("ghost", "ghost-uid")), "default")
    await wait_object(client, CONFIGMAPS, "dep", "default", lambda o: o is None)


async def test_dependent_of_a_live_owner_is_kept(client: Any, gc: GarbageCollector) -> None:
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    await client.create(CONFIGMAPS, owned("dep", cm_ref("owner", owner["metadata"]["uid"])), "default")
    await settled(gc, "default", "dep")
    assert (await client.get(CONFIGMAPS, "dep", "default"))["metadata"]["ownerReferences"]


async def test_owner_in_another_namespace_counts_as_absent(client: Any, gc: GarbageCollector) -> None:
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    owner = await client.create(CONFIGMAPS, cm("owner", ns="other"), "other")
    await client.create(CONFIGMAPS, owned("dep", cm_ref("owner", owner["metadata"]["uid"])), "default")
    await wait_object(client, CONFIGMAPS, "dep", "default", lambda o: o is None)
    evs = await wait_for_list(
        client, EVENTS, "default", lambda items: any(e["reason"] == "OwnerRefInvalidNamespace" for e in items)
    )
    ev = next(e for e in evs if e["reason"] == "OwnerRefInvalidNamespace")
    assert ev["type"] == "Warning"
    assert ev["involvedObject"]["name"] == "dep"
    assert ev["message"] == (
        f"ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {owner['metadata']['uid']}] "
        'does not exist in namespace "default"'
    )


async def test_cluster_scoped_owner_of_a_namespaced_dependent_is_found(
    client: Any, gc: GarbageCollector
) -> None:
    ns = await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    ns_ref = {"apiVersion": "v1", "kind": "Namespace", "name": "team", "uid": ns["metadata"]["uid"]}
    await client.create(CONFIGMAPS, owned("dep", ns_ref), "default")
    await settled(gc, "default", "dep")
    assert (await client.get(CONFIGMAPS, "dep", "default"))["metadata"]["name"] == "dep"


async def test_cluster_scoped_dependent_of_a_namespaced_kind_is_never_collected(
    client: Any, gc: GarbageCollector
) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1", "ownerReferences": [cm_ref("owner", "whatever")]},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/x"},
        },
    }
    await client.create(PVS, pv)
    await observed(gc.informers.informer(PVS), "pv-1", lambda o: o is not None)
    await gc.wait_idle()
    assert (await client.get(PVS, "pv-1"))["metadata"]["name"] == "pv-1"
