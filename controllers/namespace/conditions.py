"""Namespace deletion status conditions (kube's ``deletion/status_condition_utils.go``), pure.

While a namespace is being emptied the controller keeps five conditions on it; each is False with
an "all good" reason, or True with what is wrong or still remaining, e.g.
``NamespaceContentRemaining=True SomeResourcesRemain "Some resources are remaining: pods. has 2
resource instances"``.
"""

from __future__ import annotations

from apiserver.api.types import Obj

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

CONDITION_TYPES = (
    DISCOVERY_FAILURE,
    GV_PARSING_FAILURE,
    CONTENT_FAILURE,
    CONTENT_REMAINING,
    FINALIZERS_REMAINING,
)

OK_MESSAGES = {
    DISCOVERY_FAILURE: "All resources successfully discovered",
    GV_PARSING_FAILURE: "All legacy kube types successfully parsed",
    CONTENT_FAILURE: "All content successfully deleted, may be waiting on finalization",
    CONTENT_REMAINING: "All content successfully removed",
    FINALIZERS_REMAINING: "All content successfully removed",
}
OK_REASONS = {
    DISCOVERY_FAILURE: "ResourcesDiscovered",
    GV_PARSING_FAILURE: "ParsedGroupVersions",
    CONTENT_FAILURE: "ContentDeleted",
    CONTENT_REMAINING: "ContentRemoved",
    FINALIZERS_REMAINING: "ContentRemoved",
}


def content_conditions(
    remaining: dict[tuple[str, str], int], finalizers: dict[str, int], delete_errors: list[str], now: str
) -> list[Obj]:
    """The failing conditions for one pass: ``remaining`` is (resource, group) -> count."""
    out: list[Obj] = []
    if remaining:
        parts = sorted(
            f"{res}.{group} has {n} resource instances" for (res, group), n in remaining.items() if n
        )
        out.append(
            {
                "type": CONTENT_REMAINING,
                "status": "True",
                "lastTransitionTime": now,
                "reason": "SomeResourcesRemain",
                "message": f"Some resources are remaining: {', '.join(parts)}",
            }
        )
    if finalizers:
        parts = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items() if n)
        out.append(
            {
                "type": FINALIZERS_REMAINING,
                "status": "True",
                "lastTransitionTime": now,
                "reason": "SomeFinalizerRemain",
                "message": f"Some finalizers are remaining: {', '.join(parts)}",
            }
        )
    if delete_errors:
        msgs = sorted(delete_errors)
        out.append(
            {
                "type": CONTENT_FAILURE,
                "status": "True",
                "lastTransitionTime": now,
                "reason": "ContentDeletionFailed",
                "message": f"Failed to delete all resource types, {len(msgs)} remaining: {', '.join(msgs)}",
            }
        )
    return out


def update_conditions(status: Obj, failing: list[Obj], now: str) -> bool:
    """Set every condition type: the failing one if given, else its OK form. Returns whether anything changed."""
    conditions: list[Obj] = list(status.get("conditions") or [])
    by_type = {c.get("type"): c for c in failing}
    changed = False
    for ctype in CONDITION_TYPES:
        new = by_type.get(ctype) or {
            "type": ctype,
            "status": "False",
            "lastTransitionTime": now,
            "reason": OK_REASONS[ctype],
            "message": OK_MESSAGES[ctype],
        }
        idx = next((i for i, c in enumerate(conditions) if c.get("type") == ctype), None)
        if idx is None:
            conditions.append(dict(new))
            changed = True
            continue
        old = conditions[idx]
        if (old.get("status"), old.get("reason"), old.get("message")) != (
            new["status"],
            new["reason"],
            new["message"],
        ):
            merged = dict(old)
            if old.get("status") != new["status"]:
                merged["lastTransitionTime"] = now
            merged.update(status=new["status"], reason=new["reason"], message=new["message"])
            conditions[idx] = merged
            changed = True
    if changed:
        status["conditions"] = conditions
    return changed
