"""Namespace controller pieces: the status conditions (pure) and one deleter pass through the API."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import CONFIGMAPS, NAMESPACES, PODS
from controllers.manager import NAMESPACE, namespaced_resources
from controllers.namespace import NamespacedResourcesDeleter, ResourcesRemaining
from controllers.namespace import conditions as c
from gangplane.controlplane import ControlPlane
from tests.helpers import cm

pytestmark = pytest.mark.anyio

NOW = "2027-01-15T08:00:00Z"
LATER = "2027-01-15T09:00:00Z"


def by_type(status: dict) -> dict[str, dict]:
    return {x["type"]: x for x in status["conditions"]}


def test_all_conditions_are_false_when_nothing_remains() -> None:
    status: dict = {}
    assert c.update_conditions(status, c.content_conditions({}, {}, [], NOW), NOW)
    got = by_type(status)
    assert list(got) == list(c.CONDITION_TYPES)
    assert got[c.CONTENT_REMAINING] == {
        "type": c.CONTENT_REMAINING,
        "status": "False",
        "lastTransitionTime": NOW,
        "reason": "ContentRemoved",
        "message": "All content successfully removed",
    }
    assert not c.update_conditions(status, c.content_conditions({}, {}, [], LATER), LATER), (
        "no change, no write"
    )


def test_remaining_content_and_finalizers_are_reported_sorted() -> None:
    status: dict = {}
    failing = c.content_conditions(
        {("pods", ""): 2, ("statefulsets", "apps"): 1}, {"b/x": 1, "a/y": 3}, ["boom"], NOW
    )
    c.update_conditions(status, failing, NOW)
    got = by_type(status)
    assert got[c.CONTENT_REMAINING]["message"] == (
        "Some resources are remaining: pods. has 2 resource instances, statefulsets.apps has 1 resource instances"
    )
    assert (
        got[c.FINALIZERS_REMAINING]["message"]
        == "Some finalizers are remaining: a/y in 3 resource instances, b/x in 1 resource instances"
    )
    assert got[c.CONTENT_FAILURE]["message"] == "Failed to delete all resource types, 1 remaining: boom"
    # recovery flips status and keeps its own transition time
    assert c.update_conditions(status, [], LATER)
    assert by_type(status)[c.CONTENT_REMAINING]["status"] == "False"
    assert by_type(status)[c.CONTENT_REMAINING]["lastTransitionTime"] == LATER


async def test_one_pass_deletes_content_then_finalizes(cp: ControlPlane, client: Any) -> None:
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    await client.create(CONFIGMAPS, cm("a", ns="team"), "team")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    await client.create(PODS, pod, "team")
    await client.delete(NAMESPACES, "team")
    deleter = NamespacedResourcesDeleter(client, namespaced_resources(cp.context_for(NAMESPACE)), cp.clock)
    # kube estimates the pods' grace period before deleting them, so the first pass reports it ...
    with pytest.raises(ResourcesRemaining) as remaining:
        await deleter.delete("team")
    assert remaining.value.estimate == 30
    assert (await client.list(PODS, "team"))["items"] == []
    assert (await client.list(CONFIGMAPS, "team"))["items"] == []
    # ... and the next one finds nothing left and releases the namespace
    await deleter.delete("team")
    assert (await client.list(NAMESPACES, field_selector="metadata.name=team"))["items"] == []


async def test_a_namespace_that_is_not_deleted_is_left_alone(cp: ControlPlane, client: Any) -> None:
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    await client.create(CONFIGMAPS, cm("a", ns="team"), "team")
    await NamespacedResourcesDeleter(client, namespaced_resources(cp.context_for(NAMESPACE))).delete("team")
    assert len((await client.list(CONFIGMAPS, "team"))["items"]) == 1
