"""``pods/log``, and ``pods/exec`` and ``pods/attach`` over WebSocket, answered for simulated containers.

kube-apiserver proxies these to the kubelet; gangplane answers them here from the stored pod
through :mod:`apiserver.kubeletsim` (see its docstring). The WebSocket side speaks kube's
channel protocols ``v5.channel.k8s.io`` (kubectl ≥ 1.30; channel 255 closes stdin) and
``v4.channel.k8s.io`` (the official Python client): every binary frame starts with its channel —
0 stdin, 1 stdout, 2 stderr, 3 the error channel (a ``metav1.Status``: ``Success``, or
``NonZeroExitCode`` with the exit code as an ``ExitCode`` cause, which kubectl turns into its own
exit code), 4 terminal resize. The plain SPDY upgrade kubectl falls back to is
:mod:`apiserver.server.remotecommand` (running the process through :func:`execute`, as here), or a
clear 400 where the HTTP server cannot hand the connection over. ``pods/portforward`` over WebSocket (the Python client's channels here; kubectl's SPDY
tunnel in :mod:`apiserver.server.portforward`) reaches a generic echo responder on every port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from apiserver import errors, field
from apiserver.api.types import Obj, as_dict
from apiserver.kubeletsim import logs
from apiserver.kubeletsim.container import Containers
from apiserver.kubeletsim.responder import EchoResponder
from apiserver.kubeletsim.shell import COMMANDS, Input, run
from apiserver.meta import parse_time
from apiserver.registry.generic import GenericStore
from apiserver.rest.resources import ResourceDef
from apiserver.server import portforward
from apiserver.server.requestinfo import RequestInfo

log = logging.getLogger("gangplane.streams")

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
WS_ONLY = (
    "gangplane serves pods/{sub} over WebSocket only ({protocols}); the SPDY upgrade this client "
    "fell back to is not supported"
)


# ============================================================================ pods/log


def _int_param(q: Any, name: str, minimum: int) -> int | None:
    raw = q.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f'unable to parse "{raw}" as an integer for {name}') from None
    if value < minimum:
        detail = "must be greater than 0" if minimum == 1 else "must be greater than or equal to 0"
        raise errors.invalid("PodLogOptions", "", "", [field.invalid(name, value, detail)])
    return value


def _flag(q: Any, name: str) -> bool:
    return str(q.get(name, "")).lower() in ("true", "1")


def pod_or_404(api: GenericStore, rd: ResourceDef, ns: str, name: str) -> Obj:
    return api.get(rd, ns, name).copy()


async def serve_log(api: GenericStore, request: Request, info: RequestInfo, rd: ResourceDef) -> Response:
    """kubelet's container log endpoint behind ``GET pods/{name}/log``."""
    q = request.query_params
    tail = _int_param(q, "tailLines", 0)
    since_seconds = _int_param(q, "sinceSeconds", 1)
    limit = _int_param(q, "limitBytes", 1)
    if since_seconds is not None and q.get("sinceTime"):
        raise errors.bad_request("at most one of `sinceTime` or `sinceSeconds` may be specified")
    since: float | None = None
    if since_seconds is not None:
        since = api.clock.now() - since_seconds
    elif q.get("sinceTime"):
        since = parse_time(q["sinceTime"])
        if since is None:
            raise errors.bad_request(f'parsing time "{q["sinceTime"]}" as RFC3339: cannot parse')
    pod = pod_or_404(api, rd, info.namespace, info.name)
    container = logs.choose_container(pod, q.get("container", ""))
    previous, timestamps, follow = _flag(q, "previous"), _flag(q, "timestamps"), _flag(q, "follow")
    lines = logs.container_lines(pod, container, previous)
    first = logs.render(logs.select(lines, tail=tail, since=since), timestamps=timestamps)
    if limit is not None:
        first = first[:limit]
    if (
        not follow
        or previous
        or not logs.is_running(pod, container)
        or (limit is not None and len(first) >= limit)
    ):
        return Response(first, media_type="text/plain")

    async def stream() -> Any:
        sent = len(first)
        yield first
        seen = len(lines)
        watcher, initial, _ = api.watch(rd, info.namespace, field_selector=f"metadata.name={info.name}")
        try:
            current: Obj = pod
            for _typ, rec in initial:
                current = rec.obj
            ended = not logs.is_running(current, container)
            while not ended:
                if not await watcher.wait(30.0):
                    continue
                events = [(typ, rec.obj) for typ, rec in watcher.drain()]
                current, ended = logs.follow_events(current, events, container)
                if watcher.closed and not watcher.buffer:
                    break
            try:
                more = logs.container_lines(current, container, False)[seen:]
            except errors.StatusError:
                more = []
            chunk = logs.render(more, timestamps=timestamps)
            if limit is not None:
                chunk = chunk[: max(0, limit - sent)]
            if chunk:
                yield chunk
        finally:
            watcher.close()

    return StreamingResponse(stream(), media_type="text/plain")


# ============================================================================ exec and attach


def spdy_refusal(api: GenericStore, rd: ResourceDef, info: RequestInfo, query: Any) -> errors.StatusError:
    """What a non-WebSocket connect request gets: the validation errors kube would give first,
    then a 400 naming the protocols served (instead of "the body of the request was empty")."""
    pod = pod_or_404(api, rd, info.namespace, info.name)
    if info.subresource in ("exec", "attach"):
        validate_connect(pod, info.subresource, query)
    if info.subresource == "portforward":
        protocols = (portforward.TUNNEL_PROTOCOL, *PORTFORWARD_PROTOCOLS)
        return errors.bad_request(WS_ONLY.format(sub="portforward", protocols=", ".join(protocols)))
    return errors.bad_request(WS_ONLY.format(sub=info.subresource, protocols=", ".join(PROTOCOLS)))


def validate_connect(
    pod: Obj, sub: str, query: dict[str, list[str]] | Any
) -> tuple[str, list[str], dict[str, bool]]:
    def get_all(name: str) -> list[str]:
        if hasattr(query, "getlist"):
            return list(query.getlist(name))
        return list(query.get(name, []))

    def first(name: str) -> str:
        values = get_all(name)
        return values[0] if values else ""

    def flag(name: str) -> bool:
        return first(name).lower() in ("true", "1")

    streams = {k: flag(k) for k in ("stdin", "stdout", "stderr", "tty")}
    command = get_all("command")
    if sub == "exec" and not command:
        raise errors.bad_request("you must specify at least 1 command")
    if not (streams["stdin"] or streams["stdout"] or streams["stderr"]):
        raise errors.bad_request("you must specify at least 1 of stdin, stdout, stderr")
    container = logs.choose_container(pod, first("container"))
    phase = as_dict(pod.get("status")).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise errors.bad_request(
            f"cannot exec into or attach to a container in a completed pod; current phase is {phase}"
        )
    cs = logs.container_status(pod, container)
    if cs is None or "running" not in as_dict(cs.get("state")):
        raise errors.bad_request(f'container not found ("{container}")')
    return container, command, streams


def exit_status(code: int, argv: list[str]) -> dict[str, Any]:
    """The error channel's last word (kubelet's ``remotecommand`` status)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], exit code {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


def not_found_status(argv: list[str], container_id: str) -> dict[str, Any]:
    detail = (
        f'error executing command in container: failed to exec in container: failed to start exec "{container_id}": '
        "OCI runtime exec failed: exec failed: unable to start container process: "
        f'exec: "{argv[0]}": executable file not found in $PATH: unknown'
    )
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {detail}",
        "reason": "InternalError",
        "details": {"causes": [{"message": detail}]},
        "code": 500,
    }


class Session:
    """One exec/attach WebSocket: a reader feeding stdin, the simulated process, ordered frames out."""

    def __init__(self, ws: WebSocket, protocol: str, streams: dict[str, bool]) -> None:
        self.ws = ws
        self.v5 = protocol.startswith("v5.")
        self.streams = streams
        self.stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.frames: asyncio.Queue[bytes | None] = asyncio.Queue()

    def out(self, channel: int) -> Any:
        tty = self.streams["tty"]
        wanted = self.streams["stdout"] if channel == STDOUT else self.streams["stderr"]

        def write(data: bytes) -> None:
            if tty:
                data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            if data and (wanted or (tty and self.streams["stdout"])):
                self.frames.put_nowait(bytes([STDOUT if tty else channel]) + data)

        return write

    async def read_client(self) -> None:
        try:
            while True:
                msg = await self.ws.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                data = msg.get("bytes")
                if data is None:
                    text = msg.get("text") or ""
                    data = text.encode()
                if not data:
                    continue
                channel, payload = data[0], data[1:]
                if channel == STDIN and self.streams["stdin"]:
                    if self.streams["tty"]:
                        payload = payload.replace(b"\r", b"\n")
                        self.out(STDOUT)(payload)  # a terminal echoes what is typed
                    self.stdin.put_nowait(payload)
                elif channel == CLOSE and self.v5 and payload[:1] == bytes([STDIN]):
                    self.stdin.put_nowait(None)
        finally:
            self.stdin.put_nowait(None)

    async def write_client(self) -> None:
        while (frame := await self.frames.get()) is not None:
            await self.ws.send_bytes(frame)


async def execute(
    api: GenericStore,
    containers: Containers,
    pod: Obj,
    sub: str,
    container: str,
    command: list[str],
    streams: dict[str, bool],
    stdin: asyncio.Queue[bytes | None],
    out: Callable[[int], Callable[[bytes], None]],
    gone: asyncio.Task[None],
) -> dict[str, Any] | None:
    """Run what exec/attach asked for in the simulated container, whatever the transport
    (WebSocket channels here, SPDY streams in :mod:`apiserver.server.remotecommand`): the
    error-channel Status to send last, or None when the client left first (``gone`` done)."""
    box = containers.get(pod, container, lambda plural, ns, name: api.peek("", plural, ns, name))
    if sub == "attach":
        argv = ["sh"]
        if streams["stdin"]:
            got = await _until_disconnect(run(argv, box, Input(queue=stdin), out(STDOUT), out(STDERR)), gone)
            if got is None:
                return None
            return exit_status(got, argv)
        # nothing to type into: the container's output until the client leaves
        out(STDOUT)(logs.render(logs.container_lines(pod, container, False)))
        await gone
        return exit_status(0, argv)
    if command and command[0].rsplit("/", 1)[-1] not in COMMANDS:
        cs = logs.container_status(pod, container) or {}
        return not_found_status(command, str(cs.get("containerID", "")).rsplit("/", 1)[-1])
    got = await _until_disconnect(
        run(command, box, Input(queue=stdin) if streams["stdin"] else Input(), out(STDOUT), out(STDERR)), gone
    )
    return None if got is None else exit_status(got, command)


async def serve_websocket(
    api: GenericStore,
    containers: Containers,
    scope: Any,
    receive: Any,
    send: Any,
    info: RequestInfo,
    rd: ResourceDef,
) -> None:
    ws = WebSocket(scope, receive, send)
    offered = [p.strip() for p in scope.get("subprotocols") or []]
    if info.subresource == "portforward":
        if portforward.TUNNEL_PROTOCOL in offered:
            await portforward.serve_tunnel(api, ws, info, rd, lambda e: _deny(ws, scope, e))
        else:
            await serve_portforward(api, ws, scope, info, rd, offered)
        return
    protocol = next((p for p in offered if p in PROTOCOLS), "")
    try:
        if info.subresource not in ("exec", "attach"):
            raise errors.no_route()
        if not protocol:
            raise errors.bad_request(
                f"none of the requested subprotocols {offered} is supported; supported: {', '.join(PROTOCOLS)}"
            )
        pod = pod_or_404(api, rd, info.namespace, info.name)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        container, command, streams = validate_connect(pod, info.subresource, query)
    except errors.StatusError as e:
        await _deny(ws, scope, e)
        return
    await ws.accept(subprotocol=protocol)
    session = Session(ws, protocol, streams)
    reader = asyncio.create_task(session.read_client())
    writer = asyncio.create_task(session.write_client())
    try:
        status = await execute(
            api,
            containers,
            pod,
            info.subresource,
            container,
            command,
            streams,
            session.stdin,
            session.out,
            reader,
        )
        if status is None:
            return  # the client left: the simulated process went with it
        session.frames.put_nowait(bytes([ERROR]) + json.dumps(status).encode())
        session.frames.put_nowait(None)
        await writer
        await ws.close(1000)
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the client went away: the simulated process goes with it
    finally:
        for task in (reader, writer):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


# ============================================================================ portforward

#: kubelet's WebSocket port-forward protocols (``portforward.k8s.io`` is its v1 name)
PORTFORWARD_PROTOCOLS = ("v4.channel.k8s.io", "portforward.k8s.io", "channel.k8s.io")


async def serve_portforward(
    api: GenericStore, ws: WebSocket, scope: Any, info: RequestInfo, rd: ResourceDef, offered: list[str]
) -> None:
    """Port forwarding over WebSocket, kubelet's channel layout: per requested port (``ports``
    query, in order) channel ``2i`` carries data and ``2i+1`` errors, each opened by a frame
    holding the port number (little endian). Nothing listens in a simulated container, so every
    forwarded port is answered by gangplane's generic responder: it echoes what it receives.

    kubectl's SPDY tunnel (``SPDY/3.1+portforward.k8s.io``) is :mod:`apiserver.server.portforward`.
    """
    protocol = next((p for p in offered if p in PORTFORWARD_PROTOCOLS), "")
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    try:
        if not protocol:
            raise errors.bad_request(
                f"none of the requested subprotocols {offered} is supported; supported: {', '.join(PORTFORWARD_PROTOCOLS)}"
            )
        pod = pod_or_404(api, rd, info.namespace, info.name)
        ports: list[int] = []
        for raw in query.get("ports", []):
            for part in raw.split(","):
                try:
                    port = int(part)
                except ValueError:
                    raise errors.bad_request(f'unable to parse "{part}" as a port: invalid syntax') from None
                if not 0 < port < 65536:
                    raise errors.bad_request(f"port {port} must be > 0 and < 65536")
                ports.append(port)
        if not ports:
            raise errors.bad_request('query parameter "port" is required')
        if as_dict(pod.get("status")).get("phase") != "Running":
            raise errors.bad_request(
                f"pod {info.name} is not running and cannot be forwarded to; current phase is "
                f"{as_dict(pod.get('status')).get('phase') or 'Pending'}"
            )
    except errors.StatusError as e:
        await _deny(ws, scope, e)
        return
    await ws.accept(subprotocol=protocol)
    try:
        for i, port in enumerate(ports):
            prefix = port.to_bytes(2, "little")
            await ws.send_bytes(bytes([2 * i]) + prefix)
            await ws.send_bytes(bytes([2 * i + 1]) + prefix)
        responders = [EchoResponder(port) for port in ports]
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            data = msg.get("bytes") or b""
            if len(data) > 1 and data[0] % 2 == 0 and data[0] // 2 < len(ports):
                answer = responders[data[0] // 2].receive(data[1:])
                if answer:
                    await ws.send_bytes(data[:1] + answer)
    except (WebSocketDisconnect, RuntimeError, OSError):
        return


async def _until_disconnect(process: Any, reader: asyncio.Task[None]) -> int | None:
    """The simulated process's exit code, or None when the client disconnected first (the
    process, a ``sleep`` say, is then cancelled rather than left running for nobody)."""
    task = asyncio.ensure_future(process)
    done, _ = await asyncio.wait({task, reader}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def _deny(ws: WebSocket, scope: Any, err: errors.StatusError) -> None:
    """Refuse the upgrade with the Status as an HTTP answer (kube does so before upgrading)."""
    if "websocket.http.response" in (scope.get("extensions") or {}):
        await ws.send_denial_response(
            Response(orjson.dumps(err.status()), status_code=err.code, media_type="application/json")
        )
    else:
        await ws.close(1008, err.message[:120])


__all__ = ["PROTOCOLS", "exit_status", "serve_log", "serve_websocket", "spdy_refusal"]
