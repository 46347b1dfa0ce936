"""Service ClusterIP / NodePort allocation and the kubernetes Service, through the in-process client."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from apiserver import errors
from apiserver.client.interface import SERVICES
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

pytestmark = pytest.mark.anyio


def service(name: str, **spec: Any) -> dict:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    body["spec"].update(spec)
    return body


async def test_the_kubernetes_service_has_the_first_address_of_the_range(client: Any) -> None:
    svc = await client.get(SERVICES, "kubernetes", "default")
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}


async def test_a_service_gets_a_cluster_ip_from_the_range(client: Any) -> None:
    svc = await client.create(SERVICES, service("web"), "default")
    ip = ipaddress.ip_address(svc["spec"]["clusterIP"])
    assert ip in ipaddress.ip_network("10.96.0.0/12") and svc["spec"]["clusterIPs"] == [str(ip)]
    # dynamic picks stay out of the static band (the lowest 256 addresses of a /12)
    assert int(ip) - int(ipaddress.ip_address("10.96.0.0")) > 256


async def test_headless_services_get_no_address(client: Any) -> None:
    svc = await client.create(SERVICES, service("db", clusterIP="None"), "default")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["clusterIPs"] == ["None"]


async def test_a_taken_cluster_ip_is_refused_with_kubes_message(client: Any) -> None:
    await client.create(SERVICES, service("a", clusterIP="10.96.0.10"), "default")
    with pytest.raises(errors.StatusError) as e:
        await client.create(SERVICES, service("b", clusterIP="10.96.0.10"), "default")
    assert e.value.code == 422
    assert e.value.message == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: '
        "failed to allocate IP 10.96.0.10: provided IP is already allocated"
    )
    with pytest.raises(errors.StatusError) as e:
        await client.create(SERVICES, service("c", clusterIP="192.168.0.1"), "default")
    assert e.value.message.endswith(
        "failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. "
        "The range of valid IPs is 10.96.0.0/12"
    )


async def test_deleting_a_service_releases_its_address(client: Any) -> None:
    await client.create(SERVICES, service("a", clusterIP="10.96.0.10"), "default")
    await client.delete(SERVICES, "a", "default")
    again = await client.create(SERVICES, service("b", clusterIP="10.96.0.10"), "default")
    assert again["spec"]["clusterIP"] == "10.96.0.10"


async def test_a_failed_create_does_not_leak_its_address(client: Any) -> None:
    bad = service("a", clusterIP="10.96.0.20")
    bad["spec"]["ports"] = [{"port": 0}]
    with pytest.raises(errors.StatusError):
        await client.create(SERVICES, bad, "default")
    ok = await client.create(SERVICES, service("b", clusterIP="10.96.0.20"), "default")
    assert ok["spec"]["clusterIP"] == "10.96.0.20"


async def test_node_ports_are_allocated_and_conflicts_refused(client: Any) -> None:
    svc = await client.create(SERVICES, service("np", type="NodePort"), "default")
    port = svc["spec"]["ports"][0]["nodePort"]
    assert 30000 <= port <= 32767
    fixed = service("fixed", type="NodePort")
    fixed["spec"]["ports"][0]["nodePort"] = 30080
    await client.create(SERVICES, fixed, "default")
    clash = service("clash", type="NodePort")
    clash["spec"]["ports"][0]["nodePort"] = 30080
    with pytest.raises(errors.StatusError) as e:
        await client.create(SERVICES, clash, "default")
    assert e.value.message == (
        'Service "clash" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated'
    )
    clash["spec"]["ports"][0]["nodePort"] = 29999
    with pytest.raises(errors.StatusError) as e:
        await client.create(SERVICES, clash, "default")
    assert e.value.message.endswith(
        "spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. "
        "The range of valid ports is 30000-32767"
    )


async def test_node_ports_are_kept_on_update_and_dropped_when_the_type_becomes_cluster_ip(
    client: Any,
) -> None:
    svc = await client.create(SERVICES, service("np", type="NodePort"), "default")
    port = svc["spec"]["ports"][0]["nodePort"]
    svc["metadata"]["labels"] = {"x": "y"}
    svc = await client.update(SERVICES, svc, "default")
    assert svc["spec"]["ports"][0]["nodePort"] == port
    svc = await client.patch(SERVICES, "np", {"spec": {"type": "ClusterIP"}}, "default")
    assert "nodePort" not in svc["spec"]["ports"][0]
    other = service("other", type="NodePort")
    other["spec"]["ports"][0]["nodePort"] = port
    assert (await client.create(SERVICES, other, "default"))["spec"]["ports"][0]["nodePort"] == port


async def test_the_range_is_configurable() -> None:
    cp = ControlPlane(ControlPlaneOptions(service_cluster_ip_range="10.0.0.0/24"))
    svc = cp.api.lookup("", "services", "default", "kubernetes")
    assert svc is not None and svc["spec"]["clusterIP"] == "10.0.0.1"
    with pytest.raises(ValueError):
        ControlPlane(ControlPlaneOptions(service_cluster_ip_range="10.0.0.1/24"))


async def test_changing_a_cluster_ip_is_refused_as_immutable_not_as_taken(client: Any) -> None:
    await client.create(SERVICES, service("a", clusterIP="10.96.0.30"), "default")
    await client.create(SERVICES, service("b", clusterIP="10.96.0.31"), "default")
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            SERVICES, "b", {"spec": {"clusterIP": "10.96.0.30", "clusterIPs": ["10.96.0.30"]}}, "default"
        )
    assert e.value.code == 422
    assert e.value.message == (
        'Service "b" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.30"]: may not change once set'
    )
