"""The base both Workload scheduling hooks share: the StatefulSet's (KEP-6277,
:mod:`controllers.statefulset.workload`) and the Job's (KEP-5547, :mod:`controllers.job.workload`).

Each hook discovers its Workload and PodGroup through two informers indexed by reference
(:mod:`controllers.workloadrefs`), creates them on the synchronous create response, and must not
lose an object it just created to a cache that has not seen it yet. What is identical in the two
lives here once:

* the Workload / PodGroup informers with their reference indexes and the hook's event handlers;
* the *recently created* objects, per owner UID, kept until the informer shows them (from then on
  the cache, which also sees later changes and the deletion, is authoritative), and forgotten when
  the owner goes;
* the rediscovery after ``AlreadyExists``: a live list (the cache may lag), matched by reference.

The policy (which objects to create, when, with which names, events and metrics) stays in each
hook; upstream's two managers differ there (README, "Job and StatefulSet integrations side by side").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.informer import Informer, InformerFactory
from apiserver.client.interface import GVR, PODGROUPS, WORKLOADS, Client
from apiserver.meta import key_of, namespace_of, uid_of
from controllers import workloadrefs as wr

Handler = Callable[[Obj], None]
UpdateHandler = Callable[[Obj, Obj], None]


class WorkloadHookBase:
    """Informers, recently created objects and rediscovery for a hook whose owner kind is a subclass's."""

    def __init__(self) -> None:
        self.workloads: Informer | None = None
        self.pod_groups: Informer | None = None
        #: objects created from a sync's response, by owner UID then object UID, until cached
        self._created: dict[str, dict[str, Obj]] = {}

    def _watch_workloads_and_pod_groups(
        self,
        informers: InformerFactory,
        on_workload: tuple[Handler, UpdateHandler, Handler],
        on_pod_group: tuple[Handler, UpdateHandler, Handler],
    ) -> None:
        """Ask ``informers`` for the Workload and PodGroup informers, index them by reference and
        register the hook's (add, update, delete) handlers."""
        self.workloads = informers.informer(WORKLOADS)
        self.pod_groups = informers.informer(PODGROUPS)
        self.workloads.add_indexer(wr.WORKLOAD_BY_CONTROLLER, wr.workload_controller_index)
        self.pod_groups.add_indexer(wr.POD_GROUP_BY_WORKLOAD, wr.pod_group_workload_index)
        self.workloads.add_event_handler(*on_workload)
        self.pod_groups.add_event_handler(*on_pod_group)

    # ------------------------------------------------------------------ recently created
    def _remember(self, owner: Obj, obj: Obj) -> None:
        """Keep ``obj`` (created for ``owner`` from the create response) until the cache has it."""
        self._created.setdefault(uid_of(owner), {})[uid_of(obj)] = obj

    def _forget(self, owner: Obj) -> None:
        """The owner is gone: drop what was remembered for it."""
        self._created.pop(uid_of(owner), None)

    def _recent(self, owner: Obj, kind: str, cached: list[Obj] | None = None) -> list[Obj]:
        """Objects of ``kind`` created for ``owner`` that the cache does not show yet.

        An entry is dropped as soon as the informer (or ``cached``, what the caller just read
        from it) has the object.
        """
        mine = self._created.get(uid_of(owner))
        if not mine:
            return []
        informer = self.workloads if kind == "Workload" else self.pod_groups
        assert informer is not None
        seen = {uid_of(o) for o in cached or ()}
        out = []
        for uid, obj in list(mine.items()):
            if obj.get("kind") != kind:
                continue
            known = informer.get(key_of(obj))
            if uid in seen or (known is not None and uid_of(known) == uid):
                del mine[uid]
                continue
            out.append(obj)
        if not mine:
            self._created.pop(uid_of(owner), None)
        return out

    def _caught_up(self, owner: Obj) -> bool:
        """Whether the cache shows every object created for ``owner`` (those it shows are dropped,
        as :meth:`_recent` drops them): then the informers alone say what exists."""
        mine = self._created.get(uid_of(owner))
        if not mine:
            return True
        for uid, obj in list(mine.items()):
            informer = self.workloads if obj.get("kind") == "Workload" else self.pod_groups
            known = informer.get(key_of(obj)) if informer is not None else None
            if known is not None and uid_of(known) == uid:
                del mine[uid]
        if mine:
            return False
        self._created.pop(uid_of(owner), None)
        return True

    # ------------------------------------------------------------------ rediscovery
    @staticmethod
    async def _rediscover_live(
        client: Client, owner: Obj, gvr: GVR, match: Callable[[Obj], Any], usable: Callable[[Obj], bool]
    ) -> list[Obj]:
        """After AlreadyExists: list ``gvr`` in the owner's namespace from the API and match by reference."""
        items = (await client.list(gvr, namespace_of(owner)))["items"]
        return [o for o in items if match(o) and usable(o)]
