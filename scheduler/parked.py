"""The scheduling queue's unschedulablePods, with the pods PreEnqueue holds indexed by PodGroup (gangplane).

kube's ``moveAllToActiveOrBackoffQueue`` asks every parked pod whether a cluster event may help
it. Gang members wait at PreEnqueue (GangScheduling) until ``minCount`` of them exist, and the
plugin's hint for a bound pod queues only members of that pod's own group. With ten gangs of
5,000 being created while another gang binds, that is 25,000 held pods asked about each of
5,000 bindings: 125 million hint calls, which took half the process's CPU in ``gangs-10x5000``.

:class:`ParkedPods` is the ``uid -> QueuedPodInfo`` dict the queue always had, keeping besides
the held pods of each PodGroup apart, with the sets of plugins holding them. A registration
declaring ``same_pod_group`` (its hint queues only pods of the event pod's own PodGroup) lets
:meth:`candidates` leave out, group by group, the held pods that event cannot concern, in O(1)
per group instead of one hint call per pod. Which pods move, and in which order (the dict's
insertion order, kube's map has none), is what the full scan gives.

Which held groups an event leaves out depends only on the event and on each group's *sets* of
holding plugins, which change far less often than pods are parked (a gang's members join a
set already counted): :meth:`candidates` keeps that answer per event until a group or one of
its holding sets appears or goes (``_shape``), so each of a big gang's 5,000 bound pods costs
one lookup instead of asking every held group again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from scheduler.podgroups import pod_group_key

if TYPE_CHECKING:
    from scheduler.queue import QueuedPodInfo

_D = TypeVar("_D")
_MISSING: Any = object()


class ParkedPods(dict[str, "QueuedPodInfo"]):
    """unschedulablePods (see the module docstring). Written only with ``d[uid] = q``, ``del``
    and ``pop``; a pod's ``gated`` and ``unschedulable_plugins`` are read when it is stored."""

    def __init__(self) -> None:
        super().__init__()
        self._seq = 0
        #: uid -> insertion number (a stored uid keeps its place, as in a dict)
        self._order: dict[str, int] = {}
        #: pods not held at PreEnqueue, or held without a PodGroup
        self._loose: dict[str, QueuedPodInfo] = {}
        #: PodGroup key -> its held pods
        self._held: dict[str, dict[str, QueuedPodInfo]] = {}
        #: PodGroup key -> how many of its held pods each set of plugins holds
        self._holders: dict[str, Counter[frozenset[str]]] = {}
        #: uid -> (PodGroup key, holding plugins) of a held pod: one tuple per group and set of
        #: plugins (:attr:`_pairs`), shared by its pods (a big gang's members wait by thousands)
        self._where: dict[str, tuple[str, frozenset[str]]] = {}
        #: each (PodGroup key, holding plugins) some held pod has, by itself
        self._pairs: dict[tuple[str, frozenset[str]], tuple[str, frozenset[str]]] = {}
        #: bumped whenever a held group, or a set of plugins holding some of its pods, appears
        #: or goes: what :meth:`_left_out` reads of the index
        self._shape = 0
        #: memo key -> (``_shape`` it was computed at, the held groups left out)
        self._left_out_memo: dict[Any, tuple[int, frozenset[str]]] = {}

    def __setitem__(self, uid: str, q: QueuedPodInfo) -> None:
        if uid in self:
            self._unindex(uid)
        else:
            self._order[uid] = self._seq
            self._seq += 1
        super().__setitem__(uid, q)
        key = pod_group_key(q.pod) if q.gated else ""
        if not key:
            self._loose[uid] = q
            return
        plugins = frozenset(q.unschedulable_plugins)
        self._held.setdefault(key, {})[uid] = q
        holders = self._holders.setdefault(key, Counter())
        if plugins not in holders:
            self._shape += 1
        holders[plugins] += 1
        pair = (key, plugins)
        self._where[uid] = self._pairs.setdefault(pair, pair)

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._unindex(uid)
        del self._order[uid]

    @overload
    def pop(self, uid: str) -> QueuedPodInfo: ...

    @overload
    def pop(self, uid: str, default: _D) -> QueuedPodInfo | _D: ...

    def pop(self, uid: str, default: Any = _MISSING) -> Any:
        if uid not in self:
            if default is not _MISSING:
                return default
            raise KeyError(uid)
        q = super().pop(uid)
        self._unindex(uid)
        del self._order[uid]
        return q

    def _unindex(self, uid: str) -> None:
        where = self._where.pop(uid, None)
        if where is None:
            self._loose.pop(uid, None)
            return
        key, plugins = where
        members = self._held[key]
        del members[uid]
        holders = self._holders[key]
        holders[plugins] -= 1
        if not holders[plugins]:
            del holders[plugins]
            del self._pairs[where]
            self._shape += 1
        if not members:
            del self._held[key]
            del self._holders[key]

    def held_of(self, group: str) -> Mapping[str, QueuedPodInfo]:
        """The held pods of PodGroup ``group`` by uid (read-only; empty when none)."""
        return self._held.get(group) or {}

    def candidates(
        self, group: str, unconcerned: Callable[[frozenset[str]], bool], memo_key: Any = None
    ) -> list[QueuedPodInfo]:
        """The pods an event may move, in insertion order: every pod but the held members of
        PodGroups other than ``group`` (the event pod's) whose every holding set of plugins
        ``unconcerned`` says the event cannot release (their hints would all say skip).

        ``memo_key`` (hashable, e.g. the event) names ``unconcerned``'s answers: the caller
        promises they are the same for every call with that key, so the groups left out are
        remembered for it until the index's shape changes."""
        if not self._held:
            return list(self.values())
        skip = self._left_out(unconcerned, memo_key)
        if group in skip:
            skip = skip - {group}
        if not skip:
            return list(self.values())
        out = list(self._loose.values())
        if len(skip) < len(self._held):
            for key, members in self._held.items():
                if key not in skip:
                    out.extend(members.values())
        if len(out) > 1:
            order = self._order
            out.sort(key=lambda q: order[q.uid])
        return out

    def _left_out(self, unconcerned: Callable[[frozenset[str]], bool], memo_key: Any) -> frozenset[str]:
        """The held groups whose every holding set of plugins is ``unconcerned``."""
        if memo_key is not None:
            got = self._left_out_memo.get(memo_key)
            if got is not None and got[0] == self._shape:
                return got[1]
        skip = frozenset(
            key for key, holders in self._holders.items() if all(unconcerned(p) for p in holders)
        )
        if memo_key is not None:
            self._left_out_memo[memo_key] = (self._shape, skip)
        return skip
