"""Follow an object or a collection until a condition holds (client-go's ``watchtools.UntilWithSync``).

Each function lists once, which yields both the state and the revision to watch from (so no
change can slip in between reading and watching), then follows a watch from that revision and
asks the condition again after every event; a watch that ends or reports ERROR is replaced by a
fresh LIST. They have no timeout of their own: callers bound them with ``asyncio.wait_for`` and
decide what a timeout reports. ``seen``, when given, is handed every state, for that report.

The wait helpers of :mod:`gangplane.testing.waiters`, :mod:`controllers.testing` and the test
suite's ``tests/helpers.py`` all follow objects this way; the loops live here, in the client
layer, because the controllers' helpers may not import :mod:`gangplane.testing`.
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client


async def object_until(
    client: Client,
    gvr: GVR,
    name: str,
    condition: Callable[[Obj | None], bool],
    namespace: str = "",
    *,
    seen: Callable[[Obj | None], None] | None = None,
) -> Obj | None:
    """Follow object ``name`` until ``condition(obj)`` holds (``obj`` is None while it does not
    exist); returns the object that satisfied it."""
    selector = f"metadata.name={name}"
    while True:
        lst = await client.list(gvr, namespace, field_selector=selector)
        cur: Obj | None = lst["items"][0] if lst["items"] else None
        if seen is not None:
            seen(cur)
        if condition(cur):
            return cur
        async for ev in client.watch(
            gvr, namespace, field_selector=selector, resource_version=lst["metadata"]["resourceVersion"]
        ):
            if ev.type == "ERROR":
                break
            if ev.type == "BOOKMARK":
                continue
            cur = None if ev.type == "DELETED" else ev.object
            if seen is not None:
                seen(cur)
            if condition(cur):
                return cur


async def collection_until(
    client: Client,
    gvr: GVR,
    condition: Callable[[list[Obj]], bool],
    namespace: str = "",
    *,
    label_selector: str = "",
    seen: Callable[[list[Obj]], None] | None = None,
) -> list[Obj]:
    """Follow a (selected) collection until ``condition(items)`` holds; returns the items.

    One LIST gives the items and the revision to watch from; each watch event updates them by
    namespace/name (DELETED removes) and the condition is asked again; a watch that ends or
    reports ERROR is replaced by a fresh LIST. ``seen`` is given every state.
    """
    while True:
        lst = await client.list(gvr, namespace, label_selector=label_selector)
        items = {(i["metadata"].get("namespace", ""), i["metadata"]["name"]): i for i in lst["items"]}
        state = list(items.values())
        if seen is not None:
            seen(state)
        if condition(state):
            return state
        async for ev in client.watch(
            gvr,
            namespace,
            label_selector=label_selector,
            resource_version=lst["metadata"]["resourceVersion"],
        ):
            if ev.type == "ERROR":
                break
            if ev.type == "BOOKMARK":
                continue
            key = (ev.object["metadata"].get("namespace", ""), ev.object["metadata"]["name"])
            if ev.type == "DELETED":
                items.pop(key, None)
            else:
                items[key] = ev.object
            state = list(items.values())
            if seen is not None:
                seen(state)
            if condition(state):
                return state


__all__ = ["collection_until", "object_until"]
