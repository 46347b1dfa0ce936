"""Helpers for controller tests and benchmarks: manifests, a fake kubelet, event-driven waits.

Nothing here sleeps: waits are driven by informer events and by the controllers' own progress
signal, each bounded by a timeout.

* :func:`statefulset` builds a valid StatefulSet manifest;
* :func:`set_pod_status` plays the kubelet for one pod (Running/Ready/Failed, Ready since ``at``);
* :class:`PodReadier` plays it for every new pod of a namespace (except the ones told not to);
* :func:`wait_object` waits (list, then watch from the list's resourceVersion) until an object
  satisfies a condition — no update can slip between the read and the watch;
* :func:`observed` resolves once an informer has delivered an object satisfying a predicate — so
  the controllers' handlers have run and enqueued their keys — after which
  ``await controller.wait_idle()`` means "the controller has reacted".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.client.interface import GVR, PODS, Client
from apiserver.client.until import object_until
from apiserver.meta import Clock, key_of, name_of, rfc3339


def statefulset(
    name: str,
    replicas: int = 3,
    *,
    namespace: str = "default",
    policy: str = "OrderedReady",
    image: str = "registry.k8s.io/nginx-slim:0.8",
    claims: Iterable[str] = (),
    claim_size: str = "1Gi",
    retention: tuple[str, str] | None = None,
    **spec: Any,
) -> Obj:
    """A StatefulSet ``name`` selecting ``app=<name>`` with one container; ``spec`` entries override."""
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{"name": "main", "image": image}],
                },
            },
        },
    }
    vcts = [
        {
            "metadata": {"name": c},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": claim_size}}},
        }
        for c in claims
    ]
    if vcts:
        body["spec"]["volumeClaimTemplates"] = vcts
        body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
            {"name": c, "mountPath": f"/data/{c}"} for c in claims
        ]
    if retention is not None:
        body["spec"]["persistentVolumeClaimRetentionPolicy"] = {
            "whenDeleted": retention[0],
            "whenScaled": retention[1],
        }
    body["spec"].update(spec)
    return body


async def set_pod_status(
    client: Client,
    name: str,
    namespace: str = "default",
    *,
    phase: str = "Running",
    ready: bool = True,
    at: float | None = None,
    clock: Clock | None = None,
) -> Obj:
    """Write a kubelet-like status: ``phase`` and a Ready condition (transitioned at ``at``)."""
    for _ in range(5):
        pod = await client.get(PODS, name, namespace)
        when = rfc3339(at if at is not None else (clock or Clock()).now())
        status = dict(pod.get("status") or {})
        status["phase"] = phase
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
        conds.append({"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": when})
        status["conditions"] = conds
        pod["status"] = status
        try:
            return await client.update_status(PODS, pod, namespace)
        except errors.StatusError as e:
            if not errors.is_conflict(e):
                raise
    raise RuntimeError(f"could not update the status of pod {namespace}/{name}")


class PodReadier:
    """A fake kubelet: marks every pod created in ``namespace`` Running and Ready.

    ``hold`` names pods to leave alone (a "never Ready" pod). Use as an async context manager.
    """

    def __init__(
        self, client: Client, namespace: str = "default", hold: Iterable[str] = (), clock: Clock | None = None
    ):
        self.client = client
        self.namespace = namespace
        self.hold = set(hold)
        self.clock = clock
        self.readied = 0
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()

    async def _run(self) -> None:
        lst = await self.client.list(PODS, self.namespace)
        pending = [p for p in lst["items"]]
        self._started.set()
        for pod in pending:
            await self._ready(pod)
        async for ev in self.client.watch(
            PODS, self.namespace, resource_version=lst["metadata"]["resourceVersion"]
        ):
            if ev.type == "ADDED":
                await self._ready(ev.object)

    async def _ready(self, pod: Obj) -> None:
        if name_of(pod) in self.hold or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        if (pod.get("status") or {}).get("phase") == "Running":
            return
        try:
            await set_pod_status(self.client, name_of(pod), self.namespace, clock=self.clock)
            self.readied += 1
        except errors.StatusError as e:
            if e.code != 404:
                raise

    async def __aenter__(self) -> PodReadier:
        self._task = asyncio.create_task(self._run(), name="pod-readier")
        await self._started.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def observed(
    informer: Informer, key: str, pred: Callable[[Obj | None], bool], timeout: float = 10.0
) -> None:
    """Resolve once ``informer`` has delivered object ``key`` (None once deleted) satisfying ``pred``."""
    if pred(informer.get(key)):
        return
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def check(obj: Obj | None) -> None:
        if not fut.done() and pred(obj):
            fut.set_result(None)

    def on_add(obj: Obj) -> None:
        if key_of(obj) == key:
            check(obj)

    def on_update(old: Obj, new: Obj) -> None:
        if key_of(new) == key:
            check(new)

    def on_delete(obj: Obj) -> None:
        if key_of(obj) == key:
            check(None)

    informer.add_event_handler(None, on_update, on_delete)
    informer.add_event_handler(on_add)
    check(informer.get(key))
    await asyncio.wait_for(fut, timeout)


async def wait_object(
    client: Client,
    gvr: GVR,
    name: str,
    namespace: str = "",
    cond: Callable[[Obj | None], bool] = lambda o: o is not None,
    timeout: float = 10.0,
) -> Obj | None:
    """Wait until object ``name`` (None once absent) satisfies ``cond``; raise TimeoutError after ``timeout``."""
    return await asyncio.wait_for(object_until(client, gvr, name, cond, namespace), timeout)
