"""PodGroups as the scheduler sees them: the policy read off the object, and each group's members.

A pod joins a group through ``spec.schedulingGroup.podGroupName`` (same namespace). The
scheduler's cache tracks every member it knows in one of three states (kube's
``podGroupState``): *unscheduled* (pending, in the queue or in flight), *assumed* (placed by
this scheduler, binding in flight) and *assigned* (``spec.nodeName`` set, seen by the informer).
Gang scheduling counts all three towards "minCount pods have appeared", and assumed plus
assigned towards "minCount pods are scheduled", so pods added later (scale 3→5, a rolling-update
replacement) join a group that is already placed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apiserver.api.types import Obj

UNSCHEDULED = "unscheduled"
ASSUMED = "assumed"
ASSIGNED = "assigned"


def pod_group_name(pod: Obj) -> str:
    """``spec.schedulingGroup.podGroupName`` or ``""``."""
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or ""


def pod_group_key(pod: Obj) -> str:
    """``namespace/podGroupName`` of the pod's group, or ``""`` when it has none (the name read
    as :func:`pod_group_name` reads it, inline: this runs several times per created pod)."""
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if not name:
        return ""
    return f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}"


def group_key_of(pod_group: Obj) -> str:
    meta = pod_group.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def is_gang(pod_group: Obj | None) -> bool:
    return bool((((pod_group or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang") is not None)


def min_count(pod_group: Obj | None) -> int:
    """The gang's ``minCount`` (1 for a basic group: one pod is enough to make progress)."""
    gang = (((pod_group or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if gang is None:
        return 1
    return max(1, int(gang.get("minCount") or 1))


def gang_min_count(pod_group: Obj) -> int | None:
    """:func:`min_count` of a gang (:func:`is_gang`), ``None`` for a group that is not one: both
    answers from one read of the policy, for PreEnqueue's check of every created member."""
    gang = ((pod_group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if gang is None:
        return None
    return max(1, int(gang.get("minCount") or 1))


def topology_key(pod_group: Obj | None) -> str:
    """The label key of ``schedulingConstraints.topology[0]`` (at most one is allowed), or ``""``."""
    topo = ((((pod_group or {}).get("spec") or {}).get("schedulingConstraints") or {}).get("topology")) or []
    return (topo[0] or {}).get("key", "") if topo else ""


def priority_of(pod_group: Obj | None) -> int:
    """The PodGroup's priority (``spec.priority``, set by Priority admission; 0 when unset)."""
    return int(((pod_group or {}).get("spec") or {}).get("priority") or 0)


def disruption_all(pod_group: Obj | None) -> bool:
    return "all" in ((((pod_group or {}).get("spec") or {}).get("disruptionMode")) or {})


@dataclass
class PodGroupState:
    """The members of one group the scheduler knows, by pod key, with their node when placed."""

    key: str
    unscheduled: dict[str, Obj] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)
    assigned: dict[str, str] = field(default_factory=dict)

    def all_count(self) -> int:
        return len(self.unscheduled) + len(self.assumed) + len(self.assigned)

    def scheduled_count(self) -> int:
        return len(self.assumed) + len(self.assigned)

    def scheduled_nodes(self) -> set[str]:
        """Nodes already holding (or about to hold) a member: they pin the group's topology domain."""
        return set(self.assumed.values()) | set(self.assigned.values())

    def empty(self) -> bool:
        return not (self.unscheduled or self.assumed or self.assigned)


class PodGroupStates:
    """Every known group's :class:`PodGroupState`; the cache and the informer handlers keep it current."""

    def __init__(self) -> None:
        self._groups: dict[str, PodGroupState] = {}
        #: pod key -> (group key, state): one tuple per group and state (:meth:`_pair`) that every
        #: member in that state shares, not one per member (a 5,000-pod gang's members would each
        #: keep one more long-lived object for the cyclic collector)
        self._where: dict[str, tuple[str, str]] = {}
        #: (group key, state) -> itself, for the groups in :attr:`_groups` (dropped with the group)
        self._pairs: dict[tuple[str, str], tuple[str, str]] = {}

    def _pair(self, gkey: str, state: str) -> tuple[str, str]:
        """The shared ``(gkey, state)`` tuple."""
        pair = (gkey, state)
        return self._pairs.setdefault(pair, pair)

    def get(self, key: str) -> PodGroupState | None:
        return self._groups.get(key)

    def get_or_empty(self, key: str) -> PodGroupState:
        return self._groups.get(key) or PodGroupState(key)

    def _drop(self, pod_key: str) -> None:
        where = self._where.pop(pod_key, None)
        if where is None:
            return
        gkey, st = where
        g = self._groups.get(gkey)
        if g is None:
            return
        getattr(g, st).pop(pod_key, None)
        if g.empty():
            del self._groups[gkey]
            for state in (UNSCHEDULED, ASSUMED, ASSIGNED):
                self._pairs.pop((gkey, state), None)

    def set(self, pod: Obj, state: str, node_name: str = "", pkey: str = "") -> None:
        """Record the pod (a member of some group, else ignored) as ``state``; ``pkey``, the
        pod's ``namespace/name`` when the caller has it already."""
        gkey = pod_group_key(pod)
        if not gkey and not self._where:
            return  # no group's pod is recorded: nothing to drop (every pod of a plain workload)
        if not pkey:
            meta = pod.get("metadata") or {}
            pkey = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        where = self._where.get(pkey)
        if where is not None and where[0] == gkey and gkey in self._groups:
            # moving within its group: keep the group's state object (cycles hold on to it)
            getattr(self._groups[gkey], where[1]).pop(pkey, None)
            del self._where[pkey]
        elif where is not None:
            self._drop(pkey)
        if not gkey:
            return
        g = self._groups.get(gkey)
        if g is None:
            g = self._groups[gkey] = PodGroupState(gkey)
        if state == UNSCHEDULED:
            g.unscheduled[pkey] = pod
        else:
            getattr(g, state)[pkey] = node_name
        self._where[pkey] = self._pair(gkey, state)

    def confirm(self, pkey: str, node_name: str) -> bool:
        """Record the pod with key ``pkey``, recorded as assumed, as assigned to ``node_name`` in
        its group; False (nothing changed) when it is not recorded as assumed.

        What :meth:`set` (``ASSIGNED``) does for the bound revision of an assumed member whose
        group is the assumed one's (the caller knows: the same namespace and an equal ``spec``),
        without reading the group's key off the pod again.
        """
        where = self._where.get(pkey)
        if where is None or where[1] != ASSUMED:
            return False
        gkey = where[0]
        g = self._groups.get(gkey)
        if g is None:
            return False
        g.assumed.pop(pkey, None)
        del self._where[pkey]
        g.assigned[pkey] = node_name
        self._where[pkey] = self._pair(gkey, ASSIGNED)
        return True

    def remove(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        self._drop(f"{meta.get('namespace', '')}/{meta.get('name', '')}")

    def state_of(self, pod: Obj) -> str:
        meta = pod.get("metadata") or {}
        where = self._where.get(f"{meta.get('namespace', '')}/{meta.get('name', '')}")
        return where[1] if where else ""

    def __len__(self) -> int:
        return len(self._groups)
