"""ownerReference and finalizer patches, shaped the way kube's controllers send them.

Adoption, release and the garbage collector's reference removal are strategic-merge patches that
merge ``ownerReferences`` by ``uid`` and carry the object's ``uid`` (so they cannot land on a
recreated object of the same name) — they never overwrite references another actor added
meanwhile. For a resource without strategic-merge support the server answers 415 and the caller
falls back to a JSON merge patch of the whole list guarded by ``resourceVersion`` (a conflict then
means "requeue"), which is what client-go's garbage collector does for custom resources.
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client
from apiserver.meta import owner_references, resource_version_of, uid_of

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


def adopt_patch(uid: str, ref: Obj) -> Obj:
    """``{"metadata":{"ownerReferences":[ref],"uid":uid}}``: add (or replace) ``ref`` by its uid."""
    return {"metadata": {"ownerReferences": [ref], "uid": uid}}


def delete_refs_patch(uid: str, owner_uids: Iterable[str]) -> Obj:
    """``$patch: delete`` for each owner uid (``GenerateDeleteOwnerRefStrategicMergeBytes``)."""
    return {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": u} for u in owner_uids], "uid": uid}}


def refs_merge_patch(obj: Obj, refs: list[Obj]) -> Obj:
    """JSON merge patch replacing the whole list, guarded by the object's resourceVersion."""
    return {"metadata": {"resourceVersion": resource_version_of(obj), "ownerReferences": refs or None}}


def finalizers_merge_patch(obj: Obj, finalizers: list[str]) -> Obj:
    """The garbage collector's finalizer removal: the new list, guarded by resourceVersion."""
    return {"metadata": {"resourceVersion": resource_version_of(obj), "finalizers": finalizers or None}}


async def add_owner_ref(client: Client, gvr: GVR, obj: Obj, ref: Obj) -> Obj:
    """Add ``ref`` to ``obj`` (adoption). Raises StatusError (404/409/422) like the server does."""
    md = obj.get("metadata") or {}
    try:
        return await client.patch(
            gvr,
            md.get("name", ""),
            adopt_patch(uid_of(obj), ref),
            md.get("namespace", ""),
            patch_type=STRATEGIC_MERGE,
        )
    except errors.StatusError as e:
        if e.code != 415:
            raise
    refs = [r for r in owner_references(obj) if r.get("uid") != ref.get("uid")] + [ref]
    return await client.patch(gvr, md.get("name", ""), refs_merge_patch(obj, refs), md.get("namespace", ""))


async def remove_owner_refs(client: Client, gvr: GVR, obj: Obj, owner_uids: set[str]) -> Obj:
    """Drop the references to ``owner_uids`` from ``obj`` (release, orphaning, dangling refs)."""
    md = obj.get("metadata") or {}
    try:
        return await client.patch(
            gvr,
            md.get("name", ""),
            delete_refs_patch(uid_of(obj), sorted(owner_uids)),
            md.get("namespace", ""),
            patch_type=STRATEGIC_MERGE,
        )
    except errors.StatusError as e:
        if e.code != 415:
            raise
    live = await client.get(gvr, md.get("name", ""), md.get("namespace", ""))
    if uid_of(live) != uid_of(obj):
        raise errors.not_found(gvr.resource, md.get("name", ""), gvr.group)
    refs = [r for r in owner_references(live) if r.get("uid") not in owner_uids]
    return await client.patch(gvr, md.get("name", ""), refs_merge_patch(live, refs), md.get("namespace", ""))
