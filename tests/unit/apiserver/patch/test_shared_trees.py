"""A stored write's ``fieldsV1`` tree built from the encoder's parts
(:func:`apiserver.patch.sharedtrees.shared_fields_v1`) is the tree its text decodes to.

The general path decodes the set's encoding and looks every subtree up among the canonical
trees (:func:`apiserver.storage.compact.canonical_json`); the built tree must serialize to the
very same bytes (key order included), be the canonical tree of that text afterwards (so the
informers' compaction finds it by identity), and share the parts that repeat between sets.
Random pods' sets and random sets of every element kind, with the memo tables cleared at
random points (every combination of known encoding, known part and known tree).
"""

from __future__ import annotations

import random

import orjson
import pytest

from apiserver.openapi import schema
from apiserver.patch import fieldpath, sharedtrees
from apiserver.patch.fieldpath import FieldSet, fields_of, key, make_path
from apiserver.patch.sharedtrees import shared_fields_v1
from apiserver.storage import compact

from .test_encode_by_subtrees import _by_trie, _random_element
from .test_tracker import random_pod_field_sets

POD = schema.for_gvk("", "v1", "Pod")


def _dicts(tree: dict, out: list[dict]) -> list[dict]:
    out.append(tree)
    for v in tree.values():
        _dicts(v, out)
    return out


def _check(fs: FieldSet, rnd: random.Random) -> None:
    r = rnd.random()
    if r < 0.15:
        fieldpath._ENCODED.clear()
        fs._encoded = None
    elif r < 0.25:
        fieldpath._SUBTREES.clear()
    elif r < 0.3:
        sharedtrees._PARTS.clear()
    elif r < 0.35:
        compact._TREES.clear()
        compact._BY_ID.clear()
    tree = shared_fields_v1(fs)
    text = _by_trie(fs.paths)
    assert orjson.dumps(tree) == text
    assert tree == orjson.loads(text)
    assert compact.canonical_json(text) is tree  # registered: the general path answers it
    assert compact.canonical_fields(tree) is tree  # compaction finds it by identity
    # nothing below the root is modified by serializing: every dict is JSON of plain dicts
    assert all(type(d) is dict for d in _dicts(tree, []))


@pytest.mark.parametrize("seed", range(4))
def test_random_pods_sets_build_the_tree_their_text_decodes_to(seed: int) -> None:
    rnd = random.Random(seed)
    for _, fs in random_pod_field_sets(rnd, 150):
        _check(fs, rnd)


@pytest.mark.parametrize("seed", range(6))
def test_random_sets_of_every_element_kind_build_the_tree_their_text_decodes_to(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(300):
        paths = set()
        for _ in range(rnd.randrange(0, 25)):
            depth = rnd.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 5])
            paths.add(make_path(*(_random_element(rnd) for _ in range(depth))))
        _check(FieldSet(paths), rnd)


def test_two_pods_status_trees_share_all_but_their_ips() -> None:
    """The node agent's status entries of two pods: one canonical conditions subtree, each
    pod its own podIPs subtree, and each tree equal to its text's decoding."""

    def status_set(ip: str) -> FieldSet:
        paths = {make_path("status", "phase"), make_path("status", "podIP")}
        for t in ("Ready", "ContainersReady", "Initialized", "PodScheduled"):
            for f in ("", "type", "status", "lastTransitionTime"):
                paths.add(make_path("status", "conditions", key({"type": t}), *([f] if f else [])))
        paths.add(make_path("status", "podIPs", key({"ip": ip})))
        paths.add(make_path("status", "podIPs", key({"ip": ip}), "ip"))
        return FieldSet(paths)

    a, b = shared_fields_v1(status_set("10.9.0.2")), shared_fields_v1(status_set("10.9.0.3"))
    assert a["f:status"]["f:conditions"] is b["f:status"]["f:conditions"]
    assert a["f:status"]["f:phase"] is b["f:status"]["f:phase"]  # the one canonical {}
    assert a["f:status"]["f:podIPs"] != b["f:status"]["f:podIPs"]
    for fs, tree in ((status_set("10.9.0.2"), a), (status_set("10.9.0.3"), b)):
        assert orjson.dumps(tree) == _by_trie(fs.paths)


def _pod_set() -> FieldSet:
    return fields_of(
        {
            "metadata": {"name": "p", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        POD,
    )


def test_an_untouched_stored_entry_keeps_its_stored_tree() -> None:
    """A stored ``fieldsV1`` that is its set's own encoding is held as is by the next stored
    revision (it is the canonical tree of its text afterwards); one in another form (keys out
    of order), or a request's (not stored), is not, and the tree is decoded from the text."""
    fs = _pod_set()
    text = fs.fields_v1_json()
    assert text is not None
    for stored, doc, kept in (
        (True, orjson.loads(text), True),
        (True, dict(reversed(list(orjson.loads(text).items()))), False),
        (False, orjson.loads(text), False),
    ):
        for table in (fieldpath._DECODED, fieldpath._ENCODED, compact._TREES, compact._BY_ID):
            table.clear()
        decoded = FieldSet.from_fields_v1(doc, stored=stored)
        assert decoded == fs
        assert (decoded.stored_tree() is doc) is kept
        tree = shared_fields_v1(decoded)
        assert (tree is doc) is kept
        assert orjson.dumps(tree) == text
        assert compact.canonical_json(text) is tree
    # a set found in the decoding table by a stored document of its encoding takes that document
    for table in (fieldpath._DECODED, fieldpath._ENCODED, compact._TREES, compact._BY_ID):
        table.clear()
    first = FieldSet.from_fields_v1(orjson.loads(text))  # a request's: no stored tree
    assert first.stored_tree() is None
    doc = orjson.loads(text)
    again = FieldSet.from_fields_v1(doc, stored=True)
    assert again is first and again.stored_tree() is doc
