"""When two NodeInfos of one node count alike in the snapshot's pod-label indexes.

The snapshot keeps, per node, which pod labels it holds (``PodLabelIndex``) and how many pods
match each spreading selector (``SpreadCounts``); both are computed from the pods' namespace,
labels and whether they are terminating (kube's ``countPodsMatchSelector`` skips those). When a
pod the scheduler assumed is bound, the informer's copy replaces the assumed one on the same
node with the same labels: the node changes (its generation), its counts do not. A gang of
5,000 pods bound at once made the next cycle's snapshot recount all 5,000 nodes for every
selector it had seen; :func:`pods_count_alike` lets it skip that.
"""

from __future__ import annotations

from scheduler.nodeinfo import NodeInfo


def pods_count_alike(old: NodeInfo | None, new: NodeInfo) -> bool:
    """Whether ``new`` holds the same Node object and, by key, the same pods as ``old`` with the
    same namespace, labels, terminating state and resource accounting (any order)."""
    if old is None or old.node is not new.node or len(old.pods) != len(new.pods):
        return False
    by_key = {p.key: p for p in old.pods}
    for p in new.pods:
        q = by_key.get(p.key)
        if q is None:
            return False
        if q is p:
            continue
        if (
            q.namespace != p.namespace
            or q.terminating != p.terminating
            or q.labels != p.labels
            or not p.shares_spec_facts(q)
        ):
            return False
    return True
