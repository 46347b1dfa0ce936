"""CronJob controller (kube's ``pkg/controller/cronjob/cronjob_controllerv2.go``).

Informers: CronJobs and Jobs; a Job event enqueues its controlling CronJob. ``sync`` follows
``syncCronJob``:

1. reconcile ``status.active`` with the Jobs the CronJob controls: finished ones leave the list
   (``SawCompletedJob``, ``lastSuccessfulTime``), missing ones too (``MissingJob``), running ones
   the list lacks are added;
2. nothing more while the CronJob is being deleted or suspended; a bad time zone or schedule is
   reported (``UnknownTimeZone``, ``UnparseableSchedule``) and not retried;
3. the most recent missed schedule time at or before *now* (from ``lastScheduleTime`` or the
   creation time, not earlier than ``startingDeadlineSeconds`` ago) — too late is ``MissSchedule``;
4. ``concurrencyPolicy``: ``Forbid`` skips while a Job is active (``JobAlreadyActive``),
   ``Replace`` deletes the active Jobs first;
5. the Job ``<cronjob>-<scheduled minutes since the epoch>`` is created from ``jobTemplate``
   (annotation ``batch.kubernetes.io/cronjob-scheduled-timestamp``, controller ownerReference),
   ``SuccessfulCreate``; ``status.active`` and ``lastScheduleTime`` are written;
6. finished Jobs beyond ``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit`` are deleted,
   oldest first (``SuccessfulDelete``);
7. the CronJob is re-synced at its next schedule time.

Time is the injected clock: the next-schedule wake-up is a deadline on that clock (a test steps a
:class:`~apiserver.meta.FakeClock` and pokes :attr:`CronJobController.timers`).
"""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime
from email.utils import format_datetime

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.batch import cron
from apiserver.batch.labels import CRONJOB_SCHEDULED_TIMESTAMP
from apiserver.client.events import NORMAL, WARNING, object_reference
from apiserver.client.informer import CONTROLLER_UID, Informer, controller_uid_index
from apiserver.client.interface import CRONJOBS, JOBS
from apiserver.meta import (
    controller_ref,
    is_being_deleted,
    key_of,
    name_of,
    namespace_of,
    new_controller_ref,
    parse_time,
    rfc3339,
    split_key,
    uid_of,
)
from controllers.timed import TimedController

log = logging.getLogger("gangplane.cronjob")

NAME = "cronjob-controller"
#: more missed start times than this is reported (``TooManyMissedTimes``)
MAX_MISSED = 100


def _spec(cj: Obj) -> Obj:
    return cj.get("spec") or {}


def _finished(job: Obj) -> tuple[bool, str]:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return True, str(c["type"])
    return False, ""


def job_name(cj: Obj, scheduled: float) -> str:
    """``getJobName``: ``<cronjob>-<minutes since the epoch>``."""
    return f"{name_of(cj)}-{int(scheduled // 60)}"


def _rfc1123z(t: datetime) -> str:
    return format_datetime(t.astimezone(UTC)).replace("-0000", "+0000")


def most_recent_schedule_time(
    cj: Obj, now: datetime, schedule: cron.Schedule, include_starting_deadline: bool = True
) -> tuple[datetime | None, int]:
    """``mostRecentScheduleTime``: the latest schedule time at or before ``now`` and how many were missed."""
    status = cj.get("status") or {}
    earliest_ts = parse_time(status.get("lastScheduleTime")) or parse_time(
        (cj.get("metadata") or {}).get("creationTimestamp")
    )
    earliest = datetime.fromtimestamp(earliest_ts or now.timestamp(), tz=UTC)
    sds = _spec(cj).get("startingDeadlineSeconds")
    if include_starting_deadline and isinstance(sds, int):
        deadline = datetime.fromtimestamp(now.timestamp() - sds, tz=UTC)
        if deadline > earliest:
            earliest = deadline
    t = schedule.next_after(earliest)
    if t > now:
        return None, 0
    missed = 0
    latest = t
    while True:
        nxt = schedule.next_after(latest)
        if nxt > now:
            break
        latest = nxt
        missed += 1
        if missed > 100_000:  # a runaway schedule (every minute for years): kube also stops counting
            break
    return latest, missed + 1


class CronJobController(TimedController):
    name = NAME
    workers = 5  # kube's --concurrent-cron-job-syncs

    def setup(self) -> None:
        self.cronjobs: Informer = self.informers.informer(CRONJOBS)
        self.jobs: Informer = self.informers.informer(JOBS)
        self.jobs.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.cronjobs.add_event_handler(
            self._on_cronjob, lambda old, new: self._on_cronjob(new), self._on_cronjob_delete
        )
        self.jobs.add_event_handler(self._on_job, lambda old, new: self._on_job(new), self._on_job)

    def _on_cronjob(self, cj: Obj) -> None:
        self.enqueue(key_of(cj))

    def _on_cronjob_delete(self, cj: Obj) -> None:
        self.timers.cancel(key_of(cj))

    def _on_job(self, job: Obj) -> None:
        ref = controller_ref(job)
        if (
            ref is None
            or ref.get("kind") != "CronJob"
            or not str(ref.get("apiVersion", "")).startswith("batch/")
        ):
            return
        cj = self.cronjobs.get_by_name(namespace_of(job), str(ref.get("name") or ""))
        if cj is not None and uid_of(cj) == ref.get("uid"):
            self.enqueue(key_of(cj))

    async def on_synced(self) -> None:
        for key in self.cronjobs.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)

    def requeue_at(self, key: str, when: datetime, now: datetime) -> None:
        """Sync ``key`` again once the injected clock reaches ``when`` (kube adds 100ms of slack; a
        wake-up a hair early finds no due time and simply re-arms for the same instant)."""
        self.timers.schedule(key, self.clock.monotonic() + max((when - now).total_seconds(), 0.0))

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        ns, name = split_key(key)
        cj = self.cronjobs.get_by_name(ns, name)
        if cj is None:
            return
        jobs = [j for j in self.jobs.by_index(CONTROLLER_UID, uid_of(cj)) if namespace_of(j) == ns]
        now = datetime.fromtimestamp(self.clock.now(), tz=UTC)
        status = copy.deepcopy(cj.get("status") or {})
        self._reconcile_active(cj, jobs, status)
        if not is_being_deleted(cj):
            await self._schedule(cj, jobs, status, now)
            await self._cleanup_finished(cj, jobs, status)
        if status != (cj.get("status") or {}):
            new = copy.deepcopy(cj)
            new["status"] = status
            await self.client.update_status(CRONJOBS, new, ns)

    def _reconcile_active(self, cj: Obj, jobs: list[Obj], status: Obj) -> None:
        active = list(status.get("active") or [])
        by_uid = {uid_of(j): j for j in jobs}
        listed = {r.get("uid") for r in active}
        for job in jobs:
            done, ctype = _finished(job)
            if not done and uid_of(job) not in listed and not is_being_deleted(job):
                active.append(_job_ref(job))
        kept = []
        for ref in active:
            job = by_uid.get(ref.get("uid"))
            if job is None:
                self.recorder.event(
                    cj, NORMAL, "MissingJob", f"Active job went missing: {ref.get('name', '')}"
                )
                continue
            done, ctype = _finished(job)
            if done:
                self.recorder.event(
                    cj, NORMAL, "SawCompletedJob", f"Saw completed job: {name_of(job)}, condition: {ctype}"
                )
                if ctype == "Complete":
                    finished = (job.get("status") or {}).get("completionTime")
                    if finished and (
                        not status.get("lastSuccessfulTime")
                        or parse_time(finished) > parse_time(status["lastSuccessfulTime"])
                    ):
                        status["lastSuccessfulTime"] = finished
                continue
            kept.append(ref)
        if kept:
            status["active"] = kept
        else:
            status.pop("active", None)

    async def _schedule(self, cj: Obj, jobs: list[Obj], status: Obj, now: datetime) -> None:
        spec = _spec(cj)
        key = key_of(cj)
        tz = spec.get("timeZone")
        if tz is not None:
            try:
                cron.load_location(tz)
            except cron.CronError:
                self.recorder.event(
                    cj, WARNING, "UnknownTimeZone", f"invalid timeZone: {tz!r}: unknown time zone {tz}"
                )
                return
        if spec.get("suspend") is True:
            return
        try:
            schedule = cron.parse_standard(cron.with_time_zone(str(spec.get("schedule") or ""), tz))
        except cron.CronError as e:
            self.recorder.event(
                cj, WARNING, "UnparseableSchedule", f"unparseable schedule: {spec.get('schedule')!r} : {e}"
            )
            return
        view = {**cj, "status": status}
        scheduled, missed = most_recent_schedule_time(view, now, schedule)
        if scheduled is None:
            self.requeue_at(key, schedule.next_after(now), now)
            return
        if missed > MAX_MISSED:
            self.recorder.event(
                cj,
                WARNING,
                "TooManyMissedTimes",
                f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        sds = spec.get("startingDeadlineSeconds")
        if isinstance(sds, int) and scheduled.timestamp() + sds < now.timestamp():
            self.recorder.event(
                cj, WARNING, "MissSchedule", f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}"
            )
            self.requeue_at(key, schedule.next_after(now), now)
            return
        name = job_name(cj, scheduled.timestamp())
        if any(r.get("name") == name for r in status.get("active") or []) or any(
            name_of(j) == name for j in jobs
        ):
            self.requeue_at(key, schedule.next_after(now), now)
            return
        policy = spec.get("concurrencyPolicy") or "Allow"
        active = list(status.get("active") or [])
        if policy == "Forbid" and active:
            self.recorder.event(
                cj,
                NORMAL,
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            self.requeue_at(key, schedule.next_after(now), now)
            return
        if policy == "Replace":
            for ref in active:
                await self._delete_job(cj, str(ref.get("name") or ""))
            status.pop("active", None)
        job = self._job_from_template(cj, name, scheduled)
        try:
            created = await self.client.create(JOBS, job, namespace_of(cj))
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                self.requeue_at(key, schedule.next_after(now), now)
                return
            self.recorder.event(cj, WARNING, "FailedCreate", f"Error creating job: {e.message}")
            raise
        self.recorder.event(cj, NORMAL, "SuccessfulCreate", f"Created job {name_of(created)}")
        status.setdefault("active", []).append(_job_ref(created))
        status["lastScheduleTime"] = rfc3339(scheduled.timestamp())
        self.requeue_at(key, schedule.next_after(now), now)

    def _job_from_template(self, cj: Obj, name: str, scheduled: datetime) -> Obj:
        """``getJobFromTemplate2``: the template's metadata and spec, owned by the CronJob."""
        jt = copy.deepcopy(_spec(cj).get("jobTemplate") or {})
        md = jt.get("metadata") or {}
        tz = _spec(cj).get("timeZone")
        local = scheduled.astimezone(cron.load_location(tz)) if tz else scheduled
        annotations = dict(md.get("annotations") or {})
        annotations[CRONJOB_SCHEDULED_TIMESTAMP] = local.isoformat().replace("+00:00", "Z")
        meta: Obj = {
            "name": name,
            "namespace": namespace_of(cj),
            "labels": dict(md.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [new_controller_ref(cj, "batch/v1", "CronJob")],
        }
        if not meta["labels"]:
            del meta["labels"]
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": jt.get("spec") or {}}

    async def _delete_job(self, cj: Obj, name: str) -> None:
        try:
            await self.client.delete(JOBS, name, namespace_of(cj), propagation_policy="Background")
        except errors.StatusError as e:
            if e.code == 404:
                return
            self.recorder.event(cj, WARNING, "FailedDelete", f"Deleted job: {e.message}")
            raise
        self.recorder.event(cj, NORMAL, "SuccessfulDelete", f"Deleted job {name}")

    async def _cleanup_finished(self, cj: Obj, jobs: list[Obj], status: Obj) -> None:
        """``cleanupFinishedJobs``: keep the newest N successful and M failed Jobs."""
        spec = _spec(cj)
        succeeded, failed = [], []
        for job in jobs:
            done, ctype = _finished(job)
            if done and not is_being_deleted(job):
                (succeeded if ctype == "Complete" else failed).append(job)
        for group, limit in (
            (succeeded, spec.get("successfulJobsHistoryLimit")),
            (failed, spec.get("failedJobsHistoryLimit")),
        ):
            if not isinstance(limit, int) or len(group) <= limit:
                continue
            group.sort(key=_start_time)
            for job in group[: len(group) - limit]:
                await self._delete_job(cj, name_of(job))


def _start_time(job: Obj) -> float:
    st = job.get("status") or {}
    return (
        parse_time(st.get("startTime"))
        or parse_time((job.get("metadata") or {}).get("creationTimestamp"))
        or 0.0
    )


def _job_ref(job: Obj) -> Obj:
    ref = object_reference(job, "batch/v1", "Job")
    return ref
