"""The storage contract as a client sees it through the API (in-process client), on every backend:
resourceVersion preconditions answered 409, pages with continue tokens, and for persisting
backends, a control plane rebuilt on the reopened store serving the same objects, the same
continue token and the same watch."""

from __future__ import annotations

import pytest

from apiserver.client.interface import CONFIGMAPS
from apiserver.errors import StatusError
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.storage.conftest import Backend

pytestmark = pytest.mark.anyio


async def _plane(backend: Backend) -> ControlPlane:
    cp = ControlPlane(ControlPlaneOptions(storage=backend.factory()))
    await cp.start([])
    return cp


def _cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def test_stale_resource_versions_get_409_through_the_api(backend: Backend) -> None:
    cp = await _plane(backend)
    try:
        c = cp.client("test")
        a = await c.create(CONFIGMAPS, _cm("a", v="1"), "default")
        b = await c.update(CONFIGMAPS, {**a, "data": {"v": "2"}}, "default")
        assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
        with pytest.raises(StatusError) as e:
            await c.update(CONFIGMAPS, {**a, "data": {"v": "3"}}, "default")
        assert e.value.code == 409 and e.value.reason == "Conflict"
        assert e.value.message == (
            'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )
        assert (await c.get(CONFIGMAPS, "a", "default"))["data"] == {"v": "2"}
    finally:
        await cp.stop()


async def test_pages_and_watches_outlive_a_restart_on_a_persisting_backend(backend: Backend) -> None:
    cp = await _plane(backend)
    c = cp.client("test")
    try:
        for i in range(5):
            await c.create(CONFIGMAPS, _cm(f"cm{i}", v=str(i)), "default")
        page = await c.list(CONFIGMAPS, "default", limit=2)
        assert [o["metadata"]["name"] for o in page["items"]] == ["cm0", "cm1"]
        token, seen = page["metadata"]["continue"], page["metadata"]["resourceVersion"]
        await c.delete(CONFIGMAPS, "cm2", "default")
        after_delete = await c.get(CONFIGMAPS, "cm3", "default")
    finally:
        await cp.stop()
    if not backend.persistent:
        pytest.skip(f"{backend.name} keeps nothing across a restart")
    cp = await _plane(backend)
    c = cp.client("test")
    try:
        assert await c.get(CONFIGMAPS, "cm3", "default") == after_delete
        # the page after the first, at the first page's revision (cm2 is still there): SQLite
        # replays its history, etcd still holds the revision (kube-apiserver reads it from there)
        rest = await c.list(CONFIGMAPS, "default", limit=10, continue_=token)
        assert [o["metadata"]["name"] for o in rest["items"]] == ["cm2", "cm3", "cm4"]
        assert rest["metadata"]["resourceVersion"] == seen
        assert rest["metadata"].get("continue", "") == ""
        paged = await c.list(CONFIGMAPS, "default", limit=1, continue_=token)
        assert [o["metadata"]["name"] for o in paged["items"]] == ["cm2"]
        assert [
            o["metadata"]["name"]
            for o in (await c.list(CONFIGMAPS, "default", limit=10, continue_=paged["metadata"]["continue"]))[
                "items"
            ]
        ] == ["cm3", "cm4"]
        events = []
        async for ev in c.watch(CONFIGMAPS, "default", resource_version=seen):
            events.append((ev.type, ev.object.get("reason") or ev.object["metadata"]["name"]))
            break
        if backend.replays_history_after_restart:
            assert events == [("DELETED", "cm2")]
        else:
            assert events in ([("DELETED", "cm2")], [("ERROR", "Expired")])
    finally:
        await cp.stop()
