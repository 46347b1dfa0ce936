"""MutatingAdmissionPolicy's typed literals (``Object{…}``, ``JSONPatch{…}``) rewritten as CEL maps."""

from __future__ import annotations

from apiserver.cel.admission import rewrite_struct_literals


def test_typed_literals_become_maps() -> None:
    assert rewrite_struct_literals("Object{spec: Object.spec{replicas: 3}}") == '{"spec": {"replicas": 3}}'
    assert rewrite_struct_literals('[JSONPatch{op: "add", path: "/a", value: x.y}]') == (
        '[{"op": "add", "path": "/a", "value": x.y}]'
    )
    # strings, map literals and ternaries are left alone
    assert rewrite_struct_literals('{"a": b ? "Object{x: 1}" : c}') == '{"a": b ? "Object{x: 1}" : c}'
