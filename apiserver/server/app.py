"""The HTTP face of the API server: a thin ASGI app over :class:`apiserver.registry.generic.GenericStore`.

It parses paths and query parameters, negotiates content types (JSON, YAML, protobuf requests;
JSON and server-side Tables responses), streams watches, and renders every failure as a
``metav1.Status`` with the code kube uses. No resource logic lives here.

Every request goes to one handler, so the app is a plain ASGI callable using Starlette's
request and response objects but not its router and middleware stack (five awaited layers per
request that decide nothing here).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from functools import partial
from typing import Any

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from apiserver import errors
from apiserver.admission.webhook.frontdoor import admitted, converted, converts_by_webhook
from apiserver.kubeletsim.container import Containers
from apiserver.meta import Clock
from apiserver.patch.limits import MAX_REQUEST_BODY_BYTES
from apiserver.patch.typecheck import check_kind_types
from apiserver.registry.generic import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    DeleteOptions,
    GenericStore,
    Result,
    WriteOptions,
)
from apiserver.registry.namespace_finalize import finalize_namespace
from apiserver.registry.subresources import create_subresource
from apiserver.rest.resources import ResourceDef
from apiserver.server import bodies, negotiation
from apiserver.server.deleteoptions import delete_options
from apiserver.server.frontdoor import user_of
from apiserver.server.health import HealthChecks
from apiserver.server.hijack import HIJACK
from apiserver.server.metrics import APIServerMetrics, WithoutCreated
from apiserver.server.negotiation import media_type as _media
from apiserver.server.queryparams import parse_int64
from apiserver.server.requestinfo import RequestInfo, parse_resource_path
from apiserver.server.routes import check_routed
from apiserver.server.warnings import warning_headers
from apiserver.storage.interface import ADDED, BOOKMARK, Record

log = logging.getLogger("gangplane.apiserver")

MAX_BODY = MAX_REQUEST_BODY_BYTES
JSON = "application/json"
# gangplane serves the Kubernetes 1.37 APIs, but kubectl warns when the server's minor version is more
# than one away from its own (computed from gitVersion only). Reporting 1.36 keeps every client gangplane
# supports (kubectl 1.35 through 1.37) within that skew.
GIT_VERSION = "v1.36.0+gangplane.0.1.0"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)
#: the methods served; HEAD is answered as GET without its body (the HTTP server drops it)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
_ALLOW = "PATCH, PUT, HEAD, GET, POST, DELETE"
#: how much of a LIST or of a watch's initial events is encoded before the event loop serves others
LIST_CHUNK_BYTES = 1 << 20


def version_info() -> dict[str, str]:
    import platform

    return {
        "major": "1",
        "minor": "36",
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-29T00:00:00Z",
        "goVersion": f"python{platform.python_version()}",
        "compiler": "cpython",
        "platform": f"{platform.system().lower()}/{platform.machine()}",
    }


def add_warnings(resp: Response, warnings: list[str]) -> Response:
    """Add ``Warning`` headers as kube's recorder does (sanitized, truncated; never raises)."""
    for value in warning_headers(warnings):
        resp.raw_headers.append((b"warning", value))
    return resp


def _status_bytes(status: dict[str, Any]) -> bytes:
    """A Status as JSON; text the encoder refuses (a lone surrogate quoted from input) is replaced."""
    try:
        return orjson.dumps(status)
    except TypeError:

        def clean(v: Any) -> Any:
            if isinstance(v, str):
                return v.encode("utf-8", "replace").decode("utf-8")
            if isinstance(v, dict):
                return {clean(k): clean(x) for k, x in v.items()}
            if isinstance(v, list):
                return [clean(x) for x in v]
            return v

        return orjson.dumps(clean(status))


def status_response(e: errors.StatusError, warnings: list[str] | None = None) -> Response:
    # kube's JSON serializer (json.Encoder) ends every body with a newline.
    resp = Response(_status_bytes(e.status()) + b"\n", status_code=e.code, media_type=JSON)
    return add_warnings(resp, warnings or [])


# The kinds subresource handlers decode their bodies into (kube's per-subresource REST ``New()``).
SUBRESOURCE_KINDS = {
    "binding": ("", "v1", "Binding"),
    "eviction": ("policy", "v1", "Eviction"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "finalize": ("", "v1", "Namespace"),
}


def check_subresource_body(subresource: str, body: Any) -> None:
    """Type-check a subresource's body as kube's typed decoder would (a 400 before the handler)."""
    group, version, kind = SUBRESOURCE_KINDS[subresource]
    if isinstance(body, dict) and subresource == "eviction" and body.get("apiVersion") == "policy/v1beta1":
        version = "v1beta1"
    check_kind_types(group, version, kind, body)


class _Request(Request):
    """Starlette's request with its headers as one plain dict, built on first use.

    Starlette's ``Headers`` scans and decodes the raw header list at every lookup, and a write
    looks up five of them. ASGI servers send names lower-cased; as in ``Headers``, the first of
    repeated headers wins. Lookups here are by lower-case name.
    """

    @property
    def headers(self) -> Any:
        h = self.__dict__.get("_header_dict")
        if h is None:
            h = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(self.scope["headers"])}
            self.__dict__["_header_dict"] = h
        return h


def _bool(v: str | None) -> bool:
    """A boolean query parameter as kube's parameter codec reads it (``Convert_Slice_string_To_bool``):
    absent, ``0`` or ``false`` (any case) is false; anything else, the empty string included, true."""
    return v is not None and v != "0" and v.lower() != "false"


class APIApp:
    """Builds the ASGI app. ``server_address`` is reported in ``/api`` discovery."""

    def __init__(
        self,
        api: GenericStore,
        metrics: APIServerMetrics,
        metrics_registry: CollectorRegistry,
        *,
        server_address: str = "127.0.0.1:6443",
        bookmark_interval: float = 15.0,
        clock: Clock | None = None,
    ) -> None:
        self.api = api
        self.metrics = metrics
        self.metrics_registry = metrics_registry
        self.server_address = server_address
        self.bookmark_interval = bookmark_interval
        self.clock = clock or api.clock
        self.ready = True
        self._metric_children: dict[tuple[str, str, str, str, str, int], tuple[Any, Any]] = {}
        #: watch-event lines by the identity of the buffered ``(type, record)`` item: watchers
        #: without a selector all buffer the same item, so each event is encoded once for all
        self._lines: dict[int, tuple[tuple[str, Record], bytes]] = {}
        metrics.record_gates(api.gates)
        #: set when the server begins to stop: ``/readyz`` fails its ``shutdown`` check from then on
        self.shutting_down = False
        #: the watches streaming now: ended cleanly when the HTTP server stops (:meth:`close_watches`)
        self._open_watches: set[Any] = set()
        #: connections taken over by a SPDY upgrade: set to end them when the server stops
        self._open_upgrades: set[asyncio.Event] = set()
        #: the HTTP server is stopping: a request cancelled now is part of the stop, not an error
        self._closing = False
        self.health = HealthChecks(api.store.check, lambda: self.shutting_down)
        #: the simulated containers' files written through exec (``kubectl cp``), per pod UID
        self.containers = Containers(clock=self.clock.now)
        #: ``/configz`` sections (component-base's ``configz``): name -> the component's effective
        #: configuration; the composition root installs them (the scheduler's ``componentconfig``)
        self.configz: dict[str, Callable[[], Any]] = {}

    def asgi(self) -> Any:
        """The ASGI application serving every path: this object (an ASGI 3 callable, as servers
        detect it: an instance whose ``__call__`` is a coroutine function)."""
        return self

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await self._websocket(scope, receive, send)
            return
        if scope["method"] not in METHODS:
            resp: Response = PlainTextResponse(
                "Method Not Allowed", status_code=405, headers={"Allow": _ALLOW}
            )
        else:
            resp = await self.handle(_Request(scope, receive))
        try:
            await resp(scope, receive, send)
        except asyncio.CancelledError:
            if not self._closing:
                raise
            # the server is stopping and cancelled what was left of this response: not a failure
            # of the request, so no "Exception in ASGI application" traceback

    def close_watches(self) -> int:
        """End every open watch stream cleanly (its last chunk is sent, the response completes),
        as kube-apiserver ends watches when it shuts down; returns how many were open."""
        self._closing = True
        watches = list(self._open_watches)
        for watcher in watches:
            watcher.close()
        for stop in list(self._open_upgrades):  # SPDY exec/port-forward connections end too
            stop.set()
        return len(watches)

    async def _websocket(self, scope: Any, receive: Any, send: Any) -> None:
        """``pods/exec`` and ``pods/attach`` (:mod:`apiserver.server.streams`); nothing else upgrades."""
        from apiserver.server import streams

        info = parse_resource_path(scope.get("path", ""), self.api.registry)
        rd = info.rd if info is not None else None
        if info is None or rd is None or rd.plural != "pods" or rd.group or not info.name:
            await send({"type": "websocket.close", "code": 1000, "reason": ""})
            return
        try:
            await streams.serve_websocket(self.api, self.containers, scope, receive, send, info, rd)
        except Exception:  # never die from a request
            log.exception("internal error serving a WebSocket on %s", scope.get("path"))

    # ------------------------------------------------------------------ entry
    async def handle(self, request: Request) -> Response:
        path = request.scope["path"]
        try:
            if path.startswith(("/healthz", "/livez", "/readyz")):
                health = self.health.parse(path)
                if health is not None:
                    return await self._health(request, *health)
            if path == "/version" or path == "/version/":
                return Response(orjson.dumps(version_info()), media_type=JSON)
            if path == "/configz" and self.configz:
                # component-base's configz handler: the sections by name (Go sorts map keys), JSON
                body = {name: self.configz[name]() for name in sorted(self.configz)}
                return Response(
                    orjson.dumps(body), media_type=JSON, headers={"X-Content-Type-Options": "nosniff"}
                )
            if path == "/metrics":
                return Response(
                    generate_latest(WithoutCreated(self.metrics_registry)),  # type: ignore[arg-type]  # any collect()-er
                    media_type=CONTENT_TYPE_LATEST,
                )
            if path.startswith("/openapi/"):
                return self._openapi(request, path)
            info = parse_resource_path(path, self.api.registry)
            if info is None:
                return self._discovery(request, path)
            return await self._resource(request, info)
        except errors.StatusError as e:
            return status_response(e)
        except Exception as e:  # never die from a request; report as kube does
            log.exception("internal error serving %s %s", request.method, path)
            return status_response(errors.internal_error(str(e) or e.__class__.__name__))

    async def _health(self, request: Request, endpoint: str, check: str) -> Response:
        q = request.query_params
        answer = await self.health.answer(endpoint, check, "verbose" in q, q.getlist("exclude"))
        if answer is None:
            raise errors.no_route()
        return PlainTextResponse(
            answer.text, status_code=answer.status, headers={"X-Content-Type-Options": "nosniff"}
        )

    # ------------------------------------------------------------------ discovery & openapi
    def _discovery(self, request: Request, path: str) -> Response:
        from apiserver.server import discovery

        parts = [p for p in path.split("/") if p]
        reg = self.api.registry
        gates = self.api.gates
        accept = request.headers.get("accept", "")
        if parts == ["api"] or parts == ["apis"]:
            agg = negotiation.wants_aggregated(accept)
            if agg:
                body = discovery.aggregated_discovery(reg, parts == ["api"], gates)
                return Response(orjson.dumps(body), media_type=None, headers={"Content-Type": agg})
            if parts == ["api"]:
                return Response(orjson.dumps(discovery.api_versions(self.server_address)), media_type=JSON)
            return Response(orjson.dumps(discovery.api_group_list(reg, gates)), media_type=JSON)
        if len(parts) == 2 and parts[0] == "api":
            if parts[1] != "v1":
                raise errors.no_route()
            return Response(orjson.dumps(discovery.api_resource_list(reg, "", "v1", gates)), media_type=JSON)
        if len(parts) == 2 and parts[0] == "apis":
            body = discovery.api_group(reg, parts[1], gates)
            if body is None:
                raise errors.no_route()
            return Response(orjson.dumps(body), media_type=JSON)
        if len(parts) == 3 and parts[0] == "apis":
            body = discovery.api_resource_list(reg, parts[1], parts[2], gates)
            if body is None or not body.get("resources"):
                raise errors.no_route()
            return Response(orjson.dumps(body), media_type=JSON)
        raise errors.no_route()

    def _openapi(self, request: Request, path: str) -> Response:
        from apiserver.openapi import documents

        reg = self.api.registry
        headers = {"Cache-Control": "no-cache, private"}
        if path in ("/openapi/v2", "/openapi/v2/"):
            accept = request.headers.get("accept", "")
            if not negotiation.accepts_json(accept):
                # kubectl asks for the protobuf form only; a 404 makes it fall back silently.
                raise errors.no_route()
            body = documents.openapi_v2(reg)
            headers["ETag"] = documents.etag(body)
            return Response(body, media_type=JSON, headers=headers)
        if path in ("/openapi/v3", "/openapi/v3/"):
            return Response(orjson.dumps(documents.openapi_v3_index(reg)), media_type=JSON, headers=headers)
        rest = path[len("/openapi/v3/") :].strip("/")
        parts = rest.split("/")
        if parts[0] == "api" and len(parts) == 2:
            group, version = "", parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            group, version = parts[1], parts[2]
        else:
            raise errors.no_route()
        if not reg.in_group_version(group, version):
            raise errors.no_route()
        body = documents.openapi_v3_group_version(reg, group, version)
        if request.query_params.get("hash"):
            headers = {"Cache-Control": "public, immutable", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT"}
        headers["ETag"] = documents.etag(body)
        return Response(body, media_type=JSON, headers=headers)

    # ------------------------------------------------------------------ resources
    async def _resource(self, request: Request, info: RequestInfo) -> Response:
        rd = info.rd
        if rd is None or not self.api.served(rd):
            raise errors.no_route()
        if info.subresource and rd.subresource(info.subresource) is None:
            raise errors.no_route()
        if not rd.namespaced and info.namespace:
            raise errors.no_route()
        if rd.namespaced and info.name and not info.namespace:
            raise errors.no_route()
        method = request.method
        check_routed(method, info, rd)
        q = request.query_params
        verb = self._verb(method, info, q)
        started = time.perf_counter()
        code = 500
        try:
            resp = await self._dispatch(request, info, rd, verb)
            code = resp.status_code
            if rd.deprecation_warning:
                add_warnings(resp, [rd.deprecation_warning])
            return resp
        except errors.StatusError as e:
            code = e.code
            if (
                verb in ("create", "update")
                and code == 400
                and e.message.startswith("strict decoding error: ")
            ):
                # kube's body decoder wraps strict errors of creates and updates (patches stay bare).
                e.message = (
                    f'{rd.kind} in version "{rd.version}" cannot be handled as a {rd.kind}: {e.message}'
                )
            raise
        finally:
            if verb != "watch":
                latency, requests = self._request_metrics(verb, rd, info.subresource, code)
                latency.observe(time.perf_counter() - started)
                requests.inc()

    def _request_metrics(self, verb: str, rd: ResourceDef, subresource: str, code: int) -> tuple[Any, Any]:
        """The latency histogram and request counter children of one label set, looked up once."""
        key = (verb, rd.group, rd.version, rd.plural, subresource, code)
        children = self._metric_children.get(key)
        if children is None:
            labels = dict(
                verb=verb, group=rd.group, version=rd.version, resource=rd.plural, subresource=subresource
            )
            children = (
                self.metrics.latency.labels(**labels),
                self.metrics.requests.labels(**labels, code=str(code)),
            )
            self._metric_children[key] = children
        return children

    def _verb(self, method: str, info: RequestInfo, q: Any) -> str:
        if method == "GET":
            if info.is_collection:
                return "watch" if _bool(q.get("watch")) else "list"
            return "get"
        if method == "POST":
            return "create"
        if method == "PUT":
            return "update"
        if method == "PATCH":
            return "patch"
        if method == "DELETE":
            return "deletecollection" if info.is_collection else "delete"
        return method.lower()

    async def _read_body(self, request: Request) -> tuple[Any, str]:
        """Read (within the size limit) and decode the body; every decoding failure is a 4xx here."""
        raw = await bodies.read_limited(request.stream(), request.headers.get("content-length"), MAX_BODY)
        ctype = _media(request.headers.get("content-type"))
        if not raw:
            if request.method in ("POST", "PUT", "PATCH"):
                raise errors.bad_request("the body of the request was empty")
            return None, ctype
        body, raw = await bodies.decode_async(raw, ctype)
        if ctype != bodies.PROTOBUF:
            request.state.raw_body = raw  # for fieldValidation's duplicate-field detection
        return body, ctype

    def _write_opts(
        self, q: Any, user_agent: str = "", raw_body: bytes | None = None, user: Any = None
    ) -> WriteOptions:
        dry = q.getlist("dryRun") if hasattr(q, "getlist") else []
        for d in dry:
            if d != "All":
                raise errors.bad_request(f'dryRun: Unsupported value: "{d}": supported values: "All"')
        fv = q.get("fieldValidation") or ""
        if fv and fv not in ("Strict", "Warn", "Ignore"):
            raise errors.bad_request(
                f'fieldValidation: Unsupported value: "{fv}": supported values: "Ignore", "Strict", "Warn"'
            )
        fm = q.get("fieldManager") or ""
        if not fm and user_agent:
            # kube's default manager: the User-Agent up to the first "/" (e.g. "kubectl-edit").
            fm = user_agent.split("/", 1)[0][:128]
        if len(fm) > 128:
            raise errors.bad_request("fieldManager: Too long: must have at most 128 bytes")
        return WriteOptions(
            dry_run=bool(dry),
            field_manager=fm,
            field_validation=fv,
            force=_bool(q.get("force")),
            raw_body=raw_body,
            user=user,
        )

    def _respond(self, request: Request, rd: ResourceDef, res: Result) -> Response:
        table_version = self._wants_table(request)
        if table_version and res.obj.get("kind") not in ("Status", "Scale"):
            from apiserver.server import tables

            body = orjson.dumps(
                tables.to_table(
                    rd.group,
                    rd.plural,
                    [res.obj],
                    self._now(),
                    res.obj.get("metadata", {}).get("resourceVersion", ""),
                    include_object=request.query_params.get("includeObject") or "Metadata",
                    table_version=table_version,
                    printer=rd.printer,
                )
            )
        else:
            # a stored revision (``raw``) is served as its bytes, without decoding its object
            body = res.raw if res.raw is not None else orjson.dumps(res.obj)
            if res.raw is None and res.obj.get("kind") == "Status":
                body += b"\n"  # as status_response: kube's encoder ends a Status with a newline
        return add_warnings(Response(body, status_code=res.code, media_type=JSON), res.warnings)

    def _now(self) -> Any:
        from datetime import UTC, datetime

        return datetime.fromtimestamp(self.clock.now(), UTC)

    def _wants_table(self, request: Request) -> str | None:
        """The Table version the Accept header asks for (``v1``/``v1beta1``), None for objects."""
        return negotiation.table_version(request.headers.get("accept", ""))

    async def _dispatch(self, request: Request, info: RequestInfo, rd: ResourceDef, verb: str) -> Response:
        """Serve one verb between the storage's barriers: reads see the cluster's newest revision
        (consistent reads), and a write is answered only once the storage has made it durable.

        A write's read-check-write starts from the newest revision too: with several API servers
        on one etcd, the object another server just wrote is the one a precondition is checked on.
        """
        self.api.store.fresh()
        if verb == "watch":  # its stream waits for the storage before each chunk it sends
            return await self._serve_verb(request, info, rd, verb)
        try:
            return await self._serve_verb(request, info, rd, verb)
        finally:
            # A write is acknowledged only once durable; a read is answered only once what it
            # shows is, so no client sees a state that a crash could still take back.
            await self.api.store.durable()

    async def _serve_verb(self, request: Request, info: RequestInfo, rd: ResourceDef, verb: str) -> Response:
        api = self.api
        q = request.query_params
        ns = info.namespace
        if rd.namespaced and info.name and not ns:
            raise errors.no_route()
        sub = info.subresource
        if rd.group == "metrics.k8s.io":
            from apiserver.registry import metricsview

            body = metricsview.answer(
                api, rd, verb, ns, info.name, q.get("labelSelector") or "", q.get("fieldSelector") or ""
            )
            return Response(orjson.dumps(body), media_type=JSON)
        if verb not in ("watch", "list") and verb not in rd.verbs and not sub:
            raise errors.method_not_allowed(verb, rd.plural, rd.group)
        if verb == "list":
            return await self._list(request, info, rd)
        if verb == "watch":
            return await self._watch(request, info, rd)
        if verb == "get":
            if sub in ("log", "exec", "attach", "portforward"):
                # (imported here: the streaming subresources' modules stay off the start-up path)
                from apiserver.server import streams

                if sub == "log":
                    return await streams.serve_log(api, request, info, rd)
                raise streams.spdy_refusal(api, rd, info, request.query_params)
            if sub == "scale":
                return Response(orjson.dumps(api.scale_get(rd, ns, info.name)), media_type=JSON)
            rec = await converted(self.api, rd, lambda: api.get(rd, ns, info.name))
            return self._respond(request, rd, Result(rec.obj, [], 200, rec.raw))
        if verb == "create":
            if info.name and sub in ("exec", "attach", "portforward"):
                from apiserver.server import remotecommand, streams

                # the SPDY upgrade kubectl falls back to carries no body; the HTTP protocol
                # offers it the raw connection (apiserver.server.hijack)
                hijack = (request.scope.get("extensions") or {}).get(HIJACK)
                if hijack is not None:
                    stop = asyncio.Event()
                    self._open_upgrades.add(stop)
                    if self._closing:  # arrived as the server stops: close_watches already ran
                        stop.set()
                    try:
                        return await remotecommand.serve_upgrade(
                            api, self.containers, request, info, rd, hijack, stop
                        )
                    finally:
                        self._open_upgrades.discard(stop)
                raise streams.spdy_refusal(api, rd, info, request.query_params)
            body, _ = await self._read_body(request)
            if info.name and sub in SUBRESOURCE_KINDS:
                check_subresource_body(sub, body)
            if info.name:
                created = create_subresource(api, rd, ns, info.name, sub, body)
                if created is not None:
                    return Response(orjson.dumps(created), status_code=201, media_type=JSON)
                raise errors.method_not_allowed(
                    "create", f"{rd.plural}/{sub}" if sub else rd.plural, rd.group
                )
            opts = self._write_opts(
                q, request.headers.get("user-agent", ""), getattr(request.state, "raw_body", None)
            )
            opts.user = user_of(request.scope)
            return self._respond(
                request, rd, await admitted(api, rd, lambda b: api.create(rd, ns, b, opts), body)
            )
        if verb == "update":
            body, ctype = await self._read_body(request)
            if sub == "scale":
                opts = self._write_opts(
                    q,
                    request.headers.get("user-agent", ""),
                    getattr(request.state, "raw_body", None),
                    user_of(request.scope),
                )
                return self._respond(
                    request,
                    rd,
                    await admitted(api, rd, lambda b: api.scale_update(rd, ns, info.name, b, opts), body),
                )
            if sub == "finalize" and rd.plural == "namespaces":
                check_subresource_body(sub, body)
                return self._respond(request, rd, finalize_namespace(api, info.name, body))
            if sub not in ("", "status") and rd.strategy.subresource_strategy(sub) is None:
                raise errors.method_not_allowed("update", f"{rd.plural}/{sub}", rd.group)
            opts = self._write_opts(
                q,
                request.headers.get("user-agent", ""),
                getattr(request.state, "raw_body", None),
                user_of(request.scope),
            )
            return self._respond(
                request,
                rd,
                await admitted(api, rd, lambda b: api.update(rd, ns, info.name, b, opts, sub), body),
            )
        if verb == "patch":
            ctype = _media(request.headers.get("content-type"))
            if ctype not in PATCH_TYPES and ctype != "application/apply-patch+cbor":
                raise errors.unsupported_media_type(", ".join(PATCH_TYPES))
            body, _ = await self._read_body(request)
            if sub == "scale":
                opts = self._write_opts(
                    q,
                    request.headers.get("user-agent", ""),
                    getattr(request.state, "raw_body", None),
                    user_of(request.scope),
                )
                return self._respond(
                    request,
                    rd,
                    await admitted(
                        api, rd, lambda b: api.scale_patch(rd, ns, info.name, b, ctype, opts), body
                    ),
                )
            if sub not in ("", "status") and rd.strategy.subresource_strategy(sub) is None:
                raise errors.method_not_allowed("patch", f"{rd.plural}/{sub}", rd.group)
            opts = self._write_opts(
                q,
                request.headers.get("user-agent", ""),
                getattr(request.state, "raw_body", None),
                user_of(request.scope),
            )
            return self._respond(
                request,
                rd,
                await admitted(api, rd, lambda b: api.patch(rd, ns, info.name, b, ctype, opts, sub), body),
            )
        if verb == "delete":
            dopts = await self._delete_opts(request)
            return self._respond(
                request, rd, await admitted(api, rd, lambda _: api.delete(rd, ns, info.name, dopts))
            )
        if verb == "deletecollection":
            dopts = await self._delete_opts(request)
            body = await admitted(
                api,
                rd,
                lambda _: api.delete_collection(
                    rd, ns, q.get("labelSelector") or "", q.get("fieldSelector") or "", dopts
                ),
            )
            return Response(orjson.dumps(body), media_type=JSON)
        raise errors.method_not_allowed(verb, rd.plural, rd.group)

    async def _delete_opts(self, request: Request) -> DeleteOptions:
        body, _ = await self._read_body(request)
        opts = delete_options(body, request.query_params)
        opts.user = user_of(request.scope)
        return opts

    # ------------------------------------------------------------------ list & watch
    async def _list(self, request: Request, info: RequestInfo, rd: ResourceDef) -> Response:
        q = request.query_params
        limit = parse_int64(q["limit"]) if q.get("limit") else 0
        if q.get("timeoutSeconds"):  # decoded with the rest of ListOptions, though a list has no timeout
            parse_int64(q["timeoutSeconds"])
        table_version = self._wants_table(request)
        # a view converted by a webhook is presented here, all its items in one conversion pass;
        # any other view item by item as it is written (or here, for a Table)
        presented = bool(table_version) or converts_by_webhook(rd)
        res = await converted(
            self.api,
            rd,
            lambda: self.api.list(
                rd,
                info.namespace,
                label_selector=q.get("labelSelector") or "",
                field_selector=q.get("fieldSelector") or "",
                limit=max(limit, 0),
                continue_=q.get("continue") or "",
                resource_version=q.get("resourceVersion") or "",
                resource_version_match=q.get("resourceVersionMatch") or "",
                present=presented,
            ),
        )
        if table_version:
            from apiserver.server import tables

            table = tables.to_table(
                rd.group,
                rd.plural,
                [r.obj for r in res.records],
                self._now(),
                str(res.resource_version),
                res.continue_token,
                include_object=q.get("includeObject") or "Metadata",
                table_version=table_version,
                printer=rd.printer,
            )
            return Response(orjson.dumps(table), media_type=JSON)
        meta = b'{"resourceVersion":"' + str(res.resource_version).encode() + b'"'
        if res.continue_token:
            meta += b',"continue":"' + res.continue_token.encode() + b'"'
        meta += b"}"
        head = (
            b'{"kind":"'
            + rd.list_kind.encode()
            + b'","apiVersion":"'
            + rd.api_version.encode()
            + b'","metadata":'
            + meta
            + b',"items":['
        )
        records = res.records
        present = _as_listed if presented else self.api.present
        if sum(len(r.raw) for r in records) <= LIST_CHUNK_BYTES:  # small: one body, as before
            return Response(head + b",".join(present(rd, r).raw for r in records) + b"]}", media_type=JSON)
        return StreamingResponse(self._list_chunks(rd, head, records, present), media_type=JSON)

    async def _list_chunks(
        self,
        rd: ResourceDef,
        head: bytes,
        records: list[Record],
        present: Callable[[ResourceDef, Record], Record],
    ) -> AsyncIterator[bytes]:
        """A big LIST written item by item in chunks of about :data:`LIST_CHUNK_BYTES` (kube's
        streaming list encoding, 1.33+): each chunk is presented and encoded, handed to the
        transport, and the event loop serves other clients before the next one — memory is bounded
        by the chunk, and no client waits for the whole list to be encoded."""
        parts: list[bytes] = [head]
        size = len(head)
        sep = b""
        for rec in records:
            raw = present(rd, rec).raw
            parts.append(sep + raw)
            sep = b","
            size += len(raw)
            if size >= LIST_CHUNK_BYTES:
                yield b"".join(parts)
                parts, size = [], 0
                await asyncio.sleep(0)
        parts.append(b"]}")
        yield b"".join(parts)

    async def _watch(self, request: Request, info: RequestInfo, rd: ResourceDef) -> Response:
        q = request.query_params
        timeout_s: float | None = None
        if q.get("timeoutSeconds"):
            timeout_s = float(parse_int64(q["timeoutSeconds"]))
        sie = q.get("sendInitialEvents")
        allow_bookmarks = _bool(q.get("allowWatchBookmarks"))
        table = self._wants_table(request)
        include_object = "Metadata"
        if table:
            from apiserver.server import tables

            # kube decodes the Table options before the watch starts: a bad one is a 400, not a
            # stream that breaks at its first event
            include_object = tables.include_object_param(q)
        try:
            watcher, initial, end_bookmark = self.api.watch(
                rd,
                info.namespace,
                label_selector=q.get("labelSelector") or "",
                field_selector=q.get("fieldSelector") or "",
                resource_version=q.get("resourceVersion") or "",
                resource_version_match=q.get("resourceVersionMatch") or "",
                send_initial_events=None if sie is None else _bool(sie),
                allow_bookmarks=allow_bookmarks,
            )
        except errors.StatusError as e:
            if e.code == 410:
                line = orjson.dumps({"type": "ERROR", "object": e.status()}) + b"\n"

                async def one() -> AsyncIterator[bytes]:
                    yield line

                return StreamingResponse(one(), media_type=JSON)
            raise
        start_rv = self.api.store.rv
        if self._closing:
            watcher.close()
        self._open_watches.add(watcher)
        batch_wakeups = getattr(self.api.store, "batch_wakeups", None)
        if batch_wakeups is not None:
            batch_wakeups(watcher)
        mlabels = dict(verb="WATCH", group=rd.group, version=rd.version, resource=rd.plural)
        self.metrics.longrunning.labels(**mlabels).inc()
        self.metrics.watchers.labels(group=rd.group, version=rd.version, resource=rd.plural).inc()

        def encode(etype: str, rec: Record) -> bytes:
            if rd.is_view:
                obj = self.api._to_view(rd, rec.copy())
                raw = orjson.dumps(obj)
            else:
                obj = None
                raw = rec.raw
            if table:
                from apiserver.server import tables

                o = obj if obj is not None else rec.obj
                t = tables.to_table(
                    rd.group,
                    rd.plural,
                    [o],
                    self._now(),
                    str(rec.rv),
                    include_object=include_object,
                    table_version=table,
                    printer=rd.printer,
                )
                return b'{"type":"' + etype.encode() + b'","object":' + orjson.dumps(t) + b"}\n"
            return b'{"type":"' + etype.encode() + b'","object":' + raw + b"}\n"

        lines = self._lines
        # a watcher with a selector buffers items of its own (transitions, restamped DELETEDs)
        shared = not rd.is_view and not table and watcher.filter is None

        def encode_item(item: tuple[str, Record]) -> bytes:
            if not shared:
                return encode(*item)
            hit = lines.get(id(item))
            if hit is not None and hit[0] is item:
                return hit[1]
            line = b'{"type":"' + item[0].encode() + b'","object":' + item[1].raw + b"}\n"
            if len(lines) >= 4096:
                lines.clear()
            lines[id(item)] = (item, line)
            return line

        def bookmark(rv: int, end: bool = False) -> bytes:
            md: dict[str, Any] = {"resourceVersion": str(rv)}
            if end:
                md["annotations"] = {"k8s.io/initial-events-end": "true"}
            return (
                orjson.dumps(
                    {
                        "type": BOOKMARK,
                        "object": {"kind": rd.kind, "apiVersion": rd.api_version, "metadata": md},
                    }
                )
                + b"\n"
            )

        loop_time = asyncio.get_running_loop().time
        deadline = loop_time() + timeout_s if timeout_s else None

        durable = self.api.store.durable
        webhook_views = converts_by_webhook(rd)

        async def stream() -> AsyncIterator[bytes]:
            # Each chunk waits for the storage to make what it shows durable (as etcd shows only
            # committed revisions): a watcher never sees a write, or a bookmark's revision, that a
            # crash of a --data-dir server could still take back.
            try:
                async with aclosing(events()) as parts:
                    async for part in parts:
                        yield part
            except errors.StatusError as e:
                yield error_event(e)
            except Exception as e:  # a stream that cannot go on says why, as kube's watch does
                log.exception("watch of %s ended by an internal error", rd.plural)
                yield error_event(errors.internal_error(str(e) or e.__class__.__name__))
            finally:
                watcher.close()
                self._open_watches.discard(watcher)
                self.metrics.longrunning.labels(**mlabels).dec()
                self.metrics.watchers.labels(group=rd.group, version=rd.version, resource=rd.plural).dec()

        def error_event(e: errors.StatusError) -> bytes:
            return b'{"type":"ERROR","object":' + _status_bytes(e.status()) + b"}\n"

        async def events() -> AsyncIterator[bytes]:
            await durable()
            if webhook_views:
                await converted(self.api, rd, lambda: self.api.view_records(rd, [r for _, r in initial]))
            chunk: list[bytes] = []
            size = 0
            for etype, rec in initial:
                line = encode(etype, rec)
                chunk.append(line)
                size += len(line)
                if len(chunk) >= 256 or size >= LIST_CHUNK_BYTES:
                    yield b"".join(chunk)
                    chunk, size = [], 0
                    await asyncio.sleep(0)  # as a big LIST: other clients go between chunks
            if end_bookmark:
                chunk.append(bookmark(start_rv, end=True))
            if chunk:
                yield b"".join(chunk)
            elif not initial:
                yield b""
            while True:
                wait = self.bookmark_interval
                if deadline is not None:
                    left = deadline - loop_time()
                    if left <= 0:
                        return
                    wait = min(wait, left)
                got = await watcher.wait(wait)
                if not got:
                    if allow_bookmarks and not watcher.buffer:
                        rv = self.api.store.rv
                        await durable()
                        yield bookmark(rv)
                    continue
                batch = watcher.drain()
                if batch and webhook_views:
                    await converted(self.api, rd, partial(self.api.view_records, rd, [r for _, r in batch]))
                if batch:
                    await durable()
                    yield b"".join([encode_item(item) for item in batch])
                if watcher.closed and not watcher.buffer:
                    return

        return StreamingResponse(stream(), media_type=JSON)


def _as_listed(rd: ResourceDef, rec: Record) -> Record:
    """A record the list already presented (``present=True``): written as it is."""
    return rec


__all__ = ["ADDED", "APIApp", "GIT_VERSION", "status_response", "version_info"]
