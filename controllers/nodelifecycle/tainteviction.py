"""The taint-eviction controller (kube-controller-manager's ``taint-eviction-controller``).

A pod bound to a node with ``NoExecute`` taints is deleted:

* at once when one of the taints is not tolerated;
* ``min(tolerationSeconds)`` (over the tolerations that match the node's NoExecute taints)
  after the controller first saw it there, when every taint is tolerated for a while — the
  ``DefaultTolerationSeconds`` admission plugin gives every pod 300 s for ``not-ready`` and
  ``unreachable``;
* never when every taint is tolerated without ``tolerationSeconds``.

A scheduled deletion is cancelled when the taints go away (``Cancelling deletion of Pod``).
Before deleting, the controller adds the ``DisruptionTarget`` condition (reason
``DeletionByTaintManager``) to the pod's status and records ``TaintManagerEviction``
(``Marking for deletion Pod ns/name``); the deletion uses the pod's own grace period.
Deadlines are on the injected clock's monotonic time. gangplane's one departure: ``time_scale``
multiplies ``tolerationSeconds`` as the node agent's scale does grace periods (``gangplane
serve``: 0.1, so the admission default of 300 s takes 30 s); at 1.0 the controller is kube's.
"""

from __future__ import annotations

import logging
from typing import Any

from apiserver import errors
from apiserver.api.nodematching import tolerates
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.informer import NODE_NAME, Informer, node_name_index
from apiserver.client.interface import NODES, PODS, Client
from apiserver.meta import Clock, key_of, name_of, rfc3339, split_key
from controllers.metrics import ControllerMetrics
from controllers.timed import TimedController

log = logging.getLogger("gangplane.tainteviction")

NAME = "taint-eviction-controller"
DISRUPTION_REASON = "DeletionByTaintManager"
DISRUPTION_MESSAGE = "Taint manager: deleting due to NoExecute taint"


def no_execute_taints(node: Obj | None) -> list[Obj]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]


def eviction_delay(pod: Obj, taints: list[Obj]) -> float | None:
    """Seconds the pod may stay (0: now), or None when it tolerates every taint for ever.

    kube's ``getMatchingTolerations`` + ``getMinTolerationTime``: every taint needs a matching
    toleration; the shortest ``tolerationSeconds`` among the matching ones wins (negative is 0).
    """
    tolerations = [t for t in (pod.get("spec") or {}).get("tolerations") or [] if isinstance(t, dict)]
    used: list[Obj] = []
    for taint in taints:
        match = [t for t in tolerations if tolerates(t, taint)]
        if not match:
            return 0.0
        used.extend(match)
    seconds = [t.get("tolerationSeconds") for t in used if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    return max(0.0, float(min(int(s) for s in seconds)))


class TaintEvictionController(TimedController):
    """See the module docstring; keys are ``("pod", ns/name)`` and ``("node", name)``."""

    name = NAME
    workers = 4

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        time_scale: float = 1.0,
        **kw: Any,
    ) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        #: gangplane's: ``tolerationSeconds`` are simulated seconds, scaled like the node agent's
        self.time_scale = time_scale
        #: pod key -> (monotonic time first seen under the taints, deletion due)
        self._scheduled: dict[str, tuple[float, float]] = {}
        #: uids this controller deleted (the cache may not show the deletion yet)
        self._evicted: set[str] = set()
        clock = clock or Clock()
        super().__init__(
            client, clock=clock, metrics=metrics, recorder=EventRecorder(client, NAME, clock=clock), **kw
        )

    def setup(self) -> None:
        self.nodes: Informer = self.informers.informer(NODES)
        self.pods: Informer = self.informers.informer(PODS, field_selector="spec.nodeName!=")
        self.pods.add_indexer(NODE_NAME, node_name_index)
        self.nodes.add_event_handler(
            lambda n: self.enqueue(("node", name_of(n))),
            self._on_node_update,
            lambda n: self.enqueue(("node", name_of(n))),
        )
        self.pods.add_event_handler(
            lambda p: self.enqueue(("pod", key_of(p))),
            lambda old, new: self.enqueue(("pod", key_of(new))),
            lambda p: self.enqueue(("pod", key_of(p))),
        )

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        if no_execute_taints(old) != no_execute_taints(new):
            self.enqueue(("node", name_of(new)))

    def scheduled(self) -> dict[str, float]:
        """Pods waiting out a toleration and their monotonic deletion times."""
        return {k: due for k, (_, due) in self._scheduled.items()}

    async def sync(self, key: Any) -> None:
        kind, name = key
        if kind == "node":
            for pod_key in self.pods.index_keys(NODE_NAME, name):
                self.enqueue(("pod", pod_key))
            return
        await self._sync_pod(name)

    def _cancel(self, pod_key: str, pod: Obj | None) -> None:
        if self._scheduled.pop(pod_key, None) is not None:
            self.timers.cancel(("pod", pod_key))
            if pod is not None:
                self.recorder.event(
                    pod, NORMAL, "TaintManagerEviction", f"Cancelling deletion of Pod {pod_key}"
                )

    async def _sync_pod(self, pod_key: str) -> None:
        pod = self.pods.get(pod_key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            if pod is None or (pod.get("metadata") or {}).get("uid") in self._evicted:
                self._evicted.discard(((pod or {}).get("metadata") or {}).get("uid", ""))
            self._scheduled.pop(pod_key, None)
            self.timers.cancel(("pod", pod_key))
            return
        if (pod.get("metadata") or {}).get("uid") in self._evicted:
            return
        node = self.nodes.get_by_name("", (pod.get("spec") or {}).get("nodeName", ""))
        taints = no_execute_taints(node)
        if not taints:
            self._cancel(pod_key, pod)
            return
        delay = eviction_delay(pod, taints)
        if delay is None:
            self._cancel(pod_key, pod)
            return
        mono = self.clock.monotonic()
        first, _ = self._scheduled.get(pod_key, (mono, 0.0))
        due = first + delay * self.time_scale
        self._scheduled[pod_key] = (first, due)
        if due > mono:
            self.timers.schedule(("pod", pod_key), due)
            return
        await self._evict(pod_key, pod)

    async def _evict(self, pod_key: str, pod: Obj) -> None:
        """``addConditionAndDeletePod``: DisruptionTarget on the status, then a graceful delete."""
        ns, name = split_key(pod_key)
        self.recorder.event(pod, NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {pod_key}")
        conds = [
            c
            for c in (pod.get("status") or {}).get("conditions") or []
            if c.get("type") != "DisruptionTarget"
        ]
        conds.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": rfc3339(self.clock.now()),
                "reason": DISRUPTION_REASON,
                "message": DISRUPTION_MESSAGE,
            }
        )
        try:
            await self.client.update_status(
                PODS, {**pod, "status": {**(pod.get("status") or {}), "conditions": conds}}, ns
            )
            await self.client.delete(
                PODS, name, ns, preconditions={"uid": (pod.get("metadata") or {}).get("uid")}
            )
        except errors.StatusError as e:
            if e.code == 404:
                self._scheduled.pop(pod_key, None)
                return
            raise  # a conflict retries with the fresh pod
        self._scheduled.pop(pod_key, None)
        self._evicted.add((pod.get("metadata") or {}).get("uid", ""))
        log.info("evicted pod %s (NoExecute taint)", pod_key)


__all__ = [
    "DISRUPTION_MESSAGE",
    "DISRUPTION_REASON",
    "NAME",
    "TaintEvictionController",
    "eviction_delay",
    "no_execute_taints",
]
