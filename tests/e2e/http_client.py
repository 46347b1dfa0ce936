"""The async :class:`~apiserver.client.interface.Client` verbs the restart scenarios use, over HTTP.

Scenario code (tests/integration/enablement_support.py) runs unchanged against an in-process
ControlPlane and against real ``gangplane serve`` processes through this adapter: the same paths
kubectl uses, errors raised as :class:`~apiserver.errors.StatusError` from the server's
``metav1.Status``, watches read line by line. :attr:`HTTPClient.url` may be pointed at a restarted
server (a new port) between requests.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, WatchEvent
from apiserver.errors import StatusError


def collection_path(gvr: GVR, namespace: str = "") -> str:
    base = f"/api/{gvr.version}" if not gvr.group else f"/apis/{gvr.group}/{gvr.version}"
    return f"{base}/namespaces/{namespace}/{gvr.resource}" if namespace else f"{base}/{gvr.resource}"


class HTTPClient:
    """get / list / watch / create / patch / delete of the Client protocol, over one server URL."""

    def __init__(self, url: str, user_agent: str = "restart-e2e") -> None:
        self.url = url
        self._http = httpx.AsyncClient(timeout=60, headers={"User-Agent": user_agent})

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kw: Any) -> Obj:
        r = await self._http.request(method, self.url + path, **kw)
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = {"message": r.text}
            raise StatusError.from_status(body, r.status_code)
        return r.json()

    async def get(self, gvr: GVR, name: str, namespace: str = "") -> Obj:
        return await self._call("GET", f"{collection_path(gvr, namespace)}/{name}")

    async def list(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Obj:
        params = {
            k: v
            for k, v in (
                ("labelSelector", label_selector),
                ("fieldSelector", field_selector),
                ("limit", str(limit) if limit else ""),
                ("continue", continue_),
                ("resourceVersion", resource_version),
                ("resourceVersionMatch", resource_version_match),
            )
            if v
        }
        return await self._call("GET", collection_path(gvr, namespace), params=params)

    async def watch(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        allow_bookmarks: bool = False,
        send_initial_events: bool = False,
        timeout_seconds: float | None = None,
    ) -> AsyncIterator[WatchEvent]:
        params = {"watch": "true"}
        for k, v in (
            ("labelSelector", label_selector),
            ("fieldSelector", field_selector),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true" if allow_bookmarks else ""),
            ("timeoutSeconds", str(int(timeout_seconds)) if timeout_seconds else ""),
        ):
            if v:
                params[k] = v
        async with self._http.stream(
            "GET", self.url + collection_path(gvr, namespace), params=params, timeout=None
        ) as r:
            if r.status_code >= 400:
                await r.aread()
                raise StatusError.from_status(r.json(), r.status_code)
            async for line in r.aiter_lines():
                if line.strip():
                    ev = json.loads(line)
                    yield WatchEvent(ev["type"], ev["object"])

    async def create(
        self, gvr: GVR, obj: Obj, namespace: str = "", *, dry_run: bool = False, field_manager: str = ""
    ) -> Obj:
        return await self._call("POST", collection_path(gvr, namespace), json=obj)

    async def patch(
        self,
        gvr: GVR,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = "application/merge-patch+json",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        path = f"{collection_path(gvr, namespace)}/{name}" + (f"/{subresource}" if subresource else "")
        return await self._call(
            "PATCH", path, content=json.dumps(patch), headers={"Content-Type": patch_type}
        )

    async def delete(
        self,
        gvr: GVR,
        name: str,
        namespace: str = "",
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> Obj:
        return await self._call("DELETE", f"{collection_path(gvr, namespace)}/{name}")
