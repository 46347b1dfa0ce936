"""The ``/ui/`` paths of ``gangplane serve``: the view's static files, login and logout.

This middleware sits behind the front door (Host check, authentication, authorization) and in
front of the API app: it answers the few ``/ui`` paths itself and passes everything else on.
The view's data never comes from here: the page calls the API (``/api``, ``/apis``) with its
session cookie, so what it shows is what the API lets its user read.

The files are package data written for this view (no CDN, nothing fetched from elsewhere); the
pages are sent with a Content-Security-Policy that allows only this origin, no framing (against
clickjacking) and no Referer (the login URL carries a token).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import orjson

from apiserver.api.users import ADMIN, ANONYMOUS, UserInfo
from apiserver.server.frontdoor import USER_SCOPE_KEY
from gangplane.ui.sessions import COOKIE_NAME, UISessions, cross_site_refusal, session_from_cookie

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PREFIX = "/ui"
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


def _static_files() -> dict[str, bytes]:
    """The view's files by name, read once from the package (``gangplane/ui/static``)."""
    root = resources.files("gangplane.ui").joinpath("static")
    return {
        entry.name: entry.read_bytes()
        for entry in root.iterdir()
        if entry.is_file() and any(entry.name.endswith(ext) for ext in STATIC_TYPES)
    }


class UI:
    """The live view of one server: its sessions and the ``/ui`` middleware."""

    def __init__(self, sessions: UISessions | None = None) -> None:
        self.sessions = sessions or UISessions()
        self._files = _static_files()

    def login_url(self, base_url: str, user: UserInfo = ADMIN) -> str:
        """A one-time URL logging a browser into the view as ``user`` (default: the kubeconfig's)."""
        return f"{base_url.rstrip('/')}{PREFIX}/login?token={self.sessions.mint_login(user)}"

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def ui_app(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope.get("path", "")
            if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
                await app(scope, receive, send)
                return
            status, headers, body = self._answer(scope, path)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return ui_app

    # ------------------------------------------------------------------ routes
    def _answer(self, scope: Scope, path: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        method = scope.get("method", "GET")
        if path == PREFIX:
            return 308, [(b"location", b"/ui/")], b""
        if path == PREFIX + "/login":
            return self._login(scope, method)
        if path == PREFIX + "/logout":
            return self._logout(scope, method)
        if path == PREFIX + "/login-urls":
            return self._mint(scope, method)
        if method not in ("GET", "HEAD"):
            return _text(405, "Method Not Allowed", [(b"allow", b"GET, HEAD")])
        name = path[len(PREFIX) + 1 :] or "index.html"
        body = self._files.get(name)
        if body is None:
            return _text(404, "404 page not found")
        ext = name[name.rfind(".") :]
        headers = [(b"content-type", STATIC_TYPES[ext].encode()), *SECURITY_HEADERS]
        return 200, headers, b"" if method == "HEAD" else body

    def _login(self, scope: Scope, method: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        if method != "GET":
            return _text(405, "Method Not Allowed", [(b"allow", b"GET")])
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        token = (query.get("token") or [""])[0]
        session = self.sessions.redeem(token) if token else None
        if session is None:
            return _text(
                401,
                "This login link is unknown, expired or already used. Each link printed by "
                "gangplane works once; ask the server for a new one (see docs/ui.md).",
            )
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = f"{COOKIE_NAME}={session}; Path=/; HttpOnly; SameSite=Strict{secure}"
        return 303, [(b"location", b"/ui/"), (b"set-cookie", cookie.encode()), *SECURITY_HEADERS], b""

    def _logout(self, scope: Scope, method: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        if method != "POST":
            return _text(405, "Method Not Allowed", [(b"allow", b"POST")])
        refusal = cross_site_refusal(scope)
        if refusal is not None:
            return _text(403, refusal)
        for k, v in scope.get("headers", ()):
            if k.lower() == b"cookie":
                session = session_from_cookie(v.decode("latin-1"))
                if session:
                    self.sessions.logout(session)
        expired = f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
        return 204, [(b"set-cookie", expired.encode())], b""

    def _mint(self, scope: Scope, method: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """``POST /ui/login-urls`` with a bearer token: a login URL for the token's own user.

        Only a bearer token may ask (not a session: a page cannot mint itself more logins), so
        ``kubectl create token reader`` + this gives a browser exactly ``reader``'s view.
        """
        if method != "POST":
            return _text(405, "Method Not Allowed", [(b"allow", b"POST")])
        bearer = any(k.lower() == b"authorization" for k, _ in scope.get("headers", ()))
        user = scope.get(USER_SCOPE_KEY, ANONYMOUS)
        if not bearer or user is ANONYMOUS or user.username == ANONYMOUS.username:
            return _text(401, "a login URL is given only to a request with a bearer token")
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == b"host"), "")
        base = f"{scope.get('scheme', 'http')}://{host}"
        body = orjson.dumps({"loginURL": self.login_url(base, user), "user": user.username})
        return 201, [(b"content-type", b"application/json")], body


def _text(
    status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS, *(extra or [])]
    return status, headers, (text + "\n").encode()
