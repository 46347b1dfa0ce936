"""scheduler.disruption: the DisruptionTarget writes preemption makes, on pods and PodGroups."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS
from scheduler.disruption import disrupt_pod, disrupt_pod_group, preemption_message, terminating_by_preemption
from scheduler.nodeinfo import PodInfo
from scheduler.testing import RecordingClient, make_pod

pytestmark = pytest.mark.anyio
MSG = preemption_message("default-scheduler", group_preemptor=True)


def pod_group(conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "g", "namespace": "default", "generation": 2},
        "status": {"conditions": conditions or []},
    }


def test_messages() -> None:
    assert MSG == "default-scheduler: preempting to accommodate a higher priority pod group"
    assert (
        preemption_message("s", group_preemptor=False) == "s: preempting to accommodate a higher priority pod"
    )


async def test_pod_is_marked_then_deleted_and_a_gone_pod_is_no_error() -> None:
    victim = make_pod("v", node_name="n")
    client = RecordingClient([victim])
    await disrupt_pod(client, PodInfo(victim), MSG, 0.0)
    assert [(c[0], c[1][0]) for c in client.calls] == [("patch", PODS), ("delete", PODS)]
    (cond,) = client.calls[0][1][2]["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "DisruptionTarget",
        "True",
        "PreemptionByScheduler",
        MSG,
    )
    gone = RecordingClient([make_pod("other")])
    await disrupt_pod(gone, PodInfo(victim), MSG, 0.0)  # delete answers NotFound: nothing raised


async def test_pod_group_condition_is_patched_once() -> None:
    client = RecordingClient()
    await disrupt_pod_group(client, pod_group(), MSG, 0.0)
    ((verb, args, kw),) = client.calls
    assert (verb, args[0], args[1], kw["subresource"]) == ("patch", PODGROUPS, "g", "status")
    assert kw["patch_type"] == "application/strategic-merge-patch+json"
    (cond,) = args[2]["status"]["conditions"]
    assert cond["observedGeneration"] == 2 and cond["lastTransitionTime"] == "1970-01-01T00:00:00Z"
    marked = pod_group([{**cond}])
    client2 = RecordingClient()
    await disrupt_pod_group(client2, marked, MSG, 5.0)
    assert client2.calls == []  # unchanged: not written again


def test_terminating_by_preemption() -> None:
    dt = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    assert terminating_by_preemption(
        PodInfo(make_pod("a", deletion_timestamp="2026-01-01T00:00:00Z", conditions=dt))
    )
    assert not terminating_by_preemption(PodInfo(make_pod("b", conditions=dt)))
    assert not terminating_by_preemption(PodInfo(make_pod("c", deletion_timestamp="2026-01-01T00:00:00Z")))
