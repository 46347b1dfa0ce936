"""The state a sync left a set in, when a sync of exactly that state writes nothing.

A gang set is synced twice in ``gangs-1000x3``: the first sync creates its revision, Workload,
PodGroup and pods and writes its status; the second — caused by those objects' add events, the
pods' bindings, the PodGroup's status — finds everything in place and writes nothing. Every
memo of the algorithm hits in that second sync, yet walking them costs ~0.1 ms (a set's syncs
are far apart: each walk is cold), and the memos cannot skip it: each was filled by a sync that
*wrote*, before its writes.

The writing sync knows the state it leaves: the set as its status write returned it, its pods
(the ones it kept and the create responses of the ones it made, with their facts) and its
revisions. :meth:`StatefulSetControl._vouch` records that state as :class:`Quiet` only when a
sync of it provably writes nothing, from what the step itself derived (Parallel management and
the pods' view: no slot empty, no pod needing a call, none condemned, none outdated; the status
it wrote is the one those pods and revisions give, its current revision unchanged; the hook
proceeding without conditions; no revision to trim). The next sync compares its inputs with it
(:func:`still`): the very set version, the same revisions, the same pods with the same facts
(:class:`.podfacts.FactsWitness`: a binding changes none), and the hook's own check that its
resolution still holds. Equal inputs give the same decisions, so it returns at once: nothing
written, no Event, no loop turn — what the full sync would have done. Anything else — a pod
added, deleted, relabelled, its phase or readiness changed, a revision, the set or its status
edited, the Workload or PodGroup edited — takes the full path, which also records a new state
when it can. The state is per set key and is dropped by every sync that cannot vouch.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.api.types import Obj
from apiserver.meta import labels_of, resource_version_of, uid_of
from apiserver.selectors import LabelSelector
from controllers.statefulset.podfacts import FactsWitness, PodFacts

#: the most replicas a set may have for its state to be vouched: recording the state and
#: checking it are O(replicas) per sync (every pod kept, its facts compared), while the no-op
#: sync they save costs ~0.1 ms whatever the size (the view makes it incremental). A
#: 1,000-replica set going Running (gang-1x1000-running: ~55 syncs) paid ~45 ms for records
#: that never hit, as its pods kept changing; up to this size a record costs at most ~20 µs.
QUIET_MAX_REPLICAS = 32


@dataclass(slots=True, frozen=True)
class Quiet:
    """A set's state after a sync, vouched to need no write (module docstring)."""

    #: the set's (uid, resourceVersion) as the sync left it (its status write's answer)
    sts: tuple[str, str]
    #: uid -> (what the facts of the pod as the sync saw or created it are read from, its facts),
    #: every pod the set keeps: not the pod, whose version the informer replaces (a binding)
    pods: dict[str, tuple[FactsWitness, PodFacts]]
    #: sorted (uid, resourceVersion) of the revisions the set owns
    revisions: tuple[tuple[str, str], ...]

    @classmethod
    def vouched(
        cls,
        sts: tuple[str, str],
        pods: dict[str, tuple[Obj, PodFacts]],
        revisions: tuple[tuple[str, str], ...],
    ) -> Quiet:
        """The state of ``pods`` (uid -> (pod, its facts)) as the sync left them."""
        return cls(sts, {uid: (FactsWitness.of(p), f) for uid, (p, f) in pods.items()}, revisions)


def revision_versions(revisions: list[Obj]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((uid_of(r), resource_version_of(r)) for r in revisions))


def still(
    q: Quiet,
    sts: Obj,
    selector: LabelSelector,
    members: list[Obj],
    controlled: int,
    owned: list[Obj],
    orphans: list[Obj],
) -> bool:
    """Whether a sync of ``sts`` would see exactly the vouched state: ``members`` (the pods named
    as its members), ``controlled`` (how many pods it controls), ``owned`` and ``orphans`` (the
    revisions it controls and those without a controller in its namespace, unfiltered) as its
    claim would read them."""
    if (uid_of(sts), resource_version_of(sts)) != q.sts:
        return False
    if len(members) != len(q.pods) or controlled != len(members):
        return False
    for pod in members:
        held = q.pods.get(uid_of(pod))
        if held is None or not held[0].holds_for(pod):
            return False
    if any(selector.matches(labels_of(r)) for r in orphans):
        return False
    return revision_versions([r for r in owned if selector.matches(labels_of(r))]) == q.revisions


def keeps_all(q_pods: dict[str, tuple[Obj, PodFacts]], uid: str, name: str, selector: LabelSelector) -> bool:
    """Every pod is one the claim keeps as it is: controlled by set ``uid``, named as its member,
    its labels selected."""
    return all(
        f.controller_uid == uid and f.parent == name and f.ordinal >= 0 and selector.matches(labels_of(p))
        for p, f in q_pods.values()
    )
