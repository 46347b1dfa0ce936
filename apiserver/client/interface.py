"""The ``Client`` protocol every component uses to reach the API.

Two implementations share it: :mod:`apiserver.server.localclient` (in-process: same admission and
storage code as the HTTP handlers, no sockets) and :mod:`apiserver.client.http` (over HTTP).
Both raise :class:`apiserver.errors.StatusError` with the same codes and reasons.

Resources are named by :class:`GVR` (group, version, plural). Objects are plain dicts; the
client always hands out fresh copies, so callers may mutate what they get.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from apiserver.api.types import Obj


@dataclass(frozen=True)
class GVR:
    """A resource's group, version and plural name: how clients address a collection (kube's
    ``GroupVersionResource``)."""

    group: str
    version: str
    resource: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return (
            f"{self.resource}.{self.version}.{self.group}"
            if self.group
            else f"{self.resource}.{self.version}"
        )


# Well-known resources, so components never spell them twice.
PODS = GVR("", "v1", "pods")
NODES = GVR("", "v1", "nodes")
NAMESPACES = GVR("", "v1", "namespaces")
EVENTS = GVR("", "v1", "events")
SERVICES = GVR("", "v1", "services")
CONFIGMAPS = GVR("", "v1", "configmaps")
SECRETS = GVR("", "v1", "secrets")
PVCS = GVR("", "v1", "persistentvolumeclaims")
PVS = GVR("", "v1", "persistentvolumes")
SERVICEACCOUNTS = GVR("", "v1", "serviceaccounts")
ENDPOINTS = GVR("", "v1", "endpoints")
ENDPOINTSLICES = GVR("discovery.k8s.io", "v1", "endpointslices")
STATEFULSETS = GVR("apps", "v1", "statefulsets")
CONTROLLERREVISIONS = GVR("apps", "v1", "controllerrevisions")
DEPLOYMENTS = GVR("apps", "v1", "deployments")
REPLICASETS = GVR("apps", "v1", "replicasets")
DAEMONSETS = GVR("apps", "v1", "daemonsets")
JOBS = GVR("batch", "v1", "jobs")
CRONJOBS = GVR("batch", "v1", "cronjobs")
LEASES = GVR("coordination.k8s.io", "v1", "leases")
PDBS = GVR("policy", "v1", "poddisruptionbudgets")
PRIORITYCLASSES = GVR("scheduling.k8s.io", "v1", "priorityclasses")
WORKLOADS = GVR("scheduling.k8s.io", "v1beta1", "workloads")
PODGROUPS = GVR("scheduling.k8s.io", "v1beta1", "podgroups")
COMPOSITEPODGROUPS = GVR("scheduling.k8s.io", "v1alpha3", "compositepodgroups")
RESOURCECLAIMS = GVR("resource.k8s.io", "v1", "resourceclaims")
RESOURCECLAIMTEMPLATES = GVR("resource.k8s.io", "v1", "resourceclaimtemplates")
RESOURCESLICES = GVR("resource.k8s.io", "v1", "resourceslices")
DEVICECLASSES = GVR("resource.k8s.io", "v1", "deviceclasses")


@dataclass(frozen=True)
class WatchEvent:
    """One watch notification: the event type and the object as of that event."""

    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK | ERROR
    object: Obj


class Client(Protocol):
    """Verbs of the Kubernetes API, identical in-process and over HTTP."""

    async def get(self, gvr: GVR, name: str, namespace: str = "") -> Obj: ...

    async def list(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
        read_only: bool = False,
    ) -> Obj:
        """Returns the ``<Kind>List`` dict (``metadata.resourceVersion``, ``metadata.continue``, ``items``).

        ``read_only``: the caller promises never to modify the items (an informer cache), so an
        in-process client may return shared immutable objects instead of fresh copies.
        """
        ...

    def watch(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        allow_bookmarks: bool = False,
        send_initial_events: bool = False,
        timeout_seconds: float | None = None,
        read_only: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        """An async iterator of events; an ``ERROR`` event (e.g. 410 Expired) ends the stream.

        ``read_only``: as for :meth:`list`, the event objects may be shared and must not be modified.
        """
        ...

    async def create(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        answer: bool = True,
        read_only: bool = False,
    ) -> Obj:
        """Create ``obj``; returns the created object.

        ``handoff`` (gangplane's, as ``read_only`` is): the caller hands ``obj`` over and will
        neither read nor modify it, nor anything in it, afterwards (a body built for this one
        call), so an in-process client may write it as it is instead of a private copy: the
        server fills it in and may keep it as the stored object. Over HTTP it changes nothing.

        ``answer=False`` (gangplane's too): the caller only needs to know that the create
        succeeded (errors raise as ever) and will not read what is returned, so an in-process
        client returns an empty dict instead of decoding the stored object for it (an Event
        recorder writes thousands and drops every answer). Over HTTP the answer is read anyway.

        ``read_only`` (gangplane's, as :meth:`update`'s): the caller will not modify the answer or
        anything in it, and may keep it (a controller's list of its pods, facts seeded from it),
        so an in-process client may return the stored object's shared dict (the one its
        informers receive for this revision) instead of decoding a private copy. Over HTTP it
        changes nothing.
        """
        ...

    async def update(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        """Replace the object named by ``obj``; returns the stored object.

        ``handoff`` (gangplane's, as :meth:`create`'s): the caller will not modify ``obj`` or
        anything in it afterwards, and parts of it may be objects it only reads (an informer's,
        a ``read_only`` answer). An in-process client then copies only what the write may
        modify, and passes through uncopied the sections that are the stored object's own and
        that the write replaces with the stored object's anyway (a ``/status`` write's
        ``spec``): same stored object, answer and errors as without it. Over HTTP it changes
        nothing.

        ``read_only`` (gangplane's, as :meth:`list`'s): the caller will not modify the answer or
        anything in it, so an in-process client may return the stored object's shared dict (the
        one its informers receive) instead of decoding a private copy. Over HTTP it changes
        nothing.
        """
        ...

    async def update_status(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        """PUT ``obj`` to the ``/status`` subresource; ``handoff``, ``read_only``: as for :meth:`update`."""
        ...

    async def patch(
        self,
        gvr: GVR,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = "application/merge-patch+json",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool = False,
        read_only: bool = False,
    ) -> Obj:
        """PATCH the object (or ``subresource``); returns the stored object. ``read_only``: as
        for :meth:`update` (the caller will not modify the answer)."""
        ...

    async def delete(
        self,
        gvr: GVR,
        name: str,
        namespace: str = "",
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Returns the object (when it still exists, e.g. with finalizers) or a ``Status`` Success."""
        ...

    async def delete_collection(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> Obj: ...

    async def create_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        """POST to a subresource: ``pods/binding``, ``pods/eviction``."""
        ...

    async def get_subresource(self, gvr: GVR, name: str, subresource: str, namespace: str = "") -> Obj: ...

    async def update_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        """PUT to a subresource: ``statefulsets/scale``, ``*/status``."""
        ...

    async def server_resources(self) -> builtins.list[Obj]:
        """Discovery: one ``APIResourceList`` per served group-version, preferred groups first.

        The documents ``GET /api/v1`` and ``GET /apis/<group>/<version>`` return over HTTP
        (client-go's ``ServerGroupsAndResources``); a resource whose feature gate is off, or a
        group with nothing served, is absent.
        """
        ...


def requests_per_step(client: object) -> int:
    """How many requests one task makes through ``client`` before the event loop runs other tasks.

    The in-process client runs the first requests of a task's step at once (its loop share,
    :mod:`apiserver.server.loopshare`: two); a client that waits on a network for every answer
    gives the loop back at each one (one). Why a component asks: calls it would run as concurrent
    tasks (kube's goroutines) cost no more loop passes when this many run in place, one after
    another, and save a task each and the caller's resumption a pass later
    (:func:`controllers.slowstart.slow_start_batch`).
    """
    return max(1, int(getattr(client, "requests_per_step", 1)))
