"""What both front doors (the HTTP handlers and the in-process client) call for a write.

Without any webhook configuration stored the write runs as it always did. With one, the write runs
under :func:`apiserver.admission.webhook.run.run_admitted`, each pass on a fresh copy of the
request body (admission mutates the body it is given, and every pass must start from what the
client sent).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from apiserver.admission.webhook.client import WebhookClients
from apiserver.admission.webhook.run import run_admitted

T = TypeVar("T")
GROUP = "admissionregistration.k8s.io"


def webhooks_configured(api: Any) -> bool:
    return bool(api.stored_count(GROUP, "mutatingwebhookconfigurations")) or bool(
        api.stored_count(GROUP, "validatingwebhookconfigurations")
    )


def converts_by_webhook(rd: Any) -> bool:
    """Whether ``rd`` is a custom resource version converted by a conversion webhook."""
    return bool(getattr(getattr(rd, "converter", None), "calls_webhook", False))


def clients_of(api: Any) -> WebhookClients:
    """The API server's webhook clients (made on first use)."""
    clients = getattr(api, "webhook_clients", None)
    if clients is None:
        clients = api.webhook_clients = WebhookClients()
    return clients


def may_call_webhooks(api: Any, rd: Any) -> bool:
    """Whether a write of ``rd`` may need webhook answers (:func:`admitted` waits for them); if not,
    the write is made directly (an in-process caller may skip :func:`admitted`'s coroutine)."""
    return converts_by_webhook(rd) or webhooks_configured(api)


async def admitted(api: Any, rd: Any, write: Callable[[Any], T], body: Any = None) -> T:
    """``write(body)`` on ``rd``, waiting for webhook answers (admission, conversion) without blocking
    the event loop."""
    if not may_call_webhooks(api, rd):
        return write(body)
    return await run_admitted(lambda: write(copy.deepcopy(body)), clients_of(api).call)


async def converted(api: Any, rd: Any, read: Callable[[], T]) -> T:
    """A read of ``rd`` (get, list, watch events), waiting for conversion webhooks if it has one."""
    if not converts_by_webhook(rd):
        return read()
    return await run_admitted(read, clients_of(api).call)
