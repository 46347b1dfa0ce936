"""Deletion policy lives in the strategies (kube's RESTGracefulDeleteStrategy, namespace REST)."""

from __future__ import annotations

import pytest

from apiserver.registry.strategies.core import STRATEGIES
from apiserver.rest.strategy import Strategy

POD = STRATEGIES[("", "pods")]
NAMESPACE = STRATEGIES[("", "namespaces")]


def pod(node: str = "n1", phase: str = "Running", grace: int | None = None) -> dict:
    spec: dict = {"nodeName": node} if node else {}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"spec": spec, "status": {"phase": phase}}


@pytest.mark.parametrize(
    ("obj", "requested", "want"),
    [
        (pod(), None, 30),  # the API default grace period
        (pod(grace=5), None, 5),
        (pod(grace=5), 0, 0),  # --grace-period=0 / --force
        (pod(grace=5), 12, 12),
        (pod(node=""), None, 0),  # never scheduled: nothing to stop
        (pod(phase="Succeeded"), None, 0),
        (pod(phase="Failed"), 7, 0),
        (pod(grace=-3), None, 0),
    ],
)
def test_pod_grace_period(obj: dict, requested: int | None, want: int) -> None:
    assert POD.graceful_delete
    assert POD.check_graceful_delete(obj, requested) == want


def test_namespace_is_held_by_spec_finalizers_and_turns_terminating() -> None:
    ns = {"metadata": {"name": "team"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    assert NAMESPACE.holds_deletion(ns)
    assert not NAMESPACE.holds_deletion({"metadata": {"name": "team"}, "spec": {}})
    NAMESPACE.prepare_for_delete(ns)
    assert ns["status"]["phase"] == "Terminating"
    assert not NAMESPACE.graceful_delete


def test_other_resources_delete_at_once_by_default() -> None:
    s = Strategy()
    obj = {"metadata": {"name": "x"}, "spec": {"finalizers": ["kubernetes"]}}
    assert not s.graceful_delete and not s.holds_deletion(obj)
    s.prepare_for_delete(obj)
    assert obj == {"metadata": {"name": "x"}, "spec": {"finalizers": ["kubernetes"]}}
