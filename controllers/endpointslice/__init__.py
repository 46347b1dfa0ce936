"""EndpointSlice controller (kube's ``pkg/controller/endpointslice`` and its reconciler).

For every Service with a selector, the pods it selects become endpoints in discovery.k8s.io/v1
EndpointSlices owned by the Service and labelled ``kubernetes.io/service-name`` and
``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io``:

* a pod counts once it has an IP and is not terminal for its restart policy; terminating pods stay
  (``ShouldPodBeInEndpoints(pod, includeTerminating=true)``);
* conditions: ``serving`` = the pod is Ready, ``terminating`` = it is being deleted, ``ready`` =
  serving and not terminating — or always true with ``publishNotReadyAddresses``;
* each endpoint carries ``targetRef``, ``nodeName``, the node's zone, and ``hostname`` when the pod's
  ``subdomain`` is the Service's name (StatefulSet DNS);
* ports are the Service's ports resolved against each pod (named target ports look up the
  container port), so pods resolving differently land in different slices; at most
  ``max_endpoints_per_slice`` (kube's default 100) endpoints per slice;
* a Service selecting nothing gets one placeholder slice with no endpoints and no ports.

Informers: Services, Pods, Nodes (zones) and the managed EndpointSlices. ``sync(namespace/name)``
computes the desired slices and makes the fewest writes: equal slices are left alone, changed
ones updated in place, missing ones created with ``generateName: <service>-``, extra ones deleted.
"""

from __future__ import annotations

import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import WARNING, EventRecorder
from apiserver.client.informer import Informer, InformerFactory, label_index
from apiserver.client.interface import ENDPOINTSLICES, NODES, PODS, SERVICES, Client
from apiserver.meta import (
    Clock,
    key_of,
    labels_of,
    name_of,
    namespace_of,
    new_controller_ref,
    split_key,
    uid_of,
)
from apiserver.selectors import selector_from_set
from controllers.base import Controller, Requeue
from controllers.endpointslice.ports import find_port
from controllers.metrics import ControllerMetrics
from controllers.podutil import is_pod_ready

log = logging.getLogger("gangplane.endpointslice")

NAME = "endpointslice-controller"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_ENDPOINTS_PER_SLICE = 100
_SERVICE_INDEX = "service-name"


def should_pod_be_in_endpoints(pod: Obj) -> bool:
    """``ShouldPodBeInEndpoints(pod, includeTerminating=true)``."""
    status = pod.get("status") or {}
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    phase = status.get("phase") or ""
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    if policy == "Never":
        return phase not in ("Failed", "Succeeded")
    if policy == "OnFailure":
        return phase != "Succeeded"
    return True


class EndpointSliceController(Controller):
    name = NAME
    workers = 5  # --concurrent-service-endpoint-syncs

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
        max_endpoints_per_slice: int = MAX_ENDPOINTS_PER_SLICE,
    ) -> None:
        self.max_endpoints_per_slice = max_endpoints_per_slice
        #: service key -> slice name -> resourceVersion this controller wrote (None: deleted)
        self._tracker: dict[str, dict[str, int | None]] = {}
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.services: Informer = self.informers.informer(SERVICES)
        self.pods: Informer = self.informers.informer(PODS)
        self.nodes: Informer = self.informers.informer(NODES)
        self.slices: Informer = self.informers.informer(
            ENDPOINTSLICES, label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY}"
        )
        self.slices.add_indexer(_SERVICE_INDEX, label_index(SERVICE_NAME_LABEL))
        self.services.add_event_handler(
            lambda s: self.enqueue(key_of(s)),
            lambda o, n: self.enqueue(key_of(n)),
            lambda s: self.enqueue(key_of(s)),
        )
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_added)
        self.slices.add_event_handler(
            self._slice_changed, lambda o, n: self._slice_changed(n), self._slice_changed
        )

    def _services_for(self, pod: Obj) -> list[Obj]:
        """``GetPodServiceMemberships``: Services in the pod's namespace whose selector matches it."""
        labels = labels_of(pod)
        out = []
        for svc in self.services.list(namespace_of(pod)):
            sel = (svc.get("spec") or {}).get("selector")
            if sel and selector_from_set(sel).matches(labels):
                out.append(svc)
        return out

    def _pod_added(self, pod: Obj) -> None:
        for svc in self._services_for(pod):
            self.enqueue(key_of(svc))

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (cur.get("metadata") or {}).get(
            "resourceVersion"
        ):
            return
        keys = {key_of(s) for s in self._services_for(cur)}
        if labels_of(old) != labels_of(cur):
            keys |= {key_of(s) for s in self._services_for(old)}
        for k in keys:
            self.enqueue(k)

    def _slice_changed(self, eps: Obj) -> None:
        svc = labels_of(eps).get(SERVICE_NAME_LABEL)
        if svc:
            self.enqueue(f"{namespace_of(eps)}/{svc}")

    async def on_synced(self) -> None:
        for key in self.services.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        if self._stale(key, namespace):
            raise Requeue("EndpointSlice informer cache is out of date")
        svc = self.services.get_by_name(namespace, name)
        existing = [s for s in self.slices.by_index(_SERVICE_INDEX, name) if namespace_of(s) == namespace]
        if svc is None:
            return  # the garbage collector removes slices owned by a deleted Service
        spec = svc.get("spec") or {}
        if not spec.get("selector") or spec.get("type") == "ExternalName":
            return
        existing = [s for s in existing if _owned_by(s, svc)]
        desired = self._desired(svc)
        await self._reconcile(svc, desired, existing)

    def _desired(self, svc: Obj) -> list[tuple[list[Obj], list[Obj]]]:
        """(ports, endpoints) per slice, endpoints grouped by resolved port set and chunked."""
        spec = svc.get("spec") or {}
        selector = selector_from_set(spec.get("selector") or {})
        publish = bool(spec.get("publishNotReadyAddresses"))
        groups: dict[str, tuple[list[Obj], list[Obj]]] = {}
        pods = sorted(
            (p for p in self.pods.list(namespace_of(svc)) if selector.matches(labels_of(p))), key=name_of
        )
        for pod in pods:
            if not should_pod_be_in_endpoints(pod):
                continue
            ports = self._ports_for(svc, pod)
            sig = repr(ports)
            groups.setdefault(sig, (ports, []))[1].append(self._endpoint(svc, pod, publish))
        out: list[tuple[list[Obj], list[Obj]]] = []
        for ports, endpoints in groups.values():
            for i in range(0, len(endpoints), self.max_endpoints_per_slice):
                out.append((ports, endpoints[i : i + self.max_endpoints_per_slice]))
        return out

    def _ports_for(self, svc: Obj, pod: Obj) -> list[Obj]:
        out = []
        for sp in (svc.get("spec") or {}).get("ports") or []:
            number = find_port(pod, sp)
            if number is None:
                continue
            port: Obj = {
                "name": sp.get("name") or "",
                "port": number,
                "protocol": sp.get("protocol") or "TCP",
            }
            if sp.get("appProtocol"):
                port["appProtocol"] = sp["appProtocol"]
            out.append(port)
        return out

    def _endpoint(self, svc: Obj, pod: Obj, publish: bool) -> Obj:
        status = pod.get("status") or {}
        ready = publish or is_pod_ready(pod)
        terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
        ips = [i.get("ip") for i in status.get("podIPs") or [] if isinstance(i, dict) and i.get("ip")]
        address = next((ip for ip in ips if ":" not in ip), None) or status.get("podIP")
        ep: Obj = {
            "addresses": [address],
            "conditions": {
                "ready": publish or (ready and not terminating),
                "serving": ready,
                "terminating": terminating,
            },
            "targetRef": {
                "kind": "Pod",
                "namespace": namespace_of(pod),
                "name": name_of(pod),
                "uid": uid_of(pod),
            },
        }
        pspec = pod.get("spec") or {}
        node_name = pspec.get("nodeName")
        if node_name:
            ep["nodeName"] = node_name
            node = self.nodes.get(node_name)
            zone = labels_of(node).get(ZONE_LABEL) if node is not None else None
            if zone:
                ep["zone"] = zone
        if pspec.get("hostname") and pspec.get("subdomain") == name_of(svc):
            ep["hostname"] = pspec["hostname"]
        return ep

    def _labels(self, svc: Obj) -> dict[str, str]:
        """``setEndpointSliceLabels``: the Service's labels plus the two the controller owns."""
        labels = {k: v for k, v in labels_of(svc).items() if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL)}
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        labels[SERVICE_NAME_LABEL] = name_of(svc)
        labels[MANAGED_BY_LABEL] = MANAGED_BY
        return labels

    async def _reconcile(
        self, svc: Obj, desired: list[tuple[list[Obj], list[Obj]]], existing: list[Obj]
    ) -> None:
        labels = self._labels(svc)
        if not desired:
            desired = [([], [])]  # the placeholder slice
        remaining = sorted(existing, key=name_of)
        writes: list[tuple[Obj | None, list[Obj], list[Obj]]] = []
        for ports, endpoints in desired:
            # Prefer a slice that already has exactly this content, then one with the same ports.
            match = next(
                (
                    s
                    for s in remaining
                    if _norm(s.get("ports")) == ports and _norm(s.get("endpoints")) == endpoints
                ),
                None,
            )
            if match is None:
                match = next((s for s in remaining if _norm(s.get("ports")) == ports), None)
            if match is None and remaining:
                match = remaining[0]  # reuse (e.g. the placeholder) rather than create and delete
            if match is not None:
                remaining.remove(match)
            writes.append((match, ports, endpoints))
        for current, ports, endpoints in writes:
            body: Obj = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "namespace": namespace_of(svc),
                    "labels": labels,
                    "ownerReferences": [new_controller_ref(svc, "v1", "Service")],
                },
                "addressType": "IPv4",
                "endpoints": endpoints or None,
                "ports": ports or None,
            }
            try:
                if current is None:
                    body["metadata"]["generateName"] = f"{name_of(svc)}-"
                    written = await self.client.create(ENDPOINTSLICES, body, namespace_of(svc))
                    self._expect(svc, written)
                elif (
                    _norm(current.get("endpoints")) != endpoints
                    or _norm(current.get("ports")) != ports
                    or labels_of(current) != labels
                ):
                    md = current["metadata"]
                    body["metadata"].update(
                        name=md["name"],
                        resourceVersion=md.get("resourceVersion"),
                        annotations=md.get("annotations"),
                    )
                    if body["metadata"]["annotations"] is None:
                        del body["metadata"]["annotations"]
                    written = await self.client.update(ENDPOINTSLICES, body, namespace_of(svc))
                    self._expect(svc, written)
            except errors.StatusError as e:
                if e.code == 403 and "being terminated" in e.message:
                    return
                if not errors.is_conflict(e) and not errors.is_already_exists(e):
                    self.recorder.event(
                        svc,
                        WARNING,
                        "FailedToUpdateEndpointSlices",
                        f"Error updating Endpoint Slices for Service {namespace_of(svc)}/{name_of(svc)}: {e.message}",
                    )
                raise
        for extra in remaining:
            try:
                await self.client.delete(ENDPOINTSLICES, name_of(extra), namespace_of(extra))
            except errors.StatusError as e:
                if not errors.is_not_found(e):
                    raise
            self._tracker.setdefault(key_of(svc), {})[name_of(extra)] = None

    # ------------------------------------------------------------------ staleness
    def _expect(self, svc: Obj, written: Obj) -> None:
        """Remember a write so the next sync waits until the cache shows it (kube's EndpointSliceTracker)."""
        rv = int((written.get("metadata") or {}).get("resourceVersion") or 0)
        self._tracker.setdefault(key_of(svc), {})[name_of(written)] = rv

    def _stale(self, key: str, namespace: str) -> bool:
        """Whether the slice cache lags behind this controller's own writes for ``key``."""
        expected = self._tracker.get(key)
        if not expected:
            return False
        for name, rv in list(expected.items()):
            cached = self.slices.get_by_name(namespace, name)
            if rv is None:
                if cached is None:
                    del expected[name]
                continue
            if cached is not None and int(cached["metadata"].get("resourceVersion") or 0) >= rv:
                del expected[name]
        if not expected:
            del self._tracker[key]
            return False
        return True


def _owned_by(eps: Obj, svc: Obj) -> bool:
    return any(r.get("uid") == uid_of(svc) for r in (eps.get("metadata") or {}).get("ownerReferences") or [])


def _norm(value: Any) -> list[Obj]:
    return list(value or [])
