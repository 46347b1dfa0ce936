"""Job controller behaviours, named after kube's (``job_controller_test.go`` / the Job docs).

In-process control plane, the Job controller and the node agent (pods bound by ``nodeName``);
pods finish through the agent (run-to-completion default, ``gangplane.dev/fail``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.batch.labels import JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER
from apiserver.client.interface import JOBS, PODS, Client
from controllers.job import JobController
from controllers.nodeagent import COMPLETE_AFTER, FAIL
from controllers.testing import set_pod_status
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.job_support import (
    condition,
    has_condition,
    job,
    job_pods,
    start_cluster,
    wait_events,
    wait_job,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def jobs(cp: ControlPlane) -> AsyncIterator[JobController]:
    yield await start_cluster(cp)


async def test_job_runs_completions_pods_and_completes(client: Client, jobs: JobController) -> None:
    await client.create(JOBS, job("pi", completions=3, parallelism=2), "default")
    done = await wait_job(client, "pi", has_condition("Complete"))
    st = done["status"]
    assert st["succeeded"] == 3 and st["failed"] == 0 and st["active"] == 0
    assert st["uncountedTerminatedPods"] == {} and st["completionTime"] and st["startTime"]
    met = condition(done, "SuccessCriteriaMet")
    assert met is not None and (met["reason"], met["message"]) == (
        "CompletionsReached",
        "Reached expected number of succeeded pods",
    )
    assert condition(done, "Complete")["reason"] == "CompletionsReached"
    events = await wait_events(client, "pi", "Completed")
    assert events[0]["message"] == "Job completed" and events[0]["type"] == "Normal"
    created = await wait_events(client, "pi", "SuccessfulCreate")
    assert created[0]["message"].startswith("Created pod: pi-")


async def test_tracking_finalizer_is_removed_once_pods_are_counted(
    client: Client, jobs: JobController
) -> None:
    await client.create(JOBS, job("track", completions=2, parallelism=2), "default")
    await wait_job(client, "track", has_condition("Complete"))
    pods = await job_pods(client, "track")
    assert len(pods) == 2
    for p in pods:
        assert JOB_TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or [])
        ref = p["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["controller"], ref["blockOwnerDeletion"]) == ("Job", True, True)


async def test_parallelism_without_completions_completes_when_one_pod_succeeds(
    client: Client, jobs: JobController
) -> None:
    await client.create(JOBS, job("work-queue", parallelism=2), "default")
    done = await wait_job(client, "work-queue", has_condition("Complete"))
    assert done["status"]["succeeded"] >= 1


async def test_backoff_limit_exceeded_fails_the_job(client: Client, jobs: JobController) -> None:
    await client.create(JOBS, job("flaky", backoffLimit=1, annotations={FAIL: "true"}), "default")
    done = await wait_job(client, "flaky", has_condition("Failed"))
    assert done["status"]["failed"] == 2
    target = condition(done, "FailureTarget")
    assert target is not None and target["reason"] == "BackoffLimitExceeded"
    failed = condition(done, "Failed")
    assert (failed["reason"], failed["message"]) == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    ev = await wait_events(client, "flaky", "BackoffLimitExceeded")
    assert ev[0]["type"] == "Warning" and ev[0]["message"] == "Job has reached the specified backoff limit"
    assert "completionTime" not in done["status"]


async def test_active_deadline_seconds_fails_the_job_and_terminates_pods(
    client: Client, jobs: JobController
) -> None:
    await client.create(
        JOBS, job("slow", activeDeadlineSeconds=1, annotations={COMPLETE_AFTER: "1h"}), "default"
    )
    done = await wait_job(client, "slow", has_condition("Failed"))
    failed = condition(done, "Failed")
    assert (failed["reason"], failed["message"]) == (
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
    )
    assert done["status"]["active"] == 0 and done["status"]["failed"] == 1
    await wait_for_list(
        client, PODS, "default", lambda items: not items, label_selector="batch.kubernetes.io/job-name=slow"
    )


async def test_pod_failure_policy_fail_job_on_exit_code(client: Client, jobs: JobController) -> None:
    policy = {
        "rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1]}}
        ]
    }
    await client.create(
        JOBS, job("pfp", backoffLimit=6, podFailurePolicy=policy, annotations={FAIL: "true"}), "default"
    )
    done = await wait_job(client, "pfp", has_condition("Failed"))
    failed = condition(done, "Failed")
    assert failed["reason"] == "PodFailurePolicy"
    assert failed["message"].startswith("Container main for pod default/pfp-")
    assert failed["message"].endswith("failed with exit code 1 matching FailJob rule at index 0")
    assert done["status"]["failed"] == 1


async def test_pod_failure_policy_ignore_does_not_count_towards_backoff_limit(
    client: Client, jobs: JobController
) -> None:
    policy = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]}
    await client.create(
        JOBS, job("ign", backoffLimit=0, podFailurePolicy=policy, annotations={FAIL: "true"}), "default"
    )
    # every pod fails with exit 1 and is ignored: the Job keeps replacing it and never fails
    await wait_for_list(
        client,
        PODS,
        "default",
        lambda items: len(items) >= 3,
        label_selector="batch.kubernetes.io/job-name=ign",
    )
    cur = await client.get(JOBS, "ign", "default")
    assert cur["status"].get("failed", 0) == 0 and condition(cur, "Failed") is None


async def test_indexed_job_gives_each_pod_its_completion_index_and_hostname(
    client: Client, jobs: JobController
) -> None:
    await client.create(JOBS, job("idx", completions=3, parallelism=3, completionMode="Indexed"), "default")
    done = await wait_job(client, "idx", has_condition("Complete"))
    assert done["status"]["completedIndexes"] == "0-2"
    pods = sorted(
        await job_pods(client, "idx"), key=lambda p: p["metadata"]["annotations"][JOB_COMPLETION_INDEX]
    )
    assert [p["metadata"]["annotations"][JOB_COMPLETION_INDEX] for p in pods] == ["0", "1", "2"]
    assert [p["metadata"]["labels"][JOB_COMPLETION_INDEX] for p in pods] == ["0", "1", "2"]
    assert [p["spec"]["hostname"] for p in pods] == ["idx-0", "idx-1", "idx-2"]
    assert all(p["metadata"]["generateName"] == f"idx-{i}-" for i, p in enumerate(pods))
    env = pods[0]["spec"]["containers"][0]["env"]
    assert env == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": f"metadata.annotations['{JOB_COMPLETION_INDEX}']",
                }
            },
        }
    ]


async def test_backoff_limit_per_index_fails_only_that_index(client: Client, jobs: JobController) -> None:
    # index 1 always fails (its pod template is the same, so make every pod fail) and maxFailedIndexes 0
    await client.create(
        JOBS,
        job(
            "perindex",
            completions=2,
            parallelism=2,
            completionMode="Indexed",
            backoffLimitPerIndex=1,
            maxFailedIndexes=0,
            annotations={FAIL: "true"},
        ),
        "default",
    )
    done = await wait_job(client, "perindex", has_condition("Failed"))
    failed = condition(done, "Failed")
    assert (failed["reason"], failed["message"]) == (
        "MaxFailedIndexesExceeded",
        "Job has exceeded the specified maximal number of failed indexes",
    )
    assert done["status"]["failedIndexes"] in ("0", "1", "0,1")


async def test_success_policy_succeeded_indexes_completes_the_job(
    client: Client, jobs: JobController
) -> None:
    body = job(
        "leader",
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0"}]},
        annotations={COMPLETE_AFTER: "1h"},
    )
    await client.create(JOBS, body, "default")
    await wait_job(client, "leader", lambda j: (j or {}).get("status", {}).get("active") == 3)
    leader = next(
        p
        for p in await job_pods(client, "leader")
        if p["metadata"]["annotations"][JOB_COMPLETION_INDEX] == "0"
    )
    await set_pod_status(client, leader["metadata"]["name"], phase="Succeeded", ready=False)
    done = await wait_job(client, "leader", has_condition("Complete"))
    met = condition(done, "SuccessCriteriaMet")
    assert (met["reason"], met["message"]) == ("SuccessPolicy", "Matched rules at index 0")
    assert condition(done, "Complete")["reason"] == "SuccessPolicy"
    assert done["status"]["succeeded"] == 1 and done["status"]["completedIndexes"] == "0"
    assert done["status"]["active"] == 0 and done["status"]["failed"] == 0, (
        "the other indexes were terminated, not failed"
    )


async def test_suspended_job_creates_no_pods_until_resumed(client: Client, jobs: JobController) -> None:
    await client.create(JOBS, job("later", suspend=True), "default")
    cur = await wait_job(client, "later", has_condition("Suspended"))
    susp = condition(cur, "Suspended")
    assert (susp["reason"], susp["message"]) == ("JobSuspended", "Job suspended")
    assert "startTime" not in cur["status"] and await job_pods(client, "later") == []
    await client.patch(JOBS, "later", {"spec": {"suspend": False}}, "default")
    done = await wait_job(client, "later", has_condition("Complete"))
    resumed = condition(done, "Suspended")
    assert (resumed["status"], resumed["reason"], resumed["message"]) == (
        "False",
        "JobResumed",
        "Job resumed",
    )
    assert (await wait_events(client, "later", "Resumed"))[0]["message"] == "Job resumed"


async def test_suspending_a_running_job_deletes_its_active_pods(client: Client, jobs: JobController) -> None:
    await client.create(
        JOBS, job("pause", parallelism=2, completions=2, annotations={COMPLETE_AFTER: "1h"}), "default"
    )
    await wait_job(client, "pause", lambda j: (j or {}).get("status", {}).get("active") == 2)
    await client.patch(JOBS, "pause", {"spec": {"suspend": True}}, "default")
    cur = await wait_job(client, "pause", has_condition("Suspended"))
    assert cur["status"].get("failed", 0) == 0, "pods deleted by a suspend are not failures"
    await wait_for_list(
        client, PODS, "default", lambda items: not items, label_selector="batch.kubernetes.io/job-name=pause"
    )
    assert (await wait_events(client, "pause", "SuccessfulDelete"))[0]["message"].startswith(
        "Deleted pod: pause-"
    )


async def test_scaling_parallelism_down_deletes_extra_pods(client: Client, jobs: JobController) -> None:
    await client.create(
        JOBS, job("scale", parallelism=3, completions=6, annotations={COMPLETE_AFTER: "1h"}), "default"
    )
    await wait_job(client, "scale", lambda j: (j or {}).get("status", {}).get("active") == 3)
    await client.patch(JOBS, "scale", {"spec": {"parallelism": 1}}, "default")
    await wait_job(client, "scale", lambda j: (j or {}).get("status", {}).get("active") == 1)


async def test_orphaned_pod_loses_tracking_finalizer_when_job_is_deleted(
    client: Client, jobs: JobController
) -> None:
    await client.create(JOBS, job("gone", annotations={COMPLETE_AFTER: "1h"}), "default")
    await wait_job(client, "gone", lambda j: (j or {}).get("status", {}).get("active") == 1)
    await client.delete(JOBS, "gone", "default", propagation_policy="Orphan")
    await wait_for_list(
        client,
        PODS,
        "default",
        lambda items: (
            bool(items)
            and all(JOB_TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or []) for p in items)
        ),
        label_selector="batch.kubernetes.io/job-name=gone",
    )


async def test_manual_selector_job_adopts_a_matching_orphan_pod(client: Client, jobs: JobController) -> None:
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stray", "labels": {"app": "adopt"}, "annotations": {COMPLETE_AFTER: "1h"}},
        "spec": {
            "nodeName": "node-1",
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }
    await client.create(PODS, orphan, "default")
    body = job(
        "adopter",
        parallelism=1,
        completions=1,
        manualSelector=True,
        selector={"matchLabels": {"app": "adopt"}},
    )
    body["spec"]["template"]["metadata"] = {"labels": {"app": "adopt"}, "annotations": {COMPLETE_AFTER: "1h"}}
    await client.create(JOBS, body, "default")
    cur = await wait_job(client, "adopter", lambda j: (j or {}).get("status", {}).get("active") == 1)
    pod = await client.get(PODS, "stray", "default")
    ref = pod["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"]) == ("Job", "adopter", cur["metadata"]["uid"])
    assert len((await client.list(PODS, "default", label_selector="app=adopt"))["items"]) == 1, (
        "no second pod"
    )


async def test_fail_index_action_fails_the_index_at_once_and_then_the_job(
    client: Client, jobs: JobController
) -> None:
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]}
    body = job(
        "failidx",
        completions=2,
        parallelism=2,
        completionMode="Indexed",
        backoffLimitPerIndex=5,
        podFailurePolicy=policy,
        annotations={FAIL: "true"},
    )
    await client.create(JOBS, body, "default")
    done = await wait_job(client, "failidx", has_condition("Failed"))
    failed = condition(done, "Failed")
    assert (failed["reason"], failed["message"]) == ("FailedIndexes", "Job has failed indexes")
    assert done["status"]["failedIndexes"] == "0,1" and done["status"]["failed"] == 2
    assert len(await job_pods(client, "failidx")) == 2, (
        "a failed index is not retried despite backoffLimitPerIndex"
    )


async def test_restarted_controller_finishes_the_job_without_counting_a_pod_twice(
    cp: ControlPlane, client: Client
) -> None:
    await start_cluster(cp)
    await client.create(JOBS, job("resume", completions=6, parallelism=2), "default")
    await wait_job(client, "resume", lambda j: ((j or {}).get("status") or {}).get("succeeded", 0) >= 2)
    await cp.stop_component("job-controller")
    await cp.start_component("job-controller")
    done = await wait_job(client, "resume", has_condition("Complete"))
    assert done["status"]["succeeded"] == 6
    assert len(await job_pods(client, "resume")) == 6, "exactly one pod per completion"
