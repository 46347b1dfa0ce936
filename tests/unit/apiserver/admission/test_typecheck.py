"""The operand-type check of policy expressions (apiserver.cel.typecheck) against StatefulSet's
OpenAPI schema: what cel-go's checker reports, and what it must not (dyn, numeric comparisons,
null, unknown syntax)."""

from __future__ import annotations

import pytest

from apiserver.cel.typecheck import type_errors
from apiserver.openapi.schema import definition_name_for, definitions, resolve


@pytest.fixture(scope="module")
def sts() -> dict:
    return definitions()[definition_name_for("apps", "v1", "StatefulSet")]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("object.spec.serviceName == 1", [(24, "'_==_' applied to '(string, int)'")]),
        ("object.spec.replicas + 1.0 > 2", [(21, "'_+_' applied to '(int, double)'")]),
        ("object.spec.replicas && true", [(21, "'_&&_' applied to '(int, bool)'")]),
        ("!object.spec.replicas", [(0, "'!_' applied to '(int)'")]),
        ('object.metadata.labels["a"] == 3', [(28, "'_==_' applied to '(string, int)'")]),
        (
            "object.metadata.creationTimestamp < 5",
            [(34, "'_<_' applied to '(google.protobuf.Timestamp, int)'")],
        ),
        ("object.spec.template.spec.containers[0].name % 2 == 0", [(45, "'_%_' applied to '(string, int)'")]),
        ("oldObject.spec.serviceName > 1", [(27, "'_>_' applied to '(string, int)'")]),
    ],
)
def test_reported(sts: dict, expression: str, expected: list) -> None:
    got = type_errors(expression, sts, resolve)
    assert got == [(off, f"found no matching overload for {m}") for off, m in expected]


@pytest.mark.parametrize(
    "expression",
    [
        "object.spec.replicas > 1",
        "object.spec.replicas > 1u || object.spec.replicas == 2.0",  # numeric: never reported
        "object.spec.replicas == null",
        "object.spec.template.spec.containers.all(c, c.image != '')",
        "variables.x == 1 && params.y < 'a'",  # dyn
        "object.spec.replicas in [1, 2]",
        "has(object.spec.ordinals) ? object.spec.ordinals.start : 0",
        "size(object.spec.serviceName) > 1 && object.metadata.name.startsWith('w')",
        "object.spec.replicas > -1",
        "Object{spec: Object.spec{replicas: 1}}",
        "object.spec.updateStrategy.rollingUpdate.maxUnavailable == 1",  # int-or-string: dyn
        "object.spec.serviceName ==",  # not parsed: not checked
        "r'raw\\d' + '''triple''' + \"x\" == object.spec.serviceName",
    ],
)
def test_not_reported(sts: dict, expression: str) -> None:
    assert type_errors(expression, sts, resolve) == []
