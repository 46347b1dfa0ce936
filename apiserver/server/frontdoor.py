"""The front door: who may talk to ``gangplane serve`` at all, before any API handler runs.

A control plane on a developer's laptop is reachable by every web page the developer visits: a
page can post a form to ``http://127.0.0.1:6443`` and, with DNS rebinding, even read answers.
Three checks close that, in the order kube's filters would run them:

* **Host**: the request must be addressed to the listen address or to a loopback name. A
  rebinding page reaches the socket under its own host name and is refused.
* **Cross-site writes** (:mod:`apiserver.server.crossorigin`, gangplane's, beyond kube): a
  browser's write from a page of another origin (``Sec-Fetch-Site: cross-site``/``same-site``,
  or a foreign ``Origin``) is a 403 in every mode, unless ``--allow-origin`` names the origin.
* **Authentication**: a bearer token. ``gangplane serve`` generates one per start and writes it
  into the kubeconfig (mode 0600); without it the answer is kube's ``401 Unauthorized`` Status.
  ``/healthz``, ``/livez``, ``/readyz`` and ``/version`` stay open, as kube's
  ``system:public-info-viewer`` role allows. ``--anonymous`` admits requests without a token as
  ``system:anonymous``; a wrong token is still refused, as kube does.
* **Impersonation**: ``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*`` replace the identity
  when the caller may ``impersonate`` each of them (403 otherwise).
* **Authorization** (``--authorization-mode``): the request's attributes (kube's
  ``RequestInfoFactory``) are decided by :class:`apiserver.auth.authorizer.Authorization`;
  a refusal is kube's 403 ``Forbidden`` Status, word for word.
* **Cookie sessions** (gangplane's, for its browser view): a request without an
  ``Authorization`` header may carry a session cookie; the policy's ``cookie_authenticator``
  maps it to a user, or refuses it (a cross-site request riding on the cookie).
* The identity found is put in the ASGI scope (``scope["gangplane.user"]``) for what comes after
  (``SelfSubjectReview``, the RBAC escalation checks).

Cross-origin "simple" requests are also closed by content negotiation (``text/plain`` bodies are
415) and by sending no CORS headers at all (so a page can never read an answer).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from apiserver import errors
from apiserver.api.users import ADMIN, ANONYMOUS, LOOPBACK, UserInfo
from apiserver.auth.attributes import request_attributes
from apiserver.auth.authorizer import ALWAYS_ALLOW, Authorization, Decision, forbidden
from apiserver.auth.impersonation import impersonate
from apiserver.server.crossorigin import SAFE_METHODS, CrossOriginGuard

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: kube's ``system:public-info-viewer``: reachable without credentials
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
USER_SCOPE_KEY = "gangplane.user"

__all__ = [
    "ADMIN",
    "ANONYMOUS",
    "LOOPBACK",
    "FrontDoor",
    "FrontDoorPolicy",
    "UserInfo",
    "new_token",
    "static_tokens",
]


def new_token() -> str:
    """A random bearer token (256 bits), like the ones kubeadm writes for bootstrap."""
    return secrets.token_urlsafe(32)


TokenAuthenticator = Callable[[str], UserInfo | None]
#: ``(scope, Cookie header) -> user``; None when no session of its own is in the header, a
#: :class:`errors.StatusError` raised to refuse the request (e.g. a cross-site one)
CookieAuthenticator = Callable[[Scope, str], UserInfo | None]


def static_tokens(tokens: dict[str, UserInfo]) -> TokenAuthenticator:
    """A token file authenticator (kube's ``--token-auth-file``): exact, constant-time matches."""

    def authenticate(token: str) -> UserInfo | None:
        for known, user in tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return user
        return None

    return authenticate


@dataclass
class FrontDoorPolicy:
    """What ``gangplane serve`` enforces: the authenticators, anonymous access, accepted hosts."""

    authenticators: list[TokenAuthenticator] = field(default_factory=list)
    anonymous: bool = False
    #: host names (without port) besides loopback ones; the listen address is added at start
    allowed_hosts: set[str] = field(default_factory=set)
    #: listening on a wildcard address: any IP literal is the machine's own (rebinding needs a name)
    allow_ip_literals: bool = False
    #: the server's authorizer; None admits every authenticated request (and impersonation)
    authorization: Authorization | None = None
    #: refuses browsers' cross-site writes (``--allow-origin`` names the trusted origins)
    cross_origin: CrossOriginGuard = field(default_factory=CrossOriginGuard)
    #: gangplane's browser sessions: consulted only when a request has no ``Authorization`` header
    cookie_authenticator: CookieAuthenticator | None = None
    #: gangplane's own path prefixes (the view's pages, not API objects): served without
    #: credentials and not put to the authorizer; what they serve checks the identity itself
    public_paths: tuple[str, ...] = ()

    def authenticate(self, token: str) -> UserInfo | None:
        for auth in self.authenticators:
            user = auth(token)
            if user is not None:
                return user
        return None


def host_name(host_header: str) -> str:
    """The host part of a ``Host`` header: ``[::1]:6443`` → ``::1``, ``a.b:80`` → ``a.b``."""
    h = host_header.strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[1:end] if end > 0 else h
    if h.count(":") == 1:
        return h.split(":", 1)[0]
    return h


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_public(path: str, extra: tuple[str, ...] = ()) -> bool:
    return any(path == p or path.startswith(p + "/") for p in (*PUBLIC_PATHS, *extra))


class FrontDoor:
    """ASGI middleware applying a :class:`FrontDoorPolicy` to every HTTP request."""

    def __init__(
        self, app: ASGIApp, policy: FrontDoorPolicy, respond: Callable[[errors.StatusError], Any]
    ) -> None:
        self.app = app
        self.policy = policy
        self._respond = respond
        #: Host headers already found acceptable (a client sends the same one on every request);
        #: the policy only ever gains hosts, so an accepted one stays accepted
        self._accepted_hosts: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            # exec/attach upgrades pass the same checks; kube authorizes them as ``create``
            # (``AuthorizePodWebsocketUpgradeCreatePermission``), as it does the SPDY POST
            checked = {**scope, "method": "POST"}
            err = self._check_host(_header(scope, b"host"))
            if err is None:
                err = self._authenticate(checked, _header(scope, b"authorization"))
            if err is None:
                pairs = [
                    (k.decode("latin-1").lower(), v.decode("latin-1"))
                    for k, v in scope.get("headers", ())
                    if k.lower().startswith(b"impersonate-")
                ]
                err = self._authorize(checked, pairs)
            if USER_SCOPE_KEY in checked:
                scope[USER_SCOPE_KEY] = checked[USER_SCOPE_KEY]
            if err is not None:
                await _refuse_websocket(scope, send, self._respond(err), err)
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # One pass over the raw headers: the two the checks read (the last of each wins, as
        # in a dict of them) and whether impersonation was asked, the only use of the others.
        host = authorization = cookie = b""
        origin: bytes | None = None
        fetch_site: bytes | None = None
        impersonating = False
        raw_headers = scope.get("headers", ())
        for k, v in raw_headers:
            k = k.lower()
            if k == b"host":
                host = v
            elif k == b"authorization":
                authorization = v
            elif k == b"cookie":
                cookie = v
            elif k.startswith(b"impersonate-"):
                impersonating = True
            elif k == b"origin":
                origin = v
            elif k == b"sec-fetch-site":
                fetch_site = v
        err = self._check_host(host.decode("latin-1"))
        if err is None and scope.get("method", "GET") not in SAFE_METHODS:
            err = self.policy.cross_origin.check(
                scope.get("method", ""),
                host.decode("latin-1"),
                None if origin is None else origin.decode("latin-1"),
                None if fetch_site is None else fetch_site.decode("latin-1"),
            )
        if err is None:
            err = self._authenticate(scope, authorization.decode("latin-1"), cookie.decode("latin-1"))
        if err is None and self._own_page(scope.get("path", "")):
            await self.app(scope, receive, send)  # gangplane's own pages: no API attributes to authorize
            return
        if err is None:
            pairs = (
                [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw_headers]
                if impersonating
                else []
            )
            err = self._authorize(scope, pairs)
        if err is not None:
            await self._respond(err)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _own_page(self, path: str) -> bool:
        return any(path == p or path.startswith(p + "/") for p in self.policy.public_paths)

    def _check_host(self, host_header: str) -> errors.StatusError | None:
        if host_header in self._accepted_hosts:
            return None
        host = host_name(host_header)
        if (
            not host
            or is_loopback(host)
            or host in self.policy.allowed_hosts
            or (self.policy.allow_ip_literals and _is_ip(host))
        ):
            if len(self._accepted_hosts) < 1024:
                self._accepted_hosts.add(host_header)
            return None
        return errors.StatusError(
            403,
            "Forbidden",
            f'host "{host}" is not served here: gangplane answers only requests addressed to its listen '
            "address or to a loopback name (a guard against DNS rebinding)",
        )

    def _authenticate(self, scope: Scope, authorization: str, cookie: str = "") -> errors.StatusError | None:
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if authorization and scheme.lower() == "bearer" and token:
            user = self.policy.authenticate(token)
            if user is None:
                return _unauthorized()
            scope[USER_SCOPE_KEY] = user
            return None
        if authorization:
            return _unauthorized()  # a scheme gangplane does not accept (basic auth, a bare value)
        if cookie and self.policy.cookie_authenticator is not None:
            try:
                user = self.policy.cookie_authenticator(scope, cookie)
            except errors.StatusError as e:
                return e
            if user is not None:
                scope[USER_SCOPE_KEY] = user
                return None
        if self.policy.anonymous or _is_public(scope.get("path", ""), self.policy.public_paths):
            scope[USER_SCOPE_KEY] = ANONYMOUS
            return None
        return _unauthorized()

    def _authorize(self, scope: Scope, headers: list[tuple[str, str]]) -> errors.StatusError | None:
        """Impersonation, then the request itself, as kube's filters order them."""
        authz = self.policy.authorization
        user = scope.get(USER_SCOPE_KEY, ANONYMOUS)

        def decide(attrs: Any) -> tuple[Decision, str]:
            return authz.authorize(attrs) if authz is not None else (Decision.ALLOW, "")

        try:
            acting = impersonate(user, headers, decide)
        except errors.StatusError as e:
            return e
        if acting is not None:
            user = scope[USER_SCOPE_KEY] = acting
        if authz is None or authz.mode == ALWAYS_ALLOW:
            return None  # AlwaysAllow: nothing to decide, so skip parsing the request
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        attrs = request_attributes(user, scope.get("method", "GET"), scope.get("path", ""), query)
        decision, reason = authz.authorize(attrs)
        if decision is Decision.ALLOW:
            return None
        return forbidden(attrs, reason)


def _header(scope: Scope, name: bytes) -> str:
    value = b""
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            value = v
    return value.decode("latin-1")


async def _refuse_websocket(scope: Scope, send: Send, response: Any, err: errors.StatusError) -> None:
    """An HTTP answer instead of the upgrade when the server can send one, else a plain close."""
    if "websocket.http.response" in (scope.get("extensions") or {}):
        await send(
            {
                "type": "websocket.http.response.start",
                "status": err.code,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        import orjson

        await send({"type": "websocket.http.response.body", "body": orjson.dumps(err.status())})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": ""})


def _unauthorized() -> errors.StatusError:
    return errors.StatusError(401, "Unauthorized", "Unauthorized")


def user_of(scope: Scope) -> UserInfo:
    """The request's identity; a server without a front door (tests, in-process) is the loopback admin."""
    return scope.get(USER_SCOPE_KEY, LOOPBACK)
