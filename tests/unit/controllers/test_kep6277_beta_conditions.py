"""The pure pieces of gangplane's KEP-6277 Beta / KEP-6413 proposals: which members count as
scheduled for ``PodGroupSatisfied``, the condition it computes, and the StatefulSet's
``PodGroupScheduled`` mirror (its source, its Unknown state, its lastTransitionTime)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.statefulset.workload_beta import (
    POD_GROUP_SCHEDULED,
    REASON_POD_GROUP_PENDING,
    statefulset_condition,
    unfit_replacements,
)
from scheduler.podgroup_satisfaction import counts_as_scheduled, satisfied_condition


def pod(node: str = "", phase: str = "Running", deleting: bool = False, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": "ns", "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-05T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


@pytest.mark.parametrize(
    ("p", "want"),
    [
        (pod("n1"), True),
        (pod(), False),
        (pod("n1", deleting=True), False),
        (pod("n1", phase="Failed"), False),
        (pod("n1", phase="Succeeded"), False),
    ],
    ids=["bound", "unbound", "being-deleted", "failed", "succeeded"],
)
def test_what_counts_as_a_scheduled_member(p: dict[str, Any], want: bool) -> None:
    assert counts_as_scheduled(p) is want


def group(min_count: int, conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "pg", "generation": 2},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
        "status": {"conditions": conditions or []},
    }


def test_satisfied_condition_in_both_directions() -> None:
    assert satisfied_condition(group(3), 3) == {
        "type": "PodGroupSatisfied",
        "status": "True",
        "reason": "MinCountSatisfied",
        "message": "minCount (3) is satisfied: 3 scheduled",
        "observedGeneration": 2,
    }
    c = satisfied_condition(group(3), 2)
    assert (c["status"], c["reason"], c["message"]) == (
        "False",
        "MinCountNotSatisfied",
        "minCount (3) is not satisfied: 2 scheduled",
    )


def test_statefulset_condition_prefers_the_runtime_condition_and_keeps_transition_time() -> None:
    sts: dict[str, Any] = {"metadata": {"name": "db"}, "status": {}}
    pending = statefulset_condition(sts, group(3), 0.0)
    assert (pending["status"], pending["reason"]) == ("Unknown", REASON_POD_GROUP_PENDING)

    initially = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}
    c = statefulset_condition(sts, group(3, [initially]), 10.0)
    assert (c["type"], c["status"], c["reason"]) == (POD_GROUP_SCHEDULED, "True", "Scheduled")
    assert c["message"] == "PodGroup pg: PodGroupInitiallyScheduled=True"

    sts["status"]["conditions"] = [c]
    runtime = {"type": "PodGroupSatisfied", "status": "True", "reason": "MinCountSatisfied", "message": "m"}
    again = statefulset_condition(sts, group(3, [initially, runtime]), 99.0)
    assert (
        again["reason"] == "MinCountSatisfied"
        and again["message"] == "PodGroup pg: PodGroupSatisfied=True: m"
    )
    assert again["lastTransitionTime"] == c["lastTransitionTime"]  # same status: unchanged
    lost = statefulset_condition(sts, group(3, [initially, {**runtime, "status": "False"}]), 99.0)
    assert lost["lastTransitionTime"] != c["lastTransitionTime"]


def test_unfit_replacements_are_pending_unschedulable_pods_of_the_update_revision() -> None:
    sts = {"metadata": {"name": "db"}, "status": {"currentRevision": "old", "updateRevision": "new"}}
    stuck = pod(phase="Pending", **{"controller-revision-hash": "new"})
    stuck["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes"}
    ]
    old = {**stuck, "metadata": {**stuck["metadata"], "labels": {"controller-revision-hash": "old"}}}
    placed = pod("n1", **{"controller-revision-hash": "new"})
    assert unfit_replacements(sts, [stuck, old, placed]) == [(stuck, "0/1 nodes")]
    done = {**sts, "status": {"currentRevision": "new", "updateRevision": "new"}}
    assert unfit_replacements(done, [stuck]) == []
