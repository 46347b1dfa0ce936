"""Job controller (kube's ``pkg/controller/job/job_controller.go``): informers, handlers, ``sync(key)``.

Informers: Jobs and Pods. Pod handlers only enqueue the owning Job (controller ownerReference,
UID-checked) or, for an orphan, every Job whose selector matches it; a pod that still carries the
``batch.kubernetes.io/job-tracking`` finalizer but whose Job is gone is queued as an *orphan key*
so its finalizer is removed. Time-driven re-syncs (``activeDeadlineSeconds``, the pod-failure
back-off) go through a deadline heap on the injected clock, so a test steps a
:class:`~apiserver.meta.FakeClock` instead of sleeping.

``sync`` follows ``syncJob``:

1. the Job from the cache; gone, finished, managed by another controller (``spec.managedBy``) or
   being deleted => only finalizers are cleaned up;
2. its pods, claimed by selector (adopt / release);
3. newly finished pods (terminal, still holding the tracking finalizer) are classified — the
   pod failure policy may ignore a failure, fail the index or fail the Job;
4. the *finishing* decision: ``FailureTarget`` (pod failure policy, back-off limit, deadline,
   failed indexes) or ``SuccessCriteriaMet`` (success policy, completions reached); once either is
   set, active pods are deleted and no pod is created;
5. otherwise suspend (delete pods, ``Suspended=True``) or manage pods towards parallelism;
6. status is tracked with finalizers (:mod:`controllers.job.tracking`): finished pods go to
   ``uncountedTerminatedPods``, their finalizers are removed, then they are counted; the terminal
   ``Complete``/``Failed`` condition is added only when nothing is left uncounted or terminating.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.informer import (
    CONTROLLER_UID,
    Informer,
    InformerFactory,
    controller_uid_index,
    index_reads,
)
from apiserver.client.interface import JOBS, PODS, Client
from apiserver.meta import (
    Clock,
    controller_ref,
    is_being_deleted,
    key_of,
    labels_of,
    namespace_of,
    parse_time,
    rfc3339,
    split_key,
    uid_of,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from controllers.job import utils as ju
from controllers.job.expectations import Expectations
from controllers.job.hooks import NoopJobSchedulingHook, PodDecorator
from controllers.job.pod_control import JobPodControl
from controllers.job.tracking import Tracker
from controllers.metrics import ControllerMetrics
from controllers.ownerlookup import owners_selecting, resolve_controller_ref
from controllers.refmanager import ControllerRefManager, recheck_deletion_timestamp
from controllers.timed import TimedController

log = logging.getLogger("gangplane.job")

NAME = "job-controller"
API_VERSION = "batch/v1"
KIND = "Job"
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"
#: queue keys of orphan pods whose tracking finalizer must go: ("orphan", "ns/name")
ORPHAN = "orphan"
#: pod index: the namespace of every pod without a controller (adoption candidates)
UNOWNED = "unowned-in-namespace"


@index_reads("metadata.ownerReferences")
def unowned_index(pod: Obj) -> list[str]:
    return [] if controller_ref(pod) is not None else [namespace_of(pod)]


def _selector(job: Obj) -> LabelSelector | None:
    try:
        return label_selector_from_dict(ju.spec_of(job).get("selector"))
    except ValueError:
        return None


class JobController(TimedController):
    name = NAME
    workers = 5  # kube's --concurrent-job-syncs

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
        pod_failure_backoff: float = ju.DEFAULT_POD_FAILURE_BACKOFF,
        scheduling_hook: Any = None,
    ) -> None:
        #: base of the exponential delay before a failed pod is replaced (kube: 10s, max 10m)
        self.pod_failure_backoff = pod_failure_backoff
        self.scheduling_hook = scheduling_hook or NoopJobSchedulingHook()
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.jobs: Informer = self.informers.informer(JOBS)
        self.pods: Informer = self.informers.informer(PODS)
        self.pods.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.pods.add_indexer(UNOWNED, unowned_index)
        self.jobs.add_event_handler(self._on_job, self._update_job, self._delete_job)
        self.pods.add_event_handler(self._add_pod, self._update_pod, self._delete_pod)
        self.expectations = Expectations(self.clock)
        self.pod_control = JobPodControl(self.client, self.recorder, self.expectations)
        self.tracker = Tracker(self.client, self.recorder, self.pod_control)
        self.scheduling_hook.attach(self)

    def enqueue_at(self, key: Any, seconds_from_now: float) -> None:
        """Sync ``key`` again once the injected clock has advanced ``seconds_from_now``."""
        self.timers.schedule(key, self.clock.monotonic() + max(seconds_from_now, 0.0))

    def _on_job(self, job: Obj) -> None:
        self.enqueue(key_of(job))

    def _update_job(self, old: Obj, new: Obj) -> None:
        self.enqueue(key_of(new))

    def _delete_job(self, job: Obj) -> None:
        self.expectations.forget(key_of(job))
        self.tracker.last_written.pop(uid_of(job), None)
        self.enqueue(key_of(job))
        for pod in self.pods.by_index(CONTROLLER_UID, uid_of(job)):
            if ju.has_tracking_finalizer(pod):
                self.enqueue((ORPHAN, key_of(pod)))

    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        return resolve_controller_ref(self.jobs, namespace, ref, KIND, "batch")

    def _jobs_for_orphan(self, pod: Obj) -> list[Obj]:
        return owners_selecting(self.jobs, pod, _selector)

    def _pod_changed(self, pod: Obj) -> None:
        ref = controller_ref(pod)
        if ref is not None:
            job = self._resolve(namespace_of(pod), ref)
            if job is not None:
                self.enqueue(key_of(job))
            elif ju.has_tracking_finalizer(pod) and ref.get("kind") == KIND:
                self.enqueue((ORPHAN, key_of(pod)))
            return
        if ju.has_tracking_finalizer(pod):
            self.enqueue((ORPHAN, key_of(pod)))
        for job in self._jobs_for_orphan(pod):
            self.enqueue(key_of(job))

    def _add_pod(self, pod: Obj) -> None:
        job = self._resolve(namespace_of(pod), controller_ref(pod))
        if job is not None:
            if is_being_deleted(pod):
                self.expectations.deletion_observed(key_of(job))
            else:
                self.expectations.creation_observed(key_of(job))
        self._pod_changed(pod)

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (cur.get("metadata") or {}).get(
            "resourceVersion"
        ):
            return
        old_ref, cur_ref = controller_ref(old), controller_ref(cur)
        if not ju.has_tracking_finalizer(cur):
            self.pod_control.finalizer_observed_gone(cur)
        if is_being_deleted(cur) and not is_being_deleted(old):
            job = self._resolve(namespace_of(cur), cur_ref)
            if job is not None:
                self.expectations.deletion_observed(key_of(job))
        if old_ref != cur_ref and old_ref is not None:
            job = self._resolve(namespace_of(old), old_ref)
            if job is not None:
                self.enqueue(key_of(job))
        self._pod_changed(cur)

    def _delete_pod(self, pod: Obj) -> None:
        self.pod_control.finalizer_observed_gone(pod)
        job = self._resolve(namespace_of(pod), controller_ref(pod))
        if job is not None:
            if not is_being_deleted(pod):  # a deletion already observed through its deletionTimestamp
                self.expectations.deletion_observed(key_of(job))
            self.enqueue(key_of(job))

    async def on_synced(self) -> None:
        for key in self.jobs.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)
        for pod in self.pods.list():
            if (
                ju.has_tracking_finalizer(pod)
                and self._resolve(namespace_of(pod), controller_ref(pod)) is None
            ):
                self.enqueue((ORPHAN, key_of(pod)))

    # ------------------------------------------------------------------ sync
    async def sync(self, key: Any) -> None:
        if isinstance(key, tuple):
            await self._sync_orphan(key[1])
            return
        namespace, name = split_key(key)
        job = self.jobs.get_by_name(namespace, name)
        if job is None:
            return
        job = self.tracker.freshest(job)
        managed_by = ju.spec_of(job).get("managedBy")
        if managed_by is not None and managed_by != JOB_CONTROLLER_NAME:
            return  # another controller reconciles this Job (JobManagedBy)
        owned = self.pods.by_index(CONTROLLER_UID, uid_of(job))
        if ju.is_finished(job) or is_being_deleted(job):
            await self.pod_control.remove_tracking_finalizers(
                job, [p for p in owned if ju.has_tracking_finalizer(p)]
            )
            return
        selector = _selector(job)
        if selector is None:
            log.warning("job %s has an invalid selector", key)
            return
        pods = await self._claim_pods(job, selector, owned)
        await self._sync_job(job, pods)

    async def _sync_orphan(self, pod_key: str) -> None:
        """``syncOrphanPod``: drop the tracking finalizer of a pod whose Job no longer exists."""
        ns, name = split_key(pod_key)
        pod = self.pods.get_by_name(ns, name)
        if pod is None or not ju.has_tracking_finalizer(pod):
            return
        ref = controller_ref(pod)
        if ref is not None and ref.get("kind") == KIND:
            job = self._resolve(ns, ref)
            if job is not None and not ju.is_finished(job) and not is_being_deleted(job):
                return  # the Job's own sync counts it
            if job is None:
                try:
                    fresh = await self.client.get(JOBS, str(ref.get("name") or ""), ns)
                except errors.StatusError as e:
                    if e.code != 404:
                        raise
                else:
                    if (
                        uid_of(fresh) == ref.get("uid")
                        and not ju.is_finished(fresh)
                        and not is_being_deleted(fresh)
                    ):
                        self.enqueue(key_of(fresh))
                        return
        await self.pod_control.remove_tracking_finalizers(None, [pod])

    async def _claim_pods(self, job: Obj, selector: LabelSelector, owned: list[Obj]) -> list[Obj]:
        orphans = [
            p
            for p in self.pods.by_index(UNOWNED, namespace_of(job))
            if not selector.empty and selector.matches(labels_of(p))
        ]
        manager = ControllerRefManager(
            self.client,
            PODS,
            job,
            selector,
            API_VERSION,
            KIND,
            recheck_deletion_timestamp(self.client, JOBS, job),
        )
        claimed = await manager.claim([*owned, *orphans])
        # pods this Job created without the tracking finalizer are never counted twice: only a
        # finalizer-carrying pod contributes to status (the finalizer is added at creation)
        return claimed

    async def _sync_job(self, job: Obj, pods: list[Obj]) -> None:
        now = self.clock.now()
        now_s = rfc3339(now)
        spec, old_status = ju.spec_of(job), ju.status_of(job)
        status: Obj = copy.deepcopy(old_status)
        ctx = self.tracker.context(job, pods)
        job_key = key_of(job)

        if not status.get("startTime") and not ju.is_suspended(job):
            status["startTime"] = now_s
        start = parse_time(status.get("startTime"))
        ads = spec.get("activeDeadlineSeconds")

        finishing = ju.find_condition(status, ju.FAILURE_TARGET)
        if finishing is not None and finishing.get("status") != "True":
            finishing = None
        success = ju.find_condition(status, ju.SUCCESS_CRITERIA_MET)
        if success is not None and success.get("status") != "True":
            success = None

        new_cond: Obj | None = None
        if finishing is None and success is None:
            if ctx.fail_job_message:
                new_cond = ju.new_condition(
                    ju.FAILURE_TARGET, "True", ju.REASON_POD_FAILURE_POLICY, ctx.fail_job_message, now_s
                )
            elif ctx.failed > int(
                spec.get("backoffLimit") if spec.get("backoffLimit") is not None else 6
            ) or self._past_backoff_on_failure(job, ctx.active):
                new_cond = ju.new_condition(
                    ju.FAILURE_TARGET,
                    "True",
                    ju.REASON_BACKOFF_LIMIT_EXCEEDED,
                    ju.MESSAGE_BACKOFF_LIMIT_EXCEEDED,
                    now_s,
                )
            elif (
                isinstance(ads, int) and start is not None and not ju.is_suspended(job) and now - start >= ads
            ):
                new_cond = ju.new_condition(
                    ju.FAILURE_TARGET,
                    "True",
                    ju.REASON_DEADLINE_EXCEEDED,
                    ju.MESSAGE_DEADLINE_EXCEEDED,
                    now_s,
                )
            elif ctx.max_failed_indexes_exceeded:
                new_cond = ju.new_condition(
                    ju.FAILURE_TARGET,
                    "True",
                    ju.REASON_MAX_FAILED_INDEXES_EXCEEDED,
                    ju.MESSAGE_MAX_FAILED_INDEXES_EXCEEDED,
                    now_s,
                )
            else:
                matched = ju.match_success_policy(job, ctx.succeeded_indexes) if ju.is_indexed(job) else None
                if matched is not None:
                    new_cond = ju.new_condition(
                        ju.SUCCESS_CRITERIA_MET, "True", ju.REASON_SUCCESS_POLICY, matched[1], now_s
                    )
                elif self._complete(job, ctx):
                    new_cond = ju.new_condition(
                        ju.SUCCESS_CRITERIA_MET,
                        "True",
                        ju.REASON_COMPLETIONS_REACHED,
                        ju.MESSAGE_COMPLETIONS_REACHED,
                        now_s,
                    )
                elif ctx.all_indexes_done_with_failures:
                    new_cond = ju.new_condition(
                        ju.FAILURE_TARGET, "True", ju.REASON_FAILED_INDEXES, ju.MESSAGE_FAILED_INDEXES, now_s
                    )
            if new_cond is not None:
                ju.ensure_condition(status, new_cond)
                if new_cond["type"] == ju.FAILURE_TARGET:
                    finishing = new_cond
                else:
                    success = new_cond

        if finishing is not None or success is not None:
            # the Job is decided: no new pods; the rest are terminated
            deleted = await self.pod_control.delete_pods(job, ctx.active)
            ctx.note_deleted(deleted, failed=finishing is not None)
        elif not self.expectations.satisfied(job_key):
            pass  # our last pod creations/deletions are not in the cache yet: only track status
        elif ju.is_suspended(job):
            if ctx.active:
                ctx.note_deleted(await self.pod_control.delete_pods(job, ctx.active))
            if ju.ensure_condition(
                status,
                ju.new_condition(ju.SUSPENDED, "True", ju.REASON_SUSPENDED, ju.MESSAGE_SUSPENDED, now_s),
            ):
                self.recorder.event(job, NORMAL, "Suspended", ju.MESSAGE_SUSPENDED)
        else:
            if ju.condition_true(status, ju.SUSPENDED):
                ju.ensure_condition(
                    status,
                    ju.new_condition(ju.SUSPENDED, "False", ju.REASON_RESUMED, ju.MESSAGE_RESUMED, now_s),
                )
                self.recorder.event(job, NORMAL, "Resumed", ju.MESSAGE_RESUMED)
                status["startTime"] = now_s
                start = now
            decorate: PodDecorator | None = None
            if self.scheduling_hook.wants(job):
                decorate = await self.scheduling_hook.prepare(job, pods, ctx)
            delay = await self._manage(job, ctx, decorate)
            if delay is not None:
                self.enqueue_at(job_key, delay)
            if isinstance(ads, int) and start is not None:
                self.enqueue_at(job_key, start + ads - now)

        await self.tracker.flush(job, status, ctx, finishing or success, now_s)

    # ------------------------------------------------------------------ decisions
    @staticmethod
    def _past_backoff_on_failure(job: Obj, active: list[Obj]) -> bool:
        """``pastBackoffLimitOnFailure``: container restarts count against backoffLimit for OnFailure pods."""
        pod_spec = (ju.spec_of(job).get("template") or {}).get("spec") or {}
        if pod_spec.get("restartPolicy") != "OnFailure":
            return False
        limit = ju.spec_of(job).get("backoffLimit")
        limit = 6 if limit is None else int(limit)
        restarts = sum(ju.restart_count(p) for p in active)
        return restarts > 0 if limit == 0 else restarts >= limit

    @staticmethod
    def _complete(job: Obj, ctx: Any) -> bool:
        """Completions reached; without ``completions``, any success once no pod is active."""
        c = ju.completions(job)
        if ju.is_indexed(job):
            return c is not None and len(ctx.succeeded_indexes) >= c
        if c is None:
            return ctx.succeeded > 0 and not ctx.active
        return ctx.succeeded >= c

    async def _manage(self, job: Obj, ctx: Any, decorate: PodDecorator | None) -> float | None:
        """``manageJob``: create or delete pods towards the wanted active count.

        Returns the seconds until a back-off expires when pods are due but held back.
        """
        parallelism = ju.parallelism(job)
        active = ctx.active
        backoff = self._remaining_backoff(ctx)
        if ju.is_indexed(job):
            return await self._manage_indexed(job, ctx, decorate, parallelism, backoff)
        c = ju.completions(job)
        if c is None:
            want = len(active) if ctx.succeeded > 0 else parallelism
        else:
            want = max(min(parallelism, c - ctx.succeeded), 0)
        if len(active) > want:
            victims = ju.active_pods_for_deletion(active)[: len(active) - want]
            ctx.note_deleted(await self.pod_control.delete_pods(job, victims))
            return None
        missing = want - len(active) - len(ctx.terminating_to_replace)
        if missing <= 0:
            return None
        if backoff > 0:
            return backoff
        await self.pod_control.create_pods(job, [None] * missing, decorate)
        return None

    async def _manage_indexed(
        self, job: Obj, ctx: Any, decorate: PodDecorator | None, parallelism: int, backoff: float
    ) -> float | None:
        c = ju.completions(job) or 0
        active_by_index: dict[int, list[Obj]] = {}
        extra: list[Obj] = []
        for p in ctx.active:
            idx = ju.valid_index(p, job)
            if idx is None or idx in ctx.succeeded_indexes or idx in ctx.failed_indexes:
                extra.append(p)
            else:
                active_by_index.setdefault(idx, []).append(p)
        for pods in active_by_index.values():
            keep = sorted(
                pods,
                key=lambda p: (
                    not ju.is_ready(p),
                    parse_time((p.get("metadata") or {}).get("creationTimestamp")) or 0,
                ),
            )
            extra.extend(keep[1:])
        if extra:
            ctx.note_deleted(await self.pod_control.delete_pods(job, extra))
        running = sorted(active_by_index)
        if len(running) > parallelism:
            victims = [active_by_index[i][0] for i in running[parallelism:]]
            victims = ju.active_pods_for_deletion(victims)[: len(running) - parallelism]
            ctx.note_deleted(await self.pod_control.delete_pods(job, victims))
            return None
        busy = set(active_by_index) | ctx.succeeded_indexes | ctx.failed_indexes | ctx.terminating_indexes
        pending = [i for i in range(c) if i not in busy]
        slots = parallelism - len(running)
        if slots <= 0 or not pending:
            return None
        if backoff > 0 and not ctx.per_index:
            return backoff
        due: list[int] = []
        wait: float | None = None
        for i in pending:
            held = ctx.index_backoff(i, self.pod_failure_backoff, self.clock.now())
            if held > 0:
                wait = held if wait is None else min(wait, held)
                continue
            due.append(i)
            if len(due) == slots:
                break
        if due:
            await self.pod_control.create_pods(job, due, decorate, ctx.index_failures)
        return wait

    def _remaining_backoff(self, ctx: Any) -> float:
        if ctx.failures_after_last_success <= 0 or ctx.last_failure is None:
            return 0.0
        delay = ju.failure_backoff(ctx.failures_after_last_success, self.pod_failure_backoff)
        return max(ctx.last_failure + delay - self.clock.now(), 0.0)

    def warn(self, job: Obj, reason: str, message: str) -> None:
        self.recorder.event(job, WARNING, reason, message)
