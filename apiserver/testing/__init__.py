"""gangplane for users' own tests: control planes, wait helpers and the pytest plugin.

See :mod:`apiserver.testing.plugin` for the fixtures (``gangplane``, ``gangplane_server``) and the
``gangplane`` marker; :mod:`apiserver.testing.waiters` for the watch-based wait helpers.
"""

from apiserver.testing.plane import (
    Gangplane,
    GangplaneServer,
    InProcessPlane,
    PlaneConfig,
    PlaneHost,
    ThreadClient,
)
from apiserver.testing.waiters import wait_deleted, wait_for, wait_list, wait_pods_running

__all__ = [
    "Gangplane",
    "GangplaneServer",
    "InProcessPlane",
    "PlaneConfig",
    "PlaneHost",
    "ThreadClient",
    "wait_deleted",
    "wait_for",
    "wait_list",
    "wait_pods_running",
]
