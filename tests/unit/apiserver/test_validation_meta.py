"""ObjectMeta validation: create and update rules render exactly as kube-apiserver's."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.field import ErrorType, Path
from apiserver.validation.meta import (
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from apiserver.validation.names import name_is_dns_label, name_is_dns_subdomain

MD = Path("metadata")
SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
KEY_NAME_ERR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

OK: dict[str, Any] = {"name": "web", "namespace": "default"}


def sts_ref(name: str, uid: str, controller: bool | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": uid}
    if controller is not None:
        ref["controller"] = controller
    return ref


@pytest.mark.parametrize(
    ("meta", "namespaced", "want"),
    [
        (OK, True, []),
        ({"name": "node-1"}, False, []),
        (
            {},
            True,
            [
                "metadata.name: Required value: name or generateName is required",
                "metadata.namespace: Required value",
            ],
        ),
        ({"name": "a", "namespace": "x"}, False, ["metadata.namespace: Forbidden: not allowed on this type"]),
        (
            {"name": "Web_1", "namespace": "ns"},
            True,
            [f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN_ERR}'],
        ),
        (
            {"name": "a", "namespace": "Bad.NS"},
            True,
            [f'metadata.namespace: Invalid value: "Bad.NS": {LABEL_ERR}'],
        ),
        (
            {"name": "a", "namespace": "a.b"},
            True,
            ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
        ),
        ({"generateName": "web-", "name": "web-x7k2p", "namespace": "ns"}, True, []),
        (
            {"generateName": "Web-", "name": "web-x7k2p", "namespace": "ns"},
            True,
            [f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_ERR}'],
        ),
        (
            {"name": "a", "namespace": "ns", "generation": -1},
            True,
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"name": "a", "namespace": "ns", "labels": {"app": "web", "-bad": "x", "ok": "-v"}},
            True,
            [
                f'metadata.labels: Invalid value: "-bad": {KEY_NAME_ERR}',
                f'metadata.labels: Invalid value: "-v": {VALUE_ERR}',
            ],
        ),
        (
            {"name": "a", "namespace": "ns", "labels": {"k": "v" * 64}},
            True,
            ['metadata.labels: Invalid value: "' + "v" * 64 + '": must be no more than 63 bytes'],
        ),
        ({"name": "a", "namespace": "ns", "annotations": {"Example.COM/Key": "x"}}, True, []),
        (
            {"name": "a", "namespace": "ns", "annotations": {"bad key": "x"}},
            True,
            [f'metadata.annotations: Invalid value: "bad key": {KEY_NAME_ERR}'],
        ),
        (
            {"name": "a", "namespace": "ns", "annotations": {"big": "x" * (256 * 1024)}},
            True,
            ["metadata.annotations: Too long: may not be more than 262144 bytes"],
        ),
        ({"name": "a", "namespace": "ns", "annotations": {"big": "x" * (256 * 1024 - 3)}}, True, []),
        (
            {
                "name": "a",
                "namespace": "ns",
                "ownerReferences": [sts_ref("s", "u1", True), sts_ref("t", "u2")],
            },
            True,
            [],
        ),
        (
            {"name": "a", "namespace": "ns", "ownerReferences": [{}]},
            True,
            [
                'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
                'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
                'metadata.ownerReferences.name: Invalid value: "": must not be empty',
                'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
            ],
        ),
        (
            {
                "name": "a",
                "namespace": "ns",
                "ownerReferences": [{"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"}],
            },
            True,
            ['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty'],
        ),
        (
            {
                "name": "a",
                "namespace": "ns",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}],
            },
            True,
            [
                'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: '
                "/v1, Kind=Event is disallowed from being an owner"
            ],
        ),
        (
            {
                "name": "a",
                "namespace": "ns",
                "ownerReferences": [sts_ref("s", "u1", True), sts_ref("t", "u2", True)],
            },
            True,
            [
                'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"StatefulSet","name":"s",'
                '"uid":"u1","controller":true},{"apiVersion":"apps/v1","kind":"StatefulSet","name":"t","uid":"u2",'
                '"controller":true}]: Only one reference can have Controller set to true. '
                'Found "true" in references for StatefulSet/s and StatefulSet/t'
            ],
        ),
        (
            {"name": "a", "namespace": "ns", "finalizers": ["kubernetes", "orphan", "example.com/cleanup"]},
            True,
            [],
        ),
        (
            {"name": "a", "namespace": "ns", "finalizers": ["foregroundDeletion", "orphan"]},
            True,
            [
                'metadata.finalizers: Invalid value: ["foregroundDeletion","orphan"]: '
                "finalizer orphan and foregroundDeletion cannot be both set"
            ],
        ),
        (
            {"name": "a", "namespace": "ns", "finalizers": ["example.com/ok", "cleanup"]},
            True,
            [
                'metadata.finalizers[1]: Invalid value: "cleanup": '
                "name is neither a standard finalizer name nor is it fully qualified"
            ],
        ),
        (
            {"name": "a", "namespace": "ns", "finalizers": ["-bad"]},
            True,
            [
                f'metadata.finalizers: Invalid value: "-bad": {KEY_NAME_ERR}',
                'metadata.finalizers[0]: Invalid value: "-bad": '
                "name is neither a standard finalizer name nor is it fully qualified",
            ],
        ),
        (
            {
                "name": "a",
                "namespace": "ns",
                "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"}],
            },
            True,
            [],
        ),
        (
            {
                "name": "a",
                "namespace": "ns",
                "managedFields": [{"manager": "m\x07", "operation": "Patch", "fieldsType": "FieldsV2"}],
            },
            True,
            [
                'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
                'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
                'metadata.managedFields[0].manager: Invalid value: "m\\u0007": invalid character U+0007 (at position 1)',
            ],
        ),
    ],
)
def test_validate_object_meta(meta: dict[str, Any], namespaced: bool, want: list[str]) -> None:
    assert [str(e) for e in validate_object_meta(meta, namespaced, name_is_dns_subdomain, MD)] == want


def test_custom_resources_skip_kube_finalizer_rule() -> None:
    meta = {"name": "a", "namespace": "ns", "finalizers": ["cleanup"]}
    assert validate_object_meta(meta, True, name_is_dns_subdomain, MD, kube_finalizers=False) == []


def test_name_func_is_pluggable() -> None:
    errs = validate_object_meta({"name": "a.b"}, False, name_is_dns_label, MD)
    assert [str(e) for e in errs] == ['metadata.name: Invalid value: "a.b": must not contain dots']
    assert errs[0].to_cause()["reason"] == ErrorType.INVALID.value


OLD: dict[str, Any] = {
    "name": "web",
    "namespace": "ns",
    "uid": "u-1",
    "resourceVersion": "10",
    "generation": 3,
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "finalizers": ["example.com/a"],
    "labels": {"app": "web"},
}
DELETING: dict[str, Any] = {
    **OLD,
    "deletionTimestamp": "2024-05-02T10:00:00Z",
    "deletionGracePeriodSeconds": 30,
}


@pytest.mark.parametrize(
    ("new", "old", "want"),
    [
        ({**OLD, "generation": 4, "labels": {"app": "api"}}, OLD, []),
        ({**OLD, "creationTimestamp": "2024-05-01T10:00:00+00:00"}, OLD, []),
        ({**OLD, "finalizers": ["example.com/a", "example.com/b"]}, OLD, []),
        (
            {**OLD, "name": "other", "namespace": "ns2", "uid": "u-2"},
            OLD,
            [
                'metadata.name: Invalid value: "other": field is immutable',
                'metadata.namespace: Invalid value: "ns2": field is immutable',
                'metadata.uid: Invalid value: "u-2": field is immutable',
            ],
        ),
        (
            {**OLD, "creationTimestamp": "2024-06-01T10:00:00Z"},
            OLD,
            ['metadata.creationTimestamp: Invalid value: "2024-06-01T10:00:00Z": field is immutable'],
        ),
        (
            {**OLD, "resourceVersion": ""},
            OLD,
            ['metadata.resourceVersion: Invalid value: "": must be specified for an update'],
        ),
        ({**OLD, "generation": 2}, OLD, ["metadata.generation: Invalid value: 2: must not be decremented"]),
        ({**DELETING, "finalizers": []}, DELETING, []),
        (
            {**DELETING, "finalizers": ["example.com/a", "x/z", "x/b"]},
            DELETING,
            [
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
                'found new finalizers []string{"x/b", "x/z"}'
            ],
        ),
        (
            {**DELETING, "deletionTimestamp": None},
            DELETING,
            ["metadata.deletionTimestamp: Invalid value: null: field is immutable"],
        ),
        (
            {**DELETING, "deletionTimestamp": "2024-05-03T10:00:00Z"},
            DELETING,
            ['metadata.deletionTimestamp: Invalid value: "2024-05-03T10:00:00Z": field is immutable'],
        ),
        (
            {**DELETING, "deletionGracePeriodSeconds": 0},
            DELETING,
            ["metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable"],
        ),
        (
            {**OLD, "labels": {"app": "-x"}, "finalizers": ["cleanup"]},
            OLD,
            [
                f'metadata.labels: Invalid value: "-x": {VALUE_ERR}',
                'metadata.finalizers[0]: Invalid value: "cleanup": '
                "name is neither a standard finalizer name nor is it fully qualified",
            ],
        ),
    ],
)
def test_validate_object_meta_update(new: dict[str, Any], old: dict[str, Any], want: list[str]) -> None:
    assert [str(e) for e in validate_object_meta_update(new, old, MD)] == want


SEL = Path("spec").child("selector")  # Path("spec", "selector") currently cycles: see report


@pytest.mark.parametrize(
    ("sel", "want"),
    [
        (None, []),
        ({"matchLabels": {"app": "web"}}, []),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]}, []),
        (
            {"matchExpressions": [{"key": "app", "operator": "In"}]},
            [
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]},
            [
                "spec.selector.matchExpressions[0].values: Forbidden: "
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ],
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["a"]}]},
            [
                'spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'
            ],
        ),
        (
            {
                "matchLabels": {"app": "-x"},
                "matchExpressions": [{"key": "-k", "operator": "NotIn", "values": ["-y"]}],
            },
            [
                f'spec.selector.matchLabels: Invalid value: "-x": {VALUE_ERR}',
                f'spec.selector.matchExpressions[0].key: Invalid value: "-k": {KEY_NAME_ERR}',
                f'spec.selector.matchExpressions[0].values[0]: Invalid value: "-y": {VALUE_ERR}',
            ],
        ),
    ],
)
def test_validate_label_selector(sel: dict[str, Any] | None, want: list[str]) -> None:
    assert [str(e) for e in validate_label_selector(sel, SEL)] == want
