"""``podutil.FindPort``: a Service port's target port, resolved against one pod."""

from __future__ import annotations

from apiserver.api.types import Obj


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """The container port a Service port targets on ``pod``; None when a named port is missing.

    An integer ``targetPort`` is taken as is; a name matches a container port (or a restartable
    init container's, a sidecar) with that name and the Service port's protocol.
    """
    target = service_port.get("targetPort")
    if target is None:
        target = service_port.get("port")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or [])
    containers += [
        c
        for c in spec.get("initContainers") or []
        if isinstance(c, dict) and c.get("restartPolicy") == "Always"
    ]
    for c in containers:
        for p in (c or {}).get("ports") or []:
            if p.get("name") == target and (p.get("protocol") or "TCP") == protocol:
                return int(p.get("containerPort") or 0) or None
    return None
