"""EndpointSlice controller behaviour through the in-process client (only this controller runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import ENDPOINTSLICES, PODS, SERVICES
from controllers.endpointslice import EndpointSliceController
from controllers.manager import ENDPOINTSLICE, register_controllers
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[EndpointSliceController]:
    register_controllers(cp, "endpointslice")
    c = await cp.start_component(ENDPOINTSLICE)
    assert isinstance(c, EndpointSliceController)
    yield c


async def make_pod(
    client: Any, name: str, ip: str, *, ready: bool = True, app: str = "web", **spec: Any
) -> Obj:
    body = {
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}
            ]
        },
    }
    body["spec"].update(spec)
    pod = await client.create(PODS, body, "default")
    pod["status"] = {
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return await client.update_status(PODS, pod, "default")


def svc(name: str = "web", **spec: Any) -> Obj:
    body = {
        "metadata": {"name": name, "labels": {"team": "a"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }
    body["spec"].update(spec)
    return body


async def slices_for(client: Any, pred: Any, name: str = "web") -> list[Obj]:
    return await wait_for_list(
        client, ENDPOINTSLICES, "default", pred, label_selector=f"kubernetes.io/service-name={name}"
    )


def addresses(items: list[Obj]) -> dict[str, Obj]:
    return {a: ep["conditions"] for s in items for ep in s.get("endpoints") or [] for a in ep["addresses"]}


async def test_a_service_without_pods_gets_a_placeholder_slice(
    client: Any, ctrl: EndpointSliceController
) -> None:
    s = await client.create(SERVICES, svc(), "default")
    (eps,) = await slices_for(client, lambda items: len(items) == 1)
    assert eps["metadata"]["name"].startswith("web-")
    assert eps["metadata"]["labels"] == {
        "team": "a",
        "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert eps["metadata"]["ownerReferences"][0]["uid"] == s["metadata"]["uid"]
    assert eps["addressType"] == "IPv4" and eps["endpoints"] is None and eps["ports"] is None


async def test_ready_pods_become_endpoints_with_resolved_named_ports(
    client: Any, ctrl: EndpointSliceController
) -> None:
    await client.create(SERVICES, svc(), "default")
    p1 = await make_pod(client, "a", "10.244.0.5")
    await make_pod(client, "b", "10.244.0.6", ready=False)
    items = await slices_for(client, lambda items: len(addresses(items)) == 2)
    (eps,) = items
    assert eps["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    conds = addresses(items)
    assert conds["10.244.0.5"] == {"ready": True, "serving": True, "terminating": False}
    assert conds["10.244.0.6"] == {"ready": False, "serving": False, "terminating": False}
    ep = next(e for e in eps["endpoints"] if e["addresses"] == ["10.244.0.5"])
    assert ep["targetRef"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "a",
        "uid": p1["metadata"]["uid"],
    }


async def test_terminating_pods_are_serving_but_not_ready(client: Any, ctrl: EndpointSliceController) -> None:
    await client.create(SERVICES, svc(), "default")
    pod = await make_pod(client, "a", "10.244.0.5")
    pod["metadata"]["finalizers"] = ["test/hold"]
    await client.update(PODS, pod, "default")
    await slices_for(client, lambda items: "10.244.0.5" in addresses(items))
    await client.delete(PODS, "a", "default")
    items = await slices_for(
        client, lambda items: addresses(items).get("10.244.0.5", {}).get("terminating") is True
    )
    assert addresses(items)["10.244.0.5"] == {"ready": False, "serving": True, "terminating": True}
    fresh = await client.get(PODS, "a", "default")
    fresh["metadata"]["finalizers"] = []
    await client.update(PODS, fresh, "default")


async def test_pods_leave_when_their_labels_stop_matching(client: Any, ctrl: EndpointSliceController) -> None:
    await client.create(SERVICES, svc(), "default")
    await make_pod(client, "a", "10.244.0.5")
    await slices_for(client, lambda items: "10.244.0.5" in addresses(items))
    await client.patch(PODS, "a", {"metadata": {"labels": {"app": "other"}}}, "default")
    items = await slices_for(client, lambda items: not addresses(items))
    assert len(items) == 1


async def test_headless_service_slices_carry_hostnames_and_the_headless_label(
    client: Any, ctrl: EndpointSliceController
) -> None:
    await client.create(SERVICES, svc("db", clusterIP="None"), "default")
    await make_pod(client, "db-0", "10.244.0.7", hostname="db-0", subdomain="db")
    items = await slices_for(client, lambda items: "10.244.0.7" in addresses(items), name="db")
    (eps,) = items
    assert eps["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    assert eps["endpoints"][0]["hostname"] == "db-0"


async def test_publish_not_ready_addresses_marks_every_endpoint_ready(
    client: Any, ctrl: EndpointSliceController
) -> None:
    await client.create(SERVICES, svc(publishNotReadyAddresses=True), "default")
    await make_pod(client, "a", "10.244.0.5", ready=False)
    items = await slices_for(client, lambda items: "10.244.0.5" in addresses(items))
    assert addresses(items)["10.244.0.5"]["ready"] is True


async def test_endpoints_split_into_slices_of_at_most_max_endpoints(cp: ControlPlane, client: Any) -> None:
    c = EndpointSliceController(cp.client("test-eps"), max_endpoints_per_slice=2)
    await c.start()
    try:
        await client.create(SERVICES, svc(), "default")
        for i in range(5):
            await make_pod(client, f"p{i}", f"10.244.1.{i + 1}")
        items = await slices_for(client, lambda items: len(addresses(items)) == 5 and len(items) == 3)
        assert sorted(len(s["endpoints"]) for s in items) == [1, 2, 2]
    finally:
        await c.stop()
