"""On a real plane, the StatefulSet controller's handed-off writes (``StatefulSetControl.handoff``:
the pods it stamps, its status bodies, its ControllerRevisions; the hook's Workloads and PodGroups)
leave exactly the objects and Events the copied writes do.

Two planes run the controller with the KEP-6277 hook, one with ``handoff`` and one without, over
the same sets (gang and not, Parallel and OrderedReady, claim templates, template annotations with
characters JSON escapes). Every stored object of the namespace and every Event is compared, with
what the server draws per plane (uids, times, resourceVersions, the uid-derived names) normalised.
In the handoff plane a handed-off Workload or ControllerRevision body is spoilt once its create
returns (:class:`Spoiling`: every string and number of it changed, a revision's ``data`` aside,
which stays the caller's), as a server that keeps and fills in the body may: a controller that
read one after its create would write or report something else.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from apiserver.client.interface import (
    CONTROLLERREVISIONS,
    EVENTS,
    PODGROUPS,
    PODS,
    PVCS,
    STATEFULSETS,
    WORKLOADS,
)
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.kep6277_support import GANG, NS, settled, start_statefulset_controller, sts_manifest

pytestmark = pytest.mark.anyio

_SERVER_DRAWN = re.compile(
    r'"(creationTimestamp|time|firstTimestamp|lastTimestamp|eventTime|resourceVersion|lastTransitionTime)"'
    r': "[^"]*"'
)


def _sets() -> list[Any]:
    gang = sts_manifest("gang", 3, GANG)
    ordered = sts_manifest("ordered", 2, policy="OrderedReady")
    plain = sts_manifest("plain", 2)
    odd = sts_manifest("odd", 3, GANG)
    odd["spec"]["template"]["metadata"]["annotations"] = {"why": "<x> & \u2028 y"}
    claims = sts_manifest("claims", 2, GANG)
    claims["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
    ]
    return [gang, ordered, plain, odd, claims]


def _spoil(value: Any) -> Any:
    """``value`` with every string and number changed, dicts and lists spoilt in place."""
    if isinstance(value, dict):
        for k, v in value.items():
            value[k] = _spoil(v)
        return value
    if isinstance(value, list):
        value[:] = [_spoil(v) for v in value]
        return value
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1000
    if isinstance(value, str):
        return value + "-spoilt"
    return value


class Spoiling:
    """The controller's client, but a handed-off Workload or ControllerRevision body is created
    from a copy and then spoilt (for a revision: all but its ``data``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spoilt = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def create(self, gvr: Any, obj: Any, namespace: str = "", **kw: Any) -> Any:
        if not kw.get("handoff") or gvr.resource not in ("workloads", "controllerrevisions"):
            return await self.inner.create(gvr, obj, namespace, **kw)
        sent = json.loads(json.dumps(obj))
        try:
            return await self.inner.create(gvr, sent, namespace, **kw)
        finally:
            self.spoilt += 1
            for k in list(obj):
                if gvr.resource != "controllerrevisions" or k != "data":
                    obj[k] = _spoil(obj[k])


async def _dump(handoff: bool) -> str:
    cp = ControlPlane(
        ControlPlaneOptions(gates=FeatureGate(), bookmark_interval=0.5, client_bookmark_interval=0.2)
    )
    try:
        ctrl = await start_statefulset_controller(cp)
        ctrl.control.handoff = handoff
        ctrl.scheduling_hook.handoff = handoff  # type: ignore[attr-defined]
        spoiling = Spoiling(ctrl.client)
        if handoff:
            ctrl.control.history.client = spoiling
            ctrl.scheduling_hook.client = spoiling  # type: ignore[attr-defined]
        client = cp.client("test")
        for sts in _sets():
            await client.create(STATEFULSETS, sts, NS)
        for sts in _sets():
            await settled(ctrl, client, sts["metadata"]["name"])
        await ctrl.recorder.flush()
        # each of the five sets makes a revision, the three gang sets a Workload each
        assert spoiling.spoilt == (8 if handoff else 0)
        dump: dict[str, Any] = {}
        uids: dict[str, str] = {}
        for gvr in (STATEFULSETS, PODS, CONTROLLERREVISIONS, WORKLOADS, PODGROUPS, EVENTS, PVCS):
            items = sorted((await client.list(gvr, NS))["items"], key=lambda o: o["metadata"]["name"])
            dump[gvr.resource] = items
            for o in items:
                uids[o["metadata"]["uid"]] = f"{gvr.resource}/{o['metadata']['name']}"
        derived = {
            w["metadata"]["name"]: "WL(" + w["spec"]["controllerRef"]["name"] + ")" for w in dump["workloads"]
        }
        derived.update(
            {
                p["metadata"]["name"]: "PG(" + p["spec"]["workloadRef"]["workloadName"] + ")"
                for p in dump["podgroups"]
            }
        )
        for w in dump["workloads"]:
            uids[w["metadata"]["uid"]] = "WL"
        for e in dump["events"]:
            derived[e["metadata"]["name"]] = "EV(" + e["reason"] + ")"
        text = json.dumps(dump, sort_keys=True)
        for uid, name in uids.items():
            text = text.replace(uid, f"UID({name})")
        # a PodGroup's name starts with its Workload's: the longer names first
        for name in sorted(derived, key=len, reverse=True):
            text = text.replace(name, derived[name])
        # sorted again: keys holding a uid (managedFields' ``k:{"uid":…}``) sorted by the uid drawn,
        # objects named by a drawn suffix (Events) by their normalised content
        out = json.loads(_SERVER_DRAWN.sub(r'"\1": "X"', text))
        for kind, items in out.items():
            for o in items:
                # the server orders managedFields entries by time, to the second, then by manager:
                # whether a set's create and its status write share a second is the clock's, so
                # the entries are compared as a set
                entries = o["metadata"].get("managedFields")
                if entries:
                    entries.sort(key=lambda e: json.dumps(e, sort_keys=True))
            out[kind] = sorted(items, key=lambda o: json.dumps(o, sort_keys=True))
        return json.dumps(out, sort_keys=True, indent=0)
    finally:
        await cp.stop()


async def test_handed_off_writes_store_what_copied_writes_store() -> None:
    handed_off = await _dump(True)
    copied = await _dump(False)
    assert '"kind": "Pod"' in handed_off and "FailedCreate" not in handed_off
    assert handed_off.count("SuccessfulCreate") == copied.count("SuccessfulCreate") > 0
    assert handed_off == copied
