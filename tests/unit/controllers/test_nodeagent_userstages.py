"""User stage files: parsing, errors naming the field, and what a stage makes the agent see."""

from __future__ import annotations

import pytest

from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.userstages import StageError, parse_stages, with_stage_annotations

STAGES = {
    "stages": [
        {
            "name": "r",
            "resourceRef": {"kind": "Pod"},
            "selector": {"matchLabels": {"app": "w"}},
            "delay": "3s",
            "next": {"ready": True},
        },
        {
            "name": "f",
            "resourceRef": {"kind": "Pod"},
            "selector": {"matchLabels": {"app": "w"}},
            "delay": 20,
            "next": {"phase": "Failed"},
        },
        {
            "name": "n",
            "resourceRef": {"kind": "Node"},
            "selector": {"matchLabels": {"rack": "r2"}},
            "delay": "10s",
            "next": {"fault": "unreachable"},
        },
    ]
}


def test_pod_stages_read_as_annotations_the_pod_does_not_set() -> None:
    stages = parse_stages(STAGES)
    pod = {"metadata": {"labels": {"app": "w"}, "annotations": {ann.READY_AFTER: "1s"}}}
    seen = with_stage_annotations(pod, stages)["metadata"]["annotations"]
    assert seen == {ann.READY_AFTER: "1s", ann.COMPLETE_AFTER: "20.0s", ann.FAIL: "true"}
    other = {"metadata": {"labels": {"app": "x"}}}
    assert with_stage_annotations(other, stages) is other
    assert stages.node_faults({"metadata": {"labels": {"rack": "r2"}}}) == [(10.0, "unreachable")]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"stages": [{"resourceRef": {"kind": "Job"}, "next": {}}]},
            "stages[0].resourceRef.kind: must be one of Pod, Node",
        ),
        (
            {"stages": [{"resourceRef": {"kind": "Pod"}, "delay": "-1s", "next": {"ready": True}}]},
            "stages[0].delay: negative duration",
        ),
        (
            {"stages": [{"resourceRef": {"kind": "Node"}, "next": {"fault": "melted"}}]},
            "stages[0].next: a Node stage's next is",
        ),
        (
            {"stages": [{"resourceRef": {"kind": "Pod"}, "next": {"phase": "Running"}}]},
            'stages[0].next.phase: must be "Succeeded" or "Failed"',
        ),
        (
            {"stages": [{"resourceRef": {"kind": "Pod"}, "when": 1, "next": {}}]},
            "stages[0]: unknown field(s) when",
        ),
    ],
)
def test_errors_name_the_field(doc: dict, message: str) -> None:
    with pytest.raises(StageError) as e:
        parse_stages(doc)
    assert str(e.value).startswith(message)
