"""The in-process :class:`~apiserver.client.interface.Client`: the HTTP verbs without sockets.

It calls the same :class:`~apiserver.registry.generic.GenericStore` the HTTP handlers call, so admission,
validation, resourceVersion checks and errors are identical. A call gives the event loop back
first once its task's step has made two (:mod:`apiserver.server.loopshare`), so a busy
controller cannot starve the others (a real client would wait on the network).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
import types
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from functools import partial
from typing import Any, cast

import orjson

from apiserver import errors
from apiserver.admission.webhook.frontdoor import admitted, converted, converts_by_webhook, may_call_webhooks
from apiserver.api.types import Obj
from apiserver.client.interface import GVR, WatchEvent
from apiserver.registry import metricsview
from apiserver.registry.generic import MERGE_PATCH, DeleteOptions, GenericStore, StoredResult, WriteOptions
from apiserver.registry.handoff import private_update_body
from apiserver.registry.namespace_finalize import finalize_namespace
from apiserver.registry.subresources import create_subresource
from apiserver.rest.resources import ResourceDef
from apiserver.server.discovery import server_resource_lists
from apiserver.server.loopshare import LoopShare
from apiserver.storage.interface import BOOKMARK, Record

#: ``GANGPLANE_CACHE_MUTATION_DETECTOR=true`` (the test suite sets it), like client-go's
#: ``KUBE_CACHE_MUTATION_DETECTOR``: every object handed out ``read_only`` is remembered, and
#: :meth:`ReadOnlyObjects.verify` (run when a control plane stops) fails if one was changed.
MUTATION_DETECTOR_ENV = "GANGPLANE_CACHE_MUTATION_DETECTOR"


@types.coroutine
def _turn() -> Generator[None, None, None]:
    """One pass of the event loop, as ``await asyncio.sleep(0)`` takes (its bare ``yield``),
    without ``sleep``'s own coroutine: what a request takes when its :class:`LoopShare` says so."""
    yield


class MutatedCacheObject(AssertionError):
    """A component changed an object an informer shares; it must deep-copy before changing it."""


class ReadOnlyObjects:
    """The records whose stored dicts were handed out ``read_only`` (mutation detector only)."""

    def __init__(self, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = os.environ.get(MUTATION_DETECTOR_ENV, "").lower() in ("1", "true", "yes")
        self.enabled = enabled
        #: id of each object handed out -> (the object, the record whose bytes it must match)
        self._handed_out: dict[int, tuple[Obj, Record]] = {}

    def note(self, obj: Obj, rec: Record) -> None:
        if self.enabled:
            self._handed_out[id(obj)] = (obj, rec)

    def verify(self) -> None:
        """Raise :class:`MutatedCacheObject` naming every shared object that no longer matches its bytes."""
        changed = [(o, r) for o, r in self._handed_out.values() if orjson.loads(r.raw) != o]
        if changed:
            names = ", ".join(
                f"{o.get('kind', '?')} {(o.get('metadata') or {}).get('namespace', '')}/"
                f"{(o.get('metadata') or {}).get('name', '?')}@{r.rv}"
                for o, r in changed[:10]
            )
            raise MutatedCacheObject(
                f"{len(changed)} object(s) shared read-only by informers were modified in place: {names}"
            )


class LocalClient:
    """``Client`` over an in-process :class:`API`. ``user_agent`` names the default field manager.

    ``list``/``watch`` with ``read_only=True`` (what informers ask for) return the store's own
    immutable dicts instead of a decoded copy per call: the informers of every component in the
    process then share one object per resourceVersion, as the controllers of kube's
    controller-manager share one informer cache. Callers must not modify them (deep-copy first);
    ``read_only_objects`` checks that in tests.

    ``loop_share`` decides which requests give the event loop back first; a plane passes one to all
    its clients (a step is the task's, not a client's: a task with two clients still turns after
    two requests), a client made alone gets its own.
    """

    def __init__(
        self,
        api: GenericStore,
        user_agent: str = "gangplane",
        bookmark_interval: float = 5.0,
        read_only_objects: ReadOnlyObjects | None = None,
        loop_share: LoopShare | None = None,
    ) -> None:
        self.api = api
        self.user_agent = user_agent
        self.bookmark_interval = bookmark_interval
        self.calls = 0
        self.read_only_objects = read_only_objects or ReadOnlyObjects(enabled=False)
        self.loop_share = loop_share if loop_share is not None else LoopShare()

    @property
    def requests_per_step(self) -> int:
        """The requests of a task's step that run at once (``apiserver.client.interface.requests_per_step``):
        the loop share's, one when it turns before every request."""
        share = self.loop_share
        return 1 if share.every else share.requests

    def _shared(self, rec: Record) -> Obj:
        obj = rec.shared(self.api.shared_subtrees)
        self.read_only_objects.note(obj, rec)
        return obj

    def _rd(self, gvr: GVR) -> ResourceDef:
        rd = self.api.registry.get(gvr.group, gvr.version, gvr.resource)
        if rd is None or not self.api.served(rd):
            raise errors.no_route()
        return rd

    async def _yield(self) -> None:
        self.calls += 1
        share = self.loop_share
        if share.due():
            await _turn()
            share.resumed()
        self.api.store.fresh()

    async def _durable(self, result: Any) -> Obj:
        """Acknowledge a write only once the storage has made it durable (as the HTTP server
        does); a storage that is durable at apply (``acknowledged_at_apply``: memory) has
        nothing to wait for, and no coroutine of its own is made for it."""
        store = self.api.store
        if not store.acknowledged_at_apply:
            await store.durable()
        acknowledged: Obj = result
        return acknowledged

    def _opts(self, dry_run: bool, field_manager: str, force: bool = False) -> WriteOptions:
        return WriteOptions(dry_run=dry_run, field_manager=field_manager or self.user_agent, force=force)

    @staticmethod
    def _copy(obj: Obj) -> Obj:
        copied: Obj = orjson.loads(orjson.dumps(obj))
        return copied

    # ------------------------------------------------------------------ reads
    async def get(self, gvr: GVR, name: str, namespace: str = "") -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        if rd.group == "metrics.k8s.io":
            return metricsview.answer(self.api, rd, "get", namespace, name, "", "")
        rec = await converted(self.api, rd, lambda: self.api.get(rd, namespace, name))
        return rec.copy()

    async def list(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
        read_only: bool = False,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        if rd.group == "metrics.k8s.io":
            return metricsview.answer(self.api, rd, "list", namespace, "", label_selector, field_selector)
        res = await converted(
            self.api,
            rd,
            lambda: self.api.list(
                rd,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_=continue_,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
            ),
        )
        meta: Obj = {"resourceVersion": str(res.resource_version)}
        if res.continue_token:
            meta["continue"] = res.continue_token
        if read_only:
            items = [self._shared(r) for r in res.records]
        elif res.records:
            # one decode of the joined bytes is several times cheaper than one per item
            items = orjson.loads(b"[" + b",".join(r.raw for r in res.records) + b"]")
        else:
            items = []
        return {"kind": rd.list_kind, "apiVersion": rd.api_version, "metadata": meta, "items": items}

    async def watch(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        allow_bookmarks: bool = False,
        send_initial_events: bool = False,
        timeout_seconds: float | None = None,
        read_only: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        """The watch's events one by one: :meth:`watch_batches`' batches, flattened."""
        batches = self.watch_batches(
            gvr,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            allow_bookmarks=allow_bookmarks,
            send_initial_events=send_initial_events,
            timeout_seconds=timeout_seconds,
            read_only=read_only,
        )
        async with contextlib.aclosing(batches):  # closed with this one: the watch ends at once
            async for batch in batches:
                for etype, obj in batch:
                    yield WatchEvent(etype, obj)

    async def watch_batches(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        allow_bookmarks: bool = False,
        send_initial_events: bool = False,
        timeout_seconds: float | None = None,
        read_only: bool = False,
    ) -> AsyncGenerator[builtins.list[tuple[str, Obj]], None]:
        """:meth:`watch`'s events as ``(type, object)`` pairs, in lists: what the watch had
        buffered at each wake-up (or the initial events, or one bookmark or error).

        The in-process informers read this (:meth:`apiserver.client.informer.Informer._watch`):
        a big gang's 5,000 bound pods reach each of them in a few batches, without a
        :class:`WatchEvent` and a step of this generator per event. Same events, same order.
        """
        await self._yield()
        rd = self._rd(gvr)
        try:
            watcher, initial, end_bookmark = self.api.watch(
                rd,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                resource_version=resource_version,
                resource_version_match="NotOlderThan" if send_initial_events else "",
                send_initial_events=True if send_initial_events else None,
                allow_bookmarks=allow_bookmarks,
            )
        except errors.StatusError as e:
            if e.code == 410:
                yield [("ERROR", e.status())]
                return
            raise
        start_rv = self.api.store.rv
        view = rd.is_view
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_seconds if timeout_seconds else None

        # chosen once per watch, not per event: every informer of the process runs each event of
        # its resource through this (four pod watches in the full plane)
        objects: Callable[[builtins.list[tuple[str, Record]]], builtins.list[tuple[str, Obj]]]
        if view or not read_only or self.read_only_objects.enabled:
            obj_of: Callable[[Record], Obj]
            if view:

                def obj_of(rec: Record) -> Obj:
                    return self.api._to_view(rd, rec.copy())

            elif not read_only:
                obj_of = Record.copy
            else:
                obj_of = self._shared

            def objects(pairs: builtins.list[tuple[str, Record]]) -> builtins.list[tuple[str, Obj]]:
                return [(etype, obj_of(rec)) for etype, rec in pairs]

        else:
            subtrees = self.api.shared_subtrees

            def objects(pairs: builtins.list[tuple[str, Record]]) -> builtins.list[tuple[str, Obj]]:
                # what _shared does when the mutation detector is off, no call of ours per event
                return [(etype, rec.shared(subtrees)) for etype, rec in pairs]

        def bookmark(rv: int, end: bool = False) -> builtins.list[tuple[str, Obj]]:
            md: Obj = {"resourceVersion": str(rv)}
            if end:
                md["annotations"] = {"k8s.io/initial-events-end": "true"}
            return [(BOOKMARK, {"kind": rd.kind, "apiVersion": rd.api_version, "metadata": md})]

        if read_only and not view:  # every record it hands out is shared
            shared_by_reader = getattr(self.api.store, "shared_by_reader", None)
            if shared_by_reader is not None:
                shared_by_reader(watcher)
        webhook_views = converts_by_webhook(rd)
        first = cast("builtins.list[tuple[str, Record]]", initial)
        try:
            if webhook_views:
                await converted(self.api, rd, lambda: self.api.view_records(rd, [r for _, r in first]))
            if first:
                yield objects(first)
            if end_bookmark:
                yield bookmark(start_rv, end=True)
            while True:
                wait = self.bookmark_interval
                if deadline is not None:
                    left = deadline - loop.time()
                    if left <= 0:
                        return
                    wait = min(wait, left)
                got = await watcher.wait(wait)
                if not got:
                    if allow_bookmarks and not watcher.buffer:
                        yield bookmark(self.api.store.rv)
                    continue
                drained = watcher.drain()
                if webhook_views and drained:
                    await converted(self.api, rd, partial(self.api.view_records, rd, [r for _, r in drained]))
                if drained:
                    yield objects(drained)
                if watcher.closed and not watcher.buffer:
                    return
        finally:
            watcher.close()

    # ------------------------------------------------------------------ discovery
    async def server_resources(self) -> builtins.list[Obj]:
        await self._yield()
        return self.discovery_documents()

    def discovery_documents(self) -> builtins.list[Obj]:
        """:meth:`server_resources` without the await: in-process discovery never blocks.

        The composition root uses it to answer a component factory's ``ctx.is_served`` while
        wiring, before (or outside) the event loop.
        """
        return server_resource_lists(self.api.registry, self.api.gates)

    # ------------------------------------------------------------------ writes
    async def create(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        answer: bool = True,
        read_only: bool = False,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        # a handed-off body is the caller's no longer: the server may fill it in and keep it
        body = obj if handoff else self._copy(obj)
        body.setdefault("apiVersion", rd.api_version)
        body.setdefault("kind", rd.kind)
        ns = namespace or (body.get("metadata") or {}).get("namespace", "")
        opts = self._opts(dry_run, field_manager)
        if may_call_webhooks(self.api, rd):
            result = await admitted(self.api, rd, lambda b: self.api.create(rd, ns, b, opts), body)
        else:  # what ``admitted`` does then, without its coroutine and closure (most creates)
            result = self.api.create(rd, ns, body, opts)
        if not answer:
            # a stored create's answer is decoded when read: not at all for a caller that drops it
            return await self._durable({})
        if read_only and isinstance(result, StoredResult):
            # the stored object's shared dict, as the informers will have it: the caller won't modify it
            return await self._durable(self._shared(result.record))
        return await self._durable(result.obj)

    async def update(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        dry_run: bool = False,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        return await self._update(gvr, obj, namespace, dry_run, field_manager, "", handoff, read_only)

    async def update_status(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str = "",
        *,
        field_manager: str = "",
        handoff: bool = False,
        read_only: bool = False,
    ) -> Obj:
        return await self._update(gvr, obj, namespace, False, field_manager, "status", handoff, read_only)

    async def _update(
        self,
        gvr: GVR,
        obj: Obj,
        namespace: str,
        dry_run: bool,
        field_manager: str,
        subresource: str,
        handoff: bool,
        read_only: bool,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        if (handoff or subresource == "status") and type(obj) is dict:
            # only the parts the write may modify are copied: the live object's own sections
            # that a status write replaces with the live object's anyway go through as they are.
            # Not only for a handed-off body: the sections passed through are the store's shared
            # read-only ones, which no caller may modify, and everything else is copied (the body
            # itself is never modified), so the caller keeps its body as with the whole copy (a
            # controller's status write is its informer's set with a new status)
            omd = obj.get("metadata")
            name = omd.get("name", "") if type(omd) is dict else ""
            held = namespace or (omd.get("namespace", "") if type(omd) is dict else "")
            live = self.api.held_shared(rd, held, name) if type(name) is str and type(held) is str else None
            body = private_update_body(rd, obj, live, subresource)
        else:
            body = self._copy(obj)
        body.setdefault("apiVersion", rd.api_version)
        body.setdefault("kind", rd.kind)
        md = body.get("metadata") or {}
        ns = namespace or md.get("namespace", "")
        opts = self._opts(dry_run, field_manager)
        if may_call_webhooks(self.api, rd):
            result = await admitted(
                self.api,
                rd,
                lambda b: self.api.update(rd, ns, md.get("name", ""), b, opts, subresource),
                body,
            )
        else:  # what ``admitted`` does then, without its coroutine and closure (as create)
            result = self.api.update(rd, ns, md.get("name", ""), body, opts, subresource)
        if read_only and isinstance(result, StoredResult):
            # the stored object's shared dict, as the informers have it: the caller won't modify it
            return await self._durable(self._shared(result.record))
        return await self._durable(result.obj)

    async def patch(
        self,
        gvr: GVR,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = MERGE_PATCH,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool = False,
        read_only: bool = False,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        body = self._copy(patch)
        opts = self._opts(dry_run, field_manager, force)
        if subresource == "scale":
            result = await admitted(
                self.api, rd, lambda b: self.api.scale_patch(rd, namespace, name, b, patch_type, opts), body
            )
            return await self._durable(result.obj)
        if may_call_webhooks(self.api, rd):
            result = await admitted(
                self.api,
                rd,
                lambda b: self.api.patch(rd, namespace, name, b, patch_type, opts, subresource),
                body,
            )
        else:  # what ``admitted`` does then, without its coroutine and closure (as create)
            result = self.api.patch(rd, namespace, name, body, patch_type, opts, subresource)
        if read_only and isinstance(result, StoredResult):
            # the stored object's shared dict, as the informers have it: the caller won't modify it
            return await self._durable(self._shared(result.record))
        return await self._durable(result.obj)

    async def delete(
        self,
        gvr: GVR,
        name: str,
        namespace: str = "",
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        opts = DeleteOptions(propagation_policy, grace_period_seconds, dict(preconditions or {}), dry_run)
        result = await admitted(self.api, rd, lambda _: self.api.delete(rd, namespace, name, opts))
        return await self._durable(result.obj)

    async def delete_collection(
        self,
        gvr: GVR,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        opts = DeleteOptions(propagation_policy, grace_period_seconds)
        return await self._durable(
            await admitted(
                self.api,
                rd,
                lambda _: self.api.delete_collection(rd, namespace, label_selector, field_selector, opts),
            )
        )

    async def create_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        # _yield and _durable written out: a big gang's binding tasks make this call once per
        # member, and each coroutine layer costs its creation and a pass on the way down and up
        self.calls += 1
        share = self.loop_share
        if share.due():
            await _turn()
            share.resumed()
        api = self.api
        store = api.store
        store.fresh()
        rd = self._rd(gvr)
        # pods/binding reads three strings out of its body and keeps none of it
        # (registry/binding.py): the scheduler's one write per pod needs no private copy
        body = obj if subresource == "binding" and rd.plural == "pods" and not rd.group else self._copy(obj)
        created = create_subresource(api, rd, namespace, name, subresource, body)
        if created is None:
            raise errors.method_not_allowed("create", f"{rd.plural}/{subresource}", rd.group)
        if not store.acknowledged_at_apply:
            await store.durable()
        return created

    async def get_subresource(self, gvr: GVR, name: str, subresource: str, namespace: str = "") -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        if subresource == "scale":
            return self.api.scale_get(rd, namespace, name)
        if subresource == "status" or rd.strategy.subresource_strategy(subresource) is not None:
            return self.api.get(rd, namespace, name).copy()
        raise errors.method_not_allowed("get", f"{rd.plural}/{subresource}", rd.group)

    async def update_subresource(
        self, gvr: GVR, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        await self._yield()
        rd = self._rd(gvr)
        body = self._copy(obj)
        if subresource == "scale":
            result = await admitted(
                self.api, rd, lambda b: self.api.scale_update(rd, namespace, name, b), body
            )
            return await self._durable(result.obj)
        if subresource == "status" or rd.strategy.subresource_strategy(subresource) is not None:
            opts = self._opts(False, "")
            result = await admitted(
                self.api, rd, lambda b: self.api.update(rd, namespace, name, b, opts, subresource), body
            )
            return await self._durable(result.obj)
        if subresource == "finalize" and rd.plural == "namespaces":
            return await self._durable(finalize_namespace(self.api, name, body).obj)
        raise errors.method_not_allowed("update", f"{rd.plural}/{subresource}", rd.group)
