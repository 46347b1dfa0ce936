"""``create(..., handoff=True)``: the in-process client stores the caller's body instead of a copy.

The stored object must be exactly what a copied create stores, and the event recorder, which
hands its bodies off, must neither alias what its callers keep (their object references) nor
carry a half-written body into the retry after a name clash.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.informer import Informer
from apiserver.client.interface import CONFIGMAPS, EVENTS
from apiserver.meta import FakeClock
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

SERVER_SET = ("uid", "creationTimestamp", "resourceVersion", "name")


def _without_server_set(obj: dict[str, Any]) -> dict[str, Any]:
    md = {k: v for k, v in obj["metadata"].items() if k not in SERVER_SET}
    return {**obj, "metadata": md}


async def test_a_handed_off_body_is_stored_as_a_copied_one_is(plane: ControlPlane) -> None:
    c = plane.client("writer")

    def body(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"a": "b"}},
            "data": {"k": "v"},
        }

    copied = await c.create(CONFIGMAPS, body("copied"), "default")
    handed = await c.create(CONFIGMAPS, body("handed"), "default", handoff=True)
    assert _without_server_set(handed) == _without_server_set(copied)
    got = await c.get(CONFIGMAPS, "handed", "default")
    assert got == handed
    # the response is the caller's own object either way
    handed["data"]["k"] = "changed"
    assert (await c.get(CONFIGMAPS, "handed", "default"))["data"] == {"k": "v"}


async def test_recorded_events_do_not_share_the_callers_reference(plane: ControlPlane) -> None:
    inf = Informer(plane.client("watcher"), EVENTS)
    both = asyncio.Event()
    inf.add_event_handler(lambda _: both.set() if len(inf) == 2 else None)
    inf.start()
    await inf.wait_for_sync()
    rec = EventRecorder(plane.client("kubelet"), "kubelet", clock=FakeClock())
    ref = {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "u-1", "apiVersion": "v1"}
    related = {"kind": "Node", "name": "n1", "apiVersion": "v1"}
    rec.event_ref(ref, NORMAL, "Pulled", "pulled", related)
    rec.event_ref(ref, NORMAL, "Started", "started")
    await rec.flush()
    await asyncio.wait_for(both.wait(), 10)  # the informer's watch delivered both
    ref["name"] = "changed by the caller"
    related["name"] = "changed too"
    cached = sorted(inf.list(), key=lambda e: e["reason"])
    assert [e["involvedObject"]["name"] for e in cached] == ["web-0", "web-0"]
    assert cached[0]["related"]["name"] == "n1"
    assert all(e["involvedObject"] is not ref for e in cached)
    await rec.stop()
    await inf.stop()


async def test_the_retry_after_a_name_clash_writes_a_clean_body(plane: ControlPlane) -> None:
    """The first attempt's body was filled in by the server before the clash; the retry's is new."""
    clock = FakeClock()
    first = EventRecorder(plane.client("kubelet"), "kubelet", clock=clock)
    second = EventRecorder(plane.client("default-scheduler"), "default-scheduler", clock=clock)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "uid": "u-1"},
    }
    first.event(pod, NORMAL, "Pulled", "pulled")
    await first.flush()
    second.event(pod, NORMAL, "Scheduled", "assigned")  # same instant: the same name first
    await second.flush()
    events = {e["reason"]: e for e in (await plane.client("test").list(EVENTS, "default"))["items"]}
    clashed, clean = events["Scheduled"], events["Pulled"]
    assert clashed["metadata"]["name"] != clean["metadata"]["name"]
    assert clashed["metadata"]["uid"] != clean["metadata"]["uid"]
    (entry,) = clashed["metadata"]["managedFields"]
    assert entry["manager"] == "default-scheduler" and entry["operation"] == "Update"
    assert _without_server_set(clashed).keys() == _without_server_set(clean).keys()
    assert clashed["source"] == {"component": "default-scheduler"}
    assert clashed["reportingComponent"] == "default-scheduler"
    await first.stop()
    await second.stop()
