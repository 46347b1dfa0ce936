"""``create(..., answer=False)`` and the create's lazily decoded answer.

A stored create's answer is the stored revision, decoded only when read. A caller that reads
it gets the stored object, its own copy; one that says it drops it (the Event recorder) gets an
empty dict and stores exactly what an answered create stores; errors raise either way.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver import errors
from apiserver.client.interface import CONFIGMAPS, EVENTS
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

SERVER_SET = ("uid", "creationTimestamp", "resourceVersion", "name")


def _cm(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"a": "b"}},
        "data": {"k": "v"},
    }


def _without_server_set(obj: dict[str, Any]) -> dict[str, Any]:
    md = {k: v for k, v in obj["metadata"].items() if k not in SERVER_SET}
    return {**obj, "metadata": md}


async def test_the_answer_is_the_stored_object_and_the_callers_own(plane: ControlPlane) -> None:
    c = plane.client("writer")
    created = await c.create(CONFIGMAPS, _cm("a"), "default")
    stored = await c.get(CONFIGMAPS, "a", "default")
    assert created == stored
    assert created["metadata"]["resourceVersion"] and created["metadata"]["uid"]
    created["data"]["k"] = "changed"
    created["metadata"]["labels"]["a"] = "changed"
    assert await c.get(CONFIGMAPS, "a", "default") == stored


async def test_an_unread_answer_stores_the_same_object(plane: ControlPlane) -> None:
    c = plane.client("writer")
    answered = await c.create(CONFIGMAPS, _cm("answered"), "default")
    unread = await c.create(CONFIGMAPS, _cm("unread"), "default", answer=False)
    assert unread == {}
    stored = await c.get(CONFIGMAPS, "unread", "default")
    assert _without_server_set(stored) == _without_server_set(answered)
    assert stored["metadata"]["name"] == "unread"
    assert int(stored["metadata"]["resourceVersion"]) > int(answered["metadata"]["resourceVersion"])


async def test_an_unread_create_still_raises(plane: ControlPlane) -> None:
    c = plane.client("writer")
    await c.create(CONFIGMAPS, _cm("x"), "default", answer=False)
    with pytest.raises(errors.StatusError) as exc:
        await c.create(CONFIGMAPS, _cm("x"), "default", answer=False, handoff=True)
    assert exc.value.code == 409
    bad = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"},
    }
    with pytest.raises(errors.StatusError) as exc:
        await c.create(EVENTS, bad, "default", answer=False)
    assert exc.value.code == 422
    assert "involvedObject.namespace" in exc.value.message
