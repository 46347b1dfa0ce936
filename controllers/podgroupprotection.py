"""The PodGroup protection controller (1.37 kube-controller-manager's ``podgroup-protection-controller``).

Admission stamps ``scheduling.k8s.io/podgroup-protection`` on every new PodGroup (KEP-5832
deletion protection). This controller removes it from a PodGroup being deleted once no pod that
references the group (``spec.schedulingGroup.podGroupName`` in the same namespace) is still
non-terminal, so a group never disappears under pods that point at it; and it puts the
finalizer back on a live, in-use PodGroup that lost it.
"""

from __future__ import annotations

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.api.wellknown import PODGROUP_PROTECTION_FINALIZER
from apiserver.client.context import ComponentContext
from apiserver.client.informer import index_reads
from apiserver.client.interface import PODGROUPS, PODS
from apiserver.meta import finalizers_of, is_being_deleted, split_key
from controllers.base import Controller
from controllers.metrics import controller_metrics

NAME = "podgroup-protection-controller"
POD_GROUP_INDEX = "pod-group"


@index_reads("spec.schedulingGroup")
def pod_group_key(pod: Obj) -> list[str]:
    """Index pods by ``namespace/podGroupName`` of the group they reference."""
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if not group:
        return []
    return [f"{(pod.get('metadata') or {}).get('namespace', '')}/{group}"]


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class PodGroupProtectionController(Controller):
    name = NAME
    workers = 2

    def setup(self) -> None:
        self.pod_groups = self.informers.informer(PODGROUPS)
        self.pods = self.informers.informer(PODS)
        self.pods.add_indexer(POD_GROUP_INDEX, pod_group_key)
        self.pod_groups.add_event_handler(self._on_group, lambda old, new: self._on_group(new), None)
        self.pods.add_event_handler(
            self._on_pod, lambda old, new: self._on_pod_update(old, new), self._on_pod
        )

    def _on_group(self, pg: Obj) -> None:
        md = pg.get("metadata") or {}
        self.enqueue(f"{md.get('namespace', '')}/{md.get('name', '')}")

    def _on_pod(self, pod: Obj) -> None:
        for key in pod_group_key(pod):
            self.enqueue(key)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        # Only a change of terminal-ness (or of the reference) can change a group's in-use state.
        if is_terminal(old) != is_terminal(new) or pod_group_key(old) != pod_group_key(new):
            self._on_pod(new)

    def in_use(self, key: str) -> bool:
        return any(not is_terminal(p) for p in self.pods.by_index(POD_GROUP_INDEX, key))

    async def sync(self, key: str) -> None:
        pg = self.pod_groups.get(key)
        if pg is None:
            return
        ns, name = split_key(key)
        fins = finalizers_of(pg)
        has = PODGROUP_PROTECTION_FINALIZER in fins
        rv = pg["metadata"].get("resourceVersion", "")
        if is_being_deleted(pg):
            if not has or self.in_use(key):
                return
            patch = {
                "metadata": {
                    "finalizers": [f for f in fins if f != PODGROUP_PROTECTION_FINALIZER] or None,
                    "resourceVersion": rv,
                }
            }
        else:
            if has or not self.in_use(key):
                return
            patch = {
                "metadata": {"finalizers": [*fins, PODGROUP_PROTECTION_FINALIZER], "resourceVersion": rv}
            }
        try:
            await self.client.patch(PODGROUPS, name, patch, ns)
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise


def new_podgroup_protection_controller(ctx: ComponentContext) -> PodGroupProtectionController:
    return PodGroupProtectionController(
        ctx.client(NAME),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )
