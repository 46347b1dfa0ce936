"""Adoption and release by label selector (kube's ``controller_ref_manager.go``).

A controller owns the objects whose controller ownerReference carries its UID. ``claim`` walks
candidates once:

* owned and still matching -> kept (even while the owner is being deleted: it costs nothing);
* owned but no longer matching -> released (controller reference removed), unless the owner is
  being deleted;
* an orphan that matches, is not being deleted, and lives in the owner's namespace -> adopted,
  after a fresh GET proves the owner is still the same live object (``RecheckDeletionTimestamp``):
  a cached owner that was just deleted and recreated must not adopt anything;
* owned by another controller -> ignored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client
from apiserver.meta import (
    controller_ref,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    new_controller_ref,
    uid_of,
)
from apiserver.selectors import LabelSelector
from controllers.ownerrefs import add_owner_ref, remove_owner_refs

Filter = Callable[[Obj], bool]


def recheck_deletion_timestamp(client: Client, gvr: GVR, owner: Obj) -> Callable[[], Awaitable[None]]:
    """``controller.RecheckDeletionTimestamp``: a fresh read of the owner before the first adoption."""

    async def check() -> None:
        fresh = await client.get(gvr, name_of(owner), namespace_of(owner))
        if uid_of(fresh) != uid_of(owner):
            raise errors.StatusError(
                409,
                "Conflict",
                f"original {owner.get('kind', '')} {namespace_of(owner)}/{name_of(owner)} is gone: "
                f"got uid {uid_of(fresh)}, wanted {uid_of(owner)}",
            )
        if is_being_deleted(fresh):
            raise errors.StatusError(
                409,
                "Conflict",
                f"{namespace_of(owner)}/{name_of(owner)} has just been deleted at "
                f"{fresh['metadata']['deletionTimestamp']}",
            )

    return check


class ControllerRefManager:
    """Claims objects of one resource for one controller object."""

    def __init__(
        self,
        client: Client,
        gvr: GVR,
        owner: Obj,
        selector: LabelSelector,
        owner_api_version: str,
        owner_kind: str,
        can_adopt: Callable[[], Awaitable[None]],
    ) -> None:
        self.client = client
        self.gvr = gvr
        self.owner = owner
        self.selector = selector
        self.owner_ref = new_controller_ref(owner, owner_api_version, owner_kind)
        self._can_adopt = can_adopt
        self._adopt_checked: BaseException | bool = False

    async def _check_adopt(self) -> None:
        if self._adopt_checked is True:
            return
        if isinstance(self._adopt_checked, BaseException):
            raise self._adopt_checked
        try:
            await self._can_adopt()
        except errors.StatusError as e:
            self._adopt_checked = e
            raise
        self._adopt_checked = True

    async def claim(self, objs: list[Obj], *filters: Filter) -> list[Obj]:
        """The subset of ``objs`` this controller owns after adopting/releasing; raises the first error last."""
        claimed: list[Obj] = []
        failures: list[Exception] = []
        owner_uid = uid_of(self.owner)
        owner_deleting = is_being_deleted(self.owner)

        def match(o: Obj) -> bool:
            return self.selector.matches(labels_of(o)) and all(f(o) for f in filters)

        for obj in objs:
            ref = controller_ref(obj)
            try:
                if ref is not None:
                    if ref.get("uid") != owner_uid:
                        continue
                    if match(obj):
                        claimed.append(obj)
                    elif not owner_deleting:
                        await self.release(obj)
                    continue
                if owner_deleting or not match(obj) or is_being_deleted(obj):
                    continue
                if namespace_of(self.owner) and namespace_of(self.owner) != namespace_of(obj):
                    continue
                await self.adopt(obj)
                claimed.append(obj)
            except errors.StatusError as e:
                if e.code == 404:
                    continue
                failures.append(e)
        if failures:
            raise failures[0]
        return claimed

    async def adopt(self, obj: Obj) -> None:
        await self._check_adopt()
        await add_owner_ref(self.client, self.gvr, obj, self.owner_ref)

    async def release(self, obj: Obj) -> None:
        try:
            await remove_owner_refs(self.client, self.gvr, obj, {uid_of(self.owner)})
        except errors.StatusError as e:
            # 422: the object no longer has the reference or was recreated; nothing to release.
            if e.code not in (404, 422):
                raise
