"""A two-version CRD with ``conversion.strategy: Webhook``: objects stored in v1 are served in v2 (get,
list, watch) and written in v2 are stored in v1, through a ConversionReview webhook served over HTTPS;
a dead webhook gives kube's 500; a Webhook strategy without a client config is invalid."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.client.interface import GVR
from apiserver.errors import StatusError
from gangplane.testing.webhook import WebhookServer
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
V1 = GVR("example.com", "v1", "widgets")
V2 = GVR("example.com", "v2", "widgets")
NS = "default"


def convert(obj: dict, desired: str) -> dict:
    out = {**obj, "apiVersion": desired, "spec": dict(obj.get("spec") or {})}
    spec = out["spec"]
    if desired.endswith("/v2") and "size" in spec:
        spec["replicas"] = int(spec.pop("size"))
    if desired.endswith("/v1") and "replicas" in spec:
        spec["size"] = str(spec.pop("replicas"))
    return out


def conversion_handler(review: dict) -> dict:
    req = review["request"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": req["uid"],
            "result": {"status": "Success"},
            "convertedObjects": [convert(o, req["desiredAPIVersion"]) for o in req["objects"]],
        },
    }


def schema(spec_props: dict) -> dict:
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": spec_props}},
        }
    }


def crd(client_config: dict | None) -> dict:
    conversion: dict = {"strategy": "Webhook"}
    if client_config is not None:
        conversion["webhook"] = {"clientConfig": client_config, "conversionReviewVersions": ["v1"]}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "conversion": conversion,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": schema({"size": {"type": "string"}}),
                },
                {
                    "name": "v2",
                    "served": True,
                    "storage": False,
                    "schema": schema({"replicas": {"type": "integer"}}),
                },
            ],
        },
    }


async def established(client) -> None:
    def ok(o: dict | None) -> bool:
        return any(
            c.get("type") == "Established" and c.get("status") == "True"
            for c in ((o or {}).get("status") or {}).get("conditions") or []
        )

    await wait_for_object(client, CRDS, "widgets.example.com", cond=ok)


async def test_two_version_crd_served_through_the_conversion_webhook(cp, client) -> None:
    server = WebhookServer(conversion_handler).start()
    try:
        await client.create(CRDS, crd({"url": server.url, "caBundle": server.ca_bundle}))
        await established(client)
        w = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "a"},
            "spec": {"size": "3"},
        }
        created = await client.create(V1, w, NS)
        assert created["spec"] == {"size": "3"}
        assert server.calls == []  # same version: no conversion
        as_v2 = await client.get(V2, "a", NS)
        assert as_v2["apiVersion"] == "example.com/v2" and as_v2["spec"] == {"replicas": 3}
        assert as_v2["metadata"]["uid"] == created["metadata"]["uid"]
        req = server.calls[0]
        assert req["kind"] == "ConversionReview" and req["request"]["desiredAPIVersion"] == "example.com/v2"
        calls = len(server.calls)
        await client.get(V2, "a", NS)
        assert len(server.calls) == calls  # remembered

        w2 = {
            "apiVersion": "example.com/v2",
            "kind": "Widget",
            "metadata": {"name": "b"},
            "spec": {"replicas": 5},
        }
        out = await client.create(V2, w2, NS)
        assert out["apiVersion"] == "example.com/v2" and out["spec"] == {"replicas": 5}
        stored = await client.get(V1, "b", NS)
        assert stored["spec"] == {"size": "5"}
        listed = await client.list(V2, NS)
        assert sorted((i["metadata"]["name"], i["spec"]["replicas"]) for i in listed["items"]) == [
            ("a", 3),
            ("b", 5),
        ]

        events: list = []

        async def watch() -> None:
            async for ev in client.watch(V2, NS, resource_version=listed["metadata"]["resourceVersion"]):
                events.append(ev)
                return

        task = asyncio.ensure_future(watch())
        await client.patch(V1, "a", {"spec": {"size": "7"}}, NS)
        await asyncio.wait_for(task, 10)
        assert events[0].type == "MODIFIED" and events[0].object["spec"] == {"replicas": 7}

        server.stop()
        await client.patch(V1, "a", {"spec": {"size": "8"}}, NS)
        with pytest.raises(StatusError) as e:
            await client.get(V2, "a", NS)
        assert e.value.code == 500
        assert e.value.message.startswith(
            "Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: "
        )
        assert "connection refused" in e.value.message
    finally:
        server.stop()


async def test_webhook_strategy_needs_a_client_config(client) -> None:
    with pytest.raises(StatusError) as e:
        await client.create(CRDS, crd(None))
    assert e.value.code == 422
    assert "spec.conversion.webhook: Required value" in e.value.message
    bad = crd({"url": "http://example.com/convert"})
    with pytest.raises(StatusError) as e:
        await client.create(CRDS, bad)
    assert "'https' is the only allowed URL scheme" in e.value.message


async def test_a_list_is_converted_in_one_review(cp, client) -> None:
    server = WebhookServer(conversion_handler).start()
    try:
        await client.create(CRDS, crd({"url": server.url, "caBundle": server.ca_bundle}))
        await established(client)
        for i in range(3):
            w = {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{i}"},
                "spec": {"size": str(i)},
            }
            await client.create(V1, w, NS)
        listed = await client.list(V2, NS)
        assert [i["spec"]["replicas"] for i in listed["items"]] == [0, 1, 2]
        assert len(server.calls) == 1
        assert len(server.calls[0]["request"]["objects"]) == 3
    finally:
        server.stop()


async def test_a_list_over_http_is_converted_in_one_review_also_when_streamed(
    cp, client, monkeypatch
) -> None:
    """Over HTTP, a list of a webhook-converted version is converted before it is written, in one
    review, whether it is one body or streamed in chunks (``LIST_CHUNK_BYTES`` lowered here so that
    a few objects are a big list)."""
    import httpx
    import orjson

    from apiserver.server import app as app_module

    server = WebhookServer(conversion_handler).start()
    try:
        await client.create(CRDS, crd({"url": server.url, "caBundle": server.ca_bundle}))
        await established(client)
        for i in range(4):
            w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{i}"}}
            await client.create(V1, {**w, "spec": {"size": str(i)}}, NS)
        path = f"/apis/example.com/v2/namespaces/{NS}/widgets"
        transport = httpx.ASGITransport(app=cp.app.asgi())
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            small = await http.get(path)
            assert small.status_code == 200 and "content-length" in small.headers
            assert [i["spec"] for i in small.json()["items"]] == [{"replicas": i} for i in range(4)]
            assert len(server.calls) == 1
            monkeypatch.setattr(app_module, "LIST_CHUNK_BYTES", 100)
            async with http.stream("GET", path) as big:
                body = b"".join([c async for c in big.aiter_raw()])
            assert big.status_code == 200 and "content-length" not in big.headers
        doc = orjson.loads(body)
        assert doc["apiVersion"] == "example.com/v2" and doc["kind"] == "WidgetList"
        assert [(i["apiVersion"], i["spec"]) for i in doc["items"]] == [
            ("example.com/v2", {"replicas": i}) for i in range(4)
        ]
        assert len(server.calls) == 1  # the second list found every conversion remembered
    finally:
        server.stop()


async def test_a_watch_over_http_streams_converted_events(cp, client) -> None:
    """The HTTP watch of a webhook-converted version (the stream that ends with an ``ERROR`` event
    when it cannot go on) sends its events converted: ADDED for each object, then its modification."""
    import httpx
    import orjson

    server = WebhookServer(conversion_handler).start()
    try:
        await client.create(CRDS, crd({"url": server.url, "caBundle": server.ca_bundle}))
        await established(client)
        w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w0"}}
        created = await client.create(V1, {**w, "spec": {"size": "1"}}, NS)
        await client.patch(V1, "w0", {"spec": {"size": "2"}}, NS)
        path = f"/apis/example.com/v2/namespaces/{NS}/widgets"
        params = {
            "watch": "1",
            "timeoutSeconds": "1",
            "resourceVersion": created["metadata"]["resourceVersion"],
        }
        transport = httpx.ASGITransport(app=cp.app.asgi())
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            r = await http.get(path, params=params)
        assert r.status_code == 200
        events = [orjson.loads(line) for line in r.content.splitlines() if line]
        assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"]) for e in events] == [
            ("MODIFIED", "example.com/v2", {"replicas": 2})
        ]
        server.stop()
        await client.create(V1, {**w, "metadata": {"name": "w1"}, "spec": {"size": "3"}}, NS)
        params["resourceVersion"] = created["metadata"]["resourceVersion"]
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            r = await http.get(path, params=params)
        events = [orjson.loads(line) for line in r.content.splitlines() if line]
        assert [e["type"] for e in events] == ["ERROR"]  # no event is sent unconverted
        assert events[0]["object"]["code"] == 500
        assert "conversion webhook for example.com/v2, Kind=Widget failed" in events[0]["object"]["message"]
    finally:
        server.stop()
