"""Random histories of the scheduler cache and its snapshot, shared by the snapshot index tests.

The tests of the kept pod indexes (``test_pod_delta_reindex.py``) and of the big catch-up's
dropped spreading counts (``test_snapshot_big_catchup.py``) drive the same kinds of events —
cache assumes, confirmations by the bound pod (mostly alike, relabelled, terminating or on
another node), relabels, deletions, node relabels, the snapshot's own assumes (deferred or not)
and forgets, and for the catch-up whole gangs — each with its own mix (:class:`Mix`), and check
the indexes they keep against a rebuild after each step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
APPS = ("a", "b", "c")


def bound_copy(pod: dict[str, Any], node: str, rv: int, **changes: Any) -> dict[str, Any]:
    """``pod`` as its informer delivers it bound to ``node`` at ``rv`` (``labels=``, ``deleting=``)."""
    meta = {**pod["metadata"], "resourceVersion": str(rv)}
    if "labels" in changes:
        meta["labels"] = changes["labels"]
    if changes.get("deleting"):
        meta["deletionTimestamp"] = "2026-12-05T10:00:00Z"
    return {**pod, "metadata": meta, "spec": {**pod["spec"], "nodeName": node}}


def pod_labels(rng: random.Random, k: int, *, pod_name: bool = True) -> dict[str, str]:
    """An app label (sometimes none) and a StatefulSet pod's index (and its own name) labels."""
    out = {"apps.kubernetes.io/pod-index": str(k)}
    if pod_name:
        out = {"statefulset.kubernetes.io/pod-name": f"p{k}", **out}
    if rng.random() < 0.9:
        out["app"] = rng.choice(APPS)
    return out


def app_counter(app: str) -> Any:
    """A node's count of the live ``default`` pods labelled ``app=<app>`` (what a spreading
    constraint on that label counts), computed from its pods as a rebuild would."""

    def count(ni: NodeInfo) -> int:
        return sum(
            1
            for p in ni.pods
            if not p.terminating and p.namespace == "default" and p.labels.get("app") == app
        )

    return count


@dataclass(frozen=True)
class Mix:
    """Each event's upper bound on one uniform draw, in order (an event whose bound is not above
    the previous one's never happens, and draws nothing)."""

    gang: float
    assume: float
    confirm: float
    relabel: float
    remove: float
    node_zone: float
    snapshot_assume: float
    forget: float


@dataclass
class CacheHistory:
    """One random history's state: what the cache assumed, what is bound, the snapshot's own."""

    cache: Cache
    snap: Snapshot
    names: list[str]
    mix: Mix
    pod_name_label: bool = True
    assumed: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    bound: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    mine: list[tuple[PodInfo, str]] = field(default_factory=list)

    def _labels(self, rng: random.Random, k: int) -> dict[str, str]:
        return pod_labels(rng, k, pod_name=self.pod_name_label)

    def step(self, rng: random.Random, step: int) -> None:
        """One random event of :attr:`mix` at resourceVersion ``step + 1``."""
        cache, snap, names, m = self.cache, self.snap, self.names, self.mix
        rv = step + 1
        op = rng.random()
        if op < m.gang:  # a gang: a pod on each of many nodes, in the cache or in the snapshot
            in_snap = rng.random() < 0.5
            app = rng.choice(APPS)
            for j, node in enumerate(rng.sample(names, rng.randrange(4, len(names) + 1))):
                labels = {"app": app, "apps.kubernetes.io/pod-index": str(j)}
                p = make_pod(f"g{step}-{j}", uid=f"g{step}-{j}", labels=labels, requests={"cpu": "10m"})
                if in_snap:
                    pi = PodInfo(p)
                    snap.assume_pod(pi, node, defer_index=rng.random() < 0.8)
                    self.mine.append((pi, node))
                else:
                    cache.assume_pod(p, node)
                    self.assumed.append((p, node))
        elif op < m.assume:  # the cache assumes a pod
            p = make_pod(f"p{step}", uid=f"u{step}", labels=self._labels(rng, step), requests={"cpu": "10m"})
            node = rng.choice(names)
            cache.assume_pod(p, node)
            self.assumed.append((p, node))
        elif op < m.confirm and self.assumed:  # its bound self confirms it, mostly alike
            p, node = self.assumed.pop(rng.randrange(len(self.assumed)))
            kind = rng.random()
            if kind < 0.7:
                obj = bound_copy(p, node, rv)
            elif kind < 0.8:
                obj = bound_copy(p, node, rv, labels=self._labels(rng, step))
            elif kind < 0.9:
                obj = bound_copy(p, node, rv, deleting=True)
            else:
                obj = bound_copy(p, rng.choice(names), rv)
            cache.add_pod(obj)
            self.bound.append((obj, obj["spec"]["nodeName"]))
        elif op < m.relabel and self.bound:  # relabelled or marked for deletion
            i = rng.randrange(len(self.bound))
            obj, node = self.bound[i]
            new = (
                bound_copy(obj, node, rv, labels=self._labels(rng, step))
                if rng.random() < 0.6
                else bound_copy(obj, node, rv, deleting=True)
            )
            cache.update_pod(obj, new)
            self.bound[i] = (new, node)
        elif op < m.remove and self.bound:
            obj, _ = self.bound.pop(rng.randrange(len(self.bound)))
            cache.remove_pod(obj)
        elif op < m.node_zone:  # a node moves to another zone
            i = rng.randrange(len(names))
            cache.update_node(None, make_node(names[i], labels={ZONE: f"z{rng.randrange(3)}"}))
        elif op < m.snapshot_assume:  # the snapshot's own assume (a search), its index deferred or not
            pi = PodInfo(
                make_pod(f"w{step}", uid=f"w{step}", labels=self._labels(rng, step), requests={"cpu": "5m"})
            )
            node = rng.choice(names)
            snap.assume_pod(pi, node, defer_index=rng.random() < 0.7)
            self.mine.append((pi, node))
        elif op < m.forget and self.mine:  # and its forget
            pi, node = self.mine.pop(rng.randrange(len(self.mine)))
            snap.forget_pod(pi, node)

    def update_snapshot(self) -> None:
        """The cache's catch-up of the snapshot (the snapshot's own assumes end with it)."""
        self.cache.update_snapshot(self.snap)
        self.mine.clear()
