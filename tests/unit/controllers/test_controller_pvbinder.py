"""The minimal PV binder: provisions or matches a PersistentVolume and binds both sides."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.client.interface import PVCS, PVS
from controllers.manager import PV_BINDER, register_controllers
from controllers.testing import wait_object
from controllers.volume.binder import volume_fits
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio


@pytest.fixture
async def binder(cp: ControlPlane) -> AsyncIterator[None]:
    register_controllers(cp, "persistentvolume-binder")
    await cp.start_component(PV_BINDER)
    yield


def claim(name: str, size: str = "1Gi", **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec},
    }


def volume(name: str, size: str, **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": f"/v/{name}"},
            **spec,
        },
    }


def bound(o: dict | None) -> bool:
    return (o or {}).get("status", {}).get("phase") == "Bound"


async def test_a_claim_without_a_fitting_volume_gets_a_provisioned_one(client: Any, binder: None) -> None:
    created = await client.create(PVCS, claim("data", "2Gi"), "default")
    got = await wait_object(client, PVCS, "data", "default", bound)
    assert got is not None
    assert got["spec"]["volumeName"] == f"pvc-{created['metadata']['uid']}"
    assert got["status"]["capacity"] == {"storage": "2Gi"}
    assert got["metadata"]["annotations"] == {
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    pv = await wait_object(client, PVS, got["spec"]["volumeName"], "", bound)
    assert pv is not None
    assert pv["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"


async def test_the_smallest_fitting_available_volume_is_used(client: Any, binder: None) -> None:
    await client.create(PVS, volume("big", "10Gi"))
    await client.create(PVS, volume("small", "1Gi"))
    await client.create(PVS, volume("fits", "3Gi"))
    await client.create(PVCS, claim("data", "2Gi"), "default")
    got = await wait_object(client, PVCS, "data", "default", bound)
    assert got is not None and got["spec"]["volumeName"] == "fits"


async def test_a_deleted_claim_releases_its_volume(client: Any, binder: None) -> None:
    await client.create(PVS, volume("kept", "1Gi", persistentVolumeReclaimPolicy="Retain"))
    await client.create(PVCS, claim("data"), "default")
    await wait_object(client, PVCS, "data", "default", bound)
    await client.delete(PVCS, "data", "default")
    released = await wait_object(
        client, PVS, "kept", "", lambda o: (o or {}).get("status", {}).get("phase") == "Released"
    )
    assert released is not None
    await client.create(PVCS, claim("temp"), "default")
    temp = await wait_object(client, PVCS, "temp", "default", bound)
    assert temp is not None and temp["spec"]["volumeName"].startswith("pvc-")
    await client.delete(PVCS, "temp", "default")
    await wait_object(client, PVS, temp["spec"]["volumeName"], "", lambda o: o is None)


def test_volume_fits() -> None:
    c = claim("c", "1Gi", storageClassName="fast")
    assert volume_fits(volume("v", "1Gi", storageClassName="fast"), c)
    assert not volume_fits(volume("v", "1Gi"), c)
    assert not volume_fits(volume("v", "500Mi", storageClassName="fast"), c)
    assert not volume_fits({**volume("v", "1Gi", storageClassName="fast"), "status": {"phase": "Bound"}}, c)
