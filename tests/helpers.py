"""Test helpers: wait on watches with a timeout instead of sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client
from apiserver.client.until import collection_until, object_until


async def wait_for_object(
    client: Client,
    gvr: GVR,
    name: str,
    namespace: str = "",
    cond: Callable[[Obj | None], bool] = lambda o: o is not None,
    timeout: float = 10.0,
) -> Obj | None:
    """Watch ``name`` until ``cond(obj)`` holds (``obj`` is None once deleted); raise on timeout."""
    return await asyncio.wait_for(object_until(client, gvr, name, cond, namespace), timeout)


async def wait_for_list(
    client: Client,
    gvr: GVR,
    namespace: str = "",
    cond: Callable[[list[Obj]], bool] = lambda items: bool(items),
    timeout: float = 10.0,
    label_selector: str = "",
) -> list[Obj]:
    """Re-evaluate ``cond`` over the list after every watch event until it holds (TimeoutError if not).

    Follows the collection with :func:`apiserver.client.until.collection_until`, as
    ``wait_list`` does; unlike it, a timeout here is a bare ``TimeoutError``.
    """
    return await asyncio.wait_for(
        collection_until(client, gvr, cond, namespace, label_selector=label_selector), timeout
    )


def cm(
    name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None, ns: str = "default"
) -> Obj:
    md: Obj = {"name": name, "namespace": ns}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {}}
