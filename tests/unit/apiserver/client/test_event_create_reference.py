"""The Event recorder's create (a handed-off body, the answer dropped) against the general one.

For varied Events, valid and not (namespaces that clash, malformed names and namespaces,
series-style Events missing their fields, values of the wrong JSON type, over-long reasons and
messages, unknown fields), the recorder's way of creating must store exactly what a plain
create stores (managedFields included) and fail with exactly the same ``metav1.Status``.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.client.interface import EVENTS, NAMESPACES
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

SERVER_SET = ("uid", "resourceVersion")


def _event(rnd: random.Random, i: int) -> tuple[dict[str, Any], str]:
    ns = rnd.choice(["default", "team-a", "team-a", "Bad_NS"])
    involved_ns = rnd.choice([ns, ns, ns, "", "other"])
    ref: dict[str, Any] = {"kind": "Pod", "name": f"p{i}", "uid": f"u-{i}", "apiVersion": "v1"}
    if involved_ns:
        ref["namespace"] = involved_ns
    ev: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"p{i}.{i:x}", "namespace": ns},
        "involvedObject": ref,
        "reason": rnd.choice(["Pulled", "Created", "Started", "Scheduled", "R" * 129]),
        "message": rnd.choice(["Started container c", "m" * 1100]),
        "type": rnd.choice(["Normal", "Warning"]),
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": "2026-12-05T09:00:00Z",
        "lastTimestamp": "2026-12-05T09:00:01Z",
        "count": 1,
        "reportingComponent": "kubelet",
        "reportingInstance": "n1",
    }
    roll = rnd.random()
    if roll < 0.08:
        ev["count"] = "one"  # the wrong JSON type: a 400 from decoding
    elif roll < 0.14:
        ev["eventTime"] = "2026-12-05T09:00:00.000000Z"  # series-style: action required
        ev.pop(rnd.choice(["reportingComponent", "reportingInstance", "reason"]))
    elif roll < 0.18:
        ev["metadata"]["name"] = "Not A Name"
    elif roll < 0.22:
        ev["involvedObject"]["fieldPath"] = "spec.containers{c}"
        ev["related"] = {"kind": "Node", "name": "n1"}
    elif roll < 0.25:
        ev["series"] = {"count": 2, "lastObservedTime": "2026-12-05T09:00:02.000000Z"}
    elif roll < 0.28:
        ev["unknownField"] = "x"  # dropped, as by kube's decoder
    return ev, ns


def _stored(obj: dict[str, Any]) -> dict[str, Any]:
    md = {k: v for k, v in obj["metadata"].items() if k not in SERVER_SET}
    return {**obj, "metadata": md}


async def _outcome(c: Any, ev: dict[str, Any], ns: str, recorder_way: bool) -> Any:
    try:
        if recorder_way:
            await c.create(EVENTS, ev, ns, handoff=True, answer=False)
        else:
            await c.create(EVENTS, ev, ns)
    except errors.StatusError as e:
        return ("error", e.code, e.status())
    return ("stored", _stored(await c.get(EVENTS, ev["metadata"]["name"], ns)))


@pytest.mark.parametrize("seed", range(3))
async def test_recorder_creates_store_and_fail_as_general_creates(plane: ControlPlane, seed: int) -> None:
    rnd = random.Random(seed)
    general = plane.client("kubelet")
    recorder = plane.client("kubelet")
    for ns in ("team-a",):
        await general.create(NAMESPACES, {"metadata": {"name": ns}})
    stored = errors_seen = 0
    codes: set[int] = set()
    for i in range(150):
        ev, ns = _event(rnd, i)
        # the general create first: it may not alter the body, and the recorder's create of the
        # same Event (deleted in between) must then find the same name free
        want = await _outcome(general, copy.deepcopy(ev), ns, recorder_way=False)
        if want[0] == "stored":
            await general.delete(EVENTS, ev["metadata"]["name"], ns)
        got = await _outcome(recorder, copy.deepcopy(ev), ns, recorder_way=True)
        assert got == want, (i, ev)
        stored += want[0] == "stored"
        errors_seen += want[0] == "error"
        codes.add(want[1] if want[0] == "error" else 201)
    assert stored > 40 and errors_seen > 20  # both kinds of outcome were compared
    assert {201, 400, 404, 422} <= codes  # decoding, namespace and validation failures alike


class _GeneralOnly:
    """Stands in for the tracker's create-entry templates: every create takes the general path."""

    def entries(self, obj: Any, node: Any, manager: str, api_version: str, now: str, general: Any) -> Any:
        return general()


def _without_times(obj: dict[str, Any]) -> dict[str, Any]:
    out = _stored(obj)
    md = out["metadata"] = dict(out["metadata"])
    md.pop("creationTimestamp", None)
    if "managedFields" in md:
        md["managedFields"] = [{k: v for k, v in e.items() if k != "time"} for e in md["managedFields"]]
    return out


@pytest.mark.parametrize("seed", range(2))
async def test_events_stored_from_shape_templates_equal_the_general_paths(
    plane: ControlPlane, seed: int
) -> None:
    """The managedFields entry of a stored Event made from its shape's template
    (:mod:`apiserver.patch.createentry`) against the general path's, through the whole create:
    the same stored Event (entry times aside: each create has its own) and the same Status for
    the invalid ones, over varied Events (the recorder's way of creating, the general way)."""
    rnd = random.Random(100 + seed)
    c = plane.client("kubelet")
    await c.create(NAMESPACES, {"metadata": {"name": "team-a"}})
    tracker = plane.api.field_tracker
    assert tracker is not None
    templates = tracker._created
    compared = 0
    for i in range(150):
        ev, ns = _event(rnd, i)
        recorder_way = rnd.random() < 0.5
        tracker._created = _GeneralOnly()  # type: ignore[assignment]
        try:
            want = await _outcome(c, copy.deepcopy(ev), ns, recorder_way)
        finally:
            tracker._created = templates
        if want[0] == "stored":
            await c.delete(EVENTS, ev["metadata"]["name"], ns)
        got = await _outcome(c, copy.deepcopy(ev), ns, recorder_way)
        if got[0] == "stored":
            md = got[1]["metadata"]
            assert md.get("managedFields"), ev
            assert all(e["time"] == md["creationTimestamp"] for e in md["managedFields"])
            assert _without_times(got[1]) == _without_times(want[1]), (i, ev)
            compared += 1
        else:
            assert got == want, (i, ev)
    assert compared > 40
