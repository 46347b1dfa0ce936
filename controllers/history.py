"""ControllerRevision history, after kube's ``pkg/controller/history``.

Pure helpers (hash, name, ordering, equality) plus :class:`History`, the writer. A revision's
name is ``<parent>-<hash>`` where the hash is FNV-1 (32 bit) over the revision's raw ``data``
bytes followed by the decimal collision count, rendered with ``rand.SafeEncodeString``. kube's
``data.raw`` for a StatefulSet is Go's ``json.Marshal`` of a ``map[string]interface{}``: compact,
keys sorted at every level, ``<``, ``>`` and ``&`` escaped — :func:`raw_data` reproduces those
bytes, so equal templates get kube's revision names.
"""

from __future__ import annotations

import json
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS, Client
from apiserver.meta import name_of, namespace_of, new_controller_ref
from apiserver.workloadbuilder.naming import safe_encode_string

HASH_LABEL = "controller.kubernetes.io/hash"
_MAX_PREFIX = 223


def safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: map each byte onto the consonant/digit alphabet (no bad words);
    one implementation with the Workload names' (:func:`safe_encode_string`)."""
    return safe_encode_string(s)


def fnv1_32(data: bytes) -> int:
    """``hash/fnv.New32`` (FNV-1, multiply then xor)."""
    h = 0x811C9DC5
    for b in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= b
    return h


def raw_data(data: Any) -> bytes:
    """Go ``json.Marshal`` of a decoded map: sorted keys, no spaces, HTML-safe escapes."""
    s = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    s = s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    s = s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return s.encode()


def hash_revision(data: Any, collision_count: int | None) -> str:
    """``HashControllerRevision``."""
    raw = raw_data(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv1_32(raw)))


def revision_name(prefix: str, hash_: str) -> str:
    """``ControllerRevisionName``: the prefix is cut to 223 characters."""
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def revision_number(rev: Obj) -> int:
    return int(rev.get("revision") or 0)


def sort_revisions(revisions: list[Obj]) -> list[Obj]:
    """``SortControllerRevisions``: by revision, then creation time, then name."""
    return sorted(
        revisions,
        key=lambda r: (
            revision_number(r),
            (r.get("metadata") or {}).get("creationTimestamp") or "",
            name_of(r),
        ),
    )


def equal_revision(a: Obj, b: Obj) -> bool:
    """``EqualRevision``: the same data (kube compares the raw bytes; equal JSON is equal bytes here)."""
    return a.get("data") == b.get("data")


def find_equal_revisions(revisions: list[Obj], needle: Obj) -> list[Obj]:
    return [r for r in revisions if equal_revision(r, needle)]


def next_revision(sorted_revisions: list[Obj]) -> int:
    return revision_number(sorted_revisions[-1]) + 1 if sorted_revisions else 1


def new_controller_revision(
    parent: Obj,
    parent_api_version: str,
    parent_kind: str,
    template_labels: dict[str, str] | None,
    data: Obj,
    revision: int,
    collision_count: int | None,
    hash_: str = "",
) -> Obj:
    """``NewControllerRevision``: labels from the template plus the hash label, owned by ``parent``.

    ``hash_`` is ``hash_revision(data, collision_count)`` when the caller already has it (the
    StatefulSet controller keeps it per template content): then it is not computed again.
    """
    labels = dict(template_labels or {})
    h = hash_ or hash_revision(data, collision_count)
    labels[HASH_LABEL] = h
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(name_of(parent), h),
            "namespace": namespace_of(parent),
            "labels": labels,
            "ownerReferences": [new_controller_ref(parent, parent_api_version, parent_kind)],
        },
        "data": data,
        "revision": revision,
    }


def named_revision(revision: Obj, parent_name: str, hash_: str) -> Obj:
    """``revision`` named ``<parent>-<hash_>`` with the hash label, as a new object.

    Everything but ``data`` is the new object's own (the top level, ``metadata``, its labels,
    annotations and each ownerReference: a few small dicts), so a server may fill it in as it
    does a create's body. ``data`` — the whole pod template — is shared with ``revision``, which
    stays as it was: a create never modifies a revision's ``data`` (no defaults, no admission
    of ours writes it; the checks, the managedFields tracker and the storage only read it), and
    :meth:`History.create` asks for a read-only answer, which is the stored object, never
    ``revision``.
    """
    md = dict(revision.get("metadata") or {})
    md["name"] = revision_name(parent_name, hash_)
    labels = dict(md.get("labels") or {})
    labels[HASH_LABEL] = hash_
    md["labels"] = labels
    annotations = md.get("annotations")
    if type(annotations) is dict:
        md["annotations"] = dict(annotations)
    refs = md.get("ownerReferences")
    if type(refs) is list:
        md["ownerReferences"] = [dict(r) if type(r) is dict else r for r in refs]
    return {**revision, "metadata": md}


class History:
    """The writer half of ``history.Interface`` over a client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def create(
        self, parent: Obj, revision: Obj, collision_count: int, known_hash: str = "", handoff: bool = False
    ) -> tuple[Obj, int]:
        """``CreateControllerRevision``: on a name clash with different data, bump the collision count.

        ``known_hash`` is the revision's hash at ``collision_count`` when the caller has it
        (:func:`new_controller_revision` computed it): the first attempt then skips hashing again.
        Returns the stored revision and the (possibly incremented) collision count. The revision
        is read-only (created with ``read_only``: in-process, the informers' own object for it),
        as every revision a controller reads from its cache is: copy it before changing it.

        ``handoff``: each attempt's body (:func:`named_revision`: its own but for ``data``) goes
        to the client as it is, not copied again. Its ``data`` is ``revision``'s, which then
        becomes the stored revision's: only for a ``data`` nobody modifies (a controller's
        revision memo, read-only like its cache), which the create leaves as it was.
        """
        ns = namespace_of(parent)
        while True:
            clone = named_revision(
                revision, name_of(parent), known_hash or hash_revision(revision["data"], collision_count)
            )
            known_hash = ""
            name = clone["metadata"]["name"]  # read before the call: the body may be handed off
            try:
                return (
                    await self.client.create(CONTROLLERREVISIONS, clone, ns, handoff=handoff, read_only=True),
                    collision_count,
                )
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    raise
            exists = await self.client.get(CONTROLLERREVISIONS, name, ns)
            if equal_revision(exists, revision):  # the clone's data is the revision's
                return exists, collision_count
            collision_count += 1

    async def update_revision_number(self, revision: Obj, number: int) -> Obj:
        """``UpdateControllerRevision``: only ``revision`` changes (a rollback renumbers an old one)."""
        if revision_number(revision) == number:
            return revision
        return await self.client.patch(
            CONTROLLERREVISIONS,
            name_of(revision),
            {
                "metadata": {"resourceVersion": revision["metadata"].get("resourceVersion")},
                "revision": number,
            },
            namespace_of(revision),
        )

    async def delete(self, revision: Obj) -> None:
        try:
            await self.client.delete(CONTROLLERREVISIONS, name_of(revision), namespace_of(revision))
        except errors.StatusError as e:
            if e.code != 404:
                raise
