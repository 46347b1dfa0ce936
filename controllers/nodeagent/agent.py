"""The node agent: one component playing kubelet for every simulated Node, KWOK-style.

Wiring (this module) is kept apart from behaviour (:mod:`.stages`, pure) and shapes
(:mod:`.status`, pure):

* **informers** — one on Nodes, one on *bound* pods (``spec.nodeName!=``) with a node-name
  index; never a watch per node, so 500 nodes cost the same as one;
* **one work queue** of keys ``("pod", ns/name)``, ``("node", name)``, ``("lease", name)``;
  handlers only enqueue, ``sync(key)`` evaluates the stages and performs the due one;
* **one timer heap** (:class:`.timers.TimerHeap`) for every delayed stage, driven by the
  injected clock: no task or asyncio timer per pod;
* **incremental accounting** — per-node :class:`.admission.NodeUsage` and pod-IP pools are
  updated as pods are admitted and released, never recomputed by scanning.

Writes are few and whole: a pod whose readiness delay is 0 goes from Pending to Running *and*
Ready in one ``status`` update carrying every condition and container status. The object this
agent wrote is used until the informer catches up with it, so consecutive stages never act on a
stale cache, and the informer's echo of our own write does not trigger another sync.

Start-up is a kubelet restart: the fleet's missing Nodes are registered, running pods are
adopted (their resources and IPs re-reserved) *before* any pending pod is admitted, and pending
pods are then admitted in creation order, as kubelet's ``HandlePodAdditions`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import EventRecorder, object_reference
from apiserver.client.informer import NODE_NAME, InformerFactory, node_name_index
from apiserver.client.interface import (
    DEVICECLASSES,
    LEASES,
    NODES,
    PODS,
    RESOURCECLAIMS,
    RESOURCESLICES,
    Client,
)
from apiserver.meta import Clock, key_of, parse_time
from controllers.base import Controller, Requeue
from controllers.fleet import DeviceSpec, Fleet
from controllers.metrics import ControllerMetrics
from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.admission import RequestMemo, resource_units
from controllers.nodeagent.ipam import (
    NODE_NETWORK,
    CIDRAllocator,
    PodIPPool,
    node_internal_ip,
    prefix_for_pods,
)
from controllers.nodeagent.lifecycle import lifecycle_for
from controllers.nodeagent.microtime import micro_time
from controllers.nodeagent.node_annotations import NOT_READY, UNREACHABLE
from controllers.nodeagent.node_annotations import fault as annotated_fault
from controllers.nodeagent.stages import (
    Action,
    AgentOptions,
    Event,
    NodeContext,
    NodeState,
    PodContext,
    PodRecord,
    node_status_events,
    select,
)
from controllers.nodeagent.status import (
    NOT_READY_TAINT_KEY,
    container_state,
    is_ready,
    node_info,
    node_resources,
    node_status,
    phase_of,
)
from controllers.nodeagent.timers import TimerHeap
from controllers.nodeagent.userstages import UserStages, with_stage_annotations
from resourceclaims.claims import is_usable_by, pod_claim_keys, pod_claim_names

CLAIM_INDEX = "resource-claims"
log = logging.getLogger("gangplane.nodeagent")

NODE_LEASE_NAMESPACE = "kube-node-lease"
#: stage evaluations per sync before yielding (a safety net against a stage that changes nothing)
_MAX_STEPS = 8


def is_managed(node: Obj) -> bool:
    """Every Node is simulated unless labelled ``gangplane.dev/simulated: "false"``."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return str(labels.get(ann.SIMULATED_LABEL, "")).lower() != "false"


def _rv(obj: Obj | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _creation_order(pod: Obj) -> tuple[str, str]:
    md = pod.get("metadata") or {}
    return (md.get("creationTimestamp") or "", key_of(pod))


class NodeAgent(Controller):
    """Kubelet for every managed Node (see module docstring).

    ``NodeAgent(client, fleet, time_scale=0.01)``: keyword overrides of :class:`AgentOptions`
    may be given directly instead of an ``options`` object.
    """

    name = "node-agent"

    def __init__(
        self,
        client: Client,
        fleet: Fleet | None = None,
        *,
        options: AgentOptions | None = None,
        clock: Clock | None = None,
        informers: InformerFactory | None = None,
        metrics: ControllerMetrics | None = None,
        group_claims: bool = True,
        stages: UserStages | None = None,
        **overrides: Any,
    ) -> None:
        opts = options or AgentOptions()
        if overrides:
            opts = dataclasses.replace(opts, **overrides)
        self.options = opts
        #: user stages (``--stages``): what matching pods' containers do, when matching nodes fail
        self.user_stages = stages if stages is not None else UserStages()
        #: the stages the agent runs: the shipped lifecycle.yaml, with or replaced by the user's
        self.lifecycle = lifecycle_for(self.user_stages)
        #: kubelet's ``DRAWorkloadResourceClaims``: a claim reserved for the pod's PodGroup counts as the pod's
        self.group_claims = group_claims
        self.fleet = fleet if fleet is not None else Fleet.empty()
        self._fleet_ordinal = {n: i for i, n in enumerate(self.fleet.names())}
        self._fleet_devices: dict[str, tuple[DeviceSpec, ...]] = {
            n.name: n.devices for n in self.fleet if n.devices
        }
        self._nodes: dict[str, NodeState] = {}
        self._pools: dict[str, PodIPPool] = {}
        self._ordinals: dict[int, str] = {}
        self._pods: dict[str, PodRecord] = {}
        self._cidrs = CIDRAllocator()
        self._recorders: dict[str, EventRecorder] = {}
        self._requests = RequestMemo()
        self._leases: set[str] = set()
        self._timer_task: asyncio.Task[None] | None = None
        #: counters for benchmarks and tests: status writes, pods made Ready, rejections, deletions
        self.stats: dict[str, int] = {
            "pod_status_writes": 0,
            "pods_ready": 0,
            "pods_rejected": 0,
            "pods_deleted": 0,
        }
        super().__init__(client, informers=informers, clock=clock, metrics=metrics, workers=opts.workers)
        self.timers: TimerHeap[tuple[str, str]] = TimerHeap(self.clock, self.enqueue)

    # ================================================================== wiring

    def setup(self) -> None:
        self.pod_informer = self.informers.informer(PODS, field_selector="spec.nodeName!=")
        self.pod_informer.add_indexer(NODE_NAME, node_name_index)
        self.node_informer = self.informers.informer(NODES)
        self.claim_informer = self.informers.informer(RESOURCECLAIMS)
        self.pod_informer.add_indexer(CLAIM_INDEX, pod_claim_keys)

    async def on_synced(self) -> None:
        for node in self._ordered_nodes():
            if is_managed(node):
                self._node_state(node)
        await self._register_fleet()
        await self._ensure_device_classes()
        await self._publish_rack_devices()
        if len(self.fleet):
            log.info("node agent: fleet %s: %s", self.fleet.source, self.fleet.summary())
        pods = sorted(self.pod_informer.list(), key=_creation_order)
        for pod in pods:
            self._adopt(pod)
        for pod in pods:
            self.enqueue(("pod", key_of(pod)))
        self.node_informer.add_event_handler(self._on_node_add, self._on_node_update, self._on_node_delete)
        self.pod_informer.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self.claim_informer.add_event_handler(self._on_claim, lambda old, new: self._on_claim(new), None)

    async def start(self) -> None:
        await super().start()
        self._timer_task = asyncio.create_task(self.timers.run(), name="node-agent-timers")

    async def stop(self) -> None:
        if self._timer_task is not None:
            self._timer_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._timer_task
            self._timer_task = None
        await super().stop()
        await asyncio.gather(*(r.stop() for r in self._recorders.values()))

    def poke(self) -> None:
        """Re-check deadlines now: call after stepping a :class:`~apiserver.meta.FakeClock`."""
        self.timers.poke()

    async def flush_events(self) -> None:
        """Wait until every event recorded so far is written (tests)."""
        await asyncio.gather(*(r.flush() for r in list(self._recorders.values())))

    # ------------------------------------------------------------------ handlers (enqueue only)

    def _on_claim(self, claim: Obj) -> None:
        """A claim got allocated or reserved: pods waiting on it may start."""
        for key in self.pod_informer.index_keys(CLAIM_INDEX, key_of(claim)):
            self.enqueue(("pod", key))

    def claims_ready(self, pod: Obj) -> bool:
        """kubelet's NodePrepareResources precondition: each claim allocated and reserved for the pod or its group."""
        if not (pod.get("spec") or {}).get("resourceClaims"):
            return True
        complete, names = pod_claim_names(pod)
        if not complete:
            return False
        ns = (pod.get("metadata") or {}).get("namespace", "")
        for name in names:
            claim = self.claim_informer.get_by_name(ns, name)
            if claim is None or not is_usable_by(claim, pod, group_claims=self.group_claims):
                return False
        return True

    def _on_node_add(self, node: Obj) -> None:
        name = key_of(node)
        self.enqueue(("node", name))
        self.enqueue(("lease", name))
        # pods bound before their node appeared (they were waiting out the orphan quarantine)
        for key in self.pod_informer.index_keys(NODE_NAME, name):
            self.enqueue(("pod", key))

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        state = self._nodes.get(key_of(new))
        if state is not None and state.written_rv and _rv(new) == state.written_rv:
            return  # the echo of our own write
        self.enqueue(("node", key_of(new)))
        if is_managed(new) != is_managed(old) or annotated_fault(new) != annotated_fault(old):
            self.enqueue(("lease", key_of(new)))
            for key in self.pod_informer.index_keys(NODE_NAME, key_of(new)):
                self.enqueue(("pod", key))

    def _on_node_delete(self, node: Obj) -> None:
        name = key_of(node)
        self.enqueue(("node", name))
        for key in self.pod_informer.index_keys(NODE_NAME, name):
            self.enqueue(("pod", key))

    def _on_pod_add(self, pod: Obj) -> None:
        self.enqueue(("pod", key_of(pod)))

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        rec = self._pods.get(key_of(new))
        if rec is not None and rec.written_rv and _rv(new) >= rec.written_rv:
            rec.written = None  # the cache has caught up with our write
            if _rv(new) == rec.written_rv:
                return  # the echo of our own write: already acted on
        self.enqueue(("pod", key_of(new)))

    def _on_pod_delete(self, pod: Obj) -> None:
        # Free the pod's resources now, in watch order, as kubelet's HandlePodRemoves does before
        # it admits anything that came later: a pod created on the node right after this one was
        # deleted must not be admitted (or refused) by a worker that has not seen the delete yet.
        rec = self._pods.get(key_of(pod))
        if rec is not None and rec.uid == (pod.get("metadata") or {}).get("uid", ""):
            self._release(rec)
        self.enqueue(("pod", key_of(pod)))

    async def sync(self, key: tuple[str, str]) -> None:
        kind, name = key
        if kind == "pod":
            await self._sync_pod(name)
        elif kind == "node":
            await self._sync_node(name)
        elif kind == "lease":
            await self._sync_lease(name)

    # ================================================================== nodes

    def _ordered_nodes(self) -> list[Obj]:
        """Fleet nodes in fleet order, then the others by name: ordinals follow this order."""
        nodes = self.node_informer.list()
        return sorted(
            nodes, key=lambda n: (self._fleet_ordinal.get(key_of(n), len(self._fleet_ordinal)), key_of(n))
        )

    def _ordinal_for(self, node: Obj) -> int:
        name = key_of(node)
        if name in self._fleet_ordinal:
            return self._fleet_ordinal[name]
        base = int(NODE_NETWORK.network_address) + 2
        for a in (node.get("status") or {}).get("addresses") or []:
            if a.get("type") != "InternalIP":
                continue
            with contextlib.suppress(ValueError):
                ordinal = int(ipaddress.IPv4Address(a.get("address", ""))) - base
                if (
                    ordinal >= 0
                    and self._ordinals.get(ordinal) in (None, name)
                    and ipaddress.IPv4Address(a["address"]) in NODE_NETWORK
                ):
                    return ordinal
        ordinal = len(self._fleet_ordinal)
        while ordinal in self._ordinals or ordinal in self._fleet_ordinal.values():
            ordinal += 1
        return ordinal

    def _node_state(self, node: Obj) -> NodeState:
        """The node's state, created on first sight (ordinal, IP, pod CIDR, IP pool, usage)."""
        name = key_of(node)
        state = self._nodes.get(name)
        if state is not None:
            return state
        ordinal = self._ordinal_for(node)
        self._ordinals[ordinal] = name
        spec = node.get("spec") or {}
        _, alloc = node_resources(node)
        allocatable = resource_units(alloc)
        cidr = spec.get("podCIDR") or ""
        if not cidr or not self._cidrs.occupy(cidr):
            cidr = cidr or self._cidrs.allocate(prefix_for_pods(allocatable.get("pods", 110)))
        state = NodeState(
            name=name,
            ordinal=ordinal,
            internal_ip=node_internal_ip(ordinal),
            pod_cidr=cidr,
            allocatable=allocatable,
            devices=self._fleet_devices.get(name, ()),
            first_seen=self.clock.monotonic(),
        )
        if (node.get("status") or {}).get("conditions"):
            # a node found already posting status (agent restart): next heartbeat in one interval
            state.status_posted = self.clock.monotonic()
            state.started_events = True
        self._nodes[name] = state
        self._pools[name] = PodIPPool(cidr)
        for key in self.pod_informer.index_keys(NODE_NAME, name):
            rec = self._pods.get(key)
            if rec is not None and rec.admitted:
                state.usage.admit(key, rec.request)
                if rec.pod_ip:
                    self._pools[name].reserve(rec.pod_ip)
        return state

    def _drop_node(self, name: str) -> None:
        state = self._nodes.pop(name, None)
        if state is None:
            return
        self._ordinals.pop(state.ordinal, None)
        self._cidrs.release(state.pod_cidr)
        self._pools.pop(name, None)
        self.timers.cancel(("node", name))
        self.timers.cancel(("lease", name))

    async def _register_fleet(self) -> None:
        """Create the fleet's Nodes that do not exist, as kubelet registration would.

        The kubelets' start-up events are recorded once every Node is registered: on one event
        loop, a thousand nodes' events written in between would delay the last registration
        several times over (event recording is asynchronous in kubelet too).
        """
        started: list[tuple[str, list[Event]]] = []
        for spec in self.fleet:
            if self.node_informer.get_by_name("", spec.name) is not None:
                continue
            obj = spec.node_object()
            # Node registration as kube-apiserver's TaintNodesByCondition admission leaves it.
            obj["spec"]["taints"] = [
                *obj["spec"].get("taints", []),
                {"key": NOT_READY_TAINT_KEY, "effect": "NoSchedule"},
            ]
            state = self._node_state(obj)
            obj["spec"]["podCIDR"] = state.pod_cidr
            obj["spec"]["podCIDRs"] = [state.pod_cidr]
            md = obj["metadata"]
            md.setdefault("annotations", {}).update(
                {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                }
            )
            labels = md.get("labels") or {}
            obj["status"]["addresses"] = [
                {"type": "InternalIP", "address": state.internal_ip},
                {"type": "Hostname", "address": spec.name},
            ]
            obj["status"]["nodeInfo"] = node_info(
                spec.name, labels.get("kubernetes.io/arch", "amd64"), labels.get("kubernetes.io/os", "linux")
            )
            obj["status"]["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
            # kubelet's initialNode runs the status setters before the create: a healthy node
            # registers with its conditions (Ready included) and needs no second write for them
            obj["status"] = node_status(obj, internal_ip=state.internal_ip, now=self.clock.now())
            try:
                await self.client.create(NODES, obj)
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    raise
                continue
            state.status_posted = self.clock.monotonic()
            state.started_events = True
            started.append(
                (spec.name, node_status_events(spec.name, self.options, starting=True, becoming_ready=True))
            )
        for name, events in started:
            ref = {"kind": "Node", "name": name, "uid": name, "apiVersion": "v1"}
            rec = self._recorder(name)
            for ev in events:
                rec.event_ref(dict(ref), ev.type, ev.reason, ev.message)

    async def _publish_rack_devices(self) -> None:
        """Rack-scoped fleet devices: one ResourceSlice per rack and driver, selecting the rack's nodes."""
        for sl in self.fleet.rack_slice_objects():
            try:
                await self.client.create(RESOURCESLICES, sl)
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    log.warning("could not create ResourceSlice %s: %s", sl["metadata"]["name"], e.message)

    async def _ensure_device_classes(self) -> None:
        for dc in self.fleet.device_class_objects():
            try:
                await self.client.create(DEVICECLASSES, dc)
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    log.warning("could not create DeviceClass %s: %s", dc["metadata"]["name"], e.message)

    def _fault(self, node: Obj | None) -> str:
        """The node's fault: its ``gangplane.dev/fault`` annotation, else a user node stage whose
        delay (from when this agent first saw the node) has passed; a stage still to come is put
        on the timer heap so the node, its Lease and its pods are looked at again then."""
        own = annotated_fault(node)
        if own or node is None or not self.user_stages:
            return own
        name = key_of(node)
        state = self._nodes.get(name)
        if state is None:
            return ""
        mono = self.clock.monotonic()
        current = ""
        for delay, stage_fault in self.user_stages.node_faults(node):
            due = state.first_seen + delay * self.options.time_scale
            if mono >= due:
                current = stage_fault
            else:
                for kind in ("node", "lease"):
                    self.timers.schedule((kind, name), due)
                for key in self.pod_informer.index_keys(NODE_NAME, name):
                    self.timers.schedule(("pod", key), due)
        return current

    def _current_node(self, name: str) -> Obj | None:
        return self.node_informer.get_by_name("", name)

    async def _sync_node(self, name: str) -> None:
        node = self._current_node(name)
        if node is None:
            await self._node_gone(name)
            return
        if not is_managed(node):
            self._drop_node(name)
            return
        state = self._node_state(node)
        state.allocatable = resource_units(node_resources(node)[1])
        if self._fault(node) == UNREACHABLE:  # the kubelet is gone: nothing is posted for the node
            self.timers.cancel(("node", name))
            return
        for _ in range(_MAX_STEPS):
            ctx = NodeContext(
                node,
                state,
                self.clock.now(),
                self.clock.monotonic(),
                self.options,
                not_ready=self._fault(node) == NOT_READY,
            )
            picked = select(self.lifecycle.nodes, ctx, self.options.time_scale)
            if picked is None:
                self.timers.cancel(("node", name))
                return
            stage, due = picked
            if due > ctx.mono:
                self.timers.schedule(("node", name), due)
                return
            action = stage.apply(ctx)
            nxt = await self._perform_node(ctx, action)
            if nxt is None:
                return
            node = nxt

    async def _perform_node(self, ctx: NodeContext, action: Action) -> Obj | None:
        node, state = ctx.node, ctx.state
        name = key_of(node)
        if action.status is not None:
            node = await self._write_node(node, {**node, "status": action.status}, status=True)
        if action.spec is not None:
            spec = {**(node.get("spec") or {}), **action.spec}
            spec = {k: v for k, v in spec.items() if v not in (None, [])}  # kube omits empty taints
            node = await self._write_node(node, {**node, "spec": spec}, status=False)
        if action.finalizers is not None:
            node = await self._write_node(node, _with_finalizers(node, *action.finalizers), status=False)
        if action.publish_devices:
            await self._publish_devices(node, state)
        for k, v in action.mark.items():
            setattr(state, k, v)
        if action.fired:
            state.fired = state.fired | {action.fired}
        if action.events:
            ref = {"kind": "Node", "name": name, "uid": name, "apiVersion": "v1"}
            rec = self._recorder(name)
            for ev in action.events:
                rec.event_ref(dict(ref), ev.type, ev.reason, ev.message)
        if action.delete:
            with contextlib.suppress(errors.StatusError):
                await self.client.delete(NODES, name)
            return None
        return node

    async def _write_node(self, node: Obj, body: Obj, *, status: bool) -> Obj:
        name = key_of(node)
        try:
            if status:
                out = await self.client.update_status(NODES, body)
            else:
                out = await self.client.update(NODES, body)
        except errors.StatusError as e:
            if errors.is_conflict(e) or errors.is_not_found(e):
                raise Requeue(f"node {name}: {e.message}") from e
            raise
        state = self._nodes.get(name)
        if state is not None:
            state.written_rv = _rv(out)
        return out

    async def _node_gone(self, name: str) -> None:
        """The Node was deleted: forget it, drop its Lease and ResourceSlices (its pods are GC'd by stage)."""
        self._drop_node(name)
        if name in self._leases:
            self._leases.discard(name)
            with contextlib.suppress(errors.StatusError):
                await self.client.delete(LEASES, name, NODE_LEASE_NAMESPACE)
        if name in self._fleet_devices:
            with contextlib.suppress(errors.StatusError):
                await self.client.delete_collection(RESOURCESLICES, field_selector=f"spec.nodeName={name}")

    async def _publish_devices(self, node: Obj, state: NodeState) -> None:
        """One ResourceSlice per driver, pool named after the node, owned by the Node (kubelet plugin style)."""
        name = key_of(node)
        uid = (node.get("metadata") or {}).get("uid", "")
        for dev in state.devices:
            slice_obj: Obj = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {
                    "name": f"{name}-{dev.driver}",
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid, "controller": True}
                    ],
                },
                "spec": {
                    "driver": dev.driver,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [_device(n, dev) for n in dev.names],
                },
            }
            try:
                await self.client.create(RESOURCESLICES, slice_obj)
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    raise

    # ------------------------------------------------------------------ leases

    async def _sync_lease(self, name: str) -> None:
        node = self._current_node(name)
        if node is None or not is_managed(node):
            return
        state = self._node_state(node)
        if self._fault(node) == UNREACHABLE:  # no heartbeat: the Lease goes stale
            self.timers.cancel(("lease", name))
            state.lease_renewed = None  # renew at once on recovery
            return
        ctx = NodeContext(node, state, self.clock.now(), self.clock.monotonic(), self.options)
        picked = select(self.lifecycle.leases, ctx, self.options.time_scale)
        if picked is None:
            return
        stage, due = picked
        if due > ctx.mono:
            self.timers.schedule(("lease", name), due)
            return
        action = stage.apply(ctx)
        if action.renew_lease:
            await self._renew_lease(node, state, ctx.now)
        for k, v in action.mark.items():
            setattr(state, k, v)
        # schedule the next renewal right away (no informer event will bring us back): the same
        # stages against the state just marked, at the time the renewal was decided (its anchor)
        picked = select(self.lifecycle.leases, ctx, self.options.time_scale)
        if picked is not None:
            self.timers.schedule(("lease", name), picked[1])

    async def _renew_lease(self, node: Obj, state: NodeState, now: float) -> None:
        """Renew the node's Lease, as kubelet's lease controller does.

        The renewal is the Lease last written (or read) with a new ``spec.renewTime``, not a
        Lease built afresh: what others added to it (labels, annotations) is kept, and the
        server compares an object that differs from the stored one in one field. A Lease that
        is gone is created anew; on a conflict the current one is read and renewed.
        """
        name = key_of(node)
        renew_time = micro_time(now)
        for _ in range(3):
            base = state.lease
            try:
                if base is not None:
                    body = {**base, "spec": {**(base.get("spec") or {}), "renewTime": renew_time}}
                    _own_lease(body, node)
                    # the answer becomes the next renewal's base, which is only read
                    out = await self.client.update(LEASES, body, NODE_LEASE_NAMESPACE, read_only=True)
                else:
                    out = await self.client.create(
                        LEASES, self._new_lease(node, renew_time), NODE_LEASE_NAMESPACE
                    )
            except errors.StatusError as e:
                if errors.is_not_found(e):
                    state.lease = None
                    continue
                if errors.is_conflict(e) or errors.is_already_exists(e):
                    state.lease = await self.client.get(LEASES, name, NODE_LEASE_NAMESPACE)
                    continue
                raise
            state.lease = out
            self._leases.add(name)
            return
        raise Requeue(f"lease {name}: could not renew")

    def _new_lease(self, node: Obj, renew_time: str) -> Obj:
        """A node's first Lease: holder, duration and the owning Node (kubelet's ``newLease``)."""
        name = key_of(node)
        body: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": NODE_LEASE_NAMESPACE},
            "spec": {
                "holderIdentity": name,
                "leaseDurationSeconds": self.options.lease_duration,
                "renewTime": renew_time,
            },
        }
        _own_lease(body, node)
        return body

    # ================================================================== pods

    def _record(self, pod: Obj) -> PodRecord:
        """The agent's record of the pod, new when unseen or when the name now holds another pod (uid)."""
        key = key_of(pod)
        md = pod.get("metadata") or {}
        rec = self._pods.get(key)
        if rec is not None and rec.uid == md.get("uid", ""):
            return rec
        if rec is not None:
            self._release(rec)
        rec = PodRecord(
            key=key,
            uid=md.get("uid", ""),
            node=(pod.get("spec") or {}).get("nodeName", ""),
            request=self._requests.units(pod),
        )
        self._pods[key] = rec
        return rec

    def _adopt(self, pod: Obj) -> None:
        """A pod found running at start-up: re-reserve its resources and IP, re-anchor its timers."""
        node = self.node_informer.get_by_name("", (pod.get("spec") or {}).get("nodeName", ""))
        if node is None or not is_managed(node):
            return
        state = container_state(pod)
        if phase_of(pod) in ("Succeeded", "Failed") or state not in ("running", "waiting"):
            return
        rec = self._record(pod)
        if rec.admitted:
            return
        ns = self._node_state(node)
        rec.admitted = True
        ns.usage.admit(rec.key, rec.request)
        status = pod.get("status") or {}
        rec.pod_ip = status.get("podIP", "")
        if rec.pod_ip and rec.node in self._pools:
            self._pools[rec.node].reserve(rec.pod_ip)
        now, mono = self.clock.now(), self.clock.monotonic()
        started = None
        for cs in status.get("containerStatuses") or []:
            t = parse_time(((cs.get("state") or {}).get("running") or {}).get("startedAt"))
            if t is not None:
                started = t
        start_time = parse_time(status.get("startTime"))
        rec.admitted_wall = start_time if start_time is not None else now
        rec.start_wall = started if started is not None else rec.admitted_wall
        rec.started = mono - max(now - rec.start_wall, 0.0)
        if state == "waiting":
            rec.crashed, rec.crashed_wall = mono, now

    def _release(self, rec: PodRecord) -> None:
        if not rec.admitted:
            return
        rec.admitted = False
        state = self._nodes.get(rec.node)
        if state is not None:
            state.usage.release(rec.key, rec.request)
        pool = self._pools.get(rec.node)
        if pool is not None and rec.pod_ip and rec.pod_ip != (state.internal_ip if state else ""):
            pool.release(rec.pod_ip)

    def _forget_pod(self, key: str) -> None:
        rec = self._pods.pop(key, None)
        if rec is not None:
            self._release(rec)
        self.timers.cancel(("pod", key))

    def _current_pod(self, key: str) -> Obj | None:
        """The informer's pod, or the newer one this agent just wrote (same uid)."""
        cached = self.pod_informer.get(key)
        rec = self._pods.get(key)
        if rec is None or rec.written is None:
            return cached
        if (
            cached is not None
            and _rv(cached) < rec.written_rv
            and (cached.get("metadata") or {}).get("uid") == rec.uid
        ):
            return rec.written
        rec.written = None
        return cached

    async def _sync_pod(self, key: str) -> None:
        pod = self._current_pod(key)
        if pod is None:
            self._forget_pod(key)
            return
        node_name = (pod.get("spec") or {}).get("nodeName", "")
        node = self.node_informer.get_by_name("", node_name)
        if node is not None and not is_managed(node):
            self._forget_pod(key)
            return
        if self._fault(node) == UNREACHABLE:  # a dead kubelet starts, stops and reports nothing
            self.timers.cancel(("pod", key))
            return
        rec = self._record(pod)
        state = self._node_state(node) if node is not None else None
        mono = self.clock.monotonic()
        if state is None:
            if rec.orphaned is None:
                rec.orphaned = mono
        else:
            rec.orphaned = None
        if (pod.get("metadata") or {}).get("deletionTimestamp") and rec.deleting is None:
            rec.deleting = mono
        for _ in range(_MAX_STEPS):
            ctx = PodContext(
                with_stage_annotations(pod, self.user_stages),
                rec,
                state,
                self.clock.now(),
                self.clock.monotonic(),
                self.options,
                self.claims_ready(pod),
            )
            deleting = (pod.get("metadata") or {}).get("deletionTimestamp") is not None
            picked = select(self.lifecycle.pod_stages(deleting), ctx, self.options.time_scale)
            if picked is None:
                self.timers.cancel(("pod", key))
                return
            stage, due = picked
            if due > ctx.mono:
                self.timers.schedule(("pod", key), due)
                return
            nxt = await self._perform_pod(ctx, stage.apply(ctx))
            if nxt is None:
                return
            pod = nxt

    def _admit(self, rec: PodRecord, state: NodeState, pod: Obj) -> None:
        state.usage.admit(rec.key, rec.request)
        rec.admitted = True
        if rec.pod_ip:
            return
        if (pod.get("spec") or {}).get("hostNetwork"):
            rec.pod_ip = state.internal_ip
            return
        pool = self._pools.get(state.name)
        rec.pod_ip = (pool.allocate() if pool is not None else None) or ""
        if not rec.pod_ip:
            log.warning(
                "node %s: pod CIDR %s exhausted; pod %s runs without an IP",
                state.name,
                state.pod_cidr,
                rec.key,
            )

    async def _perform_pod(self, ctx: PodContext, action: Action) -> Obj | None:
        """Do what the stage asked; returns the newest pod to continue with, or None to stop here."""
        rec, state, pod = ctx.record, ctx.node, ctx.pod
        md = pod.get("metadata") or {}
        if action.admit and state is not None:
            self._admit(rec, state, pod)
        if action.release:
            self._release(rec)
        if action.status is not None:
            try:
                # the body is built for this call around the informer's read-only pod, and the
                # answer is only read (kept as ``rec.written``, passed to the next stage, as the
                # informer's pods are): neither needs a private copy
                pod = await self.client.update_status(
                    PODS, status_write_body(pod, action.status), handoff=True, read_only=True
                )
            except errors.StatusError as e:
                if errors.is_not_found(e):
                    self._forget_pod(rec.key)
                    return None
                if errors.is_conflict(e):
                    raise Requeue(f"pod {rec.key}: {e.message}") from e
                raise
            rec.written = pod
            rec.written_rv = _rv(pod)
            self.stats["pod_status_writes"] += 1
            if is_ready(pod) and not is_ready(ctx.pod):
                self.stats["pods_ready"] += 1
            if "rejected" in action.flags:
                self.stats["pods_rejected"] += 1
        if action.finalizers is not None:
            try:
                pod = await self.client.update(PODS, _with_finalizers(pod, *action.finalizers))
            except errors.StatusError as e:
                if errors.is_not_found(e):
                    self._forget_pod(rec.key)
                    return None
                if errors.is_conflict(e):
                    raise Requeue(f"pod {rec.key}: {e.message}") from e
                raise
            rec.written = pod
            rec.written_rv = _rv(pod)
        if action.flags:
            rec.flags = rec.flags.union(action.flags)
        if action.fired:
            rec.fired = rec.fired | {action.fired}
        for k, v in action.mark.items():
            setattr(rec, k, v)
        if action.events:
            self._pod_events(pod, rec.node, action.events)
        if action.delete:
            try:
                await self.client.delete(
                    PODS,
                    md.get("name", ""),
                    md.get("namespace", ""),
                    grace_period_seconds=0,
                    preconditions={"uid": rec.uid},
                )
            except errors.StatusError as e:
                if not (errors.is_not_found(e) or errors.is_conflict(e)):
                    raise
            else:
                self.stats["pods_deleted"] += 1
            return None
        return pod

    # ================================================================== events

    def _recorder(self, node: str) -> EventRecorder:
        rec = self._recorders.get(node)
        if rec is None:
            rec = EventRecorder(self.client, "kubelet", host=node, clock=self.clock)
            self._recorders[node] = rec
        return rec

    def _pod_events(self, pod: Obj, node: str, events: list[Event]) -> None:
        recorder = self._recorder(node)
        base = object_reference(pod, "v1", "Pod")
        for ev in events:
            ref = dict(base)
            if ev.field_path:
                ref["fieldPath"] = ev.field_path
            recorder.event_ref(ref, ev.type, ev.reason, ev.message)

    # ================================================================== introspection

    def node_usage(self, node: str) -> dict[str, int]:
        """Resources the admitted pods of ``node`` use, plus ``pods`` (tests, ``kubectl describe``-like views)."""
        state = self._nodes.get(node)
        if state is None:
            return {}
        return {**state.usage.used, "pods": len(state.usage.pods)}


def status_write_body(pod: Obj, status: Obj) -> Obj:
    """The body of the agent's ``pods/status`` write: ``pod`` with ``status``, without
    ``metadata.managedFields``.

    kubelet's status manager sends only the status (``statusutil.PatchPodStatus``: a patch of
    ``status`` with the uid), never managedFields; an update whose body has none keeps the stored
    entries and records the writer's change against them (``decodeLiveOrNew``), so the stored
    pod, its managedFields included, is the same as with the entries sent back. Leaving them out
    spares the server copying, type-checking and decoding them on every pod start (about a
    third of the pod's JSON). The resourceVersion stays: the write is still conditional on the
    pod the agent read. ``pod`` itself is not modified (it is the informer's shared object).
    """
    md = pod.get("metadata")
    if isinstance(md, dict) and "managedFields" in md:
        return {**pod, "metadata": {k: v for k, v in md.items() if k != "managedFields"}, "status": status}
    return {**pod, "status": status}


def _with_finalizers(obj: Obj, add: tuple[str, ...], remove: tuple[str, ...]) -> Obj:
    """``obj`` with ``add`` appended to its finalizers (once each) and ``remove`` taken out."""
    md = dict(obj.get("metadata") or {})
    fins = [f for f in md.get("finalizers") or [] if f not in remove]
    fins += [f for f in add if f not in fins]
    md["finalizers"] = fins
    return {**obj, "metadata": md}


def _own_lease(lease: Obj, node: Obj) -> None:
    """kubelet's ``setNodeOwnerFunc``: a Lease without owners gets its Node as owner (once the
    Node's uid is known), so deleting the Node collects the Lease; existing owners are kept."""
    md = lease.get("metadata") or {}
    uid = (node.get("metadata") or {}).get("uid", "")
    if md.get("ownerReferences") or not uid:
        return
    lease["metadata"] = {
        **md,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": key_of(node), "uid": uid}],
    }


def _device(name: str, dev: DeviceSpec) -> Obj:
    d: Obj = {"name": name}
    if dev.attributes:
        d["attributes"] = dict(dev.attributes)
    if dev.capacity:
        d["capacity"] = {k: {"value": v} for k, v in dev.capacity.items()}
    return d
