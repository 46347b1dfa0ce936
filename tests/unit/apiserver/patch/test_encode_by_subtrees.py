"""A new field set's ``fieldsV1`` built from the subtrees of the sets encoded before
(:func:`apiserver.patch.fieldpath._emit_by_subtrees`) is byte for byte the trie's encoding.

Every write that changes what a manager owns encodes a set no write encoded before (a pod's
status entry names its IPs), yet most of it is made of subtrees other sets had. The encoder
emits the two top levels itself and looks the subtrees below them up by their relative paths;
here its bytes are compared with :func:`_emit` over the whole trie (the definition), for random
pods, random sets of every kind of element, and sets that differ only in a few subtrees.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.openapi import schema
from apiserver.patch import fieldpath
from apiserver.patch.fieldpath import FieldSet, Path, index, key, make_path, value

from .test_tracker import random_pod_field_sets

POD = schema.for_gvk("", "v1", "Pod")


def _by_trie(paths: frozenset[Path]) -> bytes:
    return orjson.dumps(fieldpath._emit(FieldSet._wrap(paths).tree(), include_self=False))


def _by_subtrees(paths: frozenset[Path]) -> bytes:
    return orjson.dumps(fieldpath._emit_by_subtrees(paths))


@pytest.mark.parametrize("seed", range(4))
def test_random_pods_sets_encode_as_the_trie_does(seed: int) -> None:
    rnd = random.Random(seed)
    for i, fs in random_pod_field_sets(rnd, 150):
        if i % 3 == 0:
            fieldpath._SUBTREES.clear()  # every subtree emitted afresh, or found from earlier sets
        assert _by_subtrees(fs.paths) == _by_trie(fs.paths)


def _random_element(rnd: random.Random) -> Any:
    kind = rnd.randrange(6)
    if kind < 3:
        return rnd.choice(["a", "b", "c", "spec", "status", "x.y", "é"])
    if kind == 3:
        return key(
            {
                "name": rnd.choice(["a", "b", "10", "9"]),
                **({"port": rnd.randrange(12)} if rnd.random() < 0.5 else {}),
            }
        )
    if kind == 4:
        return value(rnd.choice(["v", 1, 2, 10, True, None, "10"]))
    return index(rnd.randrange(12))


@pytest.mark.parametrize("seed", range(6))
def test_random_sets_of_every_element_kind_encode_as_the_trie_does(seed: int) -> None:
    """Members at every depth (the root, the two levels the encoder writes itself, below),
    fields beside list keys, values and indexes (whose order is not their text's)."""
    rnd = random.Random(seed)
    for _ in range(300):
        paths = set()
        for _ in range(rnd.randrange(0, 25)):
            depth = rnd.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 5])
            paths.add(make_path(*(_random_element(rnd) for _ in range(depth))))
        fs = FieldSet(paths)
        if rnd.random() < 0.3:
            fieldpath._SUBTREES.clear()
        assert _by_subtrees(fs.paths) == _by_trie(fs.paths)


def test_a_pod_status_set_new_in_its_ips_shares_its_other_subtrees() -> None:
    """Two pods' status entries: the same conditions and container statuses, their own IPs. The
    second encoding reuses the first one's conditions subtree and is still the trie's bytes."""

    def status_set(ip: str) -> FieldSet:
        paths = {make_path("status", "phase"), make_path("status", "podIP")}
        for t in ("Ready", "ContainersReady", "Initialized", "PodScheduled"):
            for f in ("", "type", "status", "lastTransitionTime", "lastProbeTime"):
                paths.add(make_path("status", "conditions", key({"type": t}), *([f] if f else [])))
        paths.add(make_path("status", "containerStatuses"))
        paths.add(make_path("status", "podIPs", key({"ip": ip})))
        paths.add(make_path("status", "podIPs", key({"ip": ip}), "ip"))
        return FieldSet(paths)

    fieldpath._SUBTREES.clear()
    first, second = status_set("10.244.0.2"), status_set("10.244.0.3")
    a, b = fieldpath._emit_by_subtrees(first.paths), fieldpath._emit_by_subtrees(second.paths)
    assert a["f:status"]["f:conditions"] is b["f:status"]["f:conditions"]
    assert a["f:status"]["f:podIPs"] != b["f:status"]["f:podIPs"]
    for fs in (first, second):
        fieldpath._ENCODED.clear()
        assert fs.fields_v1_json() == _by_trie(fs.paths)
