"""What the node lifecycle monitor reads off a Node, derived once per resourceVersion.

kube's ``monitorNodeHealth`` looks at every node each ``--node-monitor-period``; almost every
node is unchanged since the last pass, and an object with the same resourceVersion has the same
content. So the zone, Ready status and heartbeat a pass needs are kept keyed by the node's
resourceVersion and recomputed only for a node whose object changed: a pass over an idle fleet
costs a dictionary lookup per node instead of a walk of its labels and conditions.

An object without a resourceVersion (never from the API server) is derived afresh every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.api.types import Obj
from controllers.nodelifecycle import health, zones


@dataclass(frozen=True, slots=True)
class NodeView:
    """The parts of one Node object the monitor pass uses."""

    rv: str
    #: kube's ``GetZoneKey``
    zone: str
    #: the Ready condition's status (``Unknown`` when missing)
    ready: str
    #: the Ready condition's ``lastHeartbeatTime``
    heartbeat: str
    #: kubelet never posted a Ready condition (the startup grace period applies)
    never: bool


def view_of(node: Obj) -> NodeView:
    md = node.get("metadata") or {}
    ready = health.condition(node, "Ready")
    return NodeView(
        rv=str(md.get("resourceVersion") or ""),
        zone=zones.zone_key(md.get("labels") or {}),
        ready=str(ready.get("status") or "Unknown") if ready is not None else "Unknown",
        heartbeat=str((ready or {}).get("lastHeartbeatTime") or ""),
        never=ready is None,
    )


class NodeViews:
    """name -> the :class:`NodeView` of the last object seen; ``enabled=False`` derives every time
    (the full recomputation the incremental one must equal, kept for tests)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._views: dict[str, NodeView] = {}

    def get(self, name: str, node: Obj) -> NodeView:
        if not self.enabled:
            return view_of(node)
        rv = str((node.get("metadata") or {}).get("resourceVersion") or "")
        v = self._views.get(name)
        if v is not None and rv and v.rv == rv:
            return v
        v = view_of(node)
        if rv:
            self._views[name] = v
        return v

    def forget(self, name: str) -> None:
        self._views.pop(name, None)


__all__ = ["NodeView", "NodeViews", "view_of"]
