"""``pods/binding`` builds the bound revision from the stored one, sharing what it does not change.

Its stored bytes must be exactly those of the whole-copy computation (decode the stored pod,
set the node, drop a nomination, replace the PodScheduled condition), whether the stored revision
still holds its decoded dict or only its bytes, and the previous revision must be left as it was
(it is shared read-only with informers and kept in the watch history).
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.client.informer import Informer
from apiserver.client.interface import PODS
from apiserver.meta import rfc3339
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio


def _pod(rnd: random.Random, name: str) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": rnd.choice(["a", "b"])}},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }
    return pod


def _reference(prev: dict[str, Any], node: str, now: str, rv: int) -> bytes:
    """The bound revision as a whole copy computes it (binding.py before it shared subtrees)."""
    pod = orjson.loads(orjson.dumps(prev))
    pod.setdefault("spec", {})["nodeName"] = node
    status = pod.setdefault("status", {})
    status.pop("nominatedNodeName", None)
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now})
    status["conditions"] = conds
    pod["metadata"]["resourceVersion"] = str(rv)
    return orjson.dumps(pod)


@pytest.mark.parametrize("seed", range(4))
async def test_a_bound_revision_is_byte_for_byte_the_whole_copy_one(plane: ControlPlane, seed: int) -> None:
    rnd = random.Random(seed)
    c = plane.client("scheduler")
    store = plane.api.store
    rd = plane.api.registry.get("", "v1", "pods")
    assert rd is not None
    skey = plane.api._skey(rd)
    # an informer shares (and keeps decoded) some of the revisions, as the scheduler's does
    inf = Informer(plane.client("watcher"), PODS)
    inf.start()
    await inf.wait_for_sync()
    for i in range(12):
        name = f"p{i}"
        created = await c.create(PODS, _pod(rnd, name), "default")
        if rnd.random() < 0.5:  # a nomination and an earlier PodScheduled=False, as a failed cycle leaves
            created["status"]["nominatedNodeName"] = "n9"
            created["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None},
                {"type": "Initialized", "status": "True", "lastProbeTime": None},
            ]
            await c.update_status(PODS, created, "default")
        prev = store.get(skey, ("default", name))
        assert prev is not None
        if rnd.random() < 0.5:
            prev.release()  # only its bytes: the binding decodes them
        prev_raw, prev_obj = prev.raw, prev.obj
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": "default"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": f"n{i}"},
        }
        await c.create_subresource(PODS, name, "binding", body, "default")
        bound = store.get(skey, ("default", name))
        assert bound is not None and bound.rv > prev.rv
        now = rfc3339(plane.api.clock.now())
        assert bound.raw == _reference(orjson.loads(prev_raw), f"n{i}", now, bound.rv)
        # the previous revision is as it was: its bytes and the dict it may still hold
        assert prev.raw == prev_raw
        assert orjson.dumps(prev_obj) == prev_raw
        assert orjson.loads(orjson.dumps(bound.obj)) == orjson.loads(bound.raw)
    await inf.stop()


async def test_the_in_process_binding_keeps_nothing_of_its_body(plane: ControlPlane) -> None:
    """The in-process client hands ``pods/binding`` the caller's own body (no private copy):
    the write must leave it as it was and keep no reference to any part of it."""
    client = plane.client("test")
    await client.create(PODS, _pod(random.Random(0), "p"))
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    before = orjson.dumps(body)
    answer = await client.create_subresource(PODS, "p", "binding", body, "default")
    assert answer["status"] == "Success" and answer["code"] == 201
    assert orjson.dumps(body) == before
    body["target"]["name"] = "elsewhere"  # the caller reuses its dict: the stored pod is not touched
    body["metadata"]["name"] = "other"
    got = await client.get(PODS, "p", "default")
    assert got["spec"]["nodeName"] == "n1"
    assert got["metadata"]["name"] == "p"
