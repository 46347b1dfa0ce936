"""Browser sessions of the live view: one-time login tokens, session cookies, and the CSRF guard.

``gangplane serve`` prints a login URL as Jupyter does. Its token is good for one visit: the
visit trades it for a session cookie (``HttpOnly``, ``SameSite=Strict``, ``Secure`` over TLS)
and the view then calls the very API kubectl calls. The front door maps the cookie to the user
the login token was minted for, so authorization (``--authorization-mode=RBAC``) decides the
view's requests exactly as it decides that user's kubectl requests.

A cookie is what cross-site request forgery abuses: the browser attaches it to requests other
pages make. ``SameSite=Strict`` already keeps it off cross-site requests in current browsers;
the guard here refuses, besides, any cookie-authenticated request whose ``Sec-Fetch-Site`` is
not ``same-origin``/``none`` or whose ``Origin`` is not this server's own (older browsers, and
same-site pages on another port of ``localhost``, which SameSite does not separate).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any

from apiserver import errors
from apiserver.api.users import UserInfo

COOKIE_NAME = "gangplane-session"
#: how long a printed login URL stays redeemable (a session, once made, lasts for the server's life)
LOGIN_TTL_SECONDS = 24 * 3600.0
#: Sec-Fetch-Site values of requests the view itself makes (``none``: the user typed the URL)
SAME_ORIGIN_FETCH_SITES = frozenset({"same-origin", "none"})

Scope = MutableMapping[str, Any]


@dataclass
class _Login:
    user: UserInfo
    expires: float


@dataclass
class UISessions:
    """The server's login tokens and sessions (in memory: a restart logs every browser out)."""

    clock: Callable[[], float] = time.monotonic
    _logins: dict[str, _Login] = field(default_factory=dict)
    _sessions: dict[str, UserInfo] = field(default_factory=dict)

    def mint_login(self, user: UserInfo) -> str:
        """A new one-time login token that will log a browser in as ``user``."""
        token = secrets.token_urlsafe(32)
        self._logins[token] = _Login(user, self.clock() + LOGIN_TTL_SECONDS)
        return token

    def redeem(self, token: str) -> str | None:
        """Trade a login token for a new session id; None if it is unknown, used or expired."""
        now = self.clock()
        for known in list(self._logins):
            if self._logins[known].expires <= now:
                del self._logins[known]
        match = next((k for k in self._logins if hmac.compare_digest(k.encode(), token.encode())), None)
        if match is None:
            return None
        login = self._logins.pop(match)  # one visit only: a URL left in a shell history is spent
        session = secrets.token_urlsafe(32)
        self._sessions[session] = login.user
        return session

    def logout(self, session: str) -> None:
        self._sessions.pop(session, None)

    def user_of(self, session: str) -> UserInfo | None:
        for known, user in self._sessions.items():
            if hmac.compare_digest(known.encode(), session.encode()):
                return user
        return None

    def authenticate_cookie(self, scope: Scope, cookie_header: str) -> UserInfo | None:
        """The front door's cookie authenticator: the session's user, after the CSRF guard.

        A header without this server's cookie is not ours to judge (None: the front door goes
        on as if there were no cookie). A session cookie on a request another site caused is
        refused with 403, before the session is even looked at.
        """
        session = session_from_cookie(cookie_header)
        if session is None:
            return None
        refusal = cross_site_refusal(scope)
        if refusal is not None:
            raise errors.StatusError(403, "Forbidden", refusal)
        # a stale cookie (the server restarted, a logout) is no session: the request goes on
        # without one (the API answers 401, while the login path still works)
        return self.user_of(session)


def session_from_cookie(cookie_header: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header)
    except CookieError:
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel is not None and morsel.value else None


def _header(scope: Scope, name: bytes) -> str | None:
    value = None
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            value = v.decode("latin-1")
    return value


def own_origin(scope: Scope) -> str:
    """``scheme://host[:port]`` of this server as the request addressed it (its Host header,
    already checked against DNS rebinding by the front door)."""
    scheme = scope.get("scheme", "http")
    host = (_header(scope, b"host") or "").strip().lower()
    default = ":443" if scheme == "https" else ":80"
    if host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}"


def cross_site_refusal(scope: Scope) -> str | None:
    """Why a cookie-carrying request is refused as cross-site, or None when it is the view's own."""
    site = _header(scope, b"sec-fetch-site")
    if site is not None and site.strip().lower() not in SAME_ORIGIN_FETCH_SITES:
        return (
            f'a session cookie is not accepted on a request with Sec-Fetch-Site "{site.strip()}": '
            "only the gangplane view itself (same-origin) may use it"
        )
    origin = _header(scope, b"origin")
    if origin is not None:
        origin = origin.strip().lower()
        if origin.endswith(":443") and origin.startswith("https://"):
            origin = origin[:-4]
        elif origin.endswith(":80") and origin.startswith("http://"):
            origin = origin[:-3]
        if origin != own_origin(scope):
            return (
                f'a session cookie is not accepted from origin "{origin}": only the gangplane view '
                f"({own_origin(scope)}) may use it"
            )
    return None
