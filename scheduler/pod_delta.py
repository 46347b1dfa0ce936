"""Which of a node's pods changed, as the snapshot's pod indexes see them (gangplane).

The snapshot keeps two indexes over the pods of every node: which nodes run pods carrying a
label pair (:class:`~scheduler.cache.PodLabelIndex`) and PodTopologySpread's counts of matching
pods per domain (:class:`~scheduler.cache.SpreadCounts`). Both read only a pod's namespace, its
labels and whether it is terminating. When a node changes (it took a gang's pod, its bound pod
confirmed the assumed one), rebuilding its entries reads every pod of the node, for every
spreading selector kept: after ten 5,000-pod gangs over 5,000 nodes, ten pods and sixteen
selectors per node, for each of the 5,000 nodes the last gang touched. Comparing the pods the
node had when it was last indexed with the ones it has now names the few pods that matter, and
the indexes apply just those (:func:`pods_changed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import is_not

from scheduler.nodeinfo import PodInfo


def same_for_indexes(a: PodInfo, b: PodInfo) -> bool:
    """Whether the pod indexes see ``a`` and ``b`` (one pod, by key) alike."""
    return a is b or (a.namespace == b.namespace and a.terminating == b.terminating and a.labels == b.labels)


def pods_changed(old: Sequence[PodInfo], new: Sequence[PodInfo]) -> tuple[list[PodInfo], list[PodInfo]]:
    """``(removed, added)``: the pods of ``old`` the indexes must forget and those of ``new`` they
    must learn, so that applying both to what ``old`` gave yields what ``new`` gives.

    A pod in both (by key) seen alike is in neither; one seen otherwise (relabelled, now
    terminating) is in both, as its old and its new self. The common case, pods appended to the
    node (assumed, or added by the informer) after the old ones in their order, is told pair by
    pair without a key lookup (``tests/unit/scheduler/test_pod_delta_reindex.py`` compares it
    with the lookup)."""
    n = len(old)
    if len(new) >= n:
        # The node kept its pods in place, some of them as new PodInfos the indexes see alike
        # (assumed pods confirmed by their bound selves since: every node a gang's search assumed
        # on, at the next catch-up), and took more at the end: those are all that changed. The
        # pairs that are not the very same object are found in C; only they are compared.
        for i in compress(range(n), map(is_not, old, new)):
            a, b = old[i], new[i]
            if a.key != b.key or not same_for_indexes(a, b):
                break
        else:
            return [], list(new[n:])
    before = {p.key: p for p in old}
    removed: list[PodInfo] = []
    added: list[PodInfo] = []
    for p in new:
        q = before.pop(p.key, None)
        if q is None:
            added.append(p)
        elif not same_for_indexes(q, p):
            removed.append(q)
            added.append(p)
    removed.extend(before.values())
    return removed, added
