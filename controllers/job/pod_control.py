"""The Job controller's writer: pod creation from the template, deletion, finalizer removal, events.

Mirrors kube's ``controller.PodControl`` as the Job controller uses it: every pod is created with a
controller ownerReference to the Job and the ``batch.kubernetes.io/job-tracking`` finalizer,
Indexed pods get ``generateName: <job>-<index>-``, hostname ``<job>-<index>``, the completion
index annotation and label and a ``JOB_COMPLETION_INDEX`` environment variable; events are kube's
``SuccessfulCreate``/``FailedCreate``/``SuccessfulDelete``/``FailedDelete``. A pod is deleted only
after its tracking finalizer is removed, so a pod the controller removes on purpose (suspend,
scale-down, a decided Job) is never counted as finished.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Sequence

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.batch.labels import JOB_COMPLETION_INDEX, JOB_INDEX_FAILURE_COUNT, JOB_TRACKING_FINALIZER
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.interface import PODS, Client, requests_per_step
from apiserver.meta import key_of, name_of, namespace_of, new_controller_ref, uid_of
from controllers import slowstart
from controllers.job import utils as ju
from controllers.job.expectations import Expectations

log = logging.getLogger("gangplane.job")

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
#: kube creates pods in slow-start batches of 1, 2, 4, ... (``controller.SlowStartInitialBatchSize``)
SLOW_START_INITIAL_BATCH = 1


def _err_text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def pod_from_template(job: Obj, index: int | None, failure_count: int | None = None) -> Obj:
    """The pod the Job wants for ``index`` (None for NonIndexed), before any scheduling decoration."""
    template = copy.deepcopy(ju.spec_of(job).get("template") or {})
    tmd = template.get("metadata") or {}
    labels = dict(tmd.get("labels") or {})
    annotations = dict(tmd.get("annotations") or {})
    spec = template.get("spec") or {}
    name = name_of(job)
    md: Obj = {
        "generateName": f"{name}-" if index is None else f"{name}-{index}-",
        "namespace": namespace_of(job),
        "labels": labels,
        "annotations": annotations,
        "finalizers": [*(tmd.get("finalizers") or []), JOB_TRACKING_FINALIZER],
        "ownerReferences": [new_controller_ref(job, "batch/v1", "Job")],
    }
    if index is not None:
        annotations[JOB_COMPLETION_INDEX] = str(index)
        labels[JOB_COMPLETION_INDEX] = str(index)
        if failure_count is not None and ju.spec_of(job).get("backoffLimitPerIndex") is not None:
            annotations[JOB_INDEX_FAILURE_COUNT] = str(failure_count)
        if not spec.get("hostname"):
            spec["hostname"] = f"{name}-{index}"
        env_var = {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": f"metadata.annotations['{JOB_COMPLETION_INDEX}']",
                }
            },
        }
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or []:
                env = c.setdefault("env", [])
                if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in env):
                    env.append(copy.deepcopy(env_var))
    if not md["annotations"]:
        del md["annotations"]
    if not md["labels"]:
        del md["labels"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


class JobPodControl:
    def __init__(self, client: Client, recorder: EventRecorder, expectations: Expectations) -> None:
        self.client = client
        self.recorder = recorder
        self.expectations = expectations
        #: ``finalizerExpectations``: pods whose tracking finalizer this controller removed, by UID,
        #: until the pod cache shows it gone; such a pod is never counted again from a stale cache
        self.finalizer_removed: set[str] = set()

    async def create_pods(
        self,
        job: Obj,
        indexes: Sequence[int | None],
        decorate: Callable[[Obj], None] | None,
        failure_counts: dict[int, int] | None = None,
    ) -> int:
        """Create one pod per entry, in slow-start batches; stop at the first failing batch."""
        todo = list(indexes)
        key = key_of(job)
        counts = failure_counts or {}
        self.expectations.expect_creations(key, len(todo))

        def create(k: int) -> Awaitable[Obj]:
            i = todo[k]
            return self._create(job, i, decorate, counts.get(i) if i is not None else None)

        created, err = await slowstart.slow_start_batch(
            len(todo), create, initial=SLOW_START_INITIAL_BATCH, in_place=requests_per_step(self.client)
        )
        if err is not None:
            # neither the failed creations nor the skipped ones will ever be observed
            for _ in range(len(todo) - created):
                self.expectations.creation_observed(key)
            raise err
        return created

    async def _create(
        self, job: Obj, index: int | None, decorate: Callable[[Obj], None] | None, failures: int | None
    ) -> Obj:
        pod = pod_from_template(job, index, failures if failures is not None else 0)
        if decorate is not None:
            decorate(pod)
        try:
            out = await self.client.create(PODS, pod, namespace_of(job), read_only=True)
        except errors.StatusError as e:
            self.recorder.event(job, WARNING, "FailedCreate", f"Error creating: {_err_text(e)}")
            raise
        self.recorder.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {name_of(out)}")
        return out

    async def delete_pods(self, job: Obj, pods: Sequence[Obj]) -> list[Obj]:
        """Remove the tracking finalizer, then delete; returns the pods that are gone or going."""
        done: list[Obj] = []
        first: BaseException | None = None
        for pod in pods:
            try:
                if ju.has_tracking_finalizer(pod) and uid_of(pod) not in self.finalizer_removed:
                    await self._remove_finalizer(pod)
                await self.client.delete(
                    PODS, name_of(pod), namespace_of(pod), preconditions={"uid": uid_of(pod)}
                )
            except errors.StatusError as e:
                if e.code == 404:
                    done.append(pod)
                    continue
                self.recorder.event(job, WARNING, "FailedDelete", f"Error deleting: {_err_text(e)}")
                first = first or e
                continue
            self.recorder.event(job, NORMAL, "SuccessfulDelete", f"Deleted pod: {name_of(pod)}")
            done.append(pod)
        if first is not None:
            raise first
        return done

    async def remove_tracking_finalizers(self, job: Obj | None, pods: Sequence[Obj]) -> None:
        first: BaseException | None = None
        for pod in pods:
            if uid_of(pod) in self.finalizer_removed:
                continue
            try:
                await self._remove_finalizer(pod)
            except errors.StatusError as e:
                if e.code != 404:
                    first = first or e
        if first is not None:
            raise first

    async def _remove_finalizer(self, pod: Obj) -> None:
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}
        await self.client.patch(PODS, name_of(pod), patch, namespace_of(pod), patch_type=STRATEGIC_MERGE)
        self.finalizer_removed.add(uid_of(pod))

    def finalizer_observed_gone(self, pod: Obj) -> None:
        """The cache shows ``pod`` without the finalizer (or gone): stop remembering it."""
        self.finalizer_removed.discard(uid_of(pod))

    def tracked(self, pod: Obj) -> bool:
        """The pod still counts as tracked: it has the finalizer and we have not removed it."""
        return ju.has_tracking_finalizer(pod) and uid_of(pod) not in self.finalizer_removed
