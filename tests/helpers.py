"""Test helpers: wait on watches with a timeout instead of sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client


async def wait_for_object(
    client: Client,
    gvr: GVR,
    name: str,
    namespace: str = "",
    cond: Callable[[Obj | None], bool] = lambda o: o is not None,
    timeout: float = 10.0,
) -> Obj | None:
    """Watch ``name`` until ``cond(obj)`` holds (``obj`` is None once deleted); raise on timeout."""

    async def run() -> Obj | None:
        while True:
            # One LIST gives the object and the revision to watch from atomically: nothing can
            # slip in between reading the state and starting the watch.
            lst = await client.list(gvr, namespace, field_selector=f"metadata.name={name}")
            cur: Obj | None = lst["items"][0] if lst["items"] else None
            if cond(cur):
                return cur
            rv = lst["metadata"]["resourceVersion"]
            async for ev in client.watch(
                gvr, namespace, field_selector=f"metadata.name={name}", resource_version=rv
            ):
                if ev.type == "ERROR":
                    break
                if ev.type == "BOOKMARK":
                    continue
                obj = None if ev.type == "DELETED" else ev.object
                if cond(obj):
                    return obj

    return await asyncio.wait_for(run(), timeout)


async def wait_for_list(
    client: Client,
    gvr: GVR,
    namespace: str = "",
    cond: Callable[[list[Obj]], bool] = lambda items: bool(items),
    timeout: float = 10.0,
    label_selector: str = "",
) -> list[Obj]:
    """Re-evaluate ``cond`` over the list after every watch event until it holds."""

    async def run() -> list[Obj]:
        while True:
            lst = await client.list(gvr, namespace, label_selector=label_selector)
            items = {(i["metadata"].get("namespace", ""), i["metadata"]["name"]): i for i in lst["items"]}
            if cond(list(items.values())):
                return list(items.values())
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
                k = (ev.object["metadata"].get("namespace", ""), ev.object["metadata"]["name"])
                if ev.type == "DELETED":
                    items.pop(k, None)
                else:
                    items[k] = ev.object
                if cond(list(items.values())):
                    return list(items.values())

    return await asyncio.wait_for(run(), timeout)


def cm(
    name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None, ns: str = "default"
) -> Obj:
    md: Obj = {"name": name, "namespace": ns}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {}}
