"""The :class:`~apiserver.client.interface.Client` over HTTP: the verbs a component needs, against any
API server (``gangplane serve`` or a real cluster).

It speaks the paths, query parameters and bodies client-go sends (``dryRun=All``,
``fieldManager``, ``force``, a ``DeleteOptions`` body, ``watch=true`` with
``allowWatchBookmarks``, ``sendInitialEvents`` + ``resourceVersionMatch=NotOlderThan``) and turns
every ``metav1.Status`` answer into the :class:`~apiserver.errors.StatusError` the in-process
client raises, so the informers, work queues and controllers on top run unchanged.

Where it differs from the in-process client, it does so as client-go does:

* a watch whose connection breaks ends like one the server closed: the informer resumes from
  the last resourceVersion it saw (bookmarks keep that fresh), and re-lists only on 410;
* a ``410 Expired`` answered before the stream starts arrives as an ``ERROR`` event, as the
  server sends one inside the stream, so callers handle one shape;
* a server that cannot be reached raises :class:`APIConnectionError` (a ``ConnectionError``),
  not a ``StatusError``: no Status was received;
* ``read_only`` is accepted and ignored: every object is freshly decoded from the wire.

One :class:`HTTPTransport` (connection pool, TLS context, credentials) is shared by every
client of a process; each :class:`HTTPClient` only adds its user agent, which is also its
default field manager (as the in-process client's).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, WatchEvent
from apiserver.client.restconfig import RESTConfig
from apiserver.errors import StatusError

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class APIConnectionError(ConnectionError):
    """The API server could not be reached or the connection broke before an answer (no Status)."""


def status_error(code: int, body: bytes) -> StatusError:
    """The :class:`StatusError` of an HTTP error answer: its ``metav1.Status`` when the body is one,
    otherwise client-go's generic error for the code (``NewGenericServerResponse``)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return StatusError.from_status(doc, code)
    text = body.decode("utf-8", "replace").strip()
    reason = _REASONS.get(code, "Unknown" if code < 500 else "InternalError")
    message = f"the server responded with the status code {code} but did not return more information"
    if text:
        message = f"{message} ({text[:200]})"
    return StatusError(code, reason, message)


def collection_path(gvr: GVR, namespace: str = "") -> str:
    """``/api/v1/namespaces/<ns>/pods`` or ``/apis/<group>/<version>/<resource>``."""
    base = f"/apis/{gvr.group}/{gvr.version}" if gvr.group else f"/api/{gvr.version}"
    return f"{base}/namespaces/{namespace}/{gvr.resource}" if namespace else f"{base}/{gvr.resource}"


def object_path(gvr: GVR, name: str, namespace: str = "", subresource: str = "") -> str:
    if not name:
        raise StatusError(400, "BadRequest", "resource name may not be empty")
    path = f"{collection_path(gvr, namespace)}/{name}"
    return f"{path}/{subresource}" if subresource else path


def _params(**values: str) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}


class HTTPTransport:
    """A connection pool to one API server with its TLS context and credentials, shared by clients."""

    def __init__(self, config: RESTConfig, *, timeout: float = 60.0) -> None:
        self.config = config
        headers = {"Accept": JSON}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        self._extensions: dict[str, Any] = {}
        if config.tls_server_name:
            self._extensions["sni_hostname"] = config.tls_server_name
        self.http = httpx.AsyncClient(
            base_url=config.server,
            verify=config.ssl_context(),
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        user_agent: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
    ) -> Obj:
        """One request; the decoded JSON answer, or the StatusError the server answered."""
        headers = {"User-Agent": user_agent}
        content: bytes | None = None
        if body is not None:
            content = body if isinstance(body, bytes) else orjson.dumps(body)
            headers["Content-Type"] = content_type
        try:
            r = await self.http.request(
                method,
                path,
                params=params,
                content=content,
                headers=headers,
                extensions=self._extensions,
            )
        except httpx.TransportError as e:
            raise APIConnectionError(f"{method} {self.config.server}{path}: {e!r}") from e
        if r.status_code >= 400:
            raise status_error(r.status_code, r.content)
        try:
            doc = orjson.loads(r.content)
        except orjson.JSONDecodeError:
            raise StatusError(
                500, "InternalError", f"{method} {path}: the server answered {r.status_code} without JSON"
            ) from None
        if not isinstance(doc, dict):
            raise StatusError(500, "InternalError", f"{method} {path}: the answer is not a JSON object")
        return doc

    async def stream_lines(
        self, path: str, user_agent: str, params: Mapping[str, str]
    ) -> AsyncIterator[bytes | StatusError]:
        """A watch stream's lines; a StatusError item when the server refuses the watch.

        A connection that breaks mid-stream ends the iterator (as a server-side close would).
        """
        request = self.http.build_request(
            "GET",
            path,
            params=params,
            headers={"User-Agent": user_agent},
            timeout=httpx.Timeout(self.http.timeout.connect, read=None),
            extensions=self._extensions,
        )
        try:
            response = await self.http.send(request, stream=True)
        except httpx.TransportError as e:
            raise APIConnectionError(f"GET {self.config.server}{path}: {e!r}") from e
        try:
            if response.status_code >= 400:
                try:
                    body = await response.aread()
                except httpx.TransportError as e:
                    raise APIConnectionError(f"GET {self.config.server}{path}: {e!r}") from e
                yield status_error(response.status_code, body)
                return
            try:
                async for line in response.aiter_lines():
                    if line.strip():
                        yield line.encode()
            except (httpx.TransportError, httpx.StreamError):
                return  # the connection broke: the caller resumes from its last resourceVersion
        finally:
            await response.aclose()


class HTTPClient:
    """:class:`~apiserver.client.interface.Client` over an :class:`HTTPTransport`.

    ``user_agent`` is sent as the User-Agent and used as the field manager of writes that name
    none, like :class:`~apiserver.server.localclient.LocalClient`'s.
    """

    def __init__(self, transport: HTTPTransport, user_agent: str = "gangplane") -> None:
        self.transport = transport
        self.user_agent = user_agent

    @classmethod
    def from_config(cls, config: RESTConfig, user_agent: str = "gangplane") -> HTTPClient:
        """A client with its own transport (close it with :meth:`aclose`)."""
        return cls(HTTPTransport(config), user_agent)

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def _call(self, method: str, path: str, **kw: Any) -> Obj:
        return await self.transport.request(method, path, self.user_agent, **kw)

    def _write_params(self, dry_run: bool, field_manager: str, force: bool = False) -> dict[str, str]:
        return _params(
            dryRun="All" if dry_run else "",
            fieldManager=field_manager or self.user_agent,
            force="true" if force else "",
        )

    @staticmethod
    def _name_ns(obj: Obj, namespace: str) -> tuple[str, str]:
        md = obj.get("metadata") or {}
        return str(md.get("name") or ""), namespace or str(md.get("namespace") or "")

    # ------------------------------------------------------------------ reads
    async def get(self, gvr: GVR, name: str, namespace: str = "") -> Obj:
        return await self._call("GET", object_path(gvr, name, namespace))

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
        read_only: bool = False,
    ) -> Obj:
        params = _params(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=str(limit) if limit else "",
            resourceVersion=resource_version,
            resourceVersionMatch=resource_version_match,
        )
        if continue_:
            params["continue"] = continue_
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
        read_only: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        params = _params(
            watch="true",
            labelSelector=label_selector,
            fieldSelector=field_selector,
            resourceVersion=resource_version,
            allowWatchBookmarks="true" if allow_bookmarks else "",
            sendInitialEvents="true" if send_initial_events else "",
            resourceVersionMatch="NotOlderThan" if send_initial_events else "",
            timeoutSeconds=str(max(1, math.ceil(timeout_seconds))) if timeout_seconds else "",
        )
        async for item in self.transport.stream_lines(
            collection_path(gvr, namespace), self.user_agent, params
        ):
            if isinstance(item, StatusError):
                if item.code == 410:
                    yield WatchEvent("ERROR", item.status())
                    return
                raise item
            try:
                ev = orjson.loads(item)
                etype, obj = str(ev["type"]), ev["object"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                raise StatusError(
                    500, "InternalError", f"watch of {gvr}: undecodable event {item[:200]!r}"
                ) from None
            yield WatchEvent(etype, obj)
            if etype == "ERROR":
                return

    # ------------------------------------------------------------------ discovery
    async def server_resources(self) -> builtins.list[Obj]:
        """``/api`` then ``/apis``, then each served group-version's ``APIResourceList`` (preferred first)."""
        out: builtins.list[Obj] = []
        core = await self._call("GET", "/api")
        for version in core.get("versions") or []:
            out.append(await self._call("GET", f"/api/{version}"))
        groups = await self._call("GET", "/apis")
        for group in groups.get("groups") or []:
            for v in group.get("versions") or []:
                gv = v.get("groupVersion") or f"{group.get('name')}/{v.get('version')}"
                try:
                    out.append(await self._call("GET", f"/apis/{gv}"))
                except StatusError as e:
                    if e.code != 404:  # a group-version gone between the two reads
                        raise
        return out

    # ------------------------------------------------------------------ writes
    async def create(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        answer: bool = True,
        read_only: bool = False,
    ) -> Obj:
        # ``handoff`` changes nothing here: the body is serialized, the caller's dict never stored;
        # nor does ``answer``: the response is read (and decoded) to see that the create succeeded;
        # nor ``read_only``: the answer is decoded for this caller alone
        _, ns = self._name_ns(obj, namespace)
        return await self._call(
            "POST", collection_path(gvr, ns), params=self._write_params(dry_run, field_manager), body=obj
        )

    async def update(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        # ``handoff`` and ``read_only`` change nothing here: the body is serialized and the
        # answer decoded for this caller alone
        name, ns = self._name_ns(obj, namespace)
        return await self._call(
            "PUT", object_path(gvr, name, ns), params=self._write_params(dry_run, field_manager), body=obj
        )

    async def update_status(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        name, ns = self._name_ns(obj, namespace)
        return await self._call(
            "PUT",
            object_path(gvr, name, ns, "status"),
            params=self._write_params(False, field_manager),
            body=obj,
        )

    async def patch(
        self,
        gvr: GVR,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = MERGE_PATCH,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool = False,
        read_only: bool = False,
    ) -> Obj:
        # ``read_only`` changes nothing here: the answer is decoded for this caller alone
        body = patch.encode() if isinstance(patch, str) else patch
        return await self._call(
            "PATCH",
            object_path(gvr, name, namespace, subresource),
            params=self._write_params(dry_run, field_manager, force),
            body=body,
            content_type=patch_type,
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
        return await self._call(
            "DELETE",
            object_path(gvr, name, namespace),
            body=delete_options(propagation_policy, grace_period_seconds, preconditions, dry_run),
        )

    async def delete_collection(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> Obj:
        return await self._call(
            "DELETE",
            collection_path(gvr, namespace),
            params=_params(labelSelector=label_selector, fieldSelector=field_selector),
            body=delete_options(propagation_policy, grace_period_seconds, None, False),
        )

    async def create_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        return await self._call("POST", object_path(gvr, name, namespace, subresource), body=obj)

    async def get_subresource(self, gvr: GVR, name: str, subresource: str, namespace: str = "") -> Obj:
        return await self._call("GET", object_path(gvr, name, namespace, subresource))

    async def update_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        return await self._call(
            "PUT",
            object_path(gvr, name, namespace, subresource),
            params=self._write_params(False, ""),
            body=obj,
        )


def delete_options(
    propagation_policy: str | None,
    grace_period_seconds: int | None,
    preconditions: dict[str, str] | None,
    dry_run: bool,
) -> Obj:
    """The ``DeleteOptions`` body client-go sends with a delete."""
    body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if grace_period_seconds is not None:
        body["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        body["preconditions"] = dict(preconditions)
    if propagation_policy:
        body["propagationPolicy"] = propagation_policy
    if dry_run:
        body["dryRun"] = ["All"]
    return body
