"""What a StatefulSet sync derives from its template and its revisions, computed once per input.

Every sync builds the revision the current template would be (``getStatefulSetRevisions``: a deep
copy of the template, its Go-JSON bytes, their FNV hash for the name) to compare it with the
stored ones, and applies the current and update revisions back into pod templates. Both are pure
functions of inputs that rarely change, so :class:`RevisionMemo` keeps them per set:

* the candidate revision, keyed by the set's UID, ``metadata.generation`` (every change of the
  spec, the template included, bumps it), its annotations (copied into the revision, and not
  part of the spec) and the collision count; only the revision number is set per sync. A set
  without a generation (not from an API server) is never memoized;
* a revision's template, keyed by the revision's UID and resourceVersion (a revision's ``data``
  is immutable, the resourceVersion makes it safe regardless); only the revisions the last sync
  used are kept.

The memoized objects are shared: callers read them, or copy before changing them (the pod
builder copies the template's spec; ``History.create`` clones the revision it writes).
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.meta import annotations_of, resource_version_of, uid_of
from controllers.statefulset import utils

_CandidateKey = tuple[str, int, int, tuple[tuple[str, str], ...]]


class RevisionMemo:
    """Candidate revisions and revision templates per set key (see module docstring)."""

    def __init__(self) -> None:
        self._candidates: dict[str, tuple[_CandidateKey, Obj]] = {}
        self._templates: dict[str, dict[str, tuple[str, Obj]]] = {}

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

    def templates(self, key: str, *revisions: Obj) -> list[Obj]:
        """``template_of_revision`` of each of ``revisions``; the set keeps only these entries."""
        known = self._templates.get(key) or {}
        kept: dict[str, tuple[str, Obj]] = {}
        out = []
        for rev in revisions:
            uid, rv = uid_of(rev), resource_version_of(rev)
            entry = kept.get(uid) or known.get(uid)
            if entry is None or entry[0] != rv or not uid:
                entry = (rv, utils.template_of_revision(rev))
            if uid:
                kept[uid] = entry
            out.append(entry[1])
        self._templates[key] = kept
        return out

    def forget(self, key: str) -> None:
        """The set is gone."""
        self._candidates.pop(key, None)
        self._templates.pop(key, None)
