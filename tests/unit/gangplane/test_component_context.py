"""ComponentContext: discovery through the client, the component's gate view, no registry."""

from __future__ import annotations

import httpx
import pytest

from apiserver.client.context import ComponentContext
from apiserver.client.discovery import api_resources
from apiserver.client.interface import COMPOSITEPODGROUPS, EVENTS, GVR, PODGROUPS, PODS, WORKLOADS
from featuregates import COMPOSITE_POD_GROUP, GENERIC_WORKLOAD, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

pytestmark = pytest.mark.anyio

EVENTS_V1 = GVR("events.k8s.io", "v1", "events")


async def http_resource_lists(cp: ControlPlane) -> list[dict]:
    """What a discovery client walks over HTTP: /api/v1, then every /apis/<group>/<version>."""
    transport = httpx.ASGITransport(app=cp.app.asgi())
    async with httpx.AsyncClient(transport=transport, base_url="http://gangplane") as http:
        out = [(await http.get("/api/v1")).json()]
        groups = (await http.get("/apis")).json()["groups"]
        for g in groups:
            for v in g["versions"]:
                out.append((await http.get(f"/apis/{v['groupVersion']}")).json())
    return out


async def test_server_resources_answers_like_http_discovery(cp: ControlPlane) -> None:
    local = await cp.client("test").server_resources()
    assert local == await http_resource_lists(cp)


async def test_server_resources_drops_a_gated_off_group() -> None:
    off = ControlPlane(ControlPlaneOptions(gates=FeatureGate().with_overrides({COMPOSITE_POD_GROUP: False})))
    versions = [rl["groupVersion"] for rl in await off.client("test").server_resources()]
    assert "scheduling.k8s.io/v1alpha3" not in versions
    assert "scheduling.k8s.io/v1beta1" in versions
    assert versions[0] == "v1"


async def test_api_resources_lists_each_storage_once_and_no_subresource(cp: ControlPlane) -> None:
    docs = cp.client("test").discovery_documents()
    gvrs = [r.gvr for r in api_resources(docs)]
    assert EVENTS in gvrs and EVENTS_V1 not in gvrs
    assert EVENTS_V1 in {r.gvr for r in api_resources(docs, dedupe_storage=False)}
    assert all("/" not in g.resource for g in gvrs)
    pods = next(r for r in api_resources(docs) if r.gvr == PODS)
    assert pods.kind == "Pod" and pods.namespaced and pods.supports("create", "delete", "watch")


def test_context_is_per_component_and_narrowed_by_its_gates() -> None:
    cp = ControlPlane(ControlPlaneOptions(component_gates={"scheduler": {GENERIC_WORKLOAD: False}}))
    sched: ComponentContext = cp.context_for("scheduler")
    other = cp.context_for("statefulset-controller")
    assert sched.name == "scheduler"
    assert not sched.gates.enabled(GENERIC_WORKLOAD) and other.gates.enabled(GENERIC_WORKLOAD)
    assert not sched.is_served(WORKLOADS) and not sched.is_served(PODGROUPS)
    assert other.is_served(WORKLOADS) and other.is_served(PODGROUPS) and other.is_served(COMPOSITEPODGROUPS)
    assert other.is_served(EVENTS_V1)  # served, though listed once per storage in served_resources()
    assert sched.clock is cp.clock and sched.metrics_registry is cp.metrics_registry
    assert not hasattr(sched, "api") and not hasattr(sched, "registry") and not hasattr(sched, "store")


def test_is_served_answers_as_full_discovery_does() -> None:
    """``is_served`` reads one group-version's document; its answer is discovery's, for every
    resource discovery lists (subresources and other versions of a group included), resources it
    does not, and components whose gate view hides a gated API."""
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate().with_overrides({COMPOSITE_POD_GROUP: False}),
            component_gates={"scheduler": {GENERIC_WORKLOAD: False}},
        )
    )
    docs = cp.client("test").discovery_documents()
    listed = {r.gvr for r in api_resources(docs, dedupe_storage=False)}
    asked = [
        *listed,
        COMPOSITEPODGROUPS,
        GVR("", "v1", "pods/status"),
        GVR("", "v2", "pods"),
        GVR("apps", "v1beta9", "deployments"),
        GVR("no.such.group", "v1", "things"),
        GVR("", "v1", "nothings"),
    ]
    for name in ("scheduler", "statefulset-controller"):
        ctx = cp.context_for(name)
        served = {r.gvr for r in ctx._discovered(dedupe_storage=False)}  # type: ignore[attr-defined]
        assert {g for g in asked if ctx.is_served(g)} == served, name
    assert not cp.context_for("scheduler").is_served(WORKLOADS)
    assert cp.context_for("statefulset-controller").is_served(WORKLOADS)
    assert COMPOSITEPODGROUPS not in listed


async def test_context_clients_use_the_given_user_agent_or_the_component_name(cp: ControlPlane) -> None:
    ctx = cp.context_for("my-controller")
    await ctx.client().create(
        GVR("", "v1", "configmaps"), {"metadata": {"name": "a"}, "data": {"k": "v"}}, "default"
    )
    await ctx.client("other-agent").create(
        GVR("", "v1", "configmaps"), {"metadata": {"name": "b"}, "data": {"k": "v"}}, "default"
    )
    client = cp.client("test")
    a = await client.get(GVR("", "v1", "configmaps"), "a", "default")
    b = await client.get(GVR("", "v1", "configmaps"), "b", "default")
    assert [m["manager"] for m in a["metadata"]["managedFields"]] == ["my-controller"]
    assert [m["manager"] for m in b["metadata"]["managedFields"]] == ["other-agent"]


async def test_a_registered_factory_receives_its_context(cp: ControlPlane) -> None:
    seen: list[ComponentContext] = []

    class Probe:
        name = "probe"

        async def start(self) -> None: ...

        async def stop(self) -> None: ...

    def factory(ctx: ComponentContext) -> Probe:
        seen.append(ctx)
        return Probe()

    cp.register("probe", factory)
    await cp.start_component("probe")
    assert [c.name for c in seen] == ["probe"]
    assert not hasattr(seen[0], "api")
