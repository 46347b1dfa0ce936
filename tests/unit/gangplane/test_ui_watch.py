"""``gangplane bench --ui``: each control plane a run starts is served with the run's one set of sessions."""

from __future__ import annotations

import asyncio
import re
import socket
import urllib.error
import urllib.request

from gangplane.controlplane import PLANE_STARTED, ControlPlane
from gangplane.ui.watch import PlaneWatcher


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, cookie: str = "") -> int:
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object) -> None:  # type: ignore[override]
        return None


def test_every_plane_started_in_the_run_is_served_on_one_address_with_one_login() -> None:
    lines: list[str] = []
    port = _free_port()
    watcher = PlaneWatcher(port, lines.append)

    async def one_plane() -> str:
        cp = ControlPlane()
        await cp.start([])
        try:
            url = cp.url
            assert await asyncio.to_thread(_get, url + "/ui/") == 200
            # no token was handed out: only a view session opens the API
            assert await asyncio.to_thread(_get, url + "/api/v1/namespaces") == 401
            return url
        finally:
            await cp.stop()

    token = PLANE_STARTED.set(watcher.serve)
    try:
        first = asyncio.run(one_plane())
        session = watcher.ui.sessions.redeem(re.search(r"token=(\S+)", lines[0]).group(1))  # type: ignore[union-attr]
        assert session
        second = asyncio.run(one_plane())
    finally:
        PLANE_STARTED.reset(token)
    assert first == second == f"http://127.0.0.1:{port}"
    assert "one-time login link" in lines[0] and "same address" in lines[1]
    assert watcher.ui.sessions.user_of(session) is not None  # the browser stays logged in


def test_a_plane_outside_the_run_is_not_served() -> None:
    async def plane() -> str:
        cp = ControlPlane()
        await cp.start([])
        await cp.stop()
        return cp.url

    assert asyncio.run(plane()) == ""
