"""Shared informers: list + watch into a local cache with indexers and event handlers.

Like client-go's ``SharedIndexInformer``: one list/watch per resource shared by every component
that asks the :class:`InformerFactory` for it. The cache survives a broken watch by resuming from
the last seen resourceVersion (bookmarks keep it fresh) and re-lists on ``410 Expired``,
delivering the difference as add/update/delete notifications. Cached objects are shared:
handlers and listers must treat them as read-only (copy before mutating). The informer lists
and watches ``read_only``, so over the in-process client they are the store's own immutable
objects, one per resourceVersion for every informer of the process (the test suite's mutation
detector fails a test that modifies one).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import GVR, Client, WatchEvent
from apiserver.meta import key_of

IndexFunc = Callable[[Obj], list[str]]
#: a field an index function reads: (top-level section, field), e.g. ("metadata", "labels")
IndexInput = tuple[str, str]
_F = TypeVar("_F", bound=Callable[..., Any])
AddHandler = Callable[[Obj], None]
UpdateHandler = Callable[[Obj, Obj], None]
DeleteHandler = Callable[[Obj], None]

log = logging.getLogger("gangplane.informer")


async def _one_by_one(events: AsyncIterator[WatchEvent]) -> AsyncIterator[builtins.list[tuple[str, Obj]]]:
    """A client's watch events as :meth:`Informer._batches` hands them out, one to a list."""
    try:
        async for ev in events:
            yield [(ev.type, ev.object)]
    finally:  # closed with this one, as the watch itself was when the informer held it
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


class IndexerConflictError(ValueError):
    """Two users of one shared informer gave one index name different functions (client-go's
    "indexer conflict"): each would read the other's index."""


class HandlerRegistration:
    """What :meth:`Informer.add_event_handler` returns: pass it to :meth:`Informer.remove_event_handler`
    (client-go's ``ResourceEventHandlerRegistration``)."""

    __slots__ = ("handlers",)

    def __init__(
        self, handlers: tuple[AddHandler | None, UpdateHandler | None, DeleteHandler | None]
    ) -> None:
        self.handlers = handlers


def same_index(a: IndexFunc, b: IndexFunc) -> bool:
    """Whether two index functions compute the same index: one function, or two closures made by one
    factory over equal values (``label_index("app")`` built again by a restarted controller)."""
    if a is b:
        return True
    code_a, code_b = getattr(a, "__code__", None), getattr(b, "__code__", None)
    if code_a is None or code_a is not code_b:
        return False
    cells_a = getattr(a, "__closure__", None) or ()
    cells_b = getattr(b, "__closure__", None) or ()
    try:
        return len(cells_a) == len(cells_b) and all(
            x.cell_contents == y.cell_contents for x, y in zip(cells_a, cells_b, strict=True)
        )
    except ValueError:  # an empty cell
        return False


async def stop_informer(inf: Informer, recancel: float = 0.1) -> None:
    """``inf.stop()``, repeated until the informer task is really gone.

    On Python 3.11 a cancellation that lands while a watch wait is being woken can be swallowed
    (``asyncio.wait_for``), and the informer's watch loop does not look at its stop flag; asking
    again cancels it for good.
    """
    first = asyncio.ensure_future(inf.stop())
    for _ in range(50):
        done, _ = await asyncio.wait({first}, timeout=recancel)
        if done:
            return
        again = asyncio.ensure_future(inf.stop())
        await asyncio.wait({again}, timeout=0)
    log.warning("informer for %s did not stop", inf.gvr)


def index_reads(*fields: str) -> Callable[[_F], _F]:
    """Declare every field an index function reads besides the object's key.

    ``fields`` are ``"section.field"`` paths (``"metadata.ownerReferences"``,
    ``"spec.nodeName"``); a function of the key only (name, namespace) declares none. An
    informer then re-runs the function on an update only if one of those fields differs between
    the old and the new object: a pod's status write leaves its owners, labels and group alone,
    and each index need not be computed twice to learn that it did not move. A function without
    a declaration is re-run on every update. A declaration must name everything the function
    reads (tests/unit/apiserver/client/test_index_reads.py checks those of the shipped ones).
    """
    inputs: tuple[IndexInput, ...] = tuple(
        (section, field) for section, _, field in (f.partition(".") for f in fields)
    )

    def mark(fn: _F) -> _F:
        fn.index_reads = inputs  # type: ignore[attr-defined]
        return fn

    return mark


def reads_of(fn: IndexFunc) -> tuple[IndexInput, ...] | None:
    """What :func:`index_reads` declared for ``fn`` (None: undeclared, re-run on every update)."""
    return getattr(fn, "index_reads", None)


@index_reads()
def namespace_index(obj: Obj) -> list[str]:
    return [(obj.get("metadata") or {}).get("namespace", "")]


@index_reads("metadata.ownerReferences")
def owner_uid_index(obj: Obj) -> list[str]:
    return [r["uid"] for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("uid")]


@index_reads("metadata.ownerReferences")
def controller_uid_index(obj: Obj) -> list[str]:
    return [
        r["uid"]
        for r in (obj.get("metadata") or {}).get("ownerReferences") or []
        if r.get("uid") and r.get("controller")
    ]


@index_reads("spec.nodeName")
def node_name_index(obj: Obj) -> list[str]:
    n = (obj.get("spec") or {}).get("nodeName")
    return [n] if n else []


def label_index(label: str) -> IndexFunc:
    @index_reads("metadata.labels")
    def f(obj: Obj) -> list[str]:
        v = ((obj.get("metadata") or {}).get("labels") or {}).get(label)
        return [v] if v is not None else []

    return f


NAMESPACE = "namespace"
OWNER_UID = "owner-uid"
CONTROLLER_UID = "controller-uid"
NODE_NAME = "node-name"


class Informer:
    def __init__(
        self,
        client: Client,
        gvr: GVR,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        relist_backoff: float = 0.2,
    ) -> None:
        self.client = client
        self.gvr = gvr
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE: namespace_index}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE: {}}
        #: replaced, never changed in place: a handler removed while an event is being delivered
        #: does not disturb the delivery loop
        self._handlers: list[tuple[AddHandler | None, UpdateHandler | None, DeleteHandler | None]] = []
        #: what one event calls, per event type, in registration order (rebuilt with ``_handlers``)
        self._on_add: tuple[AddHandler, ...] = ()
        self._on_update: tuple[UpdateHandler, ...] = ()
        self._on_delete: tuple[DeleteHandler, ...] = ()
        #: (function, index) of every indexer, for an add or a delete
        self._every_index: tuple[tuple[IndexFunc, dict[str, set[str]]], ...] = (
            (namespace_index, self._indices[NAMESPACE]),
        )
        #: those an update may move, with what they read (see ``_index_update``); the namespace
        #: index is not one: the key names the namespace
        self._moving: tuple[tuple[IndexFunc, dict[str, set[str]], tuple[IndexInput, ...] | None], ...] = ()
        #: every field a declared moving index reads (compared once per update)
        self._inputs: tuple[IndexInput, ...] = ()
        self._synced = asyncio.Event()
        self.resource_version = ""
        self.relists = 0
        self.watches = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.relist_backoff = relist_backoff

    # ------------------------------------------------------------------ cache API
    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Index the cache by ``fn`` under ``name``; asking again for the same index is a no-op, a
        different function under a taken name raises :class:`IndexerConflictError`."""
        have = self._indexers.get(name)
        if have is not None:
            if not same_index(have, fn):
                raise IndexerConflictError(f"indexer conflict: {name!r} on {self.gvr} is already {have!r}")
            return
        self._indexers[name] = fn
        idx: dict[str, set[str]] = {}
        for k, obj in self._items.items():
            for v in fn(obj):
                idx.setdefault(v, set()).add(k)
        self._indices[name] = idx
        self._every_index = (*self._every_index, (fn, idx))
        reads = reads_of(fn)
        if reads != ():  # a function of the key alone never moves on an update
            self._moving = (*self._moving, (fn, idx, reads))
            self._inputs = tuple(dict.fromkeys([*self._inputs, *(reads or ())]))

    def add_event_handler(
        self,
        on_add: AddHandler | None = None,
        on_update: UpdateHandler | None = None,
        on_delete: DeleteHandler | None = None,
    ) -> HandlerRegistration:
        """Deliver the cache's changes to these handlers from now on; an ``on_add`` is first called
        for every cached object (client-go's synthetic adds for a late handler)."""
        reg = HandlerRegistration((on_add, on_update, on_delete))
        self._set_handlers([*self._handlers, reg.handlers])
        if on_add is not None:
            for obj in list(self._items.values()):
                self._call(on_add, obj)
        return reg

    def remove_event_handler(self, reg: HandlerRegistration) -> None:
        """Stop delivering to ``reg``'s handlers (a stopped component's); the cache keeps running."""
        self._set_handlers([h for h in self._handlers if h is not reg.handlers])

    def _set_handlers(
        self, handlers: builtins.list[tuple[AddHandler | None, UpdateHandler | None, DeleteHandler | None]]
    ) -> None:
        """Replace the handlers (never changed in place: a delivery under way keeps its tuple)
        and the per-type tuples one event runs through, so that an event calls only the handlers
        of its type with no per-handler ``None`` test or wrapper call."""
        self._handlers = handlers
        self._on_add = tuple(a for a, _, _ in handlers if a is not None)
        self._on_update = tuple(u for _, u, _ in handlers if u is not None)
        self._on_delete = tuple(d for _, _, d in handlers if d is not None)

    def handler_count(self) -> int:
        return len(self._handlers)

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self, namespace: str = "") -> list[Obj]:
        if not namespace:
            return list(self._items.values())
        return self.by_index(NAMESPACE, namespace)

    def keys(self) -> builtins.list[str]:
        return list(self._items.keys())

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        keys = self._indices.get(name, {}).get(value)
        if not keys:
            return []
        return [self._items[k] for k in keys if k in self._items]

    def count_by_index(self, name: str, value: str) -> int:
        """How many cached objects the index holds under ``value`` (no list built)."""
        return len(self._indices.get(name, {}).get(value) or ())

    def index_keys(self, name: str, value: str) -> set[str]:
        return set(self._indices.get(name, {}).get(value) or ())

    def __len__(self) -> int:
        return len(self._items)

    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    # ------------------------------------------------------------------ internals
    def _call(self, fn: Callable[..., None], *args: Obj) -> None:
        try:
            fn(*args)
        except Exception:  # a handler bug must not stop the informer
            log.exception("informer handler for %s failed", self.gvr)

    def _index_add(self, key: str, obj: Obj) -> None:
        # get-then-add, not ``setdefault(v, set())``: most values (a namespace, a set's uid) are
        # already there, and setdefault would build a set to throw away for each
        for fn, idx in self._every_index:
            for v in fn(obj):
                s = idx.get(v)
                if s is None:
                    idx[v] = {key}
                else:
                    s.add(key)

    def _index_remove(self, key: str, obj: Obj) -> None:
        for fn, idx in self._every_index:
            for v in fn(obj):
                s = idx.get(v)
                if s is not None:
                    s.discard(key)
                    if not s:
                        del idx[v]

    def _index_update(self, key: str, old: Obj, obj: Obj) -> None:
        """Move ``key`` from ``old``'s index values to ``obj``'s, touching only the values that
        changed: most updates (a status, a binding) keep the owners and labels that the indices
        read, and removing then adding the key again would empty and re-create every set it is
        alone in. An index whose function declared what it reads (:func:`index_reads`) is not
        even asked when none of that changed, and the namespace index never is (the key names
        the namespace)."""
        changed: set[IndexInput] | None = None
        for fn, idx, reads in self._moving:
            if reads is not None:
                if changed is None:
                    changed = set()
                    for section, field in self._inputs:
                        if (old.get(section) or {}).get(field) != (obj.get(section) or {}).get(field):
                            changed.add((section, field))
                if changed.isdisjoint(reads):
                    continue
            before = fn(old)
            after = fn(obj)
            if before == after:
                continue
            for v in before:
                if v in after:
                    continue
                s = idx.get(v)
                if s is not None:
                    s.discard(key)
                    if not s:
                        del idx[v]
            for v in after:
                s = idx.get(v)
                if s is None:
                    idx[v] = {key}
                else:
                    s.add(key)

    def _upsert(self, obj: Obj) -> None:
        # interned: every informer of the resource (six watch pods) keys and indexes it by one string
        self._upsert_key(sys.intern(key_of(obj)), obj)

    def _upsert_key(self, key: str, obj: Obj) -> None:
        """:meth:`_upsert` with ``obj``'s interned key already made (the watch loop makes it from
        the metadata it reads for the resourceVersion anyway)."""
        items = self._items
        old = items.get(key)
        items[key] = obj
        if old is None:
            self._index_add(key, obj)
            for on_add in self._on_add:
                try:
                    on_add(obj)
                except Exception:  # a handler bug must not stop the informer
                    log.exception("informer handler for %s failed", self.gvr)
        else:
            if self._moving:
                self._index_update(key, old, obj)
            for on_update in self._on_update:
                try:
                    on_update(old, obj)
                except Exception:
                    log.exception("informer handler for %s failed", self.gvr)

    def _remove(self, obj: Obj) -> None:
        key = key_of(obj)
        old = self._items.pop(key, None)
        if old is None:
            return
        self._index_remove(key, old)
        for on_delete in self._on_delete:
            try:
                on_delete(obj)
            except Exception:
                log.exception("informer handler for %s failed", self.gvr)

    def _replace(self, items: builtins.list[Obj]) -> None:
        fresh = {sys.intern(key_of(o)): o for o in items}
        for key in [k for k in self._items if k not in fresh]:
            self._remove(self._items[key])
        for key, obj in fresh.items():
            old = self._items.get(key)
            if old is not None and (old.get("metadata") or {}).get("resourceVersion") == (
                obj.get("metadata") or {}
            ).get("resourceVersion"):
                continue
            self._upsert(obj)

    async def _list(self) -> None:
        items: builtins.list[Obj] = []
        cont = ""
        rv = ""
        while True:
            res = await self.client.list(
                self.gvr,
                self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                limit=5000,
                continue_=cont,
                read_only=True,
            )
            items.extend(res.get("items") or [])
            rv = rv or (res.get("metadata") or {}).get("resourceVersion", "")
            cont = (res.get("metadata") or {}).get("continue") or ""
            if not cont:
                break
        self.relists += 1
        self._replace(items)
        self.resource_version = rv
        self._synced.set()

    async def _watch(self) -> bool:
        """Watch from the last resourceVersion; True if a re-list is needed (410)."""
        self.watches += 1
        upsert = self._upsert_key
        intern = sys.intern
        async for batch in self._batches():
            for etype, obj in batch:
                if self._stopping:
                    return False
                if etype == "ERROR":
                    code = obj.get("code")
                    if code == 410:
                        return True
                    log.warning("watch of %s ended with error %s", self.gvr, obj.get("message"))
                    return False
                md = obj.get("metadata") or {}
                rv = md.get("resourceVersion")
                if rv:
                    self.resource_version = rv
                if etype == "BOOKMARK":
                    continue
                if etype == "DELETED":
                    self._remove(obj)
                    continue
                # key_of(obj), from the metadata already in hand (one event of every watch goes here)
                ns = md.get("namespace", "")
                upsert(intern(f"{ns}/{md.get('name', '')}" if ns else md.get("name", "")), obj)
        return False

    def _batches(self) -> AsyncIterator[builtins.list[tuple[str, Obj]]]:
        """The watch's events as ``(type, object)`` pairs in lists: the in-process client's
        ``watch_batches`` where it has one (no :class:`WatchEvent` nor a generator step per
        event: a big gang's bound pods reach every informer of the plane), else ``watch``'s
        events one to a list. Same events in the same order either way."""
        kwargs: dict[str, Any] = {
            "label_selector": self.label_selector,
            "field_selector": self.field_selector,
            "resource_version": self.resource_version,
            "allow_bookmarks": True,
            "read_only": True,
        }
        batches = getattr(self.client, "watch_batches", None)
        if batches is not None:
            return cast(
                "AsyncIterator[builtins.list[tuple[str, Obj]]]", batches(self.gvr, self.namespace, **kwargs)
            )
        return _one_by_one(self.client.watch(self.gvr, self.namespace, **kwargs))

    async def run(self) -> None:
        need_list = True
        while not self._stopping:
            try:
                if need_list:
                    await self._list()
                need_list = await self._watch()
            except asyncio.CancelledError:
                raise
            except errors.StatusError as e:
                need_list = True
                if e.code != 410:
                    log.warning("list/watch of %s failed: %s", self.gvr, e.message)
                    await asyncio.sleep(self.relist_backoff)
            except Exception:
                log.exception("list/watch of %s failed", self.gvr)
                need_list = True
                await asyncio.sleep(self.relist_backoff)

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.create_task(self.run(), name=f"informer-{self.gvr}")
        return self._task

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None


class InformerFactory:
    """One informer per (resource, namespace, selectors), shared by every component that asks."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._informers: dict[tuple[GVR, str, str, str], Informer] = {}
        self._started = False

    def informer(
        self, gvr: GVR, namespace: str = "", label_selector: str = "", field_selector: str = ""
    ) -> Informer:
        key = (gvr, namespace, label_selector, field_selector)
        inf = self._informers.get(key)
        if inf is None:
            inf = self._new_informer(key)
            self._informers[key] = inf
            if self._started:
                inf.start()
        return inf

    def _new_informer(self, key: tuple[GVR, str, str, str]) -> Informer:
        """The informer for ``key`` the first time it is asked for (a shared factory's
        component share gives a view of the shared one instead)."""
        gvr, namespace, label_selector, field_selector = key
        return Informer(self.client, gvr, namespace, label_selector, field_selector)

    def start(self) -> None:
        self._started = True
        for inf in self._informers.values():
            inf.start()

    async def wait_for_sync(self, timeout: float = 30.0) -> None:
        await asyncio.gather(*(inf.wait_for_sync(timeout) for inf in self._informers.values()))

    async def stop(self) -> None:
        self._started = False
        await asyncio.gather(*(stop_informer(inf) for inf in self._informers.values()))

    def informers(self) -> builtins.list[Informer]:
        return list(self._informers.values())
