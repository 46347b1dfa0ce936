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


def _statefulset() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s", "namespace": "default", "labels": {"app": "s"}},
        "spec": {
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "s"}},
            "template": {
                "metadata": {"labels": {"app": "s"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
            ],
        },
    }


def _pod_group() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {
            "workloadRef": {"workloadName": "w", "templateName": "t"},
            "schedulingPolicy": {"gang": {"minCount": 2}},
        },
    }


def _comparable(out: dict[str, Any]) -> dict[str, Any]:
    for entry in out["metadata"].get("managedFields") or []:
        entry.pop("time", None)
    for k in ("creationTimestamp", "uid", "resourceVersion"):
        out["metadata"].pop(k)
    return out


def _kind_status_write(
    strategy: type,
    skip: bool,
    monkeypatch: pytest.MonkeyPatch,
    gvr: tuple[str, str, str],
    obj: dict[str, Any],
    write: str,
) -> dict[str, Any]:
    """Create ``obj``, then write its status (``update`` of a body whose spec lost every default
    and gained a change, or a merge ``patch``); the stored object with the strategy's flag."""
    monkeypatch.setattr(strategy, "defaults_only_replaced_by_status", skip)
    api = build_api()
    rd = api.registry.get(*gvr)
    assert rd is not None
    name = obj["metadata"]["name"]
    created = api.create(rd, "default", copy.deepcopy(obj), WriteOptions(field_manager="t")).obj
    cond = {
        "type": "X",
        "status": "True",
        "reason": "R",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    status: dict[str, Any] = {"observedGeneration": 1, "conditions": [cond]}
    if rd.kind == "StatefulSet":
        status = {"replicas": 2, "observedGeneration": 1, "currentRevision": "r1", "availableReplicas": 0}
    if write == "update":
        body = copy.deepcopy(created)
        body["spec"] = copy.deepcopy(obj["spec"])  # undefaulted: a status write ignores it
        body["spec"]["serviceName" if rd.kind == "StatefulSet" else "schedulingPolicy"] = (
            "other" if rd.kind == "StatefulSet" else {"basic": {}}
        )
        body["status"] = status
        out = api.update(rd, "default", name, body, WriteOptions(field_manager="t"), subresource="status")
    else:
        patch = {"spec": {"disruptionMode": None}, "status": status}
        out = api.patch(
            rd,
            "default",
            name,
            patch,
            "application/merge-patch+json",
            WriteOptions(field_manager="t"),
            subresource="status",
        )
    stored = api.get(rd, "default", name).copy()
    assert stored["spec"] == created["spec"]  # the body's spec (and its change) ignored
    assert {k: stored["status"][k] for k in status} == status
    return {"response": _comparable(out.obj), "stored": _comparable(stored)}


@pytest.mark.parametrize("write", ["update", "patch"])
@pytest.mark.parametrize(
    ("strategy_path", "gvr", "make"),
    [
        (
            "apiserver.registry.strategies.apps.StatefulSetStrategy",
            ("apps", "v1", "statefulsets"),
            _statefulset,
        ),
        (
            "apiserver.registry.strategies.scheduling.PodGroupStrategy",
            ("scheduling.k8s.io", "v1beta1", "podgroups"),
            _pod_group,
        ),
    ],
)
def test_statefulset_and_pod_group_status_writes_store_the_same_without_defaulting_the_body(
    monkeypatch: pytest.MonkeyPatch, strategy_path: str, gvr: tuple[str, str, str], make: Any, write: str
) -> None:
    import importlib

    module, _, cls = strategy_path.rpartition(".")
    strategy = getattr(importlib.import_module(module), cls)
    assert strategy.defaults_only_replaced_by_status  # what the controllers' status writes run
    skipped = _kind_status_write(strategy, True, monkeypatch, gvr, make(), write)
    defaulted = _kind_status_write(strategy, False, monkeypatch, gvr, make(), write)
    assert skipped == defaulted
