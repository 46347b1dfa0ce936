"""The live view's sessions behind the front door: one-time login tokens, the cookie, the CSRF guard.

Driven as ASGI calls through :class:`FrontDoor` + :meth:`UI.wrap`, the stack ``gangplane serve``
builds, so what is checked is the answer a browser (or a hostile page) would get.
"""

from __future__ import annotations

import asyncio
from typing import Any

from apiserver.api.users import UserInfo
from apiserver.server.app import status_response
from apiserver.server.frontdoor import (
    ADMIN,
    USER_SCOPE_KEY,
    FrontDoor,
    FrontDoorPolicy,
    new_token,
    static_tokens,
)
from gangplane.ui import UI, UISessions
from gangplane.ui.sessions import COOKIE_NAME, cross_site_refusal, session_from_cookie

HOST = "127.0.0.1:6443"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def stack(ui: UI, token: str = "") -> tuple[FrontDoor, list[dict[str, Any]]]:
    """The front door (with the UI's hooks, as serve_http wires them) over the UI over a fake API."""
    seen: list[dict[str, Any]] = []

    async def api(scope: Any, receive: Any, send: Any) -> None:
        seen.append(dict(scope))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    policy = FrontDoorPolicy([static_tokens({token: ADMIN})] if token else [])
    policy.public_paths = ("/ui",)
    policy.cookie_authenticator = ui.sessions.authenticate_cookie
    return FrontDoor(ui.wrap(api), policy, status_response), seen


def call(
    app: Any, path: str, headers: dict[str, str] | None = None, method: str = "GET", scheme: str = "https"
) -> tuple[int, dict[str, str], bytes]:
    path, _, query = path.partition("?")
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    scope = {
        "type": "http",
        "method": method,
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"Host": HOST, **(headers or {})}.items()],
    }
    asyncio.run(app(scope, receive, send))
    start = sent[0]
    hdrs = {k.decode(): v.decode() for k, v in start.get("headers", [])}
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], hdrs, body


def login(app: Any, ui: UI, user: UserInfo = ADMIN) -> str:
    url = ui.login_url(f"https://{HOST}", user)
    code, headers, _ = call(app, url.removeprefix(f"https://{HOST}"))
    assert code == 303 and headers["location"] == "/ui/"
    session = session_from_cookie(headers["set-cookie"].split(";")[0])
    assert session
    return session


def test_a_login_token_works_once_and_sets_a_strict_httponly_cookie() -> None:
    ui = UI()
    app, _ = stack(ui)
    url = ui.login_url(f"https://{HOST}").removeprefix(f"https://{HOST}")
    code, headers, _ = call(app, url)
    assert code == 303
    attrs = [a.strip() for a in headers["set-cookie"].split(";")]
    assert attrs[0].startswith(f"{COOKIE_NAME}=") and {
        "HttpOnly",
        "SameSite=Strict",
        "Secure",
        "Path=/",
    } <= set(attrs)
    assert headers["referrer-policy"] == "no-referrer"
    code, _, body = call(app, url)
    assert code == 401 and b"already used" in body
    assert call(app, "/ui/login?token=made-up")[0] == 401
    assert call(app, "/ui/login")[0] == 401
    # over plain HTTP the cookie cannot be Secure (the browser would drop it)
    plain = ui.login_url(f"http://{HOST}").removeprefix(f"http://{HOST}")
    assert "Secure" not in call(app, plain, scheme="http")[1]["set-cookie"]


def test_a_login_token_expires() -> None:
    clock = Clock()
    ui = UI(UISessions(clock=clock))
    app, _ = stack(ui)
    url = ui.login_url(f"https://{HOST}").removeprefix(f"https://{HOST}")
    clock.now += 24 * 3600 + 1
    assert call(app, url)[0] == 401


def test_the_cookie_maps_to_the_login_users_identity() -> None:
    ui = UI()
    app, seen = stack(ui)
    jane = UserInfo("jane", ("system:authenticated",))
    session = login(app, ui, jane)
    code, _, _ = call(app, "/api/v1/pods", {"Cookie": f"other=1; {COOKIE_NAME}={session}"})
    assert code == 200 and seen[-1][USER_SCOPE_KEY] == jane
    assert call(app, "/api/v1/pods", {"Cookie": f"{COOKIE_NAME}=forged"})[0] == 401
    assert call(app, "/api/v1/pods", {"Cookie": "unrelated=1"})[0] == 401
    assert call(app, "/api/v1/pods")[0] == 401


def test_a_cookie_on_a_cross_site_request_is_refused_with_403() -> None:
    ui = UI()
    app, _ = stack(ui)
    cookie = {"Cookie": f"{COOKIE_NAME}={login(app, ui)}"}
    for own in (
        {},
        {"Origin": f"https://{HOST}"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": f"https://{HOST}", "Sec-Fetch-Site": "same-origin"},
    ):
        assert call(app, "/api/v1/pods", {**cookie, **own}, method="POST")[0] == 200, own
    for hostile in (
        {"Origin": "https://evil.example"},
        {"Origin": "http://127.0.0.1:6443"},  # another scheme is another origin
        {"Origin": "https://127.0.0.1:6444"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # another port of localhost is same-site
        {"Origin": f"https://{HOST}", "Sec-Fetch-Site": "cross-site"},
    ):
        code, headers, body = call(app, "/api/v1/pods", {**cookie, **hostile}, method="POST")
        assert code == 403, hostile
        assert headers["content-type"] == "application/json" and b'"reason":"Forbidden"' in body
        # a write meets the front door's cross-site guard first; a read meets the cookie's own guard
        assert b"session cookie is not accepted" in body or b"cross-site request refused" in body


def test_a_bearer_token_is_not_subject_to_the_cookie_guard() -> None:
    t = new_token()
    ui = UI()
    app, seen = stack(ui, t)
    code, _, _ = call(app, "/api/v1/pods", {"Authorization": f"Bearer {t}", "Origin": "https://evil.example"})
    assert code == 200 and seen[-1][USER_SCOPE_KEY] is ADMIN


def test_default_ports_are_the_same_origin() -> None:
    scope = {"scheme": "https", "headers": [(b"host", b"gp.local"), (b"origin", b"https://gp.local:443")]}
    assert cross_site_refusal(scope) is None
    scope = {"scheme": "http", "headers": [(b"host", b"gp.local:80"), (b"origin", b"http://gp.local")]}
    assert cross_site_refusal(scope) is None


def test_logout_ends_the_session() -> None:
    ui = UI()
    app, _ = stack(ui)
    cookie = {"Cookie": f"{COOKIE_NAME}={login(app, ui)}"}
    assert call(app, "/ui/logout", cookie)[0] == 405
    assert call(app, "/ui/logout", {**cookie, "Origin": "https://evil.example"}, method="POST")[0] == 403
    code, headers, _ = call(app, "/ui/logout", cookie, method="POST")
    assert code == 204 and "Max-Age=0" in headers["set-cookie"]
    assert call(app, "/api/v1/pods", cookie)[0] == 401


def test_login_urls_are_minted_for_the_bearers_user_only() -> None:
    t = new_token()
    ui = UI()
    app, _ = stack(ui, t)
    assert call(app, "/ui/login-urls", method="POST")[0] == 401
    assert call(app, "/ui/login-urls", {"Authorization": "Bearer nope"}, method="POST")[0] == 401
    session = login(app, ui)
    assert call(app, "/ui/login-urls", {"Cookie": f"{COOKIE_NAME}={session}"}, method="POST")[0] == 401
    code, _, body = call(app, "/ui/login-urls", {"Authorization": f"Bearer {t}"}, method="POST")
    assert code == 201 and b'"user":"kubernetes-admin"' in body and b"/ui/login?token=" in body


def test_the_views_files_are_served_with_a_strict_policy() -> None:
    ui = UI()
    app, seen = stack(ui)
    code, headers, body = call(app, "/ui/")
    assert code == 200 and headers["content-type"].startswith("text/html") and b'<canvas id="board"' in body
    assert "default-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert call(app, "/ui/app.js")[1]["content-type"].startswith("text/javascript")
    assert call(app, "/ui/style.css")[0] == 200
    assert call(app, "/ui")[:2] == (308, {"location": "/ui/"})
    assert call(app, "/ui/../etc/passwd")[0] == 404
    assert call(app, "/ui/missing.js")[0] == 404
    assert call(app, "/ui/", method="POST")[0] == 405
    assert not seen  # none of it reached the API


def test_under_rbac_the_views_own_pages_are_not_put_to_the_authorizer() -> None:
    from apiserver.auth.authorizer import Authorization
    from tests.unit.apiserver.auth.test_auth_rbac import DictSource

    t = new_token()
    jane = UserInfo("jane", ("system:authenticated",))
    ui = UI()
    app, _ = stack(ui, "")
    app.policy.authenticators = [static_tokens({t: jane})]
    app.policy.authorization = Authorization("RBAC", DictSource([]))  # no bindings: every API request refused
    assert call(app, "/ui/")[0] == 200
    assert call(app, "/ui/app.js")[0] == 200
    code, _, body = call(app, "/ui/login-urls", {"Authorization": f"Bearer {t}"}, method="POST")
    assert code == 201 and b'"user":"jane"' in body
    session = login(app, ui, jane)
    assert call(app, "/ui/", {"Cookie": f"{COOKIE_NAME}={session}"})[0] == 200
    # the API itself is authorized as ever, for the cookie's user too
    code, _, body = call(app, "/api/v1/pods", {"Cookie": f"{COOKIE_NAME}={session}"})
    assert code == 403 and b'User \\"jane\\" cannot list resource \\"pods\\"' in body


def test_hostile_input_to_the_views_paths_gets_4xx_not_5xx() -> None:
    ui = UI()
    app, _ = stack(ui)
    session = login(app, ui)
    for path, headers, method in (
        ("/ui/login?token=%ff%00%zz", {}, "GET"),
        ("/ui/login?token=a&token=b", {}, "GET"),
        ("/ui/login?token=" + "x" * 10000, {}, "GET"),
        ("/ui/", {"Cookie": 'gangplane-session="\\x00;;=="; ;;'}, "GET"),
        ("/ui/", {"Cookie": "=" * 500}, "GET"),
        ("/api/v1/pods", {"Cookie": f"{COOKIE_NAME}={session}", "Origin": "\u00ff\u00fe"}, "GET"),
        ("/api/v1/pods", {"Cookie": f"{COOKIE_NAME}={session}", "Sec-Fetch-Site": ""}, "GET"),
        ("/ui/logout", {"Cookie": "gangplane-session"}, "POST"),
        ("/ui/%2e%2e/%2e%2e/etc/passwd", {}, "GET"),
        ("/ui/index.html", {}, "DELETE"),
    ):
        code = call(app, path, headers, method=method)[0]
        assert code < 500, (path, headers, code)
