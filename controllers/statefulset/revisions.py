"""What a StatefulSet sync derives from its template and its revisions, computed once per input.

Every sync builds the revision the current template would be (``getStatefulSetRevisions``: a deep
copy of the template, its Go-JSON bytes, their FNV hash for the name) to compare it with the
stored ones, and applies the current and update revisions back into pod templates. Both are pure
functions of inputs that rarely change, so :class:`RevisionMemo` keeps them per set:

* the candidate revision, keyed by the set's UID, ``metadata.generation`` (every change of the
  spec, the template included, bumps it), its annotations (copied into the revision, and not
  part of the spec) and the collision count; only the revision number is set per sync. A set
  without a generation (not from an API server) is never memoized;
* a revision's pod prototype (:func:`utils.pod_prototype`: the template applied, the set's
  ownerReference, the revision label; everything of a new pod but its ordinal's identity),
  keyed by the revision's UID and resourceVersion (a revision's ``data`` is immutable, the
  resourceVersion makes it safe regardless) and the set's UID and generation; only the
  revisions the last sync used are kept. A pod is then one copy of it, stamped with its
  ordinal (:func:`utils.stamp_pod`).

* which stored revision is the update revision (``getStatefulSetRevisions``' search for a
  revision equal to the candidate), keyed by the candidate's inputs above and each stored
  revision's UID and resourceVersion (in sorted order): while none of them changes, the answer
  is the same revision. It is kept only when the search wrote nothing, or created the revision
  (then for the list the cache will hold: the old revisions and the created one).

The memoized objects are shared: callers read them, or copy before changing them
(:func:`utils.stamp_pod` copies the prototype; ``History.create`` clones the revision it writes).
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.meta import annotations_of, name_of, resource_version_of, uid_of
from controllers.statefulset import utils

_CandidateKey = tuple[str, int, int, tuple[tuple[str, str], ...]]
_UpdateKey = tuple[_CandidateKey, tuple[tuple[str, str], ...]]


class RevisionMemo:
    """Candidate revisions and pod prototypes per set key (see module docstring)."""

    def __init__(self) -> None:
        self._candidates: dict[str, tuple[_CandidateKey, Obj]] = {}
        self._prototypes: dict[str, dict[str, tuple[tuple[str, str, int], Obj]]] = {}
        #: set key -> (inputs, position of the update revision in the sorted revisions)
        self._updates: dict[str, tuple[_UpdateKey, int]] = {}

    @staticmethod
    def _candidate_key(sts: Obj, collision: int) -> _CandidateKey | None:
        generation = int((sts.get("metadata") or {}).get("generation") or 0)
        if not generation:
            return None
        return (uid_of(sts), generation, collision, tuple(sorted(annotations_of(sts).items())))

    @staticmethod
    def _update_key(candidate: _CandidateKey, revisions: list[Obj]) -> _UpdateKey:
        return (candidate, tuple((uid_of(r), resource_version_of(r)) for r in revisions))

    def update_revision(self, sts: Obj, key: str, collision: int, revisions: list[Obj]) -> Obj | None:
        """The update revision among the sorted ``revisions``, when the last search that wrote
        nothing (or created it) had the same inputs; None: search."""
        hit = self._updates.get(key)
        if hit is None:
            return None
        candidate = self._candidate_key(sts, collision)
        if candidate is None or hit[0] != self._update_key(candidate, revisions):
            return None
        return revisions[hit[1]]

    def remember_update(self, sts: Obj, key: str, collision: int, revisions: list[Obj], update: Obj) -> None:
        """``update`` (one of the sorted ``revisions``, by identity) answers these inputs."""
        self._updates.pop(key, None)
        candidate = self._candidate_key(sts, collision)
        at = next((i for i, r in enumerate(revisions) if r is update), -1)
        if candidate is not None and at >= 0:
            self._updates[key] = (self._update_key(candidate, revisions), at)

    def candidate(self, sts: Obj, key: str, number: int, collision: int, build: Callable[[], Obj]) -> Obj:
        """The revision ``build()`` makes for ``sts`` with ``revision: number``."""
        generation = int((sts.get("metadata") or {}).get("generation") or 0)
        if not generation:
            rev = build()
            rev["revision"] = number
            return rev
        inputs: _CandidateKey = (
            uid_of(sts),
            generation,
            collision,
            tuple(sorted(annotations_of(sts).items())),
        )
        hit = self._candidates.get(key)
        if hit is None or hit[0] != inputs:
            hit = (inputs, build())
            self._candidates[key] = hit
        return {**hit[1], "revision": number}

    def prototypes(self, sts: Obj, key: str, *revisions: Obj) -> list[Obj]:
        """:func:`utils.pod_prototype` of each of ``revisions`` (its template applied, its name as
        the revision label) for ``sts``; the set keeps only these entries.

        Keyed by the revision's UID and resourceVersion (its ``data`` is immutable) and the
        set's UID and generation (its name, namespace and ``spec.serviceName`` are in every
        pod): a set without a generation gets fresh ones every time.
        """
        generation = int((sts.get("metadata") or {}).get("generation") or 0)
        known = self._prototypes.get(key) or {}
        kept: dict[str, tuple[tuple[str, str, int], Obj]] = {}
        out = []
        for rev in revisions:
            uid = uid_of(rev)
            inputs = (resource_version_of(rev), uid_of(sts), generation)
            entry = kept.get(uid) or known.get(uid)
            if entry is None or entry[0] != inputs or not uid or not generation:
                # pod_prototype reads the template's metadata and copies its spec: no copy of it first
                template = utils.revision_template_view(rev)
                entry = (inputs, utils.pod_prototype(sts, template, name_of(rev)))
            if uid:
                kept[uid] = entry
            out.append(entry[1])
        self._prototypes[key] = kept
        return out

    def forget(self, key: str) -> None:
        """The set is gone."""
        self._candidates.pop(key, None)
        self._prototypes.pop(key, None)
        self._updates.pop(key, None)
