"""The etcd backend: the cluster lives in etcd v3, several API servers can share it.

kube-apiserver keeps every object in etcd and serves reads and watches from its watch cache, fed by
one etcd watch; a write is a transaction that compares the key's stored revision (kube's
``GuaranteedUpdate``), and resourceVersion is the etcd revision of the write. This backend does the
same, with gangplane's synchronous registry:

* an asyncio etcd v3 client (``aetcd``) runs on its own event loop in a dedicated thread, so the
  API server's loop keeps the registry's read-check-write synchronous: a write submits its
  transaction to that loop and waits for the answer;
* one watch (with ``prev_kv``) queues every change under ``--etcd-prefix``; the API loop
  applies the queue to the :class:`~apiserver.storage.cache.WatchCache` in revision order, promptly
  (``call_soon_threadsafe``) for other API servers' writes, and up to its own revision before a
  write returns, so that the write's own event and every earlier one are in the cache;
* :meth:`EtcdStorage.fresh` (kube's consistent read from cache) asks etcd for its current revision
  with a linearizable read and applies the queue until the cache reaches it (the watch covers the
  whole keyspace, so that every revision shows up on it, also those written outside the prefix);
* the value stored is the object's JSON without ``resourceVersion`` (kube's versioner sets it from
  the revision on the way out); keys are kube's (:mod:`apiserver.storage.etcd_keys`);
* kube's compactor runs every ``--etcd-compaction-interval`` (5m; 0 disables): the ``compact_rev_key``
  transaction elects one API server per interval to compact etcd to the revision seen one interval
  earlier; every server then drops that history from its cache, so older watches get 410.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import orjson

from apiserver.api.types import Obj
from apiserver.storage.cache import WatchCache, page
from apiserver.storage.etcd_keys import decode_key, encode_key, resource_prefix
from apiserver.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    Filter,
    Key,
    Record,
    StorageKey,
    StoreError,
    restamp,
    stamp,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_PREFIX = "/registry"
#: kube-apiserver's ``--etcd-compaction-interval`` default
DEFAULT_COMPACTION_INTERVAL = 300.0
#: kube's key recording the compactions (outside the prefix, shared by every API server)
COMPACT_REV_KEY = b"compact_rev_key"
_PAGE = 500
_DELETE = 1  # mvccpb.Event.EventType.DELETE


class EtcdUnavailable(ConnectionError):
    """etcd cannot be reached at start (the server exits instead of serving an empty cluster)."""


class EtcdError(RuntimeError):
    """etcd failed a request, or its watch did not deliver a write in time (the API answers 500)."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def parse_servers(text: str) -> list[Endpoint]:
    """``--etcd-servers``: comma-separated ``http://host:port`` URLs; raises ValueError naming the bad one."""
    out: list[Endpoint] = []
    for raw in text.split(","):
        url = raw.strip()
        if not url:
            continue
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise ValueError(
                f"invalid --etcd-servers {url!r}: want http://host:port "
                "(https needs client certificates, which gangplane does not take)"
            )
        try:
            port = parts.port or 2379
        except ValueError:
            raise ValueError(f"invalid --etcd-servers {url!r}: bad port") from None
        if not parts.hostname or parts.path not in ("", "/"):
            raise ValueError(f"invalid --etcd-servers {url!r}: want http://host:port")
        out.append(Endpoint(parts.hostname, port))
    if not out:
        raise ValueError("invalid --etcd-servers: no server given")
    return out


def grpc_target(endpoints: list[Endpoint]) -> str:
    """One gRPC target for all members: ``ipv4:a:p,b:p`` lets the channel fail over between them."""
    if len(endpoints) == 1:
        e = endpoints[0]
        return f"[{e.host}]:{e.port}" if ":" in e.host else f"{e.host}:{e.port}"
    v4: list[str] = []
    v6: list[str] = []
    for e in endpoints:
        try:
            infos = socket.getaddrinfo(e.host, e.port, type=socket.SOCK_STREAM)
        except OSError as err:
            raise EtcdUnavailable(f"cannot resolve etcd server {e.host}: {err}") from None
        fam, *_, addr = infos[0]
        if fam == socket.AF_INET6:
            v6.append(f"[{addr[0]}]:{e.port}")
        else:
            v4.append(f"{addr[0]}:{e.port}")
    if v4 and v6:
        raise ValueError("invalid --etcd-servers: mixes IPv4 and IPv6 servers")
    return ("ipv4:" + ",".join(v4)) if v4 else ("ipv6:" + ",".join(v6))


def _prefix_end(prefix: bytes) -> bytes:
    """The range end covering every key that starts with ``prefix`` (etcd's ``GetPrefixRangeEnd``)."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


def _value(obj: Obj) -> bytes:
    """What etcd stores: the object without ``resourceVersion`` (the revision is etcd's own)."""
    md = obj.get("metadata")
    if not isinstance(md, dict) or "resourceVersion" not in md:
        return orjson.dumps(obj)
    rv = md.pop("resourceVersion")
    try:
        return orjson.dumps(obj)
    finally:
        md["resourceVersion"] = rv


#: seconds the etcd client's loop keeps running after the client closed (see :class:`_EtcdThread`)
_CLOSE_GRACE = 0.05


class _EtcdThread:
    """A thread running its own event loop, where the asyncio etcd client lives."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="etcd-client", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            # let the gRPC calls' own tasks finish their cancellation before the loop goes
            pending = asyncio.all_tasks(self.loop)
            for t in pending:
                t.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            # gRPC's poller thread may still hand this loop the completion of a call the client's
            # close cancelled; posting to a closed loop raises in whichever loop runs the poller
            # (seen as a test's teardown error), so the loop stays open a moment longer for it.
            self.loop.run_until_complete(asyncio.sleep(_CLOSE_GRACE))
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class EtcdStorage(WatchCache):
    """Objects in etcd under ``prefix``; reads from the watch cache that etcd's watch keeps current."""

    def __init__(
        self,
        servers: list[Endpoint],
        *,
        prefix: str = DEFAULT_PREFIX,
        compaction_interval: float = DEFAULT_COMPACTION_INTERVAL,
        request_timeout: float = 10.0,
        **cache_options: Any,
    ) -> None:
        super().__init__(**cache_options)
        self.servers = servers
        self.prefix = prefix.rstrip("/") + "/"
        self._pfx = self.prefix.encode()
        self._compaction_interval = compaction_interval
        self._timeout = request_timeout
        self._target = grpc_target(servers)
        self._cond = threading.Condition()
        # -- shared with the etcd thread, under _cond ---------------------------------------
        #: raw watch events not yet applied: (revision, is delete, key, value, prev value)
        self._pending: deque[tuple[int, bool, bytes, bytes, bytes]] = deque()
        #: every change through this revision is applied or pending
        self._watch_rv = 0
        self._scheduled = False
        self._compacted_etcd = 0  # the newest compaction etcd reported
        self._relist_from = 0  # a watch resuming there was compacted: the cache must re-list
        # -- API loop only ----------------------------------------------------------------------
        self._api_loop: asyncio.AbstractEventLoop | None = None
        self._compacted_applied = 0
        #: the write being caught up: (revision, etcd key, storage key, key, record or None)
        self._own: tuple[int, bytes, StorageKey, Key, Record | None] | None = None
        self._own_result: Record | None = None
        self._direct_rv = 0  # the newest own write applied before the watch delivered it
        # -- etcd thread only ---------------------------------------------------------------
        self._client: Any = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._closed = False
        self._thread = _EtcdThread()
        try:
            self._call(self._connect(), timeout=request_timeout)
            self._load()
        except BaseException:
            try:
                self._thread.submit(self._disconnect()).result(5)
            finally:
                self._thread.stop()
            raise

    # -- talking to the etcd thread ------------------------------------------------------------
    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the etcd thread and wait for it (the API loop blocks: writes are synchronous)."""
        fut = self._thread.submit(coro)
        try:
            return fut.result(self._timeout if timeout is None else timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise EtcdError(f"etcd request timed out after {self._timeout:g}s ({self._target})") from None
        except (StoreError, EtcdError, EtcdUnavailable, ValueError):
            raise
        except Exception as e:  # grpc errors: the request failed, say how
            details = getattr(e, "details", None)
            raise EtcdError(f"etcd request failed: {details() if callable(details) else e}") from None

    async def _connect(self) -> None:
        import aetcd

        host, _, port = self._target.rpartition(":")  # aetcd joins them back into the target
        self._client = aetcd.Client(
            host=host,
            port=int(port),
            timeout=self._timeout,
            options={
                "grpc.max_receive_message_length": 256 << 20,
                "grpc.max_send_message_length": 16 << 20,
                "grpc.keepalive_time_ms": 30_000,
                # Requests fail fast while etcd is unreachable (the API loop must not hang on
                # them), so reconnect often: the server is back within a second of etcd. (Not
                # grpc.min_reconnect_backoff_ms: it is also each connection attempt's timeout.)
                "grpc.initial_reconnect_backoff_ms": 100,
                "grpc.max_reconnect_backoff_ms": 1000,
            },
        )
        await self._client.connect()

    async def _disconnect(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):  # a cancelled task's end is of no interest
                await t
        self._tasks = []
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- etcd requests (run on the etcd thread) ------------------------------------------------
    async def _range_all(self) -> tuple[list[Any], int]:
        """Everything under the prefix at one revision, page by page (kube's paginated list)."""
        from aetcd import rpc

        kvs: list[Any] = []
        key, end, rev = self._pfx, _prefix_end(self._pfx), 0
        while True:
            resp = await self._client.kvstub.Range(
                rpc.RangeRequest(key=key, range_end=end, limit=_PAGE, revision=rev),
                timeout=self._timeout,
                metadata=self._client.metadata,
            )
            if rev == 0:
                rev = resp.header.revision
            kvs.extend(resp.kvs)
            if not resp.more or not resp.kvs:
                return kvs, rev
            key = resp.kvs[-1].key + b"\0"

    async def _range_at(self, key: bytes, rev: int) -> list[Any] | None:
        """Every key under ``key`` as it was at etcd revision ``rev``; None when etcd compacted it."""
        import grpc
        from aetcd import rpc

        kvs: list[Any] = []
        end = _prefix_end(key)
        while True:
            try:
                resp = await self._client.kvstub.Range(
                    rpc.RangeRequest(key=key, range_end=end, limit=_PAGE, revision=rev),
                    timeout=self._timeout,
                    metadata=self._client.metadata,
                )
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.OUT_OF_RANGE:  # "required revision has been compacted"
                    return None
                raise
            kvs.extend(resp.kvs)
            if not resp.more or not resp.kvs:
                return kvs
            key = resp.kvs[-1].key + b"\0"

    async def _current_revision(self) -> int:
        """etcd's newest revision, from a linearizable read of one (absent) key."""
        from aetcd import rpc

        resp = await self._client.kvstub.Range(
            rpc.RangeRequest(key=self._pfx[:-1], limit=1, keys_only=True),
            timeout=self._timeout,
            metadata=self._client.metadata,
        )
        return int(resp.header.revision)

    async def _txn(self, compare: Any, success: Any, failure: Any) -> Any:
        from aetcd import rpc

        return await self._client.kvstub.Txn(
            rpc.TxnRequest(compare=compare, success=success, failure=failure),
            timeout=self._timeout,
            metadata=self._client.metadata,
        )

    # -- loading ---------------------------------------------------------------------------
    def _decode(self, ekey: bytes, value: bytes, rev: int) -> tuple[StorageKey, Key, Record] | None:
        obj = orjson.loads(value)
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        api_version = obj.get("apiVersion")
        if not isinstance(api_version, str):
            api_version = self._known_api_version(ekey)
        where = decode_key(self.prefix, ekey, api_version)
        if where is None:
            return None
        return where[0], where[1], stamp(obj, rev)

    def _known_api_version(self, ekey: bytes) -> str:
        """For a value without ``apiVersion``: the group of a resource this cache already holds
        under that key's plural (a stored object normally names its own)."""
        plain = decode_key(self.prefix, ekey, "")
        if plain is not None:
            for group, plural in self._resources:
                if plural == plain[0][1] and group:
                    return f"{group}/v1"
        return ""

    def _load(self) -> None:
        """List the prefix at one revision into the cache, then watch from the next revision."""
        try:
            kvs, rev = self._call(self._range_all())
        except EtcdError as e:
            raise EtcdUnavailable(f"cannot reach etcd at {self._target}: {e}") from None
        for kv in kvs:
            try:
                decoded = self._decode(kv.key, kv.value, kv.mod_revision)
            except ValueError:
                raise ValueError(
                    f"etcd key {kv.key.decode('utf-8', 'replace')} under --etcd-prefix {self.prefix} "
                    "does not hold a JSON object (kube-apiserver's own data is protobuf): "
                    "give gangplane a prefix of its own"
                ) from None
            if decoded is not None:
                self.load(*decoded)
        self.loaded(
            rev
        )  # nothing older is in the cache: resuming there is 410, also for resources seen later
        with self._cond:
            self._watch_rv = rev
        self._thread.loop.call_soon_threadsafe(self._spawn, self._watch_loop(rev + 1))

    def _relist(self) -> None:
        """The watch fell behind etcd's compaction: load the state afresh; every watcher re-lists."""
        log.warning("etcd compacted revisions this API server had not applied; re-listing")
        kvs, rev = self._call(self._range_all())
        for skey in self.storage_keys():
            self.close_watchers(skey, "the storage was re-listed from etcd after a compaction; re-list")
            self.resource(skey).clear()
        with self._cond:
            self._pending.clear()
            self._watch_rv = rev
            self._relist_from = 0
        for kv in kvs:
            try:
                decoded = self._decode(kv.key, kv.value, kv.mod_revision)
            except ValueError:
                log.warning("skipping etcd key %r: not a JSON object", kv.key)
                continue
            if decoded is not None:
                self.load(*decoded)
        self.compact_to(rev)
        self.loaded(rev)
        self._thread.loop.call_soon_threadsafe(self._spawn, self._watch_loop(rev + 1))

    # -- the watch (etcd thread) ---------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self._closed:
            coro.close()
            return
        self._tasks.append(asyncio.get_running_loop().create_task(coro))

    async def _watch_loop(self, start_rev: int) -> None:
        """One watch on the whole keyspace, resumed after the last revision it delivered when it breaks.

        The whole keyspace, not just the prefix: every revision etcd makes is then an event on this
        stream, in order, so "the watch delivered revision R" is exactly "every change through R is
        here" — which :meth:`fresh` needs. etcd's watch progress requests cannot say that on
        etcd 3.4 (they answer with the store's revision ahead of events still in flight); changes
        outside the prefix only move the revision (and ``compact_rev_key`` reports compactions).
        """
        from aetcd import rpc

        next_rev, backoff = start_rev, 0.05
        while not self._closed:
            requests: asyncio.Queue[Any] = asyncio.Queue()
            requests.put_nowait(
                rpc.WatchRequest(
                    create_request=rpc.WatchCreateRequest(
                        key=b"\0", range_end=b"\0", start_revision=next_rev, prev_kv=True
                    )
                )
            )

            async def outgoing(q: asyncio.Queue[Any] = requests) -> Any:
                while (req := await q.get()) is not None:
                    yield req

            try:
                stub = rpc.WatchStub(self._client.channel)
                async for resp in stub.Watch(outgoing(), metadata=self._client.metadata):
                    if resp.compact_revision:
                        with self._cond:
                            self._relist_from = next_rev
                            self._cond.notify_all()
                        self._schedule()
                        return
                    if resp.canceled:
                        raise EtcdError(resp.cancel_reason or "watch canceled by etcd")
                    if resp.events:
                        batch = []
                        for ev in resp.events:
                            kv = ev.kv
                            if kv.key.startswith(self._pfx):
                                batch.append(
                                    (kv.mod_revision, ev.type == _DELETE, kv.key, kv.value, ev.prev_kv.value)
                                )
                            elif kv.key == COMPACT_REV_KEY and ev.type != _DELETE:
                                # an API server (maybe this one) compacted etcd to the revision it wrote
                                self._note_compacted(int(kv.value or b"0"))
                        last = resp.events[-1].kv.mod_revision
                        next_rev = last + 1
                        self._deliver(batch, last)
                    backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("etcd watch broke (%s); resuming from revision %d", e, next_rev)
            finally:
                requests.put_nowait(None)
            await asyncio.sleep(backoff)  # back off before resuming on another member
            backoff = min(backoff * 2, 2.0)

    def _deliver(self, batch: list[tuple[int, bool, bytes, bytes, bytes]], rev: int) -> None:
        with self._cond:
            self._pending.extend(batch)
            if rev > self._watch_rv:
                self._watch_rv = rev
            self._cond.notify_all()
        if batch:
            self._schedule()

    def _schedule(self) -> None:
        """Have the API loop apply the queue soon (another API server's writes reach watchers promptly)."""
        loop = self._api_loop
        with self._cond:
            if self._scheduled or loop is None:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # the API loop has closed
            loop.call_soon_threadsafe(self._apply_pending)

    # -- applying the queue (API loop) ---------------------------------------------------------
    def _apply_pending(self, upto: int | None = None) -> None:
        """Apply queued changes (those through ``upto``, or all) to the cache, in revision order."""
        with self._cond:
            if upto is None:
                self._scheduled = False
                batch = list(self._pending)
                self._pending.clear()
            else:
                batch = []
                while self._pending and self._pending[0][0] <= upto:
                    batch.append(self._pending.popleft())
            reached = self._watch_rv
            compacted = self._compacted_etcd
            relist = self._relist_from
        if relist and not batch:
            self._relist()
            return
        for ev in batch:
            self._apply_raw(*ev)
        target = reached if upto is None else min(reached, upto)
        if target > self._rv:
            self.advance(target)
        if compacted > self._compacted_applied:
            self._compacted_applied = compacted
            self.compact_to(min(compacted, self._rv))

    def _apply_raw(self, rev: int, is_delete: bool, ekey: bytes, value: bytes, prev_value: bytes) -> None:
        own = self._own
        rec: Record | None
        if rev <= self._direct_rv and (own is None or own[0] != rev):
            return  # this server's own write, applied when etcd acknowledged it
        if own is not None and own[0] == rev and own[1] == ekey:
            skey, key, rec = own[2], own[3], own[4]
        else:
            try:
                decoded = self._decode(ekey, prev_value if is_delete else value, rev)
            except ValueError:
                log.warning("ignoring etcd key %r at revision %d: not a JSON object", ekey, rev)
                decoded = None
            if decoded is None:
                self.advance(rev)
                return
            skey, key, rec = decoded
        rs = self.resource(skey)
        prev = rs.items.get(key)
        if is_delete:
            if prev is None:
                self.advance(rev)
                return
            rec = restamp(prev, rev)
            self.apply(skey, DELETED, key, rec, prev)
        else:
            assert rec is not None
            self.apply(skey, MODIFIED if prev is not None else ADDED, key, rec, prev)
        if own is not None and own[0] == rev and own[1] == ekey:
            self._own_result = rec

    def _catch_up(self, target: int) -> None:
        """Apply the queue until the cache is at ``target``; wait for the watch to get there."""
        deadline = time.monotonic() + self._timeout
        while True:
            self._apply_pending(target)
            if self._rv >= target:
                return
            with self._cond:
                if self._watch_rv >= target or (self._pending and self._pending[0][0] <= target):
                    continue
                if self._relist_from:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise EtcdError(f"etcd watch did not reach revision {target} within {self._timeout:g}s")
                self._cond.wait(left)
        self._relist()

    def _commit(self, rev: int, ekey: bytes, skey: StorageKey, key: Key, rec: Record | None) -> Record:
        """Catch the cache up through this server's own write at ``rev``; the record it applied."""
        self._own, self._own_result = (rev, ekey, skey, key, rec), None
        try:
            self._apply_pending(rev - 1)
            if self._rv == rev - 1:
                # Every earlier revision is applied, so the write is the next change: apply it now
                # rather than wait for the watch to bring it back (its copy is skipped then).
                self._direct_rv = rev
                self._apply_raw(rev, rec is None, ekey, b"", b"")
            else:
                self._catch_up(rev)
            result = self._own_result
        finally:
            self._own, self._own_result = None, None
        if result is None:  # the cache was re-listed meanwhile: the write is in the loaded state
            got = self.resource(skey).items.get(key)
            result = got if got is not None else (rec or Record({}, b"{}", rev))
        return result

    # -- writes ----------------------------------------------------------------------------
    def create(self, skey: StorageKey, key: Key, obj: Obj) -> Record:
        from aetcd import rpc

        if key in self.resource(skey).items:
            raise StoreError("AlreadyExists")
        ekey = encode_key(self.prefix, skey, key)
        resp = self._call(
            self._txn(
                [
                    rpc.Compare(
                        result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE, key=ekey, create_revision=0
                    )
                ],
                [rpc.RequestOp(request_put=rpc.PutRequest(key=ekey, value=_value(obj)))],
                [],
            )
        )
        rev = int(resp.header.revision)
        if not resp.succeeded:
            self._catch_up(rev)
            raise StoreError("AlreadyExists")
        return self._commit(rev, ekey, skey, key, stamp(obj, rev))

    def _guarded(self, skey: StorageKey, key: Key, expected_rv: int | None) -> tuple[Record, bytes]:
        prev = self.resource(skey).items.get(key)
        if prev is None:
            raise StoreError("NotFound")
        if expected_rv is not None and expected_rv != prev.rv:
            raise StoreError("Conflict")
        return prev, encode_key(self.prefix, skey, key)

    def _failed(self, resp: Any) -> StoreError:
        """Why a compare failed: the key is gone (NotFound) or was written since (Conflict)."""
        self._catch_up(int(resp.header.revision))
        rng = resp.responses[0].response_range if resp.responses else None
        return StoreError("NotFound" if rng is not None and not rng.kvs else "Conflict")

    def update(self, skey: StorageKey, key: Key, obj: Obj, expected_rv: int | None = None) -> Record:
        from aetcd import rpc

        prev, ekey = self._guarded(skey, key, expected_rv)
        resp = self._call(
            self._txn(
                [
                    rpc.Compare(
                        result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, key=ekey, mod_revision=prev.rv
                    )
                ],
                [rpc.RequestOp(request_put=rpc.PutRequest(key=ekey, value=_value(obj)))],
                [rpc.RequestOp(request_range=rpc.RangeRequest(key=ekey, keys_only=True))],
            )
        )
        if not resp.succeeded:
            raise self._failed(resp)
        rev = int(resp.header.revision)
        return self._commit(rev, ekey, skey, key, stamp(obj, rev))

    def delete(self, skey: StorageKey, key: Key, expected_rv: int | None = None) -> Record:
        from aetcd import rpc

        prev, ekey = self._guarded(skey, key, expected_rv)
        resp = self._call(
            self._txn(
                [
                    rpc.Compare(
                        result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, key=ekey, mod_revision=prev.rv
                    )
                ],
                [rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=ekey))],
                [rpc.RequestOp(request_range=rpc.RangeRequest(key=ekey, keys_only=True))],
            )
        )
        if not resp.succeeded:
            raise self._failed(resp)
        return self._commit(int(resp.header.revision), ekey, skey, key, None)

    # -- compaction (etcd thread) --------------------------------------------------------------
    async def _compactor(self) -> None:
        """kube's compactor: each interval, whichever server wins the ``compact_rev_key``
        transaction compacts etcd to the revision the previous interval ended at."""
        version, rev = 0, 0
        while not self._closed:
            await asyncio.sleep(self._compaction_interval)
            try:
                version, rev = await self.compact_once(version, rev)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("etcd compaction failed: %s", e)

    async def compact_once(self, version: int, rev: int) -> tuple[int, int]:
        """One round: returns the (key version, revision) the next round compares and compacts to."""
        from aetcd import rpc

        resp = await self._txn(
            [
                rpc.Compare(
                    result=rpc.Compare.EQUAL, target=rpc.Compare.VERSION, key=COMPACT_REV_KEY, version=version
                )
            ],
            [rpc.RequestOp(request_put=rpc.PutRequest(key=COMPACT_REV_KEY, value=str(rev).encode()))],
            [rpc.RequestOp(request_range=rpc.RangeRequest(key=COMPACT_REV_KEY))],
        )
        now = int(resp.header.revision)
        if not resp.succeeded:
            kvs = resp.responses[0].response_range.kvs
            if kvs:  # another API server compacted this interval, to the revision it recorded
                self._note_compacted(int(kvs[0].value or b"0"))
                return int(kvs[0].version), now
            return version, now
        if rev:
            await self._client.kvstub.Compact(
                rpc.CompactionRequest(revision=rev), timeout=self._timeout, metadata=self._client.metadata
            )
            self._note_compacted(rev)
        return version + 1, now

    def _note_compacted(self, rev: int) -> None:
        with self._cond:
            if rev <= self._compacted_etcd:
                return
            self._compacted_etcd = rev
        self._schedule()

    # -- reads the cache cannot serve -------------------------------------------------------------
    def list(
        self,
        skey: StorageKey,
        namespace: str = "",
        flt: Filter | None = None,
        limit: int = 0,
        start: Key | None = None,
        at_rv: int | None = None,
    ) -> tuple[list[Record], int, Key | None]:
        """As the cache lists; a revision older than the cache's history is read from etcd.

        A continue token (or ``resourceVersionMatch=Exact``) names a revision: after a restart, or
        from another API server on the same etcd, the cache here may not reach back to it, while
        etcd still holds it until compaction. kube-apiserver serves such pages from etcd too, so a
        client paging through a restart gets the rest of its list, and 410 only once etcd compacted.
        """
        try:
            return super().list(skey, namespace, flt, limit, start, at_rv)
        except StoreError:
            if at_rv is None:
                raise
        below = f"{self.prefix}{resource_prefix(skey)}/{namespace + '/' if namespace else ''}".encode()
        kvs = self._call(self._range_at(below, at_rv))
        if kvs is None:
            raise StoreError("Expired", f"etcd compacted revision {at_rv}")
        found: list[tuple[Key, Record]] = []
        for kv in kvs:
            try:
                decoded = self._decode(kv.key, kv.value, kv.mod_revision)
            except ValueError:
                continue  # not gangplane's (the load refused such a prefix; a foreign writer since)
            if decoded is None or decoded[0] != skey or (start is not None and decoded[1] <= start):
                continue
            found.append((decoded[1], decoded[2]))
        found.sort(key=lambda item: item[0])  # the cache's key order, which etcd's bytes may not share
        return page(found, flt, limit, at_rv)

    # -- barriers and lifecycle ------------------------------------------------------------------
    def fresh(self) -> None:
        """Consistent read: the cache catches up with etcd's current revision (a quorum read)."""
        self._catch_up(self._call(self._current_revision()))

    async def durable(self) -> None:
        """etcd acknowledged every write once a quorum had it: nothing left to wait for."""

    async def check(self) -> str | None:
        """A quorum read of etcd's revision within 2 s, as kube's etcd health check reads."""
        if self._closed:
            return "the etcd storage is closed"
        fut = self._thread.submit(self._current_revision())
        try:
            await asyncio.wait_for(asyncio.wrap_future(fut), 2.0)
        except TimeoutError:
            fut.cancel()
            return f"etcd did not answer within 2s ({self._target})"
        except Exception as e:  # grpc errors: unreachable, no leader, ...
            details = getattr(e, "details", None)
            return f"etcd request failed: {details() if callable(details) else e}"
        return None

    async def start(self) -> None:
        self._api_loop = asyncio.get_running_loop()
        if self._compaction_interval > 0:
            self._thread.loop.call_soon_threadsafe(self._spawn, self._compactor())
        self._apply_pending()

    async def close(self) -> None:
        if self._closed:
            return
        for skey in self.storage_keys():
            self.close_watchers(skey, "the API server is shutting down")
        self._closed = True
        fut = self._thread.submit(self._disconnect())
        await asyncio.wrap_future(fut)
        self._thread.stop()
        self._api_loop = None


__all__ = [
    "DEFAULT_COMPACTION_INTERVAL",
    "DEFAULT_PREFIX",
    "Endpoint",
    "EtcdError",
    "EtcdStorage",
    "EtcdUnavailable",
    "grpc_target",
    "parse_servers",
]
