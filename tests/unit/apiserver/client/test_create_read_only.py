"""``create(..., read_only=True)``: the in-process answer is the stored object's shared dict.

A caller that promises never to modify its answer (a controller keeping the pods it created, a
hook keeping the PodGroup it made until its informer shows it) gets the very object its
informers receive for that revision instead of a private decoding. It must equal the stored
object exactly as a copied answer does; a dry run, a dropped answer and every error behave as
without it; and the mutation detector (``GANGPLANE_CACHE_MUTATION_DETECTOR``, on in the test
suite) names a caller that modifies such an answer anyway.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.client.interface import CONFIGMAPS, EVENTS, PODGROUPS, PODS
from apiserver.server.localclient import MutatedCacheObject
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

SERVER_SET = ("uid", "creationTimestamp", "resourceVersion", "name")


def _cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"a": "b"}}, "data": {"k": "v"}}


def _pod(name: str, rnd: random.Random) -> dict[str, Any]:
    """A pod with an ownerReference, random labels, requests and tolerations (template lists)."""
    containers = [
        {
            "name": f"c{i}",
            "image": rnd.choice(["busybox", "nginx:1.27"]),
            "resources": {
                "requests": {"cpu": f"{rnd.randint(1, 900)}m", "memory": f"{rnd.randint(1, 64)}Mi"}
            },
        }
        for i in range(rnd.randint(1, 3))
    ]
    pod: dict[str, Any] = {
        "metadata": {
            "name": name,
            "labels": {f"l{i}": str(rnd.randint(0, 3)) for i in range(rnd.randint(0, 4))},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": "0b9c5d0e-1b6c-4d3a-9f3e-1a2b3c4d5e6f",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": containers},
    }
    if rnd.random() < 0.5:
        pod["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    return pod


async def test_the_read_only_answer_is_the_stored_object_the_informers_get(plane: ControlPlane) -> None:
    c = plane.client("writer")
    created = await c.create(CONFIGMAPS, _cm("a"), "default", read_only=True)
    assert created == await c.get(CONFIGMAPS, "a", "default")
    assert created["metadata"]["resourceVersion"] and created["metadata"]["uid"]
    listed = (await c.list(CONFIGMAPS, "default", read_only=True))["items"]
    assert [o for o in listed if o["metadata"]["name"] == "a"][0] is created
    async for ev in c.watch(CONFIGMAPS, "default", resource_version="0", read_only=True):
        assert ev.type == "ADDED" and ev.object is created
        break


async def test_read_only_answers_equal_copied_ones_on_random_pods(plane: ControlPlane) -> None:
    """Same body created twice (under two names), once answered read-only and once copied."""
    c = plane.client("writer")
    rnd = random.Random(6277)
    for i in range(40):
        body = _pod(f"p{i}", rnd)
        twin = {**body, "metadata": {**body["metadata"], "name": f"q{i}"}}
        handoff = rnd.random() < 0.5
        shared = await c.create(PODS, body, "default", read_only=True, handoff=handoff)
        private = await c.create(PODS, twin, "default")
        assert shared == await c.get(PODS, f"p{i}", "default")

        def strip(o: dict[str, Any]) -> dict[str, Any]:
            return {**o, "metadata": {k: v for k, v in o["metadata"].items() if k not in SERVER_SET}}

        assert strip(shared) == strip(private)
    # the answers stay untouched to the end: the detector checks them when the plane stops


async def test_a_dry_run_or_dropped_answer_and_errors_are_unchanged(plane: ControlPlane) -> None:
    c = plane.client("writer")
    dry = await c.create(CONFIGMAPS, _cm("dry"), "default", dry_run=True, read_only=True)
    assert dry["metadata"]["name"] == "dry" and "resourceVersion" not in dry["metadata"]
    dry["data"]["k"] = "mine"  # a dry run stores nothing: its answer is the caller's own
    with pytest.raises(errors.StatusError) as exc:
        await c.get(CONFIGMAPS, "dry", "default")
    assert exc.value.code == 404
    assert await c.create(CONFIGMAPS, _cm("x"), "default", answer=False, read_only=True) == {}
    with pytest.raises(errors.StatusError) as exc:
        await c.create(CONFIGMAPS, _cm("x"), "default", read_only=True)
    assert exc.value.code == 409 and exc.value.reason == "AlreadyExists"
    bad = {
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"},
    }
    with pytest.raises(errors.StatusError) as exc:
        await c.create(EVENTS, bad, "default", read_only=True)
    assert exc.value.code == 422 and "involvedObject.namespace" in exc.value.message
    pg = {"metadata": {"name": "g"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}}
    with pytest.raises(errors.StatusError) as exc:
        await c.create(PODGROUPS, pg, "default", read_only=True)
    assert exc.value.code == 422


async def test_the_mutation_detector_names_a_modified_read_only_answer(plane: ControlPlane) -> None:
    assert plane.read_only_objects.enabled  # tests/conftest.py turns the detector on
    c = plane.client("careless-controller")
    created = await c.create(PODS, _pod("p", random.Random(1)), "default", read_only=True)
    plane.read_only_objects.verify()  # untouched so far
    created["metadata"]["labels"]["changed"] = "yes"
    with pytest.raises(MutatedCacheObject, match=r"Pod default/p@"):
        plane.read_only_objects.verify()
    del created["metadata"]["labels"]["changed"]  # so that stopping the plane passes
    plane.read_only_objects.verify()
