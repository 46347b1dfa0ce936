"""Objects shared read-only share their equal managedFields trees; what a reader sees is unchanged."""

from __future__ import annotations

import copy

import orjson

from apiserver.storage import compact as compact_mod
from apiserver.storage.compact import canonical_fields, compact


def pod(name: str, ip: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "managedFields": [
                {
                    "manager": "bench",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-12-01T17:36:36Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {"f:containers": {".": {}, 'k:{"name":"c"}': {".": {}, "f:image": {}}}}
                    },
                },
                {
                    "manager": "node-agent",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-12-01T17:36:37Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:status": {
                            "f:phase": {},
                            "f:podIPs": {".": {}, f'k:{{"ip":"{ip}"}}': {".": {}, "f:ip": {}}},
                        }
                    },
                    "subresource": "status",
                },
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


def test_compact_keeps_every_value_and_the_serialization() -> None:
    a = pod("a", "10.0.0.1")
    raw = orjson.dumps(a)
    before = copy.deepcopy(a)
    assert compact(a) is a
    assert a == before and orjson.dumps(a) == raw


def test_equal_fields_trees_of_two_objects_are_one_object_and_different_ones_are_not() -> None:
    a, b = compact(pod("a", "10.0.0.1")), compact(pod("b", "10.0.0.2"))
    fa = [e["fieldsV1"] for e in a["metadata"]["managedFields"]]
    fb = [e["fieldsV1"] for e in b["metadata"]["managedFields"]]
    assert fa[0] is fb[0]  # the same spec fields
    assert fa[1] is not fb[1] and fa[1] != fb[1]  # each names its own pod IP
    assert fa[1]["f:status"]["f:phase"] is fb[1]["f:status"]["f:phase"]  # the equal parts are shared
    assert b["metadata"]["managedFields"][1]["fieldsV1"]["f:status"]["f:podIPs"] == {
        ".": {},
        'k:{"ip":"10.0.0.2"}': {".": {}, "f:ip": {}},
    }


def test_key_order_is_part_of_equality() -> None:
    x = canonical_fields({"f:a": {}, "f:b": {}})
    y = canonical_fields({"f:b": {}, "f:a": {}})
    assert x is not y and list(y) == ["f:b", "f:a"]


def test_a_full_table_starts_again_without_changing_anything(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(compact_mod, "TREE_TABLE_LIMIT", 2)
    trees = [{f"f:{i}": {"f:x": {}}} for i in range(5)]
    out = [canonical_fields(copy.deepcopy(t)) for t in trees]
    assert out == trees and len(compact_mod._TREES) <= 2


def test_objects_that_are_not_plain_json_are_left_alone() -> None:
    odd = {"metadata": {"managedFields": [{"fieldsV1": {1: {}}}, "not an entry"]}}
    assert compact(copy.deepcopy(odd)) == odd
    assert compact({"metadata": None}) == {"metadata": None}
    assert compact({"kind": "X"}) == {"kind": "X"}
