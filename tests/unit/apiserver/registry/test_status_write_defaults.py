"""A pod ``/status`` write skips the pod defaults: the stored pod is what defaulting gave.

kube decodes (and defaults) the whole body of a status write, then keeps nothing of it but the
status; the Pod strategy's defaults are all in ``spec``, so gangplane leaves them out there.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.registry.generic import WriteOptions
from apiserver.registry.strategies.core.pod import PodStrategy
from apiserver.server.instance import build_api


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}}}]},
    }


def _status_write(skip: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(PodStrategy, "defaults_only_replaced_by_status", skip)
    api = build_api()
    rd = api.registry.get("", "v1", "pods")
    created = api.create(rd, "default", _pod(), WriteOptions(field_manager="t")).obj
    body = copy.deepcopy(created)
    body["spec"] = {"containers": [{"name": "other", "image": "y"}]}  # ignored by a status write
    body["metadata"]["labels"] = {"app": "changed"}  # ignored too (ResetObjectMetaForStatus)
    body["status"]["phase"] = "Running"
    body["status"]["podIP"] = "10.0.0.7"
    out = api.update(rd, "default", "p", body, WriteOptions(field_manager="t"), subresource="status").obj
    assert out["spec"] == created["spec"] and out["metadata"]["labels"] == {"app": "x"}
    for entry in out["metadata"]["managedFields"]:
        entry.pop("time", None)
    out["metadata"].pop("creationTimestamp")
    out["metadata"].pop("uid")
    out["metadata"].pop("resourceVersion")
    return out


def test_the_stored_pod_is_the_same_with_and_without_defaulting_the_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    skipped = _status_write(True, monkeypatch)
    defaulted = _status_write(False, monkeypatch)
    assert skipped == defaulted
    assert skipped["status"]["phase"] == "Running"
    assert skipped["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}  # defaulted at create
