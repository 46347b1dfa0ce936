"""Custom objects in ownerReferences and garbage collection, and in namespace deletion — with the
garbage collector and the namespace controller learning about the CRD after they started."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONFIGMAPS, NAMESPACES
from controllers.garbagecollector import GarbageCollector
from controllers.manager import GARBAGE_COLLECTOR, NAMESPACE, register_controllers
from controllers.testing import observed, wait_object
from gangplane.controlplane import ControlPlane
from tests.crd_support import CRDS, CRONTABS, crontab, crontab_crd
from tests.helpers import cm

pytestmark = pytest.mark.anyio


def ref(obj: Obj, **extra: Any) -> Obj:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        **extra,
    }


async def start_gc(cp: ControlPlane) -> GarbageCollector:
    register_controllers(cp, "garbagecollector")
    gc = await cp.start_component(GARBAGE_COLLECTOR)
    assert isinstance(gc, GarbageCollector)
    return gc


async def crd_served_to(gc: GarbageCollector) -> None:
    """The collector has seen the CRD established (through its informer) and monitors crontabs."""
    await observed(
        gc.custom.informer,
        "crontabs.stable.example.com",
        lambda o: o is not None and any(r.gvr == CRONTABS for r in gc.custom.resources()),
    )


async def test_dependent_of_a_custom_object_is_collected(cp: ControlPlane, client: Any) -> None:
    gc = await start_gc(cp)
    await client.create(CRDS, crontab_crd())
    await crd_served_to(gc)
    owner = await client.create(CRONTABS, crontab("owner"), "default")
    dep = cm("dep")
    dep["metadata"]["ownerReferences"] = [ref(owner)]
    await client.create(CONFIGMAPS, dep, "default")
    await client.delete(CRONTABS, "owner", "default")
    assert await wait_object(client, CONFIGMAPS, "dep", "default", lambda o: o is None) is None


async def test_custom_object_owned_by_a_configmap_is_collected(cp: ControlPlane, client: Any) -> None:
    gc = await start_gc(cp)
    await client.create(CRDS, crontab_crd())
    await crd_served_to(gc)
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    owned = crontab("dep")
    owned["metadata"]["ownerReferences"] = [ref(owner)]
    await client.create(CRONTABS, owned, "default")
    await client.delete(CONFIGMAPS, "owner", "default")
    assert await wait_object(client, CRONTABS, "dep", "default", lambda o: o is None) is None


async def test_foreground_deletion_of_a_custom_object_waits_for_dependents(
    cp: ControlPlane, client: Any
) -> None:
    gc = await start_gc(cp)
    await client.create(CRDS, crontab_crd())
    await crd_served_to(gc)
    owner = await client.create(CRONTABS, crontab("owner"), "default")
    dep = cm("dep")
    dep["metadata"]["ownerReferences"] = [ref(owner, blockOwnerDeletion=True)]
    dep["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(CONFIGMAPS, dep, "default")
    await client.delete(CRONTABS, "owner", "default", propagation_policy="Foreground")
    held = await wait_object(
        client,
        CONFIGMAPS,
        "dep",
        "default",
        lambda o: o is not None and bool(o["metadata"].get("deletionTimestamp")),
    )
    assert held is not None
    owner_now = await client.get(CRONTABS, "owner", "default")
    assert owner_now["metadata"]["finalizers"] == ["foregroundDeletion"]
    await client.patch(CONFIGMAPS, "dep", {"metadata": {"finalizers": None}}, "default")
    assert await wait_object(client, CRONTABS, "owner", "default", lambda o: o is None) is None


async def test_namespace_deletion_removes_custom_objects(cp: ControlPlane, client: Any) -> None:
    register_controllers(cp, "namespace")
    await cp.start_component(NAMESPACE)
    await client.create(CRDS, crontab_crd())
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    await client.create(CRONTABS, crontab("a", ns="gone"), "gone")
    nsc = cp.components[NAMESPACE]
    await observed(
        nsc.custom.informer,
        "crontabs.stable.example.com",
        lambda o: o is not None and bool(nsc.custom.resources()),
    )
    await client.delete(NAMESPACES, "gone")
    assert await wait_object(client, NAMESPACES, "gone", "", lambda o: o is None, timeout=20) is None
    assert (await client.list(CRONTABS, "gone"))["items"] == []


async def test_collector_stops_and_resumes_monitoring_as_the_crd_goes_and_returns(
    cp: ControlPlane, client: Any
) -> None:
    gc = await start_gc(cp)
    await client.create(CRDS, crontab_crd())
    await crd_served_to(gc)
    await client.delete(CRDS, "crontabs.stable.example.com")
    await observed(gc.custom.informer, "crontabs.stable.example.com", lambda o: o is None)
    assert gc.custom.resources() == []
    await client.create(CRDS, crontab_crd())
    await crd_served_to(gc)
    owner = await client.create(CRONTABS, crontab("owner"), "default")
    dep = cm("dep")
    dep["metadata"]["ownerReferences"] = [ref(owner)]
    await client.create(CONFIGMAPS, dep, "default")
    await client.delete(CRONTABS, "owner", "default")
    assert await wait_object(client, CONFIGMAPS, "dep", "default", lambda o: o is None) is None
