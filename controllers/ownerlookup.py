"""Finding the owner a dependent's event concerns, as kube's workload controllers do.

Every controller that manages pods (or ReplicaSets) reacts to a dependent's change by enqueuing its
owner: through the dependent's controller reference when it has one (``resolveControllerRef``: the
cached owner of that kind and group whose UID matches), else, for an orphan, every owner in its
namespace whose selector matches its labels (``getPodReplicaSets``, ``getPodStatefulSets``, …), which
may then adopt it. Pure lookups over an informer's cache; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.meta import labels_of, namespace_of, uid_of
from apiserver.selectors import LabelSelector, label_selector_from_dict


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
