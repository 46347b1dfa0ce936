"""Calling one webhook: POST an AdmissionReview over HTTPS verified against the ``caBundle``.

The call is asynchronous (httpx) with the webhook's ``timeoutSeconds``, so a slow or dead webhook
holds only the request that needs it. TLS is verified against the configuration's ``caBundle``
(the system trust store without one) and the host name the configuration names (a service
reference is verified as ``<service>.<namespace>.svc``, as kube does, even when gangplane connects
to the address it maps the service to). Failures are reported in the words of kube's Go client
where the cause is the same (``dial tcp …: connect: connection refused``, ``context deadline
exceeded``, ``x509: certificate signed by unknown authority``).

httpx is imported by the first call, not with this module: the API server's front door imports
this module, and httpx (with its command-line and cookie modules, rich and pygments among them)
was 31 ms of the 395 ms ``gangplane serve`` spent importing the control plane under
``python -X importtime``, paid by every plane whether or not it ever calls a webhook (session 31).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import ssl
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from apiserver.admission.webhook.run import Outcome, PendingCall

if TYPE_CHECKING:
    import httpx


@functools.lru_cache(maxsize=64)
def _ssl_context(ca_digest: str, ca_pem: bytes) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if ca_pem:
        ctx = ssl.create_default_context(cadata=ca_pem.decode("ascii", "replace"))
    return ctx


def ssl_context(ca_bundle: str) -> ssl.SSLContext:
    """The verifying context of a ``caBundle`` (base64 PEM as the API carries it; cached)."""
    pem = b""
    if ca_bundle:
        try:
            pem = base64.b64decode(ca_bundle, validate=False)
        except ValueError:
            pem = b""
    return _ssl_context(hashlib.sha256(pem).hexdigest(), pem)


def _dial(url: str) -> str:
    u = urlsplit(url)
    port = u.port or 443
    return f"{u.hostname}:{port}"


def describe(e: BaseException, url: str) -> str:
    """An exception of the HTTP client as kube's Go client words the same failure."""
    import httpx

    text = str(e) or type(e).__name__
    if isinstance(e, httpx.TimeoutException):
        return "context deadline exceeded"
    if isinstance(e, httpx.ConnectError):
        cause = e.__cause__ or e.__context__
        if "CERTIFICATE_VERIFY_FAILED" in text or isinstance(cause, ssl.SSLCertVerificationError):
            if "Hostname mismatch" in text or "hostname" in text.lower():
                return f"tls: failed to verify certificate: x509: certificate is valid for other names, not {urlsplit(url).hostname}"
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        if "refused" in text.lower() or "Errno 111" in text or _refused(e):
            return f"dial tcp {_dial(url)}: connect: connection refused"
        return f"dial tcp {_dial(url)}: {text}"
    return text


def _refused(e: BaseException) -> bool:
    """Whether a connection refusal is somewhere in the exception's causes (anyio wraps it)."""
    seen = 0
    stack: list[BaseException] = [e]
    while stack and seen < 32:
        cur = stack.pop()
        seen += 1
        if isinstance(cur, ConnectionRefusedError):
            return True
        if isinstance(cur, BaseExceptionGroup):
            stack.extend(cur.exceptions)
        for nxt in (cur.__cause__, cur.__context__):
            if nxt is not None:
                stack.append(nxt)
    return False


def _timeout_suffix(seconds: float) -> str:
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{seconds}s"


def request_url(call: PendingCall) -> str:
    sep = "&" if "?" in call.url else "?"
    return f"{call.url}{sep}timeout={_timeout_suffix(call.timeout)}"


def check_response(body: Any, sent: dict[str, Any]) -> dict[str, Any]:
    """The ``response`` of an answer to the review ``sent`` (AdmissionReview or ConversionReview): same
    apiVersion and kind, ``uid`` echoed; ValueError in kube's words otherwise."""
    api_version, kind = sent.get("apiVersion"), sent.get("kind")
    uid = str(_req(sent).get("uid", ""))
    if not isinstance(body, dict):
        raise ValueError("failed to decode the webhook's response")
    if body.get("apiVersion") != api_version or body.get("kind") != kind:
        raise ValueError(
            f"expected webhook response of {api_version}, Kind={kind}, "
            f"got {body.get('apiVersion')}, Kind={body.get('kind')}"
        )
    response = body.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if response.get("uid") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid")}"')
    return response


def _req(review: dict[str, Any]) -> dict[str, Any]:
    req = review.get("request")
    return req if isinstance(req, dict) else {}


class WebhookClients:
    """Keep-alive HTTPS clients, one per ``caBundle`` (and event loop), reused by every call.

    A connection per call would pay a TCP and TLS handshake each time (tens of milliseconds on
    loopback); kube's webhook client keeps connections too. ``aclose`` ends them (the control
    plane calls it when it stops).
    """

    def __init__(self) -> None:
        self._clients: dict[tuple[int, str], httpx.AsyncClient] = {}

    def _client(self, ca_bundle: str) -> httpx.AsyncClient:
        import asyncio

        import httpx

        key = (id(asyncio.get_running_loop()), ca_bundle)
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(
                verify=ssl_context(ca_bundle),
                trust_env=False,
                limits=httpx.Limits(max_keepalive_connections=16, keepalive_expiry=30.0),
            )
            self._clients[key] = client
        return client

    async def call(self, call: PendingCall) -> Outcome:
        return await _post(self._client(call.ca_bundle), call)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(RuntimeError):  # made on a loop that is gone
                await client.aclose()


async def _post(http: httpx.AsyncClient, call: PendingCall) -> Outcome:
    """POST the review; an Outcome with the response or the failure's description."""
    import httpx

    url = request_url(call)
    extensions: dict[str, Any] = {}
    host = urlsplit(call.url).hostname or ""
    if call.server_name and call.server_name != host:
        extensions["sni_hostname"] = call.server_name
    try:
        resp = await http.post(
            url,
            content=orjson.dumps(call.review),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            extensions=extensions,
            timeout=call.timeout,
        )
    except httpx.HTTPError as e:
        return Outcome(error=f'failed to call webhook: Post "{url}": {describe(e, call.url)}')
    except (OSError, ssl.SSLError) as e:
        return Outcome(error=f'failed to call webhook: Post "{url}": {e}')
    if resp.status_code < 200 or resp.status_code >= 300:
        return Outcome(
            error=f"failed to call webhook: the server responded with the status code {resp.status_code} ({resp.reason_phrase})"
        )
    try:
        return Outcome(response=check_response(orjson.loads(resp.content), call.review))
    except orjson.JSONDecodeError:
        return Outcome(error="failed to call webhook: failed to decode the webhook's response")
    except ValueError as e:
        return Outcome(error=f"received invalid webhook response: {e}")
