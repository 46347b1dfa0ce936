"""gangplane for users' own tests: control planes, wait helpers and the pytest plugin.

See :mod:`gangplane.testing.plugin` for the fixtures (``gangplane``, ``gangplane_server``) and the
``gangplane`` marker; :mod:`gangplane.testing.waiters` for the watch-based wait helpers.
"""

from gangplane.testing.plane import (
    Gangplane,
    GangplaneServer,
    InProcessPlane,
    PlaneConfig,
    PlaneHost,
    ThreadClient,
)
from gangplane.testing.waiters import wait_deleted, wait_for, wait_list, wait_pods_running
from gangplane.testing.webhook import Webhooks, WebhookServer, allowed, denied, patched, rule

__all__ = [
    "Gangplane",
    "GangplaneServer",
    "InProcessPlane",
    "PlaneConfig",
    "PlaneHost",
    "ThreadClient",
    "WebhookServer",
    "Webhooks",
    "allowed",
    "denied",
    "patched",
    "rule",
    "wait_deleted",
    "wait_for",
    "wait_list",
    "wait_pods_running",
]
