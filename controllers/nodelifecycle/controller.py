"""The node lifecycle controller (kube-controller-manager's ``node-lifecycle-controller``).

Every ``monitor_period`` it looks at every Node (kube's ``monitorNodeHealth``):

* **health** — a node's *probe time* moves whenever its Lease's ``renewTime`` or its Ready
  condition's ``lastHeartbeatTime`` changes. A node not probed within ``grace_period``
  (``--node-monitor-grace-period``; ``startup_grace_period`` while it never posted a Ready
  condition) gets its kubelet-owned conditions set to ``Unknown`` (:mod:`.health`); when that
  takes Ready away from ``True`` the controller records ``NodeNotReady`` on the node and marks
  its pods not Ready (``MarkPodsNotReady``: pod Ready=False, a ``NodeNotReady`` Warning each);
* **zones** — the Ready statuses of each zone's nodes give the zone's state and tainting rate
  (:mod:`.zones`); all zones fully disrupted stops tainting and removes the NoExecute taints;
* **taints** — NoSchedule ``not-ready``/``unreachable`` follow Ready at once; the NoExecute
  ones are queued per zone and added at the zone's rate; a node Ready again loses both at once.

Pods are evicted by the taint-eviction controller (:mod:`.tainteviction`), not here. Node and
Lease informers feed the caches; node events only enqueue the node for its taints, so a
heartbeat costs nothing. Times are the injected clock's, so tests step a ``FakeClock``.

A pass reads every node and Lease, but what it derives from a Node object is kept by its
resourceVersion (:mod:`.views`) and a node whose same object needed nothing last pass is not
re-synced, so an idle fleet's pass is a few lookups per node (``incremental``, gangplane's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.informer import NODE_NAME, Informer, node_name_index
from apiserver.client.interface import LEASES, NODES, PODS, Client
from apiserver.meta import Clock, key_of, name_of, rfc3339
from controllers.metrics import ControllerMetrics
from controllers.nodelifecycle import health, zones
from controllers.nodelifecycle.metrics import ZoneCollector
from controllers.nodelifecycle.views import NodeViews
from controllers.timed import TimedController

log = logging.getLogger("gangplane.nodelifecycle")

NAME = "node-lifecycle-controller"
#: kube's event source for this controller
EVENT_SOURCE = "node-controller"
NODE_LEASE_NAMESPACE = "kube-node-lease"
MONITOR = "monitor"


def _rv(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


@dataclass(frozen=True)
class NodeLifecycleOptions:
    """kube-controller-manager's node lifecycle flags, in simulated seconds.

    ``time_scale`` multiplies the periods and divides the rates, as it does the node agent's
    simulated durations (``gangplane serve`` passes the agent's scale).
    """

    #: ``--node-monitor-grace-period``: kube's default is 50 s since v1.32 (40 s before)
    grace_period: float = 50.0
    #: ``--node-startup-grace-period``
    startup_grace_period: float = 60.0
    #: ``--node-monitor-period``
    monitor_period: float = 5.0
    eviction_rate: float = 0.1
    secondary_eviction_rate: float = 0.01
    large_cluster_size: int = 50
    unhealthy_zone_threshold: float = 0.55
    time_scale: float = 1.0
    #: gangplane's, not a kube flag: keep what a pass derives from an unchanged Node (keyed by its
    #: resourceVersion) instead of recomputing it every pass; False is the full recomputation
    #: the incremental pass is tested to equal
    incremental: bool = True

    def __post_init__(self) -> None:
        if self.time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        if min(self.grace_period, self.startup_grace_period, self.monitor_period) <= 0:
            raise ValueError("grace periods and the monitor period must be > 0")

    def scaled(self, seconds: float) -> float:
        return seconds * self.time_scale

    def zone_config(self) -> zones.ZoneConfig:
        return zones.ZoneConfig(
            eviction_rate=self.eviction_rate / self.time_scale,
            secondary_rate=self.secondary_eviction_rate / self.time_scale,
            large_cluster_size=self.large_cluster_size,
            unhealthy_threshold=self.unhealthy_zone_threshold,
        )


@dataclass
class NodeHealth:
    """What the controller remembers of a node (kube's ``nodeHealthData``)."""

    probe: float
    heartbeat: str = ""
    lease_renew: str = ""
    ready: str = ""


@dataclass
class ZoneInfo:
    state: str = zones.INITIAL
    size: int = 0
    not_ready: int = 0
    evictions: int = 0
    queue: zones.RateLimitedQueue = field(default_factory=lambda: zones.RateLimitedQueue(0.0))


class NodeLifecycleController(TimedController):
    """See the module docstring. ``zone_states()`` is what kube exports as metrics."""

    name = NAME

    def __init__(
        self,
        client: Client,
        *,
        options: NodeLifecycleOptions | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        zone_metrics: ZoneCollector | None = None,
        **kw: Any,
    ) -> None:
        self.options = options or NodeLifecycleOptions()
        self._health: dict[str, NodeHealth] = {}
        self._zones: dict[str, ZoneInfo] = {}
        self._all_disrupted = False
        self._zone_metrics = zone_metrics
        #: node -> resourceVersion of this controller's last taint write (older cached copies wait)
        self._written: dict[str, int] = {}
        self._views = NodeViews(enabled=self.options.incremental)
        #: node -> (resourceVersion, master disruption mode) of its last taint sync that changed
        #: nothing and queued nothing: the same object in the same mode gives the same answer
        self._settled: dict[str, tuple[str, bool]] = {}
        clock = clock or Clock()
        super().__init__(
            client,
            clock=clock,
            metrics=metrics,
            recorder=EventRecorder(client, EVENT_SOURCE, clock=clock),
            **kw,
        )

    def setup(self) -> None:
        self.nodes: Informer = self.informers.informer(NODES)
        self.leases: Informer = self.informers.informer(LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.pods: Informer = self.informers.informer(PODS, field_selector="spec.nodeName!=")
        self.pods.add_indexer(NODE_NAME, node_name_index)
        self.nodes.add_event_handler(
            lambda n: self.enqueue(("node", name_of(n))),
            self._on_node_update,
            lambda n: self.enqueue(MONITOR),
        )

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        if health.ready_status(old) != health.ready_status(new) or (old.get("spec") or {}).get("taints") != (
            new.get("spec") or {}
        ).get("taints"):
            self.enqueue(("node", name_of(new)))

    async def on_synced(self) -> None:
        if self._zone_metrics is not None:
            self._zone_metrics.source = self.zone_rows
        self.enqueue(MONITOR)

    async def stop(self) -> None:
        if self._zone_metrics is not None and self._zone_metrics.source == self.zone_rows:
            self._zone_metrics.source = None
        await super().stop()

    def zone_rows(self) -> list[tuple[str, int, int, int]]:
        """(zone, nodes, not Ready, NoExecute taintings) per zone, for the ``node_collector_*`` metrics."""
        return [(z, i.size, i.not_ready, i.evictions) for z, i in sorted(self._zones.items())]

    # ------------------------------------------------------------------ views for tests and metrics
    def zone_states(self) -> dict[str, str]:
        """Each zone's disruption state (kube's ``node_collector_zone_health`` in words)."""
        return {z: info.state for z, info in self._zones.items()}

    def pending_taints(self, zone: str) -> int:
        """Nodes waiting in ``zone``'s rate-limited NoExecute queue."""
        info = self._zones.get(zone)
        return len(info.queue) if info else 0

    # ------------------------------------------------------------------ sync
    async def sync(self, key: Any) -> None:
        if key == MONITOR:
            await self._monitor()
            return
        _, name = key
        node = self.nodes.get_by_name("", name)
        if node is not None:
            await self._sync_taints(node)

    async def _monitor(self) -> None:
        now_mono = self.clock.monotonic()
        nodes = self.nodes.list()
        names = {name_of(n) for n in nodes}
        for gone in set(self._health) - names:
            del self._health[gone]
            self._written.pop(gone, None)
            self._views.forget(gone)
            self._settled.pop(gone, None)
            for info in self._zones.values():
                info.queue.remove(gone)
        next_due = now_mono + self.options.scaled(self.options.monitor_period)
        for node in nodes:
            node, due = await self._check_health(node, now_mono)
            if due is not None:
                next_due = min(next_due, due)
        self._update_zones(self.nodes.list(), now_mono)
        for node in self.nodes.list():
            await self._sync_taints(node)
        if self.options.incremental:
            await self._tainting_pass()  # the pass settled nodes skipped (a no-op after any other)
        for info in self._zones.values():
            at = info.queue.next_token_at(self.clock.monotonic())
            if at is not None:
                next_due = min(next_due, at)
        self.timers.schedule(MONITOR, next_due)

    async def _check_health(self, node: Obj, now_mono: float) -> tuple[Obj, float | None]:
        """``tryUpdateNodeHealth``: move the probe time on a heartbeat, go Unknown past the grace."""
        name = name_of(node)
        lease = self.leases.get_by_name(NODE_LEASE_NAMESPACE, name)
        renew = str(((lease or {}).get("spec") or {}).get("renewTime") or "")
        view = self._views.get(name, node)
        beat = view.heartbeat
        h = self._health.get(name)
        if h is None:
            h = self._health[name] = NodeHealth(probe=now_mono, heartbeat=beat, lease_renew=renew)
        elif beat != h.heartbeat or renew != h.lease_renew:
            h.probe, h.heartbeat, h.lease_renew = now_mono, beat, renew
        grace = self.options.scaled(
            self.options.startup_grace_period if view.never else self.options.grace_period
        )
        deadline = h.probe + grace
        if now_mono < deadline:
            return node, deadline
        conds = health.unknown_conditions(node, self.clock.now())
        if conds is None:
            return node, None
        was = view.ready
        body = {**node, "status": {**(node.get("status") or {}), "conditions": conds}}
        try:
            node = await self.client.update_status(NODES, body)
        except errors.StatusError as e:
            if e.code in (404, 409):
                self.enqueue_after(MONITOR, 0.0)
                return node, None
            raise
        log.info("node %s: kubelet stopped posting status, Ready=Unknown", name)
        if was == "True":
            self.recorder.event(node, NORMAL, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
            await self._mark_pods_not_ready(name)
        return node, None

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """``MarkPodsNotReady``: the pods of a node that stopped reporting are no longer Ready."""
        for key in sorted(self.pods.index_keys(NODE_NAME, node_name)):
            pod = self.pods.get(key)
            if pod is None:
                continue
            conds = (pod.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds):
                continue
            ts = rfc3339(self.clock.now())
            new_conds = [
                {**c, "status": "False", "lastTransitionTime": ts} if c.get("type") == "Ready" else c
                for c in conds
            ]
            body = {**pod, "status": {**(pod.get("status") or {}), "conditions": new_conds}}
            md = pod.get("metadata") or {}
            try:
                await self.client.update_status(PODS, body, md.get("namespace", ""))
            except errors.StatusError as e:
                if e.code in (404, 409):
                    continue
                raise
            self.recorder.event(pod, WARNING, "NodeNotReady", "Node is not ready")

    def _update_zones(self, nodes: list[Obj], now_mono: float) -> None:
        """``handleDisruption``: zone states, their tainting rates, master disruption mode."""
        cfg = self.options.zone_config()
        members: dict[str, list[str]] = {}
        for node in nodes:
            view = self._views.get(name_of(node), node)
            members.setdefault(view.zone, []).append(view.ready)
        for z in set(self._zones) - set(members):
            del self._zones[z]
        states = {}
        for z, statuses in members.items():
            info = self._zones.setdefault(z, ZoneInfo())
            info.size = len(statuses)
            info.not_ready, states[z] = zones.zone_state(statuses, cfg.unhealthy_threshold)
        all_full = bool(states) and all(s == zones.FULL for s in states.values())
        if all_full and not self._all_disrupted:
            log.warning("Controller detected that all Nodes are not-Ready. Entering master disruption mode.")
        if not all_full and self._all_disrupted:
            log.info("Controller detected that some Nodes are Ready. Exiting master disruption mode.")
            for h in self._health.values():  # every node gets a fresh grace period
                h.probe = now_mono
        self._all_disrupted = all_full
        for z, state in states.items():
            info = self._zones[z]
            info.state = state
            rate = 0.0 if all_full else zones.zone_rate(state, info.size, cfg)
            info.queue.swap_rate(rate, now_mono)

    async def _sync_taints(self, node: Obj) -> None:
        """The NoSchedule taint follows Ready; the NoExecute one waits for the zone's limiter.

        A node already carrying the other NoExecute taint has it swapped at once; a node Ready
        again (or every zone down) loses its NoExecute taint at once and leaves the queue.
        """
        name = name_of(node)
        if _rv(node) < self._written.get(name, 0):
            return  # the cache has not seen our last write; its event brings the node back
        view = self._views.get(name, node)
        settled_key = (view.rv, self._all_disrupted)
        if self.options.incremental and view.rv and self._settled.get(name) == settled_key:
            # nothing to write or queue, as last time; only a queue could let a node through
            for info in self._zones.values():
                if info.queue:
                    await self._tainting_pass()
                    break
            return
        want = health.taint_key_for(view.ready)
        taints = list((node.get("spec") or {}).get("taints") or [])
        queued = False
        now = self.clock.now()
        new = health.with_taint(taints, want, "NoSchedule", now)
        if not want or self._all_disrupted:
            new = health.with_taint(new, "", "NoExecute", now)
            for info in self._zones.values():
                info.queue.remove(name)
        elif not health.has_taint(node, want, "NoExecute"):
            if any(health.has_taint(node, k, "NoExecute") for k in health.CONTROLLER_TAINTS):
                new = health.with_taint(new, want, "NoExecute", now)
            else:
                self._zones.setdefault(view.zone, ZoneInfo()).queue.add(name)
                queued = True
        if new == taints and not queued:
            self._settled[name] = settled_key
        else:
            self._settled.pop(name, None)
        await self._write_taints(node, taints, new)
        await self._tainting_pass()

    async def _tainting_pass(self) -> None:
        """``doNoExecuteTaintingPass``: every zone lets through the nodes its limiter allows."""
        mono = self.clock.monotonic()
        for info in self._zones.values():
            while (name := info.queue.take(mono)) is not None:
                try:
                    node = await self.client.get(NODES, name)
                except errors.StatusError as e:
                    if e.code == 404:
                        continue
                    raise
                want = health.taint_key_for(health.ready_status(node))
                if not want:
                    continue
                taints = list((node.get("spec") or {}).get("taints") or [])
                new = health.with_taint(taints, want, "NoExecute", self.clock.now())
                if new != taints:
                    info.evictions += 1
                await self._write_taints(node, taints, new)
            at = info.queue.next_token_at(mono)
            if at is not None:
                self.timers.schedule(MONITOR, at)

    async def _write_taints(self, node: Obj, old: list[Obj], new: list[Obj]) -> None:
        if new == old:
            return
        spec = {**(node.get("spec") or {})}
        if new:
            spec["taints"] = new
        else:
            spec.pop("taints", None)
        try:
            out = await self.client.update(NODES, {**node, "spec": spec})
            self._written[name_of(node)] = _rv(out)
        except errors.StatusError as e:
            if e.code in (404, 409):
                self.enqueue_after(("node", name_of(node)), 0.0)
                return
            raise
        log.info("node %s: taints %s", key_of(node), [f"{t.get('key')}:{t.get('effect')}" for t in new])


__all__ = ["EVENT_SOURCE", "NAME", "NodeHealth", "NodeLifecycleController", "NodeLifecycleOptions"]
