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

from apiserver.admission.webhook.client import call_webhook
from apiserver.admission.webhook.run import run_admitted

T = TypeVar("T")
GROUP = "admissionregistration.k8s.io"


def webhooks_configured(api: Any) -> bool:
    return bool(api.peek_all(GROUP, "mutatingwebhookconfigurations")) or bool(
        api.peek_all(GROUP, "validatingwebhookconfigurations")
    )


async def admitted(api: Any, write: Callable[[Any], T], body: Any = None) -> T:
    """``write(body)``, waiting for webhook answers without blocking the event loop."""
    if not webhooks_configured(api):
        return write(body)
    return await run_admitted(lambda: write(copy.deepcopy(body)), call_webhook)
