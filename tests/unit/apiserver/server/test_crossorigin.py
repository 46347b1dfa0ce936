"""Browsers' cross-site writes are refused in the front door (issue 25, S1; gangplane's guard).

The table is the decision a user meets: kubectl-like clients (no Origin, no Sec-Fetch-Site) pass,
a page's write from another origin is a 403 naming the origin and ``--allow-origin``, reads pass,
and a trusted origin passes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.server.app import status_response
from apiserver.server.crossorigin import CrossOriginGuard, parse_origin
from apiserver.server.frontdoor import FrontDoor, FrontDoorPolicy

HOST = "127.0.0.1:6443"
UI = "http://localhost:3000"

CASES = [
    # (method, origin, sec-fetch-site, refused)
    ("POST", None, None, False),  # kubectl, client-go, curl
    ("POST", "http://evil.example", "cross-site", True),  # the request
    ("POST", None, "cross-site", True),
    ("DELETE", "http://127.0.0.2:6443", "same-site", True),
    ("PATCH", f"http://{HOST}", "same-origin", False),
    ("PUT", None, "none", False),  # typed by the user
    ("POST", "http://evil.example", None, True),  # an older browser: Origin only
    ("POST", "null", None, True),  # a sandboxed frame, a file:// page
    ("POST", f"http://{HOST}", None, False),
    ("POST", f"https://{HOST.upper()}", None, False),  # host compared case-insensitively
    ("GET", "http://evil.example", "cross-site", False),  # reads change nothing
    ("HEAD", "http://evil.example", "cross-site", False),
    ("POST", UI, "cross-site", False),  # --allow-origin
    ("DELETE", UI.upper(), "same-site", False),
    ("POST", UI + "/", "cross-site", True),  # not how a browser spells an origin
]


@pytest.mark.parametrize(("method", "origin", "site", "refused"), CASES)
def test_the_guards_decision(method: str, origin: str | None, site: str | None, refused: bool) -> None:
    err = CrossOriginGuard([UI]).check(method, HOST, origin, site)
    assert (err is not None) == refused
    if err is not None:
        assert (err.code, err.reason) == (403, "Forbidden")
        assert "cross-site request refused" in err.message and "--allow-origin" in err.message


@pytest.mark.parametrize(
    "bad", ["localhost:3000", "http://a/path", "ftp://a", "http://u:p@a", "http://a?x=1"]
)
def test_an_allow_origin_that_is_no_origin_is_refused_at_start(bad: str) -> None:
    with pytest.raises(ValueError, match="--allow-origin"):
        parse_origin(bad)


def _through_door(policy: FrontDoorPolicy, method: str, headers: dict[str, str]) -> tuple[int, Any]:
    reached: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["method"])
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    scope = {
        "type": "http",
        "method": method,
        "path": "/api/v1/namespaces/default/configmaps",
        "raw_path": b"/api/v1/namespaces/default/configmaps",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"Host": HOST, **headers}.items()],
    }
    asyncio.run(FrontDoor(app, policy, status_response)(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], (reached, body)


def test_the_front_door_refuses_before_anything_is_served_even_anonymously() -> None:
    policy = FrontDoorPolicy([], anonymous=True)
    status, (reached, body) = _through_door(
        policy, "POST", {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    )
    assert status == 403 and reached == []
    assert b'"reason":"Forbidden"' in body and b"http://evil.example" in body
    status, (reached, _) = _through_door(policy, "POST", {})
    assert status == 201 and reached == ["POST"]


def test_the_front_door_admits_a_trusted_origin() -> None:
    policy = FrontDoorPolicy([], anonymous=True, cross_origin=CrossOriginGuard([UI]))
    status, (reached, _) = _through_door(policy, "POST", {"Origin": UI, "Sec-Fetch-Site": "cross-site"})
    assert status == 201 and reached == ["POST"]
