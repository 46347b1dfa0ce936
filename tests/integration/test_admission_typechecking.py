"""``status.typeChecking`` of a ValidatingAdmissionPolicy beyond undefined fields: operators applied to
operand types CEL has no overload for, on built-in kinds (OpenAPI schema) and custom kinds (the
CRD's structural schema), reported as cel-go words them."""

from __future__ import annotations

import pytest

from apiserver.client.interface import GVR
from tests.helpers import wait_for_object
from tests.integration.test_crd_conversion_webhook import CRDS

pytestmark = pytest.mark.anyio
AR = "admissionregistration.k8s.io"
VAP = GVR(AR, "v1", "validatingadmissionpolicies")


@pytest.fixture
async def status_controller(cp):
    from controllers.admissionpolicystatus import NAME, new_admission_policy_status_controller

    cp.register(NAME, new_admission_policy_status_controller)
    await cp.start_component(NAME)


def vap(name: str, group: str, resource: str, expressions: list[str]) -> dict:
    rule = {"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": [resource]}
    return {
        "apiVersion": f"{AR}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [rule]},
            "validations": [{"expression": e} for e in expressions],
        },
    }


def checked(o: dict | None) -> bool:
    return bool(o) and (o.get("status") or {}).get("observedGeneration") == o["metadata"]["generation"]


async def test_wrong_operand_types_on_a_builtin_kind(client, status_controller) -> None:
    body = vap(
        "types",
        "apps",
        "statefulsets",
        [
            "object.spec.serviceName == 1",
            "object.spec.replicas <= 5 && object.metadata.name.startsWith('web')",
            "object.spec.replicas + 1.5 > 2 ||\n  object.spec.minReadySeconds < '5'",
        ],
    )
    await client.create(VAP, body)
    got = await wait_for_object(client, VAP, "types", cond=checked)
    assert got["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[0].expression",
                "warning": "apps/v1, Kind=StatefulSet: ERROR: <input>:1:25: found no matching overload for "
                "'_==_' applied to '(string, int)'\n"
                " | object.spec.serviceName == 1\n"
                " | ........................^",
            },
            {
                "fieldRef": "spec.validations[2].expression",
                "warning": "apps/v1, Kind=StatefulSet: ERROR: <input>:1:22: found no matching overload for "
                "'_+_' applied to '(int, double)'\n"
                " | object.spec.replicas + 1.5 > 2 ||\n"
                " | .....................^\n"
                "apps/v1, Kind=StatefulSet: ERROR: <input>:2:31: found no matching overload for "
                "'_<_' applied to '(int, string)'\n"
                " |   object.spec.minReadySeconds < '5'\n"
                " | ..............................^",
            },
        ]
    }


async def test_custom_kind_checked_against_the_crd_schema(client, status_controller) -> None:
    spec_schema = {
        "type": "object",
        "properties": {"size": {"type": "integer"}, "mode": {"type": "string"}},
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}},
                }
            ],
        },
    }
    await client.create(CRDS, crd)
    body = vap(
        "gizmo",
        "example.com",
        "gizmos",
        [
            "object.spec.size > 'big'",
            "object.spec.sise > 1",
            "object.spec.mode == 'x' && object.metadata.name != ''",
        ],
    )
    await client.create(VAP, body)

    def done(o: dict | None) -> bool:
        return checked(o) and bool(((o or {}).get("status") or {}).get("typeChecking"))

    got = await wait_for_object(client, VAP, "gizmo", cond=done)
    assert got["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[0].expression",
                "warning": "example.com/v1, Kind=Gizmo: ERROR: <input>:1:18: found no matching overload for "
                "'_>_' applied to '(int, string)'\n"
                " | object.spec.size > 'big'\n"
                " | .................^",
            },
            {
                "fieldRef": "spec.validations[1].expression",
                "warning": "example.com/v1, Kind=Gizmo: ERROR: <input>:1:12: undefined field 'sise'\n"
                " | object.spec.sise > 1\n"
                " | ...........^",
            },
        ]
    }
