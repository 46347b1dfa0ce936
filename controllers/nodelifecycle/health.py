"""What the node lifecycle controller writes on a Node, as pure functions of the Node.

kube-controller-manager's ``pkg/controller/nodelifecycle``: a node whose kubelet stopped posting
(neither its Lease nor its Ready heartbeat moved within the grace period) gets its kubelet-owned
conditions set to ``Unknown``; the node's Ready condition then decides its taints:

========================  ================================================================
Ready                     taints the controller keeps on the node
========================  ================================================================
``False``                 ``node.kubernetes.io/not-ready`` NoSchedule and NoExecute
``Unknown`` (or missing)  ``node.kubernetes.io/unreachable`` NoSchedule and NoExecute
``True``                  neither (both are removed)
========================  ================================================================

The NoSchedule taints follow the condition at once; the NoExecute ones go through the zone's
rate limiter (:mod:`.zones`) before they are added, and are removed at once on recovery.
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.meta import rfc3339

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
CONTROLLER_TAINTS = (NOT_READY_TAINT, UNREACHABLE_TAINT)

#: the conditions kubelet owns and the controller turns Unknown (kube's order)
KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
STOPPED_REASON = "NodeStatusUnknown"
STOPPED_MESSAGE = "Kubelet stopped posting node status."
NEVER_REASON = "NodeStatusNeverUpdated"
NEVER_MESSAGE = "Kubelet never posted node status."


def condition(node: Obj | None, ctype: str) -> Obj | None:
    for c in ((node or {}).get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return None


def ready_status(node: Obj | None) -> str:
    """``True``/``False``/``Unknown``; a node without a Ready condition counts as ``Unknown``."""
    c = condition(node, "Ready")
    return str(c.get("status") or "Unknown") if c is not None else "Unknown"


def heartbeat(node: Obj) -> str:
    """The Ready condition's ``lastHeartbeatTime`` (what kubelet refreshes on each status post)."""
    c = condition(node, "Ready")
    return str((c or {}).get("lastHeartbeatTime") or "")


def unknown_conditions(node: Obj, now: float) -> list[Obj] | None:
    """The node's conditions with every kubelet-owned one ``Unknown``, or None when they already are.

    A condition kubelet never posted is added with ``NodeStatusNeverUpdated`` and the node's
    creation time as its last heartbeat; a posted one keeps its heartbeat and gets
    ``NodeStatusUnknown`` and a new transition time.
    """
    md = node.get("metadata") or {}
    conds = [dict(c) for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]
    by_type = {c.get("type"): c for c in conds}
    ts = rfc3339(now)
    changed = False
    for ctype in KUBELET_CONDITIONS:
        c = by_type.get(ctype)
        if c is None:
            conds.append(
                {
                    "type": ctype,
                    "status": "Unknown",
                    "lastHeartbeatTime": md.get("creationTimestamp"),
                    "lastTransitionTime": ts,
                    "reason": NEVER_REASON,
                    "message": NEVER_MESSAGE,
                }
            )
            changed = True
        elif c.get("status") != "Unknown":
            c.update(status="Unknown", reason=STOPPED_REASON, message=STOPPED_MESSAGE, lastTransitionTime=ts)
            changed = True
    return conds if changed else None


def taint_key_for(ready: str) -> str:
    """The controller taint a node with this Ready status should carry ("" for Ready=True)."""
    if ready == "True":
        return ""
    return NOT_READY_TAINT if ready == "False" else UNREACHABLE_TAINT


def _is_controller_taint(t: Obj, effect: str) -> bool:
    return t.get("key") in CONTROLLER_TAINTS and t.get("effect") == effect


def with_taint(taints: list[Obj], key: str, effect: str, now: float) -> list[Obj]:
    """``taints`` with the controller's ``effect`` taint being ``key`` ("" removes it).

    The other controller taint of that effect is swapped out (kube's ``SwapNodeControllerTaint``);
    every other taint is kept in place. NoExecute taints carry ``timeAdded``.
    """
    out = [t for t in taints if not (_is_controller_taint(t, effect) and t.get("key") != key)]
    if key and not any(t.get("key") == key and t.get("effect") == effect for t in out):
        taint: Obj = {"key": key, "effect": effect}
        if effect == "NoExecute":
            taint["timeAdded"] = rfc3339(now)
        out.append(taint)
    return out


def has_taint(node: Obj, key: str, effect: str) -> bool:
    return any(
        t.get("key") == key and t.get("effect") == effect
        for t in (node.get("spec") or {}).get("taints") or []
    )


__all__ = [
    "CONTROLLER_TAINTS",
    "KUBELET_CONDITIONS",
    "NEVER_MESSAGE",
    "NEVER_REASON",
    "NOT_READY_TAINT",
    "STOPPED_MESSAGE",
    "STOPPED_REASON",
    "UNREACHABLE_TAINT",
    "condition",
    "has_taint",
    "heartbeat",
    "ready_status",
    "taint_key_for",
    "unknown_conditions",
    "with_taint",
]
