"""Watching a run: the live view of every control plane a bench run or a test session starts.

``gangplane bench --ui`` and ``pytest --gangplane-ui`` build one :class:`PlaneWatcher`. Each control
plane the run starts is served on the watcher's port with the watcher's sessions, so a browser
logged in once stays logged in from one plane to the next: when a plane stops, the view's watches
drop, it reconnects to the next plane on the same address and re-lists (its old resourceVersion
is unknown there: 410, then a relist), with no new login.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from apiserver.server.frontdoor import ADMIN, FrontDoorPolicy, new_token, static_tokens
from gangplane.ui.app import UI

if TYPE_CHECKING:
    from gangplane.controlplane import ControlPlane


class PlaneWatcher:
    """Serves the view of each plane it is given on ``127.0.0.1:port`` (a free port if taken)."""

    def __init__(self, port: int, say: Callable[[str], None]) -> None:
        self.port = port
        self.say = say
        self.ui = UI()
        self._announced: set[str] = set()

    def front_door(self) -> FrontDoorPolicy:
        """A front door nobody has the token of: only the view's session cookie gets in."""
        return FrontDoorPolicy([static_tokens({new_token(): ADMIN})])

    async def serve(self, cp: ControlPlane, label: str = "") -> str:
        """Serve ``cp``'s API and view; announce the login URL the first time an address is used."""
        try:
            url = await cp.serve_http("127.0.0.1", self.port, front_door=self.front_door(), ui=self.ui)
        except OSError:
            url = await cp.serve_http("127.0.0.1", 0, front_door=self.front_door(), ui=self.ui)
        self.announce(url, label)
        return url

    def announce(self, url: str, label: str = "") -> None:
        what = f" ({label})" if label else ""
        if url in self._announced:
            self.say(f"gangplane: live view{what}: {url}/ui/ (same address; an open view follows)")
            return
        self._announced.add(url)
        self.say(f"gangplane: live view{what} (one-time login link): {self.ui.login_url(url)}")
