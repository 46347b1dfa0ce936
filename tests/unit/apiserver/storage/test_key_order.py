"""The watch cache's key order, sorted when read: every walk equals a sort of the live keys.

Random creates, updates, deletes and re-creates, with ordered reads (whole resource, one
namespace, from a continue key, at an older revision) in between, against the same answers
computed by sorting the current records, as the sorted container it replaced kept them.
"""

from __future__ import annotations

import random

import pytest

from apiserver.storage.cache import ResourceCache
from apiserver.storage.interface import Record
from apiserver.storage.keyorder import HIGHEST, MERGE_FLOOR, KeyOrder
from apiserver.storage.memory import MemoryStorage

SKEY = ("", "pods")


def _obj(ns: str, name: str, v: int) -> dict[str, object]:
    return {"metadata": {"namespace": ns, "name": name}, "v": v}


@pytest.mark.parametrize("seed", range(12))
def test_every_ordered_walk_equals_a_sort_of_the_present_keys(seed: int) -> None:
    rnd = random.Random(seed)
    st = MemoryStorage()
    live: dict[tuple[str, str], int] = {}
    history: list[tuple[int, dict[tuple[str, str], int]]] = []
    names = [(ns, f"n{i}") for ns in ("a", "b", "c") for i in range(rnd.randint(3, 25))]
    for step in range(400):
        key = rnd.choice(names)
        op = rnd.random()
        if key not in live and op < 0.7:
            st.create(SKEY, key, _obj(*key, step))
            live[key] = step
        elif key in live and op < 0.4:
            st.delete(SKEY, key)
            del live[key]
        elif key in live:
            st.update(SKEY, key, _obj(*key, step))
            live[key] = step
        history.append((st.rv, dict(live)))
        if rnd.random() < 0.25:
            ns = rnd.choice(["", "a", "b", "c", "d"])
            want = sorted(k for k in live if not ns or k[0] == ns)
            recs, _, _ = st.list(SKEY, ns)
            assert [(r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]) for r in recs] == want
            assert st.count(SKEY, ns) == len(want)
            # paged from a continue key
            if want:
                start = rnd.choice(want)
                recs, _, _ = st.list(SKEY, ns, start=start)
                assert [(r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]) for r in recs] == [
                    k for k in want if k > start
                ]
            # a list at an older revision rolls the ordered state back
            rv, then = rnd.choice(history)
            recs, _, _ = st.list(SKEY, ns, at_rv=rv)
            assert [
                ((r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]), r.obj["v"]) for r in recs
            ] == sorted((k, v) for k, v in then.items() if not ns or k[0] == ns)
            # a watch from now starts with every present object, in order
            w, initial = st.watch(SKEY, ns, None, None, True)
            assert [(r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]) for _, r in initial] == want
            w.close()


def test_an_earlier_answer_does_not_change_under_later_writes() -> None:
    rc = ResourceCache(100)
    for n in ("b", "d"):
        rc.put(("x", n), Record({}, b"{}", 1))
    before = rc.keys("")
    rc.put(("x", "c"), Record({}, b"{}", 2))
    rc.remove(("x", "d"))
    assert before == [("x", "b"), ("x", "d")]
    assert rc.keys("") == [("x", "b"), ("x", "c")]
    assert rc.keys("x") == [("x", "b"), ("x", "c")]


def test_deleted_and_recreated_keys_appear_once() -> None:
    present: set[tuple[str, str]] = set()
    order = KeyOrder(present)
    for k in [("a", "1"), ("a", "2")]:
        present.add(k)
        order.added(k)
    assert order.keys() == [("a", "1"), ("a", "2")]
    present.discard(("a", "1"))
    order.removed()
    present.add(("a", "1"))
    order.added(("a", "1"))  # re-created before the next read: once in the sorted list, once added
    present.add(("a", "3"))
    order.added(("a", "3"))
    present.discard(("a", "3"))  # created and deleted between two reads
    order.removed()
    assert order.keys() == [("a", "1"), ("a", "2")]
    assert order.span(("a", "1"), ("a", HIGHEST), lo_inclusive=False) == [("a", "2")]
    assert order.namespace("b") == []


def test_a_resource_never_listed_keeps_its_order_bounded() -> None:
    """Objects created and deleted for ever with no list in between (a watched-only resource):
    the keys kept for the order stay within about twice the live ones (and a floor)."""
    rc = ResourceCache(100)
    rec = Record({}, b"{}", 1)
    live: list[tuple[str, str]] = []
    for i in range(30_000):
        key = ("ns", f"o{i}")
        rc.put(key, rec)
        live.append(key)
        if len(live) > 50:
            rc.remove(live.pop(0))
        held = len(rc.order._sorted) + len(rc.order._added)
        assert held <= 2 * max(MERGE_FLOOR, len(rc.items)) + 2
    assert rc.keys("ns") == sorted(live)
