"""KEP-5547 hook decisions that need no API: management mode, the new-Job rule, expectations."""

from __future__ import annotations

from apiserver.meta import FakeClock
from controllers.job.expectations import EXPECTATIONS_TIMEOUT, Expectations
from controllers.job.workload import BOTH, NONE, POD_GROUP_ONLY, is_new_job, management_mode

PARENT = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "name": "js",
    "uid": "u",
    "controller": True,
}
CRON = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "uid": "u", "controller": True}


def job(owner: dict | None = None, template_annotation: str = "", scheduling_group: bool = False) -> dict:
    md: dict = {"name": "j", "namespace": "ns"}
    if owner:
        md["ownerReferences"] = [owner]
    if template_annotation:
        md["annotations"] = {"scheduling.k8s.io/group-template-name": template_annotation}
    spec = {"containers": [{"name": "c"}]}
    if scheduling_group:
        spec["schedulingGroup"] = {"podGroupName": "mine"}
    return {"metadata": md, "spec": {"template": {"spec": spec}}}


def test_management_modes() -> None:
    assert management_mode(job()) == BOTH
    assert management_mode(job(CRON)) == BOTH, "CronJob-created Jobs are standalone roots"
    assert management_mode(job(PARENT, "workers")) == POD_GROUP_ONLY
    assert management_mode(job(PARENT)) == NONE, "a parent without the annotation keeps scheduling to itself"
    assert management_mode(job(scheduling_group=True)) == NONE, "bring-your-own PodGroup"


def test_only_a_new_job_gets_objects() -> None:
    assert is_new_job(job(), [])
    assert not is_new_job(job(), [{"metadata": {"name": "p"}}])
    started = job()
    started["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert not is_new_job(started, [])
    failed = job()
    failed["status"] = {"failed": 1}
    assert not is_new_job(failed, [])


def test_expectations_hold_until_observed_or_expired() -> None:
    clock = FakeClock()
    exp = Expectations(clock)
    exp.expect_creations("ns/j", 2)
    assert not exp.satisfied("ns/j")
    exp.creation_observed("ns/j")
    assert not exp.satisfied("ns/j")
    exp.creation_observed("ns/j")
    assert exp.satisfied("ns/j")
    exp.expect_deletions("ns/j", 1)
    assert not exp.satisfied("ns/j")
    clock.step(EXPECTATIONS_TIMEOUT + 1)
    assert exp.satisfied("ns/j")
