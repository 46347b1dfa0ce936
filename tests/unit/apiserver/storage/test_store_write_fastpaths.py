"""The storage write path's shortcuts give what the general path gives.

* :func:`~apiserver.storage.interface.exact_json` (what :func:`stamp` stores): the bytes of
  ``orjson.dumps``, in an allocation of their own size, as ``exact_bytes`` made them.
* :func:`~apiserver.storage.compact.compact` with its shortcuts (an empty tree looked up without
  encoding it; an entry's whole tree remembered by identity for the next writes, ``_MET``): after
  every compaction each entry's tree encodes exactly as before and is the table's canonical tree
  for its text at that moment, whatever the table cleared before (small limits here, so that it
  clears often; an empty tree is often a whole entry's here).
"""

from __future__ import annotations

import random
import sys
import tracemalloc
from typing import Any

import orjson
import pytest

from apiserver.storage import compact as compact_mod
from apiserver.storage.interface import exact_bytes, exact_json, stamp


def _random_json(rnd: random.Random, depth: int = 0) -> Any:
    roll = rnd.random()
    if depth > 3 or roll < 0.3:
        return rnd.choice([None, True, False, 0, -7, 2**40, 1.5, "", "x", "é", "a" * rnd.randrange(200)])
    if roll < 0.6:
        return [_random_json(rnd, depth + 1) for _ in range(rnd.randrange(5))]
    return {f"k{rnd.randrange(20)}": _random_json(rnd, depth + 1) for _ in range(rnd.randrange(6))}


@pytest.mark.parametrize("seed", range(3))
def test_exact_json_is_orjsons_text_in_its_own_allocation(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(400):
        obj = {"metadata": {"name": "n"}, "v": _random_json(rnd)}
        if rnd.random() < 0.1:  # past orjson's first buffer sizes
            obj["big"] = "z" * rnd.randrange(1000, 20000)
        text = orjson.dumps(obj)
        got = exact_json(obj)
        assert got == text
        assert type(got) is bytes
        assert sys.getsizeof(got) == sys.getsizeof(exact_bytes(text))
    # what is kept is its own size: orjson's own result holds its whole write buffer (4 KB)
    small = {"metadata": {"name": "n"}, "spec": {"a": [1, 2]}}
    tracemalloc.start()
    try:
        kept = [exact_json(small) for _ in range(100)]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 100 * (len(kept[0]) + 200)
    rec = stamp({"metadata": {"name": "n"}, "spec": {"a": [1, 2]}}, 42)
    assert rec.raw == orjson.dumps(rec.obj) and rec.obj["metadata"]["resourceVersion"] == "42"


def _random_tree(rnd: random.Random, pool: list[dict[str, Any]], depth: int = 0) -> dict[str, Any]:
    """A ``fieldsV1``-like tree: maps of ``f:``/``k:`` keys down to empty leaves, often holding
    subtrees of ``pool`` (as a create template's trees hold its parts) or being one."""
    if pool and depth > 0 and rnd.random() < 0.3:
        return rnd.choice(pool)
    if depth > 3 or rnd.random() < 0.35:
        return {}
    tree: dict[str, Any] = {}
    if rnd.random() < 0.5:
        tree["."] = {}
    for _ in range(rnd.randrange(1, 5)):
        tree[f"f:{rnd.choice('abcdef')}{rnd.randrange(4)}"] = _random_tree(rnd, pool, depth + 1)
    if rnd.random() < 0.2:
        tree[f'k:{{"uid":"{rnd.randrange(10**6)}"}}'] = _random_tree(rnd, pool, depth + 1)
    if depth > 1 and rnd.random() < 0.2:  # a small part, kept to recur (bounded sizes)
        pool.append(tree)
        del pool[:-30]
    return tree


@pytest.mark.parametrize("seed", range(4))
def test_compacted_entries_hold_the_canonical_trees(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compact_mod, "TREE_TABLE_LIMIT", 40)
    monkeypatch.setattr(compact_mod, "MET_LIMIT", 6)
    monkeypatch.setattr(compact_mod, "_TREES", {})
    monkeypatch.setattr(compact_mod, "_BY_ID", {})
    monkeypatch.setattr(compact_mod, "_MET", {})
    rnd = random.Random(seed)
    pool: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []  # whole trees written again (a set's pods share one)
    met_hits = 0
    for _ in range(1500):
        if recent and rnd.random() < 0.4:
            tree = rnd.choice(recent)
        else:
            tree = _random_tree(rnd, pool)
            recent.append(tree)
            del recent[:-8]
        text = orjson.dumps(tree)
        met_hits += compact_mod._MET.get(id(tree), (None,))[0] is tree
        entry = {"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": tree}
        obj = {"metadata": {"managedFields": [entry]}}
        compact_mod.compact(obj)
        got = entry["fieldsV1"]
        assert orjson.dumps(got) == text
        assert compact_mod._TREES.get(text) is got, "not the table's tree for its text"
        assert compact_mod._BY_ID.get(id(got)) is got
        assert tree == got and orjson.dumps(tree) == text  # the tree compacted is left as it was
    assert met_hits > 100  # not vacuous: trees written again were found by identity
