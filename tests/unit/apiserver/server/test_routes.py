"""Which method each resource path shape routes, as kube's API installer installs them (issue 25, N1).

kube serves only LIST and WATCH on the all-namespaces collection path of a namespaced resource;
any other method there, PUT/PATCH on a collection, and a verb a subresource's storage does not
implement are go-restful's 405 — never a delete of every namespace's objects, nor a delete of the
pod behind ``pods/x/status``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from apiserver import errors
from apiserver.client.interface import GVR
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry
from apiserver.server.localclient import LocalClient

NOT_ROUTED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server does not allow this method on the requested resource",
    "reason": "MethodNotAllowed",
    "details": {},
    "code": 405,
}
POD = {
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


def _run(requests: list[tuple[str, str]], api: Any = None) -> tuple[list[httpx.Response], Any]:
    reg, metrics = new_metrics_registry()
    api = api or build_api()
    app = APIApp(api, metrics, reg).asgi()

    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for ns in ("default", "other"):
                if ns != "default":
                    await c.post("/api/v1/namespaces", json={"metadata": {"name": ns}})
                await c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}})
                await c.post(f"/api/v1/namespaces/{ns}/pods", json=POD)
            out = []
            for method, path in requests:
                ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
                out.append(await c.request(method, path, content=b"{}", headers={"Content-Type": ctype}))
            return out

    return asyncio.run(go()), api


ALL_NAMESPACES = [
    (m, p)
    for p in ("/api/v1/configmaps", "/api/v1/pods", "/apis/apps/v1/statefulsets")
    for m in ("POST", "PUT", "PATCH", "DELETE")
]
OTHER_SHAPES = [
    ("PUT", "/api/v1/namespaces/default/configmaps"),  # no update on a collection
    ("PATCH", "/api/v1/nodes"),
    ("PUT", "/api/v1/nodes"),
    ("POST", "/api/v1/namespaces/default/configmaps/cm"),  # no create on an object
    ("POST", "/api/v1/nodes/n"),
    ("DELETE", "/api/v1/namespaces/default/pods/p/status"),  # status serves get/update/patch only
    ("POST", "/api/v1/namespaces/default/pods/p/status"),
    ("GET", "/api/v1/namespaces/default/pods/p/binding"),  # binding is create only
    ("DELETE", "/api/v1/namespaces/default/pods/p/eviction"),
    ("GET", "/api/v1/namespaces/default/finalize"),  # finalize is update only
    ("DELETE", "/api/v1/namespaces/other/status"),
    ("DELETE", "/api/v1/namespaces"),  # namespaces have no delete-collection
]


@pytest.mark.parametrize(("method", "path"), ALL_NAMESPACES + OTHER_SHAPES)
def test_an_unrouted_method_is_kubes_405_and_changes_nothing(method: str, path: str) -> None:
    (r,), api = _run([(method, path)])
    assert r.status_code == 405, r.text
    assert r.json() == NOT_ROUTED
    for ns in ("default", "other"):
        names = [
            rec.obj["metadata"]["name"] for rec in api.list(api.registry.get("", "v1", "pods"), ns).records
        ]
        assert names == ["p"]
        cms = api.list(api.registry.get("", "v1", "configmaps"), ns).records
        assert [rec.obj["metadata"]["name"] for rec in cms] == ["cm"]


def test_routed_shapes_still_serve() -> None:
    got, _ = _run(
        [
            ("GET", "/api/v1/configmaps"),
            ("DELETE", "/api/v1/namespaces/default/configmaps"),
            ("GET", "/api/v1/namespaces/other/configmaps/cm"),
            ("DELETE", "/api/v1/namespaces/other/pods/p"),
        ]
    )
    assert [r.status_code for r in got] == [200, 200, 200, 200]
    assert [i["metadata"]["name"] for i in got[0].json()["items"]] == ["cm", "cm"]


def test_the_in_process_client_refuses_a_cluster_wide_delete_collection() -> None:
    async def go() -> None:
        api = build_api()
        client = LocalClient(api)
        await client.create(GVR("", "v1", "configmaps"), {"metadata": {"name": "cm"}}, "default")
        with pytest.raises(errors.StatusError) as e:
            await client.delete_collection(GVR("", "v1", "configmaps"))
        assert e.value.code == 405
        assert len((await client.list(GVR("", "v1", "configmaps")))["items"]) == 1

    asyncio.run(go())
