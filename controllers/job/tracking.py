"""Finalizer-based pod tracking (kube's ``trackJobStatusAndRemoveFinalizers``).

A Job's pods carry ``batch.kubernetes.io/job-tracking`` until the controller has counted them, so
a pod deleted (or garbage-collected) right after it finished is never lost and never counted
twice. One sync does, in this order:

1. classify the pods (:class:`JobContext`): active, terminating, and the *newly finished* ones —
   terminal, still holding the finalizer, not yet in ``status.uncountedTerminatedPods``; the pod
   failure policy may ignore a failure (never counted), fail its index or fail the Job;
2. write their UIDs to ``uncountedTerminatedPods`` (one status update);
3. remove their finalizers;
4. move them from ``uncountedTerminatedPods`` into ``succeeded``/``failed`` (and
   ``completedIndexes``/``failedIndexes``), and once nothing is uncounted or terminating turn a
   ``SuccessCriteriaMet``/``FailureTarget`` decision into the terminal ``Complete``/``Failed``
   condition, with kube's events (second status update).

A crash between any two steps is harmless: UIDs already in ``uncountedTerminatedPods`` are
finished on the next sync.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.interface import JOBS, Client
from apiserver.meta import namespace_of, resource_version_of, uid_of
from controllers.job import utils as ju
from controllers.job.pod_control import JobPodControl


@dataclass
class JobContext:
    """What one sync knows about a Job's pods (pure: built from the Job and its claimed pods)."""

    job: Obj
    pods: list[Obj]
    active: list[Obj] = field(default_factory=list)
    terminating: list[Obj] = field(default_factory=list)
    new_succeeded: list[Obj] = field(default_factory=list)
    new_failed: list[Obj] = field(default_factory=list)
    ignored: list[Obj] = field(default_factory=list)
    uncounted_succeeded: set[str] = field(default_factory=set)
    uncounted_failed: set[str] = field(default_factory=set)
    succeeded: int = 0
    failed: int = 0
    extra_failed: int = 0
    fail_job_message: str = ""
    succeeded_indexes: set[int] = field(default_factory=set)
    failed_indexes: set[int] = field(default_factory=set)
    index_failures: dict[int, int] = field(default_factory=dict)
    index_last_failure: dict[int, float] = field(default_factory=dict)
    terminating_indexes: set[int] = field(default_factory=set)
    terminating_to_replace: list[Obj] = field(default_factory=list)
    failures_after_last_success: int = 0
    last_failure: float | None = None

    @property
    def per_index(self) -> bool:
        return ju.is_indexed(self.job) and ju.spec_of(self.job).get("backoffLimitPerIndex") is not None

    @property
    def max_failed_indexes_exceeded(self) -> bool:
        mfi = ju.spec_of(self.job).get("maxFailedIndexes")
        return self.per_index and isinstance(mfi, int) and len(self.failed_indexes) > mfi

    @property
    def all_indexes_done_with_failures(self) -> bool:
        c = ju.completions(self.job) or 0
        return (
            self.per_index
            and bool(self.failed_indexes)
            and len(self.succeeded_indexes | self.failed_indexes) >= c
        )

    def note_deleted(self, pods: list[Obj], *, failed: bool = False) -> None:
        """Pods this sync deleted are terminating from now on (and, for a failed Job, count as failed)."""
        gone = {uid_of(p) for p in pods}
        self.active = [p for p in self.active if uid_of(p) not in gone]
        self.terminating.extend(p for p in pods if not ju.is_terminal(p))
        if failed:
            self.extra_failed += len(pods)
            self.failed += len(pods)

    def index_backoff(self, index: int, base: float, now: float) -> float:
        """Seconds until index ``index`` may get a new pod (backoffLimitPerIndex back-off)."""
        failures = self.index_failures.get(index, 0)
        last = self.index_last_failure.get(index)
        if not self.per_index or failures <= 0 or last is None:
            return 0.0
        return max(last + ju.failure_backoff(failures, base) - now, 0.0)


def build_context(job: Obj, pods: list[Obj], removed: set[str] | frozenset[str] = frozenset()) -> JobContext:
    """Classify ``pods`` for one sync (step 1 of the module docstring).

    ``removed`` holds the UIDs of pods whose finalizer this controller already removed (the
    cache may still show it): they were counted and are never counted again.
    """
    status, spec = ju.status_of(job), ju.spec_of(job)
    utp = status.get("uncountedTerminatedPods") or {}
    ctx = JobContext(
        job=job,
        pods=pods,
        uncounted_succeeded=set(utp.get("succeeded") or []),
        uncounted_failed=set(utp.get("failed") or []),
    )
    indexed = ju.is_indexed(job)
    limit = ju.completions(job)
    per_index_limit = spec.get("backoffLimitPerIndex")
    ctx.succeeded_indexes = ju.parse_index_set(status.get("completedIndexes"), limit) if indexed else set()
    ctx.failed_indexes = ju.parse_index_set(status.get("failedIndexes"), limit) if ctx.per_index else set()
    replace_only_failed = (
        spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None
    )
    last_success: float | None = None
    failure_times: list[float] = []
    for pod in pods:
        uid = uid_of(pod)
        idx = ju.valid_index(pod, job) if indexed else None
        if ju.is_active(pod):
            ctx.active.append(pod)
        elif ju.is_terminating(pod):
            ctx.terminating.append(pod)
            if replace_only_failed:
                ctx.terminating_to_replace.append(pod)
                if idx is not None:
                    ctx.terminating_indexes.add(idx)
        failed = ju.is_failed(pod, job)
        match = ju.match_pod_failure_policy(job, pod) if failed else None
        if ju.phase(pod) == "Succeeded":
            t = ju.finish_time(pod)
            if t is not None and (last_success is None or t > last_success):
                last_success = t
        elif failed and match is not None and match.action != "Ignore":
            t = ju.finish_time(pod)
            if t is not None:
                failure_times.append(t)
            if idx is not None:
                count = ju.index_failure_count(pod) + 1
                ctx.index_failures[idx] = max(ctx.index_failures.get(idx, 0), count)
                if t is not None:
                    ctx.index_last_failure[idx] = max(ctx.index_last_failure.get(idx, t), t)
        if uid in ctx.uncounted_succeeded and idx is not None:
            ctx.succeeded_indexes.add(idx)
        if not ju.has_tracking_finalizer(pod) or uid in removed:
            continue
        if ju.phase(pod) == "Succeeded" and uid not in ctx.uncounted_succeeded:
            ctx.new_succeeded.append(pod)
            if idx is not None:
                ctx.succeeded_indexes.add(idx)
        elif failed and uid not in ctx.uncounted_failed and (ju.is_terminal(pod) or not replace_only_failed):
            assert match is not None
            if match.action == "Ignore":
                ctx.ignored.append(pod)
                continue
            ctx.new_failed.append(pod)
            if match.action == "FailJob" and not ctx.fail_job_message:
                ctx.fail_job_message = match.message
            if (
                idx is not None
                and ctx.per_index
                and (
                    match.action == "FailIndex" or ctx.index_failures.get(idx, 0) > int(per_index_limit or 0)
                )
            ):
                ctx.failed_indexes.add(idx)
    ctx.succeeded = int(status.get("succeeded") or 0) + len(ctx.uncounted_succeeded) + len(ctx.new_succeeded)
    ctx.failed = int(status.get("failed") or 0) + len(ctx.uncounted_failed) + len(ctx.new_failed)
    after = [t for t in failure_times if last_success is None or t > last_success]
    ctx.failures_after_last_success = len(after)
    ctx.last_failure = max(after) if after else None
    return ctx


class Tracker:
    """Steps 2-4 of the module docstring: the two status writes and the finalizer removal."""

    def __init__(self, client: Client, recorder: EventRecorder, pod_control: JobPodControl) -> None:
        self.client = client
        self.recorder = recorder
        self.pod_control = pod_control
        #: the Job as our last status write returned it, by UID: a sync that runs before the Job
        #: informer has delivered that write works from it instead of the stale cached copy
        self.last_written: dict[str, Obj] = {}

    def freshest(self, job: Obj) -> Obj:
        """``job`` from the cache, or our own later write of it when the cache lags behind."""
        mine = self.last_written.get(uid_of(job))
        if mine is None:
            return job
        if _rv(mine) > _rv(job):
            return mine
        del self.last_written[uid_of(job)]
        return job

    def context(self, job: Obj, pods: list[Obj]) -> JobContext:
        return build_context(job, pods, self.pod_control.finalizer_removed)

    async def _write(self, job: Obj, status: Obj) -> Obj:
        new = copy.deepcopy(job)
        new["status"] = status
        out = await self.client.update_status(JOBS, new, namespace_of(job))
        self.last_written[uid_of(out)] = out
        return out

    async def flush(self, job: Obj, status: Obj, ctx: JobContext, decision: Obj | None, now: str) -> Obj:
        old_status = ju.status_of(job)
        status["active"] = len(ctx.active)
        status["ready"] = sum(1 for p in ctx.active if ju.is_ready(p))
        status["terminating"] = len(ctx.terminating)
        uncounted_s = ctx.uncounted_succeeded | {uid_of(p) for p in ctx.new_succeeded}
        uncounted_f = ctx.uncounted_failed | {uid_of(p) for p in ctx.new_failed}
        if ctx.new_succeeded or ctx.new_failed:
            status["uncountedTerminatedPods"] = _uncounted(uncounted_s, uncounted_f)
            job = await self._write(job, status)
            status = copy.deepcopy(ju.status_of(job))
        clear = {*uncounted_s, *uncounted_f, *(uid_of(p) for p in ctx.ignored)}
        await self.pod_control.remove_tracking_finalizers(
            job, [p for p in ctx.pods if uid_of(p) in clear and self.pod_control.tracked(p)]
        )
        status["succeeded"] = int(old_status.get("succeeded") or 0) + len(uncounted_s)
        status["failed"] = int(old_status.get("failed") or 0) + len(uncounted_f) + ctx.extra_failed
        if ju.is_indexed(job):
            status["completedIndexes"] = ju.format_index_set(ctx.succeeded_indexes)
            if ctx.per_index:
                status["failedIndexes"] = ju.format_index_set(ctx.failed_indexes)
        status["uncountedTerminatedPods"] = {}
        if decision is not None and not ctx.active and not ctx.terminating:
            self._finish(job, status, decision, now)
        if status != old_status:
            job = await self._write(job, status)
        return job

    def _finish(self, job: Obj, status: Obj, decision: Obj, now: str) -> None:
        """Turn the interim decision into the terminal condition (``enactJobFinished``)."""
        reason, message = str(decision.get("reason") or ""), str(decision.get("message") or "")
        if decision.get("type") == ju.SUCCESS_CRITERIA_MET:
            if ju.ensure_condition(status, ju.new_condition(ju.COMPLETE, "True", reason, message, now)):
                status["completionTime"] = now
                self.recorder.event(job, NORMAL, "Completed", "Job completed")
        elif ju.ensure_condition(status, ju.new_condition(ju.FAILED, "True", reason, message, now)):
            self.recorder.event(job, WARNING, reason, message)


def _rv(obj: Obj) -> int:
    try:
        return int(resource_version_of(obj) or 0)
    except ValueError:
        return 0


def _uncounted(succeeded: set[str], failed: set[str]) -> Obj:
    out: Obj = {}
    if succeeded:
        out["succeeded"] = sorted(succeeded)
    if failed:
        out["failed"] = sorted(failed)
    return out
