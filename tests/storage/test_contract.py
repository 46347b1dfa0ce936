"""The storage contract (apiserver.storage.interface.Storage), run against every backend.

Each test drives the store as the registry and the API server do: writes, then ``await
store.durable()`` (the acknowledgement barrier), ``store.fresh()`` before reads. Revisions are
compared by order only: a backend chooses its numbers (a counter from the clock, etcd's).
"""

from __future__ import annotations

import pytest

from apiserver.storage.interface import ADDED, DELETED, MODIFIED, Storage, StoreError
from tests.storage.conftest import Backend, FakeMonotonic

pytestmark = pytest.mark.anyio

CM = ("", "configmaps")
SECRETS = ("", "secrets")
NODES = ("", "nodes")


def cm(name: str, ns: str = "default", v: int = 0, labels: dict[str, str] | None = None) -> dict:
    md: dict = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": {"v": str(v)}}


def data(store: Storage, key: tuple[str, str], skey: tuple[str, str] = CM) -> str | None:
    store.fresh()
    rec = store.get(skey, key)
    return None if rec is None else rec.obj["data"]["v"]


def names(recs: list) -> list[str]:
    return [r.obj["metadata"]["name"] for r in recs]


async def test_create_stamps_a_new_revision_and_refuses_an_existing_key(store: Storage) -> None:
    before = store.rv
    rec = store.create(CM, ("default", "a"), cm("a"))
    await store.durable()
    assert rec.rv > before
    assert rec.obj["metadata"]["resourceVersion"] == str(rec.rv)
    assert store.rv == rec.rv
    store.fresh()
    got = store.get(CM, ("default", "a"))
    assert got is not None and got.rv == rec.rv and got.obj == rec.obj
    with pytest.raises(StoreError) as e:
        store.create(CM, ("default", "a"), cm("a", v=9))
    assert e.value.reason == "AlreadyExists"
    assert data(store, ("default", "a")) == "0"
    assert store.get(CM, ("default", "missing")) is None


async def test_update_honours_the_resource_version_precondition(store: Storage) -> None:
    a = store.create(CM, ("default", "a"), cm("a"))
    with pytest.raises(StoreError) as e:
        store.update(CM, ("default", "a"), cm("a", v=1), expected_rv=a.rv - 1)
    assert e.value.reason == "Conflict"
    assert data(store, ("default", "a")) == "0"
    b = store.update(CM, ("default", "a"), cm("a", v=1), expected_rv=a.rv)
    c = store.update(CM, ("default", "a"), cm("a", v=2))  # no precondition: last write wins
    await store.durable()
    assert a.rv < b.rv < c.rv
    assert data(store, ("default", "a")) == "2"
    with pytest.raises(StoreError) as e:
        store.update(CM, ("default", "a"), cm("a", v=3), expected_rv=b.rv)
    assert e.value.reason == "Conflict"
    with pytest.raises(StoreError) as e:
        store.update(CM, ("default", "nope"), cm("nope"))
    assert e.value.reason == "NotFound"


async def test_delete_honours_the_precondition_and_stamps_the_delete_revision(store: Storage) -> None:
    a = store.create(CM, ("default", "a"), cm("a", v=5))
    with pytest.raises(StoreError) as e:
        store.delete(CM, ("default", "a"), expected_rv=a.rv + 1000)
    assert e.value.reason == "Conflict"
    assert data(store, ("default", "a")) == "5"
    gone = store.delete(CM, ("default", "a"), expected_rv=a.rv)
    await store.durable()
    assert gone.rv > a.rv and store.rv == gone.rv
    assert gone.obj["data"] == {"v": "5"}  # the last state, at the delete's revision
    assert gone.obj["metadata"]["resourceVersion"] == str(gone.rv)
    assert store.get(CM, ("default", "a")) is None
    with pytest.raises(StoreError) as e:
        store.delete(CM, ("default", "a"))
    assert e.value.reason == "NotFound"


async def test_revisions_are_cluster_wide_and_strictly_increasing(store: Storage) -> None:
    rvs = [
        store.create(CM, ("default", "a"), cm("a")).rv,
        store.create(SECRETS, ("default", "s"), cm("s")).rv,
        store.create(NODES, ("", "n1"), {"metadata": {"name": "n1"}}).rv,
        store.update(CM, ("default", "a"), cm("a", v=1)).rv,
        store.delete(SECRETS, ("default", "s")).rv,
    ]
    await store.durable()
    assert rvs == sorted(set(rvs))
    assert store.rv == rvs[-1]


async def test_list_in_key_order_per_namespace_with_filter_and_count(store: Storage) -> None:
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("c", "w")]:
        store.create(CM, (ns, name), cm(name, ns, labels={"app": "web" if name in "xy" else "db"}))
    await store.durable()
    store.fresh()
    recs, list_rv, more = store.list(CM)
    assert [(r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]) for r in recs] == [
        ("a", "y"),
        ("a", "z"),
        ("b", "x"),
        ("c", "w"),
    ]
    assert list_rv == store.rv and more is None
    recs, _, _ = store.list(CM, "a")
    assert names(recs) == ["y", "z"]
    recs, _, _ = store.list(CM, flt=lambda o: o["metadata"]["labels"]["app"] == "web")
    assert names(recs) == ["y", "x"]
    assert store.count(CM) == 4 and store.count(CM, "a") == 2 and store.count(CM, "zzz") == 0


async def test_list_pages_with_continue_keys_see_one_revision(store: Storage) -> None:
    for i in range(7):
        store.create(CM, ("default", f"cm{i}"), cm(f"cm{i}", v=i))
    await store.durable()
    store.fresh()
    page, list_rv, last = store.list(CM, "default", limit=3)
    assert names(page) == ["cm0", "cm1", "cm2"] and last == ("default", "cm2")
    # writes between pages: the next pages are still served at the first page's revision
    store.delete(CM, ("default", "cm3"))
    store.update(CM, ("default", "cm4"), cm("cm4", v=40))
    store.create(CM, ("default", "cm35"), cm("cm35"))
    await store.durable()
    store.fresh()
    page2, rv2, last2 = store.list(CM, "default", limit=3, start=last, at_rv=list_rv)
    assert rv2 == list_rv
    assert names(page2) == ["cm3", "cm4", "cm5"]
    assert page2[1].obj["data"] == {"v": "4"}
    page3, _, last3 = store.list(CM, "default", limit=3, start=last2, at_rv=list_rv)
    assert names(page3) == ["cm6"] and last3 is None
    now, _, _ = store.list(CM, "default")
    assert names(now) == ["cm0", "cm1", "cm2", "cm35", "cm4", "cm5", "cm6"]


async def test_list_at_an_exact_older_revision(store: Storage) -> None:
    a = store.create(CM, ("default", "a"), cm("a"))
    store.create(CM, ("default", "b"), cm("b"))
    store.update(CM, ("default", "a"), cm("a", v=1))
    await store.durable()
    store.fresh()
    recs, rv, _ = store.list(CM, at_rv=a.rv)
    assert rv == a.rv
    assert [(r.obj["metadata"]["name"], r.obj["data"]["v"]) for r in recs] == [("a", "0")]


async def test_watch_from_a_revision_replays_what_followed_then_streams(store: Storage) -> None:
    a = store.create(CM, ("default", "a"), cm("a"))
    b = store.create(CM, ("default", "b"), cm("b"))
    store.update(CM, ("default", "a"), cm("a", v=1))
    store.delete(CM, ("default", "b"), expected_rv=b.rv)
    store.create(SECRETS, ("default", "s"), cm("s"))  # another resource: not in this watch
    await store.durable()
    store.fresh()
    w, events = store.watch(CM, "", None, a.rv, False)
    assert [(t, r.obj["metadata"]["name"]) for t, r in events] == [
        (ADDED, "b"),
        (MODIFIED, "a"),
        (DELETED, "b"),
    ]
    assert [r.rv for _, r in events] == sorted(r.rv for _, r in events)
    c = store.create(CM, ("default", "c"), cm("c"))
    await store.durable()
    assert await w.wait(5.0)
    live = w.drain()
    assert [(t, r.rv) for t, r in live] == [(ADDED, c.rv)]
    w.close()


async def test_watch_from_now_or_with_initial_state(store: Storage) -> None:
    store.create(CM, ("ns1", "a"), cm("a", "ns1"))
    store.create(CM, ("ns2", "b"), cm("b", "ns2"))
    await store.durable()
    store.fresh()
    w, events = store.watch(CM, "", None, store.rv, False)
    assert events == []
    w.close()
    w, events = store.watch(CM, "ns2", None, None, True)
    assert [(t, r.obj["metadata"]["name"]) for t, r in events] == [(ADDED, "b")]
    store.create(CM, ("ns1", "c"), cm("c", "ns1"))  # other namespace: not delivered
    d = store.create(CM, ("ns2", "d"), cm("d", "ns2"))
    await store.durable()
    assert await w.wait(5.0)
    assert [(t, r.rv) for t, r in w.drain()] == [(ADDED, d.rv)]
    w.close()


async def test_watch_with_a_filter_sees_objects_enter_and_leave(store: Storage) -> None:
    a = store.create(CM, ("default", "a"), cm("a", labels={"app": "web"}))
    await store.durable()
    store.fresh()
    w, _ = store.watch(CM, "", lambda o: (o["metadata"].get("labels") or {}).get("app") == "web", a.rv, False)
    left = store.update(CM, ("default", "a"), cm("a", v=1, labels={"app": "db"}))
    back = store.update(CM, ("default", "a"), cm("a", v=2, labels={"app": "web"}))
    await store.durable()
    assert await w.wait(5.0)
    got = w.drain()
    assert [(t, r.rv) for t, r in got] == [(DELETED, left.rv), (ADDED, back.rv)]
    assert got[0][1].obj["metadata"]["labels"] == {"app": "web"}  # the state it left from
    w.close()


async def test_compacted_history_answers_expired(backend: Backend) -> None:
    clock = FakeMonotonic()
    store = await backend.open(history_window=60.0, monotonic=clock)
    store.create(CM, ("default", "x"), cm("x"))
    old = store.create(CM, ("default", "a"), cm("a"))
    older = old.rv - 1  # the revision before the create: replaying from it needs the create's event
    await store.durable()
    clock.advance(120.0)
    store.update(CM, ("default", "a"), cm("a", v=1))
    store.create(CM, ("default", "b"), cm("b"))
    await store.durable()
    store.fresh()
    with pytest.raises(StoreError) as e:
        store.watch(CM, "", None, older, False)
    assert e.value.reason == "Expired"
    if backend.lists_past_revisions_from_storage:
        items, rv, _ = store.list(CM, at_rv=older)  # etcd has not compacted: it still holds ``older``
        assert [r.obj["metadata"]["name"] for r in items] == ["x"] and rv == older
    else:
        with pytest.raises(StoreError) as e:
            store.list(CM, at_rv=older)
        assert e.value.reason == "Expired"
    # what is current is untouched, and a watch from a retained revision still works
    assert data(store, ("default", "a")) == "1"
    w, events = store.watch(CM, "", None, store.rv, False)
    assert events == []
    w.close()


async def test_a_revision_older_than_the_store_is_expired_in_every_resource(backend: Backend) -> None:
    first = await backend.open()
    rec = first.create(CM, ("default", "a"), cm("a"))
    await first.durable()
    await first.close()
    if backend.persistent:
        # a persisting backend kept the object; a revision before the store existed is not replayable
        pytest.skip("covered by test_restart_keeps_objects_revisions_and_history")
    second = await backend.open()
    assert second.rv > rec.rv, "a fresh store reused an earlier run's revisions"
    for skey in (CM, SECRETS):  # also a resource the new store has never touched
        with pytest.raises(StoreError) as e:
            second.watch(skey, "", None, rec.rv, False)
        assert e.value.reason == "Expired"


async def test_restart_keeps_objects_revisions_and_history(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip(f"{backend.name} keeps nothing across a restart")
    first = await backend.open()
    a = first.create(CM, ("default", "a"), cm("a"))
    a2 = first.update(CM, ("default", "a"), cm("a", v=1), expected_rv=a.rv)
    b = first.create(CM, ("default", "b"), cm("b"))
    gone = first.delete(CM, ("default", "b"))
    n = first.create(NODES, ("", "n1"), {"metadata": {"name": "n1", "uid": "node-uid", "generation": 3}})
    await first.durable()
    last = first.rv
    await first.close()

    second = await backend.open()
    second.fresh()
    assert second.rv >= last
    got = second.get(CM, ("default", "a"))
    assert got is not None and got.rv == a2.rv and got.obj == a2.obj
    assert second.get(CM, ("default", "b")) is None
    node = second.get(NODES, ("", "n1"))
    assert node is not None and node.obj == n.obj and node.obj["metadata"]["uid"] == "node-uid"
    recs, _, _ = second.list(CM)
    assert names(recs) == ["a"]
    # the counter continues: a new write's revision is above everything stored
    c = second.create(CM, ("default", "c"), cm("c"))
    await second.durable()
    assert c.rv > last
    # a watch resumed from before the restart gets exactly what it missed, or 410
    try:
        w, events = second.watch(CM, "", None, a.rv, False)
    except StoreError as e:
        assert e.reason == "Expired"
    else:
        assert [(t, r.rv) for t, r in events] == [
            (MODIFIED, a2.rv),
            (ADDED, b.rv),
            (DELETED, gone.rv),
            (ADDED, c.rv),
        ]
        w.close()
    # resumed from the last revision before the restart: continues with what followed
    w, events = second.watch(CM, "", None, last, False)
    assert [(t, r.rv) for t, r in events] == [(ADDED, c.rv)]
    w.close()


async def test_restart_after_writes_of_one_turn_keeps_them_all(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip(f"{backend.name} keeps nothing across a restart")
    first = await backend.open()
    recs = [first.create(CM, ("default", f"cm{i:03}"), cm(f"cm{i:03}", v=i)) for i in range(200)]
    await first.durable()
    await first.close()
    second = await backend.open()
    second.fresh()
    got, _, _ = second.list(CM, "default")
    assert [(r.rv, r.obj) for r in got] == [(r.rv, r.obj) for r in recs]
