"""Admission webhooks in tests, as controller-runtime's envtest ``WebhookInstallOptions`` gives them.

:class:`WebhookServer` serves a handler over HTTPS from the test process: a fresh CA and serving
certificate (``apiserver.server.tlsgen``) naming the loopback addresses and, for service-style
configurations, ``<service>.<namespace>.svc``; uvicorn on a free loopback port in its own thread,
so a handler that takes its time never stalls the control plane. The handler is either

* a plain callable taking the AdmissionReview dict and returning an AdmissionReview dict, or just
  its ``response`` (``uid``, ``apiVersion`` and ``kind`` are filled in) — :func:`allowed`,
  :func:`denied` and :func:`patched` build the usual ones; or
* an ASGI application (``asgi=True``), e.g. a FastAPI/Starlette app or kopf's.

:class:`Webhooks` (the ``gangplane_webhooks`` fixture) serves a handler, registers its
Validating/MutatingWebhookConfiguration through a client and deletes both when the test ends::

    async def test_deny(gangplane, gangplane_webhooks):
        await gangplane_webhooks.validating(
            lambda review: denied("no"), rules=[rule("", "v1", "configmaps")]
        )
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.client.interface import GVR
from apiserver.server.tlsgen import generate

AR = "admissionregistration.k8s.io"
VALIDATING = GVR(AR, "v1", "validatingwebhookconfigurations")
MUTATING = GVR(AR, "v1", "mutatingwebhookconfigurations")

Handler = Callable[[Obj], Obj]
ASGIApp = Callable[..., Awaitable[None]]


# ------------------------------------------------------------------------------- responses
def allowed(warnings: list[str] | None = None) -> Obj:
    out: Obj = {"allowed": True}
    if warnings:
        out["warnings"] = list(warnings)
    return out


def denied(message: str, code: int = 403, reason: str = "Forbidden") -> Obj:
    return {"allowed": False, "status": {"code": code, "reason": reason, "message": message}}


def patched(ops: list[Obj], warnings: list[str] | None = None) -> Obj:
    """An allowed response carrying an RFC 6902 patch."""
    out = allowed(warnings)
    out["patchType"] = "JSONPatch"
    out["patch"] = base64.b64encode(orjson.dumps(ops)).decode()
    return out


def rule(group: str, version: str, resource: str, operations: tuple[str, ...] = ("CREATE", "UPDATE")) -> Obj:
    return {
        "apiGroups": [group],
        "apiVersions": [version],
        "resources": [resource],
        "operations": list(operations),
    }


def _review_answer(review: Obj, answer: Obj) -> Obj:
    if "response" in answer:
        out = dict(answer)
        out.setdefault("apiVersion", "admission.k8s.io/v1")
        out.setdefault("kind", "AdmissionReview")
        return out
    response = dict(answer)
    response.setdefault("uid", (review.get("request") or {}).get("uid", ""))
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def callable_app(handler: Handler, calls: list[Obj]) -> ASGIApp:
    """An ASGI app answering POSTed AdmissionReviews with ``handler``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        try:
            review = orjson.loads(body)
            calls.append(review)
            result = handler(review)
            if asyncio.iscoroutine(result):
                result = await result
            payload, status = orjson.dumps(_review_answer(review, result)), 200
        except Exception as e:  # a handler bug shows as the webhook call failing, as it would in kube
            payload, status = orjson.dumps({"error": f"{type(e).__name__}: {e}"}), 500
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", b"%d" % len(payload)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    return app


class WebhookServer:
    """One handler served over HTTPS on ``127.0.0.1:<free port>`` until :meth:`stop`."""

    def __init__(
        self,
        handler: Handler | ASGIApp,
        *,
        asgi: bool = False,
        path: str = "/",
        service: tuple[str, str] | None = None,
        directory: Path | None = None,
    ) -> None:
        #: the AdmissionReviews a callable handler received (not recorded for ASGI apps)
        self.calls: list[Obj] = []
        self.path = path if path.startswith("/") else "/" + path
        self.service = service
        self._tmp = (
            None if directory is not None else tempfile.TemporaryDirectory(prefix="gangplane-webhook-")
        )
        workdir = directory if directory is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        host = f"{service[1]}.{service[0]}.svc" if service else "127.0.0.1"
        self.files = generate(workdir, host)
        self.app = handler if asgi else callable_app(handler, self.calls)  # type: ignore[arg-type]
        # proto=IPPROTO_TCP: asyncio then sets TCP_NODELAY on accepted connections (else every answer
        # waits ~40 ms for the client's delayed ACK), as gangplane's own server does
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port: int = self._sock.getsockname()[1]
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"https://{self.address}{self.path}"

    @property
    def ca_bundle(self) -> str:
        """The CA that signed the serving certificate, base64 as ``caBundle`` carries it."""
        return base64.b64encode(self.files.ca_cert.read_bytes()).decode()

    def client_config(self) -> Obj:
        """``clientConfig`` naming this server: by URL, or by service when served as one."""
        if self.service:
            ns, name = self.service
            svc: Obj = {"namespace": ns, "name": name, "port": 443}
            if self.path != "/":
                svc["path"] = self.path
            return {"service": svc, "caBundle": self.ca_bundle}
        return {"url": self.url, "caBundle": self.ca_bundle}

    def start(self) -> WebhookServer:
        import uvicorn

        config = uvicorn.Config(
            self.app,
            ssl_certfile=str(self.files.cert),
            ssl_keyfile=str(self.files.key),
            log_level="warning",
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="gangplane-webhook", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._server.serve(sockets=[self._sock]))
        finally:
            self._loop.close()

    def _drop_connections(self) -> None:
        """Abort every open connection (on the server's loop). A keep-alive connection a client
        holds (the API server pools them) would otherwise keep a graceful TLS shutdown waiting on
        a client whose loop is blocked in :meth:`stop`."""
        for conn in list(getattr(self._server.server_state, "connections", ())):
            transport = getattr(conn, "transport", None)
            if transport is not None:
                transport.abort()

    def stop(self) -> None:
        """Stop serving (calls now fail as they would against a dead webhook) and close the port."""
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None and self._thread.is_alive():
                with contextlib.suppress(RuntimeError):  # the loop already ended
                    self._loop.call_soon_threadsafe(self._drop_connections)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._sock.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def webhook_configuration(kind: str, name: str, server: WebhookServer, rules: list[Obj], **hook: Any) -> Obj:
    """A one-webhook Validating/MutatingWebhookConfiguration calling ``server``."""
    spec: Obj = {
        "name": hook.pop("webhook_name", f"{name}.gangplane.test"),
        "clientConfig": server.client_config(),
        "rules": rules,
        "sideEffects": hook.pop("sideEffects", "None"),
        "admissionReviewVersions": ["v1"],
    }
    spec.update(hook)
    return {
        "apiVersion": f"{AR}/v1",
        "kind": f"{kind}WebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [spec],
    }


class Webhooks:
    """Serves handlers and registers their configurations through ``client``; :meth:`close` removes
    both (the ``gangplane_webhooks`` fixture calls it at teardown)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._registered: list[tuple[GVR, str]] = []
        self._servers: list[WebhookServer] = []

    async def validating(self, handler: Handler | ASGIApp, rules: list[Obj], **kw: Any) -> WebhookServer:
        return await self._register("Validating", VALIDATING, handler, rules, **kw)

    async def mutating(self, handler: Handler | ASGIApp, rules: list[Obj], **kw: Any) -> WebhookServer:
        return await self._register("Mutating", MUTATING, handler, rules, **kw)

    async def _register(
        self,
        kind: str,
        gvr: GVR,
        handler: Handler | ASGIApp,
        rules: list[Obj],
        *,
        name: str = "",
        asgi: bool = False,
        path: str = "/",
        **hook: Any,
    ) -> WebhookServer:
        server = WebhookServer(handler, asgi=asgi, path=path).start()
        self._servers.append(server)
        name = name or f"{kind.lower()}-{len(self._servers)}"
        await self.client.create(gvr, webhook_configuration(kind, name, server, rules, **hook))
        self._registered.append((gvr, name))
        return server

    async def close(self, client: Any = None) -> None:
        """Delete the configurations (through ``client`` if given) and stop the servers."""
        from apiserver.errors import StatusError

        client = client if client is not None else self.client
        for gvr, name in reversed(self._registered):
            try:
                await client.delete(gvr, name)
            except StatusError as e:
                if e.code != 404:
                    raise
        self._registered.clear()
        for server in self._servers:
            server.stop()
        self._servers.clear()
