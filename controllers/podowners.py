"""The pod event handlers of a controller whose objects own pods through a selector.

kube's ReplicaSet and DaemonSet controllers each carry a copy of these (``addPod``,
``updatePod``, ``deletePod``): a pod event is mapped to the key of the object that controls it
(its controllerRef, checked against the cache by kind, group and UID), or — for an orphan — to
every object whose selector would adopt it; creations and deletions are counted against the
owner's expectations, and a pod that just became Ready is looked at again once it has been
Ready for ``minReadySeconds`` (it then counts as available).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.meta import controller_ref, is_being_deleted, key_of, labels_of, namespace_of
from controllers import podutil
from controllers.base import Controller
from controllers.expectations import Expectations
from controllers.ownerlookup import owners_of_updated


class PodOwnerController(Controller, ABC):
    """A :class:`Controller` of pod owners: subclasses set ``sets`` and ``expectations`` in
    ``setup`` and say how a controllerRef resolves and which owners select an orphan."""

    sets: Informer
    expectations: Expectations
    #: kube's ReplicaSet controller, when a deleted pod's labels also changed, syncs the owners
    #: its old labels selected as well; its DaemonSet controller does not
    delete_syncs_old_labels = False

    @abstractmethod
    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        """``resolveControllerRef``: the cached owner, if kind, group and UID agree."""

    @abstractmethod
    def _sets_for_orphan(self, pod: Obj) -> list[Obj]:
        """The owners in the pod's namespace whose selector matches it."""

    def _min_ready_seconds(self, owner: Obj) -> int:
        return int((owner.get("spec") or {}).get("minReadySeconds") or 0)

    def _add_pod(self, pod: Obj) -> None:
        if is_being_deleted(pod):
            self._delete_pod(pod)
            return
        ref = controller_ref(pod)
        if ref is not None:
            owner = self._resolve(namespace_of(pod), ref)
            if owner is not None:
                self.expectations.creation_observed(key_of(owner))
                self.enqueue(key_of(owner))
            return
        for owner in self._sets_for_orphan(pod):
            self.enqueue(key_of(owner))

    def _owner_kind(self) -> str:
        """The kind ``_resolve`` resolves controllerRefs to ("": not said, no event is dropped early)."""
        return ""

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (cur.get("metadata") or {}).get(
            "resourceVersion"
        ):
            return  # a periodic resync: nothing changed
        kind = self._owner_kind()
        if kind:
            old_ref, cur_ref = controller_ref(old), controller_ref(cur)
            if (
                old_ref is not None
                and cur_ref is not None
                and old_ref.get("kind") != kind
                and cur_ref.get("kind") != kind
            ):
                # controlled by another kind before and after (a StatefulSet's pod, for the
                # ReplicaSet, ReplicationController and DaemonSet controllers): no reference
                # resolves to an owner of ours and an orphan's owners are never looked up, so
                # the general path below would enqueue nothing
                return
        label_changed = labels_of(old) != labels_of(cur)
        if is_being_deleted(cur):
            self._delete_pod(cur)
            if label_changed and self.delete_syncs_old_labels:
                self._delete_pod(old)
            return
        owners, controller = owners_of_updated(old, cur, self._resolve, self._sets_for_orphan)
        for owner in owners:
            self.enqueue(key_of(owner))
        if controller is not None:
            mrs = self._min_ready_seconds(controller)
            if mrs > 0 and not podutil.is_pod_ready(old) and podutil.is_pod_ready(cur):
                self.enqueue_after(key_of(controller), mrs + 1)

    def _delete_pod(self, pod: Obj) -> None:
        owner = self._resolve(namespace_of(pod), controller_ref(pod))
        if owner is None:
            return
        self.expectations.deletion_observed(key_of(owner), key_of(pod))
        self.enqueue(key_of(owner))

    async def on_synced(self) -> None:
        for key in self.sets.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)


__all__ = ["PodOwnerController"]
