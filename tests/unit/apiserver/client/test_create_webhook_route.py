"""The in-process create calls the registry directly when no webhook can be involved, and through
``admitted`` (which waits for webhook answers) as soon as one may be: a webhook configuration
stored, or a resource converted by a webhook. The answer is the same object either way."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import CONFIGMAPS, GVR
from apiserver.server import localclient
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

VWC = GVR("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")


def _cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": name}}


async def test_creates_go_through_admitted_only_where_webhooks_may_answer(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    routed: list[str] = []
    real = localclient.admitted

    async def spy(api: Any, rd: Any, write: Any, body: Any = None) -> Any:
        routed.append(rd.plural)
        return await real(api, rd, write, body)

    monkeypatch.setattr(localclient, "admitted", spy)
    c = plane.client("writer")
    direct = await c.create(CONFIGMAPS, _cm("a"), "default")
    assert routed == []
    assert direct["data"] == {"k": "a"} and direct["metadata"]["uid"]
    # a webhook configuration that matches nothing: every later write may need webhook answers
    await c.create(
        VWC,
        {
            "metadata": {"name": "none"},
            "webhooks": [
                {
                    "name": "none.example.com",
                    "clientConfig": {"url": "https://127.0.0.1:9/none"},
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": ["example.com"],
                            "apiVersions": ["v1"],
                            "resources": ["nothing"],
                        }
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ],
        },
    )
    routed.clear()
    through = await c.create(CONFIGMAPS, _cm("b"), "default")
    assert routed == ["configmaps"]
    assert through["data"] == {"k": "b"}
    assert set(through) == set(direct)
    assert set(through["metadata"]) == set(direct["metadata"])
