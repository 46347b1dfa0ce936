"""Shared support for the KEP-6277 controller tests (unit, integration, bench).

* :class:`FaultyClient` wraps a client: it logs every write (so a test can check the order of
  Workload, PodGroup and pod writes) and fails chosen calls on demand (the Nth patch of
  PodGroups, every PodGroup create until released, ...);
* :func:`start_statefulset_controller` runs the StatefulSet controller with the KEP-6277 hook,
  optionally over such a client;
* manifest builders for StatefulSets with ``spec.scheduling``, user/parent Workloads and PodGroups;
* event-driven waits (no sleeps): :func:`settled` waits until the controller has seen an object
  and gone idle.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.context import ComponentContext
from apiserver.client.interface import (
    EVENTS,
    GVR,
    PODGROUPS,
    PODS,
    STATEFULSETS,
    WORKLOADS,
    Client,
    WatchEvent,
)
from apiserver.meta import key_of
from controllers.manager import STATEFULSET
from controllers.metrics import controller_metrics
from controllers.statefulset import StatefulSetController
from controllers.statefulset.workload import new_scheduling_hook
from controllers.statefulset.workload_utils import (
    GROUP_TEMPLATE_NAME_ANNOTATION,
    MANAGED_BY_ANNOTATION,
    MANAGED_BY_VALUE,
    PARENT_COMPOSITE_POD_GROUP_ANNOTATION,
)
from controllers.testing import observed, statefulset
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list, wait_for_object

NS = "default"
GANG: Obj = {"schedulingPolicy": {"gang": {}}}
BASIC: Obj = {"schedulingPolicy": {"basic": {}}}
PARENT_API_VERSION = "leaderworkerset.x-k8s.io/v1"
PARENT_KIND = "LeaderWorkerSet"


#: How long a deletion-cascade test waits. Pods are owned by their StatefulSet *and* their PodGroup,
#: and the PodGroup's protection finalizer waits for those pods: the garbage collector counts an
#: owner that is being deleted in the background as going away (controllers/garbagecollector,
#: ``_classify``), which is what lets the cascade finish at all.
CASCADE_TIMEOUT = 15.0


# ---------------------------------------------------------------------------------- client
@dataclass
class Fault:
    """Fail calls ``verb`` on ``resource``: from the ``nth`` matching call on, ``times`` times
    (``None``: until :meth:`FaultyClient.clear`)."""

    verb: str
    resource: str
    nth: int = 1
    times: int | None = 1
    code: int = 500
    seen: int = 0
    failed: int = 0

    def hit(self, verb: str, resource: str) -> bool:
        if verb != self.verb or resource != self.resource:
            return False
        self.seen += 1
        if self.seen < self.nth or (self.times is not None and self.failed >= self.times):
            return False
        self.failed += 1
        return True


@dataclass
class FaultyClient:
    """A :class:`Client` wrapper that logs writes and injects failures (see :class:`Fault`)."""

    inner: Client
    faults: list[Fault] = field(default_factory=list)
    #: (verb, resource, name) of every write attempt except Events, in call order
    writes: list[tuple[str, str, str]] = field(default_factory=list)
    #: calls by verb (every verb, reads included; Events excluded)
    verbs: dict[str, int] = field(default_factory=dict)
    #: (resource, name, body) of every patch attempt except Events
    patches: list[tuple[str, str, Any]] = field(default_factory=list)
    failures: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def fail(self, verb: str, gvr: GVR, *, nth: int = 1, times: int | None = 1, code: int = 500) -> Fault:
        f = Fault(verb, gvr.resource, nth, times, code)
        self.faults.append(f)
        return f

    def clear(self) -> None:
        self.faults.clear()

    async def wait_failures(self, n: int, timeout: float = 10.0) -> None:
        """Until at least ``n`` calls have been failed on purpose."""

        async def run() -> None:
            while self.failures < n:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(run(), timeout)

    def _count(self, verb: str, gvr: GVR) -> None:
        if gvr != EVENTS:
            self.verbs[verb] = self.verbs.get(verb, 0) + 1

    def _check(self, verb: str, gvr: GVR, name: str) -> None:
        self._count(verb, gvr)
        if gvr == EVENTS:
            return
        self.writes.append((verb, gvr.resource, name))
        for f in self.faults:
            if f.hit(verb, gvr.resource):
                self.failures += 1
                self._changed.set()
                raise errors.StatusError(
                    f.code, "InternalError", f"injected failure: {verb} {gvr.resource} {name}"
                )

    @property
    def calls(self) -> int:
        return int(getattr(self.inner, "calls", 0))

    # reads
    async def get(self, gvr: GVR, name: str, namespace: str = "") -> Obj:
        self._count("get", gvr)
        return await self.inner.get(gvr, name, namespace)

    async def list(self, gvr: GVR, namespace: str = "", **kw: Any) -> Obj:
        self._count("list", gvr)
        return await self.inner.list(gvr, namespace, **kw)

    def watch(self, gvr: GVR, namespace: str = "", **kw: Any) -> AsyncIterator[WatchEvent]:
        self._count("watch", gvr)
        return self.inner.watch(gvr, namespace, **kw)

    # writes
    async def create(self, gvr: GVR, obj: Obj, namespace: str = "", **kw: Any) -> Obj:
        self._check("create", gvr, (obj.get("metadata") or {}).get("name", ""))
        return await self.inner.create(gvr, obj, namespace, **kw)

    async def update(self, gvr: GVR, obj: Obj, namespace: str = "", **kw: Any) -> Obj:
        self._check("update", gvr, (obj.get("metadata") or {}).get("name", ""))
        return await self.inner.update(gvr, obj, namespace, **kw)

    async def update_status(self, gvr: GVR, obj: Obj, namespace: str = "", **kw: Any) -> Obj:
        self._check("update_status", gvr, (obj.get("metadata") or {}).get("name", ""))
        return await self.inner.update_status(gvr, obj, namespace, **kw)

    async def patch(self, gvr: GVR, name: str, patch: Any, namespace: str = "", **kw: Any) -> Obj:
        if gvr != EVENTS:
            self.patches.append((gvr.resource, name, patch))
        self._check("patch", gvr, name)
        return await self.inner.patch(gvr, name, patch, namespace, **kw)

    async def delete(self, gvr: GVR, name: str, namespace: str = "", **kw: Any) -> Obj:
        self._check("delete", gvr, name)
        return await self.inner.delete(gvr, name, namespace, **kw)

    async def delete_collection(self, gvr: GVR, namespace: str = "", **kw: Any) -> Obj:
        self._check("delete_collection", gvr, "")
        return await self.inner.delete_collection(gvr, namespace, **kw)

    async def create_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        self._check("create_" + subresource, gvr, name)
        return await self.inner.create_subresource(gvr, name, subresource, obj, namespace)

    async def get_subresource(self, gvr: GVR, name: str, subresource: str, namespace: str = "") -> Obj:
        self._count("get_" + subresource, gvr)
        return await self.inner.get_subresource(gvr, name, subresource, namespace)

    async def update_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        self._check("update_" + subresource, gvr, name)
        return await self.inner.update_subresource(gvr, name, subresource, obj, namespace)

    def index(self, verb: str, resource: str, name: str | None = None) -> int:
        """Position of the first matching write in :attr:`writes` (``-1`` if none)."""
        for i, (v, r, n) in enumerate(self.writes):
            if v == verb and r == resource and (name is None or n == name):
                return i
        return -1


# ---------------------------------------------------------------------------------- controller
async def start_statefulset_controller(
    cp: ControlPlane, client: Client | None = None
) -> StatefulSetController:
    """Run (or restart) the StatefulSet controller with the KEP-6277 hook, over ``client`` if given.

    The hook comes from :func:`new_scheduling_hook`, i.e. with the controller's gate view as
    ``cp.options.component_gates`` says *now*: change it, stop and start to toggle a gate.
    """

    def factory(plane: ComponentContext) -> StatefulSetController:
        return StatefulSetController(
            client if client is not None else plane.client(STATEFULSET),
            clock=plane.clock,
            metrics=controller_metrics(plane.metrics_registry),
            scheduling_hook=new_scheduling_hook(plane),
        )

    cp.register(STATEFULSET, factory)
    comp = await cp.start_component(STATEFULSET)
    assert isinstance(comp, StatefulSetController)
    return comp


async def settled(
    ctrl: StatefulSetController, client: Client, name: str, ns: str = NS, timeout: float = 10.0
) -> None:
    """The controller's informer has the current StatefulSet and every resulting sync is done."""
    cur = await client.get(STATEFULSETS, name, ns)
    rv = cur["metadata"]["resourceVersion"]
    await observed(
        ctrl.sets, key_of(cur), lambda o: o is not None and o["metadata"]["resourceVersion"] == rv, timeout
    )
    await ctrl.wait_idle(timeout)


async def settle_after(
    ctrl: StatefulSetController, informer_owner: Any, key: str, pred: Callable[[Obj | None], bool]
) -> None:
    """Wait for ``informer_owner`` (an Informer) to deliver ``key`` satisfying ``pred``, then for idle."""
    await observed(informer_owner, key, pred)
    await ctrl.wait_idle()


# ---------------------------------------------------------------------------------- manifests
def sts_manifest(
    name: str = "web",
    replicas: int = 3,
    scheduling: Obj | None = None,
    *,
    policy: str = "Parallel",
    annotations: dict[str, str] | None = None,
    owner: Obj | None = None,
    **spec: Any,
) -> Obj:
    """A StatefulSet ``name`` (``app=<name>``); ``scheduling`` None leaves ``spec.scheduling`` unset."""
    body = statefulset(name, replicas, policy=policy, **spec)
    if scheduling is not None:
        body["spec"]["scheduling"] = scheduling
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    if owner is not None:
        body["metadata"]["ownerReferences"] = [owner]
    return body


def parent_ref(name: str = "lws", uid: str = "11111111-2222-3333-4444-555555555555") -> Obj:
    """A controller ownerReference to a (fictitious) LeaderWorkerSet parent."""
    return {
        "apiVersion": PARENT_API_VERSION,
        "kind": PARENT_KIND,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def delegation_annotations(template: str, parent_composite: str | None = None) -> dict[str, str]:
    ann = {GROUP_TEMPLATE_NAME_ANNOTATION: template}
    if parent_composite is not None:
        ann[PARENT_COMPOSITE_POD_GROUP_ANNOTATION] = parent_composite
    return ann


def workload_manifest(
    name: str,
    controller: Obj,
    templates: list[Obj] | None = None,
    *,
    composite: list[Obj] | None = None,
    owner: Obj | None = None,
    managed: bool = False,
) -> Obj:
    """A Workload with ``spec.controllerRef = controller`` (user-made unless ``managed``)."""
    spec: Obj = {"controllerRef": controller}
    if composite is not None:
        spec["compositePodGroupTemplates"] = composite
    else:
        spec["podGroupTemplates"] = templates if templates is not None else [gang_template("web", 3)]
    md: Obj = {"name": name, "namespace": NS}
    if owner is not None:
        md["ownerReferences"] = [owner]
    if managed:
        md["annotations"] = {MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": md, "spec": spec}


def sts_controller_ref(name: str) -> Obj:
    """A Workload ``spec.controllerRef`` naming StatefulSet ``name``."""
    return {"apiGroup": "apps", "kind": "StatefulSet", "name": name}


def sts_owner(sts: Obj) -> Obj:
    md = sts["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def gang_template(name: str, min_count: int) -> Obj:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": min_count}}}


def pod_group_manifest(
    name: str,
    workload: str,
    template: str,
    min_count: int | None = 3,
    *,
    owner: Obj | None = None,
    managed: bool = False,
) -> Obj:
    policy: Obj = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    md: Obj = {"name": name, "namespace": NS}
    if owner is not None:
        md["ownerReferences"] = [owner]
    if managed:
        md["annotations"] = {MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": md,
        "spec": {
            "workloadRef": {"workloadName": workload, "templateName": template},
            "schedulingPolicy": policy,
        },
    }


# ---------------------------------------------------------------------------------- reads
async def workloads(client: Client, ns: str = NS) -> list[Obj]:
    return sorted((await client.list(WORKLOADS, ns))["items"], key=lambda o: o["metadata"]["name"])


async def pod_groups(client: Client, ns: str = NS) -> list[Obj]:
    return sorted((await client.list(PODGROUPS, ns))["items"], key=lambda o: o["metadata"]["name"])


async def wait_pods(client: Client, app: str, n: int, ns: str = NS, timeout: float = 10.0) -> list[Obj]:
    """Until exactly ``n`` pods with ``app=<app>`` exist (terminating ones count)."""
    return await wait_for_list(
        client, PODS, ns, lambda items: len(items) == n, label_selector=f"app={app}", timeout=timeout
    )


async def wait_single(client: Client, gvr: GVR, ns: str = NS, timeout: float = 10.0) -> Obj:
    """Until exactly one object of ``gvr`` exists in ``ns``; returns it."""
    items = await wait_for_list(client, gvr, ns, lambda items: len(items) == 1, timeout=timeout)
    return items[0]


async def wait_min_count(client: Client, gvr: GVR, name: str, value: int, ns: str = NS) -> Obj:
    """Until the Workload's single template (or the PodGroup) has gang minCount ``value``."""

    def ok(o: Obj | None) -> bool:
        if o is None:
            return False
        holder = o["spec"]["podGroupTemplates"][0] if gvr == WORKLOADS else o["spec"]
        return ((holder.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount") == value

    got = await wait_for_object(client, gvr, name, ns, ok)
    assert got is not None
    return got


def min_count(obj: Obj) -> int | None:
    """Gang minCount of a Workload (its first template) or a PodGroup."""
    holder = obj["spec"]["podGroupTemplates"][0] if obj.get("kind") == "Workload" else obj["spec"]
    return ((holder.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")


async def events_of(ctrl: StatefulSetController, client: Client, ns: str = NS) -> list[tuple[str, str, str]]:
    """(type, reason, message) of every Event in ``ns`` once the controller's recorder flushed."""
    await ctrl.recorder.flush()
    return [(e["type"], e["reason"], e["message"]) for e in (await client.list(EVENTS, ns))["items"]]


def group_of(pod: Obj) -> str | None:
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
