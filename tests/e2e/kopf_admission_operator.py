"""A kopf operator with admission handlers, run by tests/e2e/test_kopf_admission.py with ``kopf run``.

kopf serves its ``@kopf.on.validate`` / ``@kopf.on.mutate`` handlers itself (its WebhookServer, over
HTTPS with the certificate the test generated) and manages the Validating/MutatingWebhookConfiguration
naming it (``settings.admission.managed``), as it does on any cluster. Environment: CRONTAB_GROUP,
WEBHOOK_PORT, WEBHOOK_CERT, WEBHOOK_KEY, WEBHOOK_CA, WEBHOOK_CONFIG.
"""

from __future__ import annotations

import os
from typing import Any

import kopf

GROUP = os.environ.get("CRONTAB_GROUP", "stable.example.com")


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1",
        port=int(os.environ["WEBHOOK_PORT"]),
        host="127.0.0.1",
        certfile=os.environ["WEBHOOK_CERT"],
        pkeyfile=os.environ["WEBHOOK_KEY"],
        cafile=os.environ["WEBHOOK_CA"],
    )
    settings.admission.managed = os.environ["WEBHOOK_CONFIG"]


@kopf.on.validate(GROUP, "v1", "crontabs", id="image")
def check_image(spec: Any, **_: Any) -> None:
    if spec.get("image") == "forbidden":
        raise kopf.AdmissionError("image 'forbidden' is not allowed", code=400)


@kopf.on.mutate(GROUP, "v1", "crontabs", id="replicas")
def default_replicas(spec: Any, patch: kopf.Patch, **_: Any) -> None:
    if "replicas" not in spec:
        patch.spec["replicas"] = 1
