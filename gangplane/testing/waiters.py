"""Wait helpers for tests: watch an object or a list until a condition holds, never poll or sleep.

Each helper lists once (which yields both the state and the revision to watch from, so nothing can
slip in between) and then follows a watch from that revision, re-evaluating the condition on every
event. On timeout it raises ``AssertionError`` showing the last state seen and the object's events,
which is what a user needs to see why a test is stuck.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, GVR, PODS, Client
from apiserver.client.until import collection_until, object_until
from apiserver.errors import StatusError

Condition = Callable[[Obj | None], bool] | str

#: kinds whose GVR a test can name by the object's apiVersion/kind alone
_PLURALS: dict[str, str] = {
    "Endpoints": "endpoints",
    "NetworkPolicy": "networkpolicies",
    "PriorityClass": "priorityclasses",
    "StorageClass": "storageclasses",
    "IngressClass": "ingressclasses",
    "DeviceClass": "deviceclasses",
}


def gvr_of(obj: Mapping[str, Any]) -> GVR:
    """The GVR of a typed object (``apiVersion`` + ``kind``), with kube's regular plural rule."""
    api_version = obj.get("apiVersion", "")
    kind = obj.get("kind", "")
    if not api_version or not kind:
        raise ValueError("the object needs apiVersion and kind to be waited on (or pass gvr=...)")
    group, _, version = api_version.rpartition("/")
    plural = _PLURALS.get(kind)
    if plural is None:
        low = kind.lower()
        if low.endswith("y") and not low.endswith(("ay", "ey", "oy", "uy")):
            plural = low[:-1] + "ies"
        elif low.endswith(("s", "x", "z", "ch", "sh")):
            plural = low + "es"
        else:
            plural = low + "s"
    return GVR(group, version, plural)


def condition_of(spec: Condition) -> Callable[[Obj | None], bool]:
    """A predicate from a callable or from kubectl-wait-style text: ``"Ready"``, ``"Complete=False"``."""
    if callable(spec):
        return spec
    name, _, want = spec.partition("=")
    want = want or "True"
    if name.lower().startswith("condition="):
        name = name.split("=", 1)[1]

    def has_condition(obj: Obj | None) -> bool:
        if obj is None:
            return False
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c.get("type", "").lower() == name.lower():
                return str(c.get("status", "")).lower() == want.lower()
        return False

    return has_condition


def _describe(obj: Obj | None) -> str:
    if obj is None:
        return "<absent>"
    shown = {k: v for k, v in obj.items() if k != "metadata"}
    md = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return yaml.safe_dump({"metadata": md, **shown}, sort_keys=False, default_flow_style=False)


async def events_for(client: Client, namespace: str, uid: str = "", name: str = "") -> list[Obj]:
    """Core events in ``namespace`` about the object with ``uid`` (or ``name``), oldest first."""
    try:
        lst = await client.list(EVENTS, namespace)
    except StatusError:
        return []
    out = []
    for ev in lst["items"]:
        inv = ev.get("involvedObject") or {}
        if (uid and inv.get("uid") == uid) or (not uid and name and inv.get("name") == name):
            out.append(ev)
    out.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return out


def format_events(events: list[Obj]) -> str:
    """Events as ``kubectl describe`` shows them: type, reason, object, message."""
    if not events:
        return "  <none>"
    rows = []
    for e in events:
        inv = e.get("involvedObject") or {}
        count = e.get("count") or 1
        times = f" (x{count})" if count > 1 else ""
        rows.append(
            f"  {e.get('type', '')}\t{e.get('reason', '')}\t{inv.get('kind', '')}/{inv.get('name', '')}\t"
            f"{e.get('message', '')}{times}"
        )
    return "\n".join(rows)


async def _timeout_error(
    client: Client, what: str, timeout: float, last: Obj | None, namespace: str, name: str
) -> AssertionError:
    uid = ((last or {}).get("metadata") or {}).get("uid", "")
    events = await events_for(client, namespace, uid, name)
    return AssertionError(
        f"timed out after {timeout:g}s waiting for {what}\n"
        f"last state:\n{_describe(last)}\nevents:\n{format_events(events)}"
    )


async def wait_for(
    client: Client,
    obj: Mapping[str, Any] | None = None,
    condition: Condition = lambda o: o is not None,
    *,
    gvr: GVR | None = None,
    name: str = "",
    namespace: str = "",
    timeout: float = 10.0,
) -> Obj | None:
    """Watch one object until ``condition(obj)`` holds (``obj`` is None once it is gone).

    Name it by an object (``apiVersion``, ``kind``, ``metadata.name``/``namespace``) or by
    ``gvr`` + ``name`` (+ ``namespace``). Returns the object that satisfied the condition.
    """
    if obj is not None:
        gvr = gvr or gvr_of(obj)
        md = obj.get("metadata") or {}
        name = name or md.get("name", "")
        namespace = namespace or md.get("namespace", "")
    if gvr is None or not name:
        raise ValueError("wait_for needs an object or gvr= and name=")
    cond = condition_of(condition)
    last: list[Obj | None] = [None]

    def remember(cur: Obj | None) -> None:
        last[0] = cur

    run = object_until(client, gvr, name, cond, namespace, seen=remember)
    try:
        return await asyncio.wait_for(run, timeout)
    except TimeoutError:
        what = f"{gvr.resource} {namespace + '/' if namespace else ''}{name} to satisfy the condition"
        raise await _timeout_error(client, what, timeout, last[0], namespace, name) from None


async def wait_deleted(
    client: Client,
    obj: Mapping[str, Any] | None = None,
    *,
    gvr: GVR | None = None,
    name: str = "",
    namespace: str = "",
    timeout: float = 10.0,
) -> None:
    """Watch until the object no longer exists (finalizers and graceful deletion included)."""
    await wait_for(client, obj, lambda o: o is None, gvr=gvr, name=name, namespace=namespace, timeout=timeout)


def _running_and_ready(pod: Obj) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


async def wait_list(
    client: Client,
    gvr: GVR,
    condition: Callable[[list[Obj]], bool],
    *,
    namespace: str = "",
    label_selector: str = "",
    timeout: float = 10.0,
    what: str = "",
) -> list[Obj]:
    """Watch a (selected) collection until ``condition(items)`` holds; returns the items."""
    last: list[list[Obj]] = [[]]

    def remember(items: list[Obj]) -> None:
        last[0] = items

    run = collection_until(client, gvr, condition, namespace, label_selector=label_selector, seen=remember)
    try:
        return await asyncio.wait_for(run, timeout)
    except TimeoutError:
        shown = (
            "\n".join(_summary(o) for o in sorted(last[0], key=lambda o: o["metadata"]["name"])) or "  <none>"
        )
        events: list[Obj] = []
        for o in last[0][:20]:
            md = o["metadata"]
            events += await events_for(client, md.get("namespace", ""), md.get("uid", ""))
        raise AssertionError(
            f"timed out after {timeout:g}s waiting for {what or gvr.resource}"
            f"{' matching ' + repr(label_selector) if label_selector else ''}\n"
            f"last state:\n{shown}\nevents:\n{format_events(events)}"
        ) from None


def _summary(obj: Obj) -> str:
    md = obj["metadata"]
    status = obj.get("status") or {}
    conds = ",".join(f"{c.get('type')}={c.get('status')}" for c in status.get("conditions") or [])
    node = (obj.get("spec") or {}).get("nodeName", "")
    return f"  {md.get('namespace', '')}/{md['name']} phase={status.get('phase', '')} node={node} {conds}".rstrip()


async def wait_pods_running(
    client: Client, selector: str = "", n: int = 1, *, namespace: str = "", timeout: float = 10.0
) -> list[Obj]:
    """Watch pods matching ``selector`` until at least ``n`` are Running and Ready; returns those."""
    ready: list[list[Obj]] = [[]]

    def enough(items: list[Obj]) -> bool:
        ready[0] = [p for p in items if _running_and_ready(p)]
        return len(ready[0]) >= n

    await wait_list(
        client,
        PODS,
        enough,
        namespace=namespace,
        label_selector=selector,
        timeout=timeout,
        what=f"{n} pod(s) Running and Ready",
    )
    return ready[0]
