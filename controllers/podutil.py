"""Pod helpers shared by the ReplicaSet, Deployment and DaemonSet controllers (kube's ``controller_utils.go``).

* :func:`pod_from_template` is ``GetPodFromTemplate``: template labels, annotations, finalizers and
  spec, a controller ownerReference and ``generateName: <owner>-``;
* :func:`is_pod_active`, :func:`is_pod_ready`, :func:`is_pod_available` are the predicates kube's
  status counters use (``IsPodActive``, ``IsPodReady``, ``IsPodAvailable``);
* :func:`rank_pods_for_deletion` orders pods the way ``ActivePodsWithRanks`` does when a
  ReplicaSet scales down, with the ``PodDeletionCost`` and ``LogarithmicScaleDown`` gates on
  (their default): unassigned, Pending, not Ready, cheaper, doubled-up, recently Ready, often
  restarted and young pods go first.
"""

from __future__ import annotations

import functools
import math

import orjson

from apiserver.api.types import Obj
from apiserver.client.informer import index_reads
from apiserver.meta import (
    condition,
    controller_ref,
    is_being_deleted,
    namespace_of,
    new_controller_ref,
    parse_time,
    uid_of,
)

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
#: informer index: the namespace of every object without a controller reference (adoption candidates)
ORPHANS = "orphans-by-namespace"


@index_reads("metadata.ownerReferences")
def orphan_index(obj: Obj) -> list[str]:
    """Index function for :data:`ORPHANS`: claims look at orphans only, never a namespace scan."""
    return [namespace_of(obj)] if controller_ref(obj) is None else []


def pod_from_template(owner: Obj, template: Obj, api_version: str, kind: str) -> Obj:
    """``GetPodFromTemplate`` with the owner's name as ``generateName`` prefix."""
    tmd = template.get("metadata") or {}
    md: Obj = {
        "generateName": f"{owner['metadata']['name']}-",
        "namespace": namespace_of(owner),
        "labels": dict(tmd.get("labels") or {}),
        "ownerReferences": [new_controller_ref(owner, api_version, kind)],
    }
    if tmd.get("annotations"):
        md["annotations"] = dict(tmd["annotations"])
    if tmd.get("finalizers"):
        md["finalizers"] = list(tmd["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        # an independent copy of JSON values (what an API object holds), several times faster than
        # copy.deepcopy: every controller creating pods pays it once per pod
        "spec": orjson.loads(orjson.dumps(template.get("spec") or {})),
    }


def phase_of(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_pod_active(pod: Obj) -> bool:
    """``IsPodActive``: not Succeeded, not Failed, not being deleted."""
    return phase_of(pod) not in ("Succeeded", "Failed") and not is_being_deleted(pod)


def is_pod_ready(pod: Obj) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def ready_since(pod: Obj) -> float | None:
    c = condition(pod, "Ready")
    if c is None or c.get("status") != "True":
        return None
    return parse_time(c.get("lastTransitionTime"))


def is_pod_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: Ready, and Ready for more than ``min_ready_seconds`` at ``now``."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds < now


def deletion_cost(pod: Obj) -> int:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_DELETION_COST)
    if raw is None:
        return 0
    try:
        value = int(str(raw).strip())
    except ValueError:
        return 0
    return value if -(2**31) <= value < 2**31 else 0


def _max_restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max((int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict)), default=0)


def _log_rank_diff(t1: float, t2: float, now: float) -> int:
    """``logarithmicRankDiff`` on nanosecond durations."""

    def rank(t: float) -> int:
        d = (now - t) * 1e9
        return int(math.log2(d)) if d > 0 else -1

    return rank(t1) - rank(t2)


def _time_less(t1: float | None, t2: float | None, now: float, uid1: str, uid2: str) -> bool | None:
    """Newer first with logarithmic buckets; None when equal (fall through to the next rule)."""
    if t1 == t2:
        return None
    if t1 is None or t2 is None:
        return t1 is None  # afterOrZero: the zero time goes first
    diff = _log_rank_diff(t1, t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _creation(pod: Obj) -> float | None:
    return parse_time((pod.get("metadata") or {}).get("creationTimestamp"))


class _Facts:
    """What the ranking compares, read once per pod (the comparator runs O(n log n) times)."""

    __slots__ = ("assigned", "phase", "ready", "cost", "rank", "ready_at", "restarts", "created", "uid")

    def __init__(self, pod: Obj, rank: int) -> None:
        self.assigned = bool((pod.get("spec") or {}).get("nodeName"))
        self.phase = _PHASE_ORDINAL.get(phase_of(pod), 0)
        self.ready = is_pod_ready(pod)
        self.cost = deletion_cost(pod)
        self.rank = rank
        self.ready_at = ready_since(pod) if self.ready else None
        self.restarts = _max_restarts(pod)
        self.created = _creation(pod)
        self.uid = uid_of(pod)


def _less(a: _Facts, b: _Facts, now: float) -> bool:
    """``ActivePodsWithRanks.Less``."""
    if a.assigned != b.assigned:
        return not a.assigned
    if a.phase != b.phase:
        return a.phase < b.phase
    if a.ready != b.ready:
        return not a.ready
    if a.cost != b.cost:
        return a.cost < b.cost
    if a.rank != b.rank:
        return a.rank > b.rank
    if a.ready and b.ready:
        res = _time_less(a.ready_at, b.ready_at, now, a.uid, b.uid)
        if res is not None:
            return res
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    return bool(_time_less(a.created, b.created, now, a.uid, b.uid))


def rank_pods_for_deletion(pods: list[Obj], related: list[Obj], now: float) -> list[Obj]:
    """``getPodsRankedByRelatedPodsOnSameNode`` + ``sort.Sort(ActivePodsWithRanks)``: deletion order.

    A pod's rank is how many active related pods (this ReplicaSet's and its siblings') share its node.
    """
    on_node: dict[str, int] = {}
    for p in related:
        if is_pod_active(p):
            node = (p.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [(p, _Facts(p, on_node.get((p.get("spec") or {}).get("nodeName") or "", 0))) for p in pods]

    def cmp(a: tuple[Obj, _Facts], b: tuple[Obj, _Facts]) -> int:
        if _less(a[1], b[1], now):
            return -1
        if _less(b[1], a[1], now):
            return 1
        return 0

    ranked.sort(key=functools.cmp_to_key(cmp))
    return [p for p, _ in ranked]
