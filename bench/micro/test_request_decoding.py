"""Micro-benchmarks of request-body decoding (apiserver/server/bodies.py) and its bounds.

    python -m pytest bench/micro/test_request_decoding.py --benchmark-only

A typical kubectl body (JSON, one small object), the same object as YAML, a 3 MiB YAML
ConfigMap (the worst body size allows, decoded off the event loop), and the hostile bodies the
bounds stop early: a YAML alias bomb and a JSON patch of copy doublings.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.patch.jsonpatch_merge import json_patch
from apiserver.server.bodies import decode_json, decode_yaml

pytestmark = pytest.mark.benchmark

SMALL = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "default", "labels": {"app": "web", "tier": "frontend"}},
    "data": {f"k{i}": f"value-{i}" for i in range(10)},
}
SMALL_YAML = (
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\n"
    b"  labels: {app: web, tier: frontend}\ndata:\n"
    + b"".join(b"  k%d: value-%d\n" % (i, i) for i in range(10))
)
BIG_YAML = b"metadata: {name: big}\ndata:\n" + b"".join(
    b'  k%d: "%s"\n' % (i, b"x" * 20) for i in range(90000)
)
BOMB = b"\n".join(
    [b'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [b"a%d: &a%d [" % (i, i) + b",".join([b"*a%d" % (i - 1)] * 9) + b"]" for i in range(1, 9)]
)


def test_decode_small_json_body(benchmark: Any) -> None:
    raw = orjson.dumps(SMALL)
    assert benchmark(decode_json, raw) == SMALL


def test_decode_small_yaml_body(benchmark: Any) -> None:
    assert benchmark(decode_yaml, SMALL_YAML)["data"]["k9"] == "value-9"


def test_decode_3mib_yaml_configmap(benchmark: Any) -> None:
    assert len(BIG_YAML) <= 3 * 1024 * 1024
    got = benchmark.pedantic(decode_yaml, (BIG_YAML,), rounds=1, iterations=1)
    assert len(got["data"]) == 90000


def test_refuse_yaml_alias_bomb(benchmark: Any) -> None:
    def refuse() -> int:
        try:
            decode_yaml(BOMB)
        except errors.StatusError as e:
            return e.code
        return 0

    assert benchmark(refuse) == 400


def test_refuse_json_patch_copy_doublings(benchmark: Any) -> None:
    ops = [{"op": "add", "path": "/x", "value": {"v": "y" * 100}}]
    ops += [{"op": "copy", "from": "/x", "path": f"/x/c{i}"} for i in range(19)]

    def refuse() -> int:
        try:
            json_patch({"metadata": {}}, ops)
        except errors.StatusError as e:
            return e.code
        return 0

    assert benchmark(refuse) == 422


def test_strict_field_validation_of_a_statefulset_update(benchmark: Any) -> None:
    """Strict field validation (unknown and duplicate fields) of a 1.2 KiB StatefulSet on update."""
    from apiserver.patch.fieldvalidation import check_body
    from apiserver.registry.generic import WriteOptions

    class StatefulSets:
        group, version, kind, storage_of = "apps", "v1", "StatefulSet", None
        schema = converter = None
        is_view = False

    containers = [
        {
            "name": f"c{i}",
            "image": "i",
            "env": [{"name": f"E{j}", "value": "v"} for j in range(5)],
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "1"}},
        }
        for i in range(4)
    ]
    obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "w"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": containers}},
        },
    }
    opts = WriteOptions(field_validation="Strict", raw_body=orjson.dumps(obj))
    check_body(StatefulSets, obj, None, opts, [])  # compiles the schema shape once
    warnings: list[str] = []
    benchmark(check_body, StatefulSets, obj, obj, opts, warnings)
    assert warnings == []
