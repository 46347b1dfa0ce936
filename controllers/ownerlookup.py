"""Finding the owner a dependent's event concerns, as kube's workload controllers do.

Every controller that manages pods (or ReplicaSets) reacts to a dependent's change by enqueuing its
owner: through the dependent's controller reference when it has one (``resolveControllerRef``: the
cached owner of that kind and group whose UID matches), else, for an orphan, every owner in its
namespace whose selector matches its labels (``getPodReplicaSets``, ``getPodStatefulSets``, …), which
may then adopt it. Pure lookups over an informer's cache; no I/O.

:func:`owners_of_added` and :func:`owners_of_updated` are the bodies of kube's ``add<Dependent>``
and ``update<Dependent>`` handlers (the Deployment controller's ReplicaSet handlers, the
StatefulSet, ReplicaSet and DaemonSet controllers' pod handlers), which kube writes once per
controller: here each controller calls them and enqueues what they return, adding only what is
its own (expectations, a ``minReadySeconds`` re-sync).
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.meta import controller_ref, labels_of, namespace_of, uid_of
from apiserver.selectors import LabelSelector, label_selector_from_dict

#: ``resolveControllerRef`` of one controller: ``(namespace, controllerRef) -> cached owner or None``
Resolver = Callable[[str, Obj | None], Obj | None]


def spec_selector(owner: Obj) -> LabelSelector:
    """``spec.selector`` as a selector (raises ValueError when malformed)."""
    return label_selector_from_dict((owner.get("spec") or {}).get("selector"))


def resolve_controller_ref(
    owners: Informer, namespace: str, ref: Obj | None, kind: str, group: str
) -> Obj | None:
    """The cached owner ``ref`` points at, if its kind, API group and UID agree; else None."""
    if ref is None or ref.get("kind") != kind:
        return None
    if str(ref.get("apiVersion") or "").rpartition("/")[0] != group:
        return None
    owner = owners.get_by_name(namespace, ref.get("name", ""))
    if owner is None or uid_of(owner) != ref.get("uid"):
        return None
    return owner


def owners_selecting(
    owners: Informer, dependent: Obj, selector_of: Callable[[Obj], LabelSelector | None] = spec_selector
) -> list[Obj]:
    """Every owner in the dependent's namespace whose (valid, non-empty) selector matches its labels."""
    labels = labels_of(dependent)
    out = []
    for owner in owners.list(namespace_of(dependent)):
        try:
            sel = selector_of(owner)
        except ValueError:
            continue
        if sel is not None and not sel.empty and sel.matches(labels):
            out.append(owner)
    return out


def owners_of_added(
    dependent: Obj, resolve: Resolver, orphan_owners: Callable[[Obj], list[Obj]]
) -> list[Obj]:
    """The owners to sync for a new dependent (kube's ``add<Dependent>`` once it is not being deleted).

    With a controllerRef: the owner it resolves to, or none when it resolves to nothing (another
    kind, a stale UID). An orphan: every owner ``orphan_owners`` finds, which may adopt it.
    """
    ref = controller_ref(dependent)
    if ref is not None:
        owner = resolve(namespace_of(dependent), ref)
        return [] if owner is None else [owner]
    return orphan_owners(dependent)


def owners_of_updated(
    old: Obj, cur: Obj, resolve: Resolver, orphan_owners: Callable[[Obj], list[Obj]]
) -> tuple[list[Obj], Obj | None]:
    """The owners to sync, in order, for a changed dependent, and the owner controlling it now.

    kube's ``update<Dependent>`` after its resync and deletion checks: when the controllerRef
    changed, the old controller (it lost a dependent); then the current controller, if it
    resolves (returned second, for the caller's own follow-up, e.g. ``minReadySeconds``). An
    orphan whose labels or controllerRef changed: every owner that now selects it.
    """
    old_ref, cur_ref = controller_ref(old), controller_ref(cur)
    ref_changed = old_ref != cur_ref
    owners: list[Obj] = []
    if ref_changed and old_ref is not None:
        owner = resolve(namespace_of(old), old_ref)
        if owner is not None:
            owners.append(owner)
    if cur_ref is not None:
        owner = resolve(namespace_of(cur), cur_ref)
        if owner is not None:
            owners.append(owner)
        return owners, owner
    if labels_of(old) != labels_of(cur) or ref_changed:
        owners.extend(orphan_owners(cur))
    return owners, None
