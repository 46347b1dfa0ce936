"""The front door's pure parts: Host parsing, loopback names, token matching, the ASGI checks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.api.users import UserInfo
from apiserver.server.app import status_response
from apiserver.server.frontdoor import (
    ADMIN,
    ANONYMOUS,
    USER_SCOPE_KEY,
    FrontDoor,
    FrontDoorPolicy,
    host_name,
    is_loopback,
    new_token,
    static_tokens,
)


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("127.0.0.1:6443", "127.0.0.1"),
        ("[::1]:6443", "::1"),
        ("LocalHost", "localhost"),
        ("a.example:80", "a.example"),
        ("::1", "::1"),
    ],
)
def test_host_name(header: str, host: str) -> None:
    assert host_name(header) == host


@pytest.mark.parametrize(
    ("host", "loop"),
    [
        ("localhost", True),
        ("app.localhost", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("10.0.0.1", False),
        ("evil.example", False),
    ],
)
def test_is_loopback(host: str, loop: bool) -> None:
    assert is_loopback(host) is loop


def test_static_tokens() -> None:
    t = new_token()
    auth = static_tokens({t: ADMIN})
    assert auth(t) is ADMIN
    assert auth(t + "x") is None and auth("") is None


def _call(door: FrontDoor, path: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    seen: dict[str, Any] = {}
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.update(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    door.app = app
    asyncio.run(door(scope, receive, send))
    return sent[0]["status"], seen


def test_front_door_sets_the_identity_and_refuses_the_rest() -> None:
    t = new_token()
    door = FrontDoor(
        None, FrontDoorPolicy([static_tokens({t: ADMIN})], allowed_hosts={"gp.internal"}), status_response
    )  # type: ignore[arg-type]
    code, scope = _call(door, "/api/v1/pods", {"Host": "127.0.0.1:6443", "Authorization": f"Bearer {t}"})
    assert code == 200 and scope[USER_SCOPE_KEY] is ADMIN
    assert _call(door, "/api/v1/pods", {"Host": "127.0.0.1"})[0] == 401
    assert _call(door, "/readyz", {"Host": "127.0.0.1"})[0] == 200
    assert _call(door, "/api/v1/pods", {"Host": "gp.internal:6443", "Authorization": f"Bearer {t}"})[0] == 200
    assert _call(door, "/readyz", {"Host": "rebind.example"})[0] == 403
    anon = FrontDoor(None, FrontDoorPolicy([static_tokens({t: ADMIN})], anonymous=True), status_response)  # type: ignore[arg-type]
    code, scope = _call(anon, "/api/v1/pods", {"Host": "localhost"})
    assert code == 200 and scope[USER_SCOPE_KEY] is ANONYMOUS
    wildcard = FrontDoor(None, FrontDoorPolicy([], anonymous=True, allow_ip_literals=True), status_response)  # type: ignore[arg-type]
    assert _call(wildcard, "/version", {"Host": "192.0.2.10:6443"})[0] == 200
    assert _call(wildcard, "/version", {"Host": "rebind.example"})[0] == 403


def test_impersonation_replaces_the_identity_when_allowed() -> None:
    t = new_token()
    door = FrontDoor(None, FrontDoorPolicy([static_tokens({t: ADMIN})]), status_response)  # type: ignore[arg-type]
    code, scope = _call(
        door,
        "/api/v1/pods",
        {
            "Host": "localhost",
            "Authorization": f"Bearer {t}",
            "Impersonate-User": "jane",
            "Impersonate-Group": "qa",
        },
    )
    assert code == 200 and scope[USER_SCOPE_KEY] == UserInfo("jane", ("qa", "system:authenticated"))


def test_rbac_authorization_refuses_with_kubes_forbidden() -> None:
    from apiserver.auth.authorizer import Authorization
    from tests.unit.apiserver.auth.test_auth_rbac import DictSource

    t = new_token()
    jane = UserInfo("jane", ("system:authenticated",))
    policy = FrontDoorPolicy([static_tokens({t: jane})], authorization=Authorization("RBAC", DictSource([])))
    door = FrontDoor(None, policy, status_response)  # type: ignore[arg-type]
    assert (
        _call(door, "/api/v1/namespaces/default/pods", {"Host": "localhost", "Authorization": f"Bearer {t}"})[
            0
        ]
        == 403
    )
    assert (
        _call(door, "/readyz", {"Host": "localhost"})[0] == 403
    )  # no public-info-viewer binding in this policy
    code, _ = _call(
        door, "/api/v1/pods", {"Host": "localhost", "Authorization": f"Bearer {t}", "Impersonate-User": "x"}
    )
    assert code == 403
