"""The ``Client`` contract, held by both implementations: the in-process ``LocalClient`` and the
``HTTPClient`` (over HTTPS with a bearer token, against the same control plane served on a socket).

Every test runs once per implementation and asserts what a component observes: the objects,
the ``StatusError`` codes, reasons and messages, the watch events (resume from a
resourceVersion, bookmarks, 410 Expired, the initial-events-end bookmark) and an informer built
on top.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from apiserver.client.http import APIConnectionError, HTTPClient, HTTPTransport
from apiserver.client.informer import Informer
from apiserver.client.interface import CONFIGMAPS, NAMESPACES, PODS, STATEFULSETS, Client
from apiserver.client.restconfig import RESTConfig, load_kubeconfig
from apiserver.errors import StatusError
from apiserver.server.frontdoor import ADMIN, FrontDoorPolicy, new_token, static_tokens
from apiserver.server.tlsgen import serving_files
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from gangplane.kubeconfig import write_kubeconfig
from tests.helpers import cm

pytestmark = pytest.mark.anyio


@dataclass
class Target:
    """A control plane and a way to make clients of one implementation against it."""

    kind: str
    cp: ControlPlane
    new_client: Callable[[str], Client]


@pytest.fixture(params=["local", "http"])
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Target]:
    cp = ControlPlane(
        ControlPlaneOptions(gates=FeatureGate(), bookmark_interval=0.3, client_bookmark_interval=0.3)
    )
    await cp.start([])
    transports: list[HTTPTransport] = []
    try:
        if request.param == "local":
            yield Target("local", cp, cp.client)
            return
        token = new_token()
        tls = serving_files(tmp_path / "pki", "127.0.0.1")
        url = await cp.serve_http(
            "127.0.0.1", 0, front_door=FrontDoorPolicy([static_tokens({token: ADMIN})]), tls=tls
        )
        kubeconfig = tmp_path / "kubeconfig"
        write_kubeconfig(kubeconfig, url, token, tls.ca_pem())
        transport = HTTPTransport(load_kubeconfig(kubeconfig))
        transports.append(transport)
        yield Target("http", cp, lambda ua: HTTPClient(transport, ua))
    finally:
        for t in transports:
            await t.aclose()
        await cp.stop()


def sts(name: str, replicas: int = 1) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


async def test_crud_verbs_and_field_managers(target: Target) -> None:
    c = target.new_client("contract-test")
    made = await c.create(CONFIGMAPS, cm("a", {"v": "1"}), "default")
    assert made["metadata"]["name"] == "a" and made["metadata"]["resourceVersion"]
    assert made["metadata"]["managedFields"][0]["manager"] == "contract-test"
    got = await c.get(CONFIGMAPS, "a", "default")
    assert got == made
    got["data"] = {"v": "2"}
    updated = await c.update(CONFIGMAPS, got, "default", field_manager="explicit")
    assert updated["data"] == {"v": "2"}
    assert {m["manager"] for m in updated["metadata"]["managedFields"]} == {"contract-test", "explicit"}
    patched = await c.patch(CONFIGMAPS, "a", {"data": {"w": "3"}}, "default")
    assert patched["data"] == {"v": "2", "w": "3"}
    json_patched = await c.patch(
        CONFIGMAPS,
        "a",
        [{"op": "remove", "path": "/data/w"}],
        "default",
        patch_type="application/json-patch+json",
    )
    assert json_patched["data"] == {"v": "2"}
    applied = await c.patch(
        CONFIGMAPS,
        "a",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"v": "9"}},
        "default",
        patch_type="application/apply-patch+yaml",
        field_manager="applier",
        force=True,
    )
    assert applied["data"] == {"v": "9"}
    dry = await c.create(CONFIGMAPS, cm("dry"), "default", dry_run=True)
    assert dry["metadata"]["name"] == "dry"
    with pytest.raises(StatusError) as e:
        await c.get(CONFIGMAPS, "dry", "default")
    assert e.value.code == 404
    gone = await c.delete(CONFIGMAPS, "a", "default")
    assert gone["kind"] == "Status" and gone["status"] == "Success"


async def test_read_only_answers_are_the_stored_objects(target: Target) -> None:
    """``create``/``update``/``update_status(read_only=True)``: gangplane's cost option changes no
    answer or error on either client (in-process: the informers' shared dict; over HTTP: ignored)."""
    c = target.new_client("contract-test")
    made = await c.create(CONFIGMAPS, cm("ro", {"v": "1"}), "default", read_only=True)
    assert made == await c.get(CONFIGMAPS, "ro", "default")
    assert made["metadata"]["managedFields"][0]["manager"] == "contract-test"
    twin = await c.create(CONFIGMAPS, cm("ro-twin", {"v": "1"}), "default")
    assert {k: v for k, v in made.items() if k != "metadata"} == {
        k: v for k, v in twin.items() if k != "metadata"
    }
    updated = await c.update(CONFIGMAPS, {**made, "data": {"v": "2"}}, "default", read_only=True)
    assert updated == await c.get(CONFIGMAPS, "ro", "default") and updated["data"] == {"v": "2"}
    set_ = await c.create(STATEFULSETS, sts("ro-set"), "default", read_only=True)
    assert set_ == await c.get(STATEFULSETS, "ro-set", "default")
    status = {**set_, "status": {**set_.get("status", {}), "replicas": 0, "availableReplicas": 0}}
    written = await c.update_status(STATEFULSETS, status, "default", read_only=True)
    assert written == await c.get(STATEFULSETS, "ro-set", "default")
    with pytest.raises(StatusError) as e:
        await c.create(CONFIGMAPS, cm("ro"), "default", read_only=True)
    assert (e.value.code, e.value.reason) == (409, "AlreadyExists")
    with pytest.raises(StatusError) as e:
        await c.create(CONFIGMAPS, cm("Bad_Name"), "default", read_only=True)
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert e.value.details and e.value.details["causes"][0]["field"] == "metadata.name"


async def test_errors_are_the_servers_status(target: Target) -> None:
    c = target.new_client("contract-test")
    with pytest.raises(StatusError) as e:
        await c.get(CONFIGMAPS, "missing", "default")
    assert (e.value.code, e.value.reason, e.value.message) == (
        404,
        "NotFound",
        'configmaps "missing" not found',
    )
    assert e.value.details == {"name": "missing", "kind": "configmaps"}
    a = await c.create(CONFIGMAPS, cm("a"), "default")
    with pytest.raises(StatusError) as e:
        await c.create(CONFIGMAPS, cm("a"), "default")
    assert (e.value.code, e.value.reason) == (409, "AlreadyExists")
    await c.update(CONFIGMAPS, {**a, "data": {"v": "2"}}, "default")
    with pytest.raises(StatusError) as e:
        await c.update(CONFIGMAPS, {**a, "data": {"v": "3"}}, "default")
    assert (e.value.code, e.value.reason) == (409, "Conflict")
    with pytest.raises(StatusError) as e:
        await c.create(CONFIGMAPS, cm("Bad_Name"), "default")
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert e.value.details and e.value.details["causes"][0]["field"] == "metadata.name"
    with pytest.raises(StatusError) as e:
        await c.delete(CONFIGMAPS, "a", "default", preconditions={"uid": "not-the-uid"})
    assert e.value.code == 409 and "Precondition failed: UID in precondition" in e.value.message
    with pytest.raises(StatusError) as e:
        await c.list(CONFIGMAPS, "default", label_selector="a in (")
    assert e.value.code == 400


async def test_list_pages_and_selectors(target: Target) -> None:
    c = target.new_client("contract-test")
    for i in range(5):
        await c.create(CONFIGMAPS, cm(f"cm{i}", labels={"i": str(i % 2)}))
    page = await c.list(CONFIGMAPS, "default", limit=2)
    assert page["kind"] == "ConfigMapList"
    assert [o["metadata"]["name"] for o in page["items"]] == ["cm0", "cm1"]
    rest = await c.list(CONFIGMAPS, "default", continue_=page["metadata"]["continue"])
    assert [o["metadata"]["name"] for o in rest["items"]] == ["cm2", "cm3", "cm4"]
    odd = await c.list(CONFIGMAPS, "default", label_selector="i=1")
    assert [o["metadata"]["name"] for o in odd["items"]] == ["cm1", "cm3"]
    named = await c.list(CONFIGMAPS, "", field_selector="metadata.name=cm4")
    assert [o["metadata"]["name"] for o in named["items"]] == ["cm4"]
    await c.delete_collection(CONFIGMAPS, "default", label_selector="i=0")
    left = await c.list(CONFIGMAPS, "default")
    assert [o["metadata"]["name"] for o in left["items"]] == ["cm1", "cm3"]


async def test_subresources_status_scale_and_binding(target: Target) -> None:
    c = target.new_client("contract-test")
    made = await c.create(STATEFULSETS, sts("web"), "default")
    scale = await c.get_subresource(STATEFULSETS, "web", "scale", "default")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
    scale["spec"]["replicas"] = 3
    await c.update_subresource(STATEFULSETS, "web", "scale", scale, "default")
    assert (await c.get(STATEFULSETS, "web", "default"))["spec"]["replicas"] == 3
    await c.patch(STATEFULSETS, "web", {"spec": {"replicas": 2}}, "default", subresource="scale")
    live = await c.get(STATEFULSETS, "web", "default")
    assert live["spec"]["replicas"] == 2
    live["status"] = {"replicas": 2, "observedGeneration": made["metadata"]["generation"]}
    st = await c.update_status(STATEFULSETS, live, "default")
    assert st["status"]["replicas"] == 2
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": sts("x")["spec"]["template"]["spec"],
    }
    await c.create(PODS, pod, "default")
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    await c.create_subresource(PODS, "p", "binding", binding, "default")
    assert (await c.get(PODS, "p", "default"))["spec"]["nodeName"] == "n1"
    with pytest.raises(StatusError) as e:
        await c.create_subresource(PODS, "p", "binding", binding, "default")
    assert e.value.code == 409


async def test_watch_resumes_from_a_resource_version_with_bookmarks(target: Target) -> None:
    c = target.new_client("contract-test")
    a = await c.create(CONFIGMAPS, cm("a"), "default")
    await c.patch(CONFIGMAPS, "a", {"data": {"v": "2"}}, "default")
    await c.delete(CONFIGMAPS, "a", "default")
    events = []
    saw_bookmark = False
    async for ev in c.watch(
        CONFIGMAPS, "default", resource_version=a["metadata"]["resourceVersion"], allow_bookmarks=True
    ):
        if ev.type == "BOOKMARK":
            saw_bookmark = True
            assert ev.object["kind"] == "ConfigMap" and ev.object["metadata"]["resourceVersion"]
            break
        events.append((ev.type, ev.object["metadata"]["name"]))
    assert events == [("MODIFIED", "a"), ("DELETED", "a")]
    assert saw_bookmark


async def test_watch_with_initial_events_ends_them_with_a_bookmark(target: Target) -> None:
    c = target.new_client("contract-test")
    await c.create(CONFIGMAPS, cm("a"), "default")
    seen = []
    async for ev in c.watch(CONFIGMAPS, "default", allow_bookmarks=True, send_initial_events=True):
        if ev.type == "BOOKMARK":
            assert ev.object["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
            break
        seen.append((ev.type, ev.object["metadata"]["name"]))
    assert seen == [("ADDED", "a")]


async def test_watch_from_a_compacted_version_is_410_expired(target: Target) -> None:
    c = target.new_client("contract-test")
    events = [ev async for ev in c.watch(CONFIGMAPS, "default", resource_version="1")]
    assert len(events) == 1 and events[0].type == "ERROR"
    assert events[0].object["code"] == 410 and events[0].object["reason"] == "Expired"


async def test_watch_timeout_ends_the_stream(target: Target) -> None:
    c = target.new_client("contract-test")
    rv = (await c.list(CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    events = [ev async for ev in c.watch(CONFIGMAPS, "default", resource_version=rv, timeout_seconds=1)]
    assert events == []


async def test_unknown_resource_and_discovery(target: Target) -> None:
    c = target.new_client("contract-test")
    docs = await c.server_resources()
    assert docs[0]["groupVersion"] == "v1"
    names = {(d["groupVersion"], r["name"]) for d in docs for r in d["resources"]}
    assert ("apps/v1", "statefulsets") in names and ("scheduling.k8s.io/v1beta1", "workloads") in names
    if target.kind == "local":
        assert docs == target.cp.client().discovery_documents()
    from apiserver.client.interface import GVR

    with pytest.raises(StatusError) as e:
        await c.list(GVR("example.com", "v1", "widgets"))
    assert e.value.code == 404


async def test_an_informer_runs_on_top(target: Target) -> None:
    c = target.new_client("contract-test")
    await c.create(CONFIGMAPS, cm("a"), "default")
    inf = Informer(target.new_client("informer"), CONFIGMAPS)
    seen: list[tuple[str, str]] = []
    b_deleted = asyncio.Event()

    def on_delete(o: dict) -> None:
        seen.append(("delete", o["metadata"]["name"]))
        if o["metadata"]["name"] == "b":
            b_deleted.set()

    inf.add_event_handler(
        lambda o: seen.append(("add", o["metadata"]["name"])),
        lambda old, new: seen.append(("update", new["metadata"]["name"])),
        on_delete,
    )
    inf.start()
    try:
        await inf.wait_for_sync()
        await c.create(CONFIGMAPS, cm("b"), "default")
        await c.patch(CONFIGMAPS, "a", {"data": {"x": "1"}}, "default")
        await c.delete(CONFIGMAPS, "b", "default")
        async with asyncio.timeout(10):
            await b_deleted.wait()
        assert seen == [("add", "a"), ("add", "b"), ("update", "a"), ("delete", "b")]
        assert inf.relists == 1
    finally:
        await inf.stop()


async def test_namespace_finalize_subresource(target: Target) -> None:
    c = target.new_client("contract-test")
    ns = await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fin"}})
    ns["spec"] = {"finalizers": []}
    out = await c.update_subresource(NAMESPACES, "fin", "finalize", ns)
    assert out["spec"].get("finalizers", []) == []


async def test_http_client_refusals(tmp_path: Path) -> None:
    """Only over HTTP: a wrong token is kube's 401 Status, an unreachable server a ConnectionError."""
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate()))
    await cp.start([])
    try:
        tls = serving_files(tmp_path / "pki", "127.0.0.1")
        url = await cp.serve_http(
            "127.0.0.1", 0, front_door=FrontDoorPolicy([static_tokens({new_token(): ADMIN})]), tls=tls
        )
        bad = HTTPClient.from_config(RESTConfig(url, token="wrong", ca_pem=tls.ca_pem()), "t")
        try:
            with pytest.raises(StatusError) as e:
                await bad.get(CONFIGMAPS, "x", "default")
            assert (e.value.code, e.value.reason) == (401, "Unauthorized")
        finally:
            await bad.aclose()
        port = url.rsplit(":", 1)[1]
    finally:
        await cp.stop()
    down = HTTPClient.from_config(RESTConfig(f"https://127.0.0.1:{port}", token="t"), "t")
    try:
        with pytest.raises(APIConnectionError):
            await down.get(CONFIGMAPS, "x", "default")
    finally:
        await down.aclose()


async def test_http_watch_ends_when_the_connection_breaks() -> None:
    """A connection that breaks mid-stream ends the watch as a server-side close does (the
    informer then resumes from its last resourceVersion); no exception reaches the caller."""
    event = b'{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}}\n'

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + f"{len(event):x}\r\n".encode()
            + event
            + b"\r\n"
        )
        await writer.drain()
        writer.close()  # no terminating chunk: the stream is cut

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    c = HTTPClient.from_config(RESTConfig(f"http://127.0.0.1:{port}"), "t")
    try:
        async with asyncio.timeout(10):
            events = [ev async for ev in c.watch(CONFIGMAPS, "default", resource_version="5")]
        assert [(e.type, e.object["metadata"]["name"]) for e in events] == [("ADDED", "a")]
    finally:
        await c.aclose()
        server.close()
        await server.wait_closed()
