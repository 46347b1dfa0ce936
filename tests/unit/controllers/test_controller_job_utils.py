"""Pure helpers of the Job controller: index intervals, pod failure/success policies, back-off."""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from controllers.job import utils as ju


@pytest.mark.parametrize(
    ("indexes", "text"),
    [([], ""), ([3], "3"), ([0, 1], "0,1"), ([0, 1, 2], "0-2"), ([0, 1, 2, 5, 7, 8], "0-2,5,7,8")],
)
def test_completed_indexes_are_written_like_kube(indexes: list[int], text: str) -> None:
    assert ju.format_index_set(indexes) == text
    assert ju.parse_index_set(text, 100) == set(indexes)


def test_parse_index_set_drops_indexes_beyond_completions() -> None:
    assert ju.parse_index_set("0-4,9", 3) == {0, 1, 2}


def failed_pod(code: int, container: str = "main", conditions: list[Obj] | None = None) -> Obj:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"name": container, "state": {"terminated": {"exitCode": code}}}],
            "conditions": conditions or [],
        },
    }


def job_with_policy(*rules: Obj) -> Obj:
    return {"spec": {"podFailurePolicy": {"rules": list(rules)}}}


def test_first_matching_pod_failure_rule_decides() -> None:
    job = job_with_policy(
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
    )
    m = ju.match_pod_failure_policy(job, failed_pod(42))
    assert m == ju.FailureMatch(
        "FailJob", "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    )
    disrupted = failed_pod(42, conditions=[{"type": "DisruptionTarget", "status": "True"}])
    assert ju.match_pod_failure_policy(job, disrupted).action == "Ignore"


def test_not_in_operator_and_container_name_filter() -> None:
    job = job_with_policy(
        {"action": "FailJob", "onExitCodes": {"containerName": "side", "operator": "NotIn", "values": [1]}}
    )
    assert ju.match_pod_failure_policy(job, failed_pod(2, "main")).action == "Count"
    assert ju.match_pod_failure_policy(job, failed_pod(2, "side")).action == "FailJob"
    assert ju.match_pod_failure_policy(job, failed_pod(1, "side")).action == "Count"


def test_success_policy_rules() -> None:
    job = {
        "spec": {
            "completions": 5,
            "successPolicy": {
                "rules": [{"succeededIndexes": "0-2", "succeededCount": 2}, {"succeededCount": 4}]
            },
        }
    }
    assert ju.match_success_policy(job, {0}) is None
    assert ju.match_success_policy(job, {0, 2}) == (0, "Matched rules at index 0")
    assert ju.match_success_policy(job, {0, 3, 4, 1}) == (0, "Matched rules at index 0")
    assert ju.match_success_policy(job, {3, 4, 1, 2}) == (0, "Matched rules at index 0")
    assert ju.match_success_policy(job, {3, 4}) is None


def test_pod_failure_backoff_doubles_to_the_cap() -> None:
    assert [ju.failure_backoff(n) for n in range(0, 4)] == [0.0, 10.0, 20.0, 40.0]
    assert ju.failure_backoff(20) == 600.0


def test_terminating_pod_counts_as_failed_only_when_replacement_waits_for_nothing() -> None:
    pod = {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running"}}
    assert ju.is_failed(pod, {"spec": {"podReplacementPolicy": "TerminatingOrFailed"}})
    assert not ju.is_failed(pod, {"spec": {"podReplacementPolicy": "Failed"}})
