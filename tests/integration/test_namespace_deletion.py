"""Test plan: "namespace deletion empties and removes the namespace"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import (
    CONFIGMAPS,
    CONTROLLERREVISIONS,
    NAMESPACES,
    PODS,
    SECRETS,
    STATEFULSETS,
)
from controllers.manager import GARBAGE_COLLECTOR, NAMESPACE, STATEFULSET, register_controllers
from controllers.namespace import NamespaceController
from controllers.testing import statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import cm, wait_for_list

pytestmark = pytest.mark.anyio

HOLD = "example.com/hold"


@pytest.fixture
async def nsc(cp: ControlPlane) -> AsyncIterator[NamespaceController]:
    register_controllers(cp, "namespace")
    c = await cp.start_component(NAMESPACE)
    assert isinstance(c, NamespaceController)
    yield c


async def make_namespace(client: Any, name: str) -> Obj:
    return await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )


def condition(ns: Obj | None, ctype: str) -> Obj:
    return next(
        (c for c in ((ns or {}).get("status") or {}).get("conditions") or [] if c["type"] == ctype), {}
    )


async def test_deleting_a_namespace_deletes_its_content_then_the_namespace(
    cp: ControlPlane, client: Any, nsc: NamespaceController
) -> None:
    register_controllers(cp, "statefulset,garbagecollector")
    await cp.start_component(STATEFULSET)
    await cp.start_component(GARBAGE_COLLECTOR)
    await make_namespace(client, "team")
    await make_namespace(client, "keep")
    await client.create(STATEFULSETS, statefulset("web", 3, namespace="team", policy="Parallel"), "team")
    await client.create(CONFIGMAPS, cm("settings", ns="team"), "team")
    await client.create(
        SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}, "team"
    )
    await client.create(CONFIGMAPS, cm("untouched", ns="keep"), "keep")
    await wait_for_list(client, PODS, "team", lambda items: len(items) == 3)

    deleting = await client.delete(NAMESPACES, "team")
    assert deleting["status"]["phase"] == "Terminating"
    assert deleting["spec"]["finalizers"] == ["kubernetes"]
    await wait_object(client, NAMESPACES, "team", "", lambda o: o is None)

    for gvr in (PODS, STATEFULSETS, CONTROLLERREVISIONS, CONFIGMAPS, SECRETS):
        assert (await client.list(gvr, "team"))["items"] == [], gvr
    assert (await client.get(CONFIGMAPS, "untouched", "keep"))["metadata"]["name"] == "untouched"
    assert (await client.get(NAMESPACES, "keep"))["status"]["phase"] == "Active"


async def test_content_held_by_a_finalizer_keeps_the_namespace_terminating(
    client: Any, nsc: NamespaceController
) -> None:
    await make_namespace(client, "team")
    held = cm("held", ns="team")
    held["metadata"]["finalizers"] = [HOLD]
    await client.create(CONFIGMAPS, held, "team")
    await client.create(CONFIGMAPS, cm("plain", ns="team"), "team")
    await client.delete(NAMESPACES, "team")
    ns = await wait_object(
        client,
        NAMESPACES,
        "team",
        "",
        lambda o: condition(o, "NamespaceFinalizersRemaining").get("status") == "True",
    )
    assert condition(ns, "NamespaceFinalizersRemaining")["message"] == (
        "Some finalizers are remaining: example.com/hold in 1 resource instances"
    )
    assert condition(ns, "NamespaceContentRemaining") == {
        **condition(ns, "NamespaceContentRemaining"),
        "status": "True",
        "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: configmaps. has 1 resource instances",
    }
    assert condition(ns, "NamespaceDeletionDiscoveryFailure")["reason"] == "ResourcesDiscovered"
    assert (await client.list(CONFIGMAPS, "team"))["items"][0]["metadata"]["name"] == "held"
    await client.patch(CONFIGMAPS, "held", {"metadata": {"finalizers": None}}, "team")
    await wait_object(client, NAMESPACES, "team", "", lambda o: o is None, timeout=20)


async def test_other_namespace_finalizers_are_kept(client: Any, nsc: NamespaceController) -> None:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team"},
        "spec": {"finalizers": ["example.com/x"]},
    }
    await client.create(NAMESPACES, ns)
    await client.create(CONFIGMAPS, cm("a", ns="team"), "team")
    await client.delete(NAMESPACES, "team")
    got = await wait_object(
        client,
        NAMESPACES,
        "team",
        "",
        lambda o: (o or {}).get("spec", {}).get("finalizers") == ["example.com/x"],
    )
    assert got is not None and got["status"]["phase"] == "Terminating"
    assert (await client.list(CONFIGMAPS, "team"))["items"] == []
    await client.update_subresource(NAMESPACES, "team", "finalize", {**got, "spec": {"finalizers": []}})
    await wait_object(client, NAMESPACES, "team", "", lambda o: o is None)
