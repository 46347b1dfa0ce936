"""Node faults a test or a user injects as the ``gangplane.dev/fault`` node annotation.

gangplane's own switch (no upstream kubelet has one): it tells the simulated kubelet of that node
to misbehave, so the node lifecycle controller, the taint-eviction controller and the workloads
see a failure as they would on a real cluster. ``gangplane cluster fail|recover`` sets and
removes it on a node, a rack or a zone.

===============  ====================================================================
``unreachable``  the kubelet is gone (host down, network partition): no Lease renewal,
                 no status, no pod is started or stopped. After the node monitor grace
                 period the node lifecycle controller marks it ``Ready=Unknown``;
                 pods deleted meanwhile stay ``Terminating``, as on a real cluster.
``not-ready``    the kubelet runs but its container runtime is down: it posts
                 ``Ready=False`` (``KubeletNotReady``) and keeps renewing its Lease and
                 stopping deleted pods, so evicted pods go away and are replaced.
===============  ====================================================================

Removing the annotation recovers the node: the kubelet posts a healthy status again. Deleting
the Node object is the third kind of loss (``kubectl delete node``): its pods are then
garbage-collected as orphans.
"""

from __future__ import annotations

from apiserver.api.types import Obj
from controllers.nodeagent.pod_annotations import PREFIX

FAULT = PREFIX + "fault"
UNREACHABLE = "unreachable"
NOT_READY = "not-ready"
FAULTS = (UNREACHABLE, NOT_READY)


def fault(node: Obj | None) -> str:
    """The node's injected fault, or ``""`` (none, or a value this agent does not know)."""
    ann = ((node or {}).get("metadata") or {}).get("annotations") or {}
    value = str(ann.get(FAULT, "")).strip().lower()
    return value if value in FAULTS else ""


__all__ = ["FAULT", "FAULTS", "NOT_READY", "UNREACHABLE", "fault"]
