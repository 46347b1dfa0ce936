"""apiextensions: CRD validation, structural schemas, pruning, defaulting, CR validation, CEL rules,
printer columns (pure functions; the served behaviour is in tests/integration/test_crd_*.py)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from apiserver.api.types import Obj
from apiserver.apiextensions import celrules
from apiserver.apiextensions.crd_validation import validate_crd, validate_crd_update
from apiserver.apiextensions.defaulting import apply_defaults
from apiserver.apiextensions.printers import printer_for_columns
from apiserver.apiextensions.pruning import prune_custom_resource
from apiserver.apiextensions.serving import version_priority
from apiserver.apiextensions.strategy import default_crd
from apiserver.apiextensions.structural import validate_structural
from apiserver.apiextensions.values import validate_value
from apiserver.field import Path, new_path
from tests.crd_support import CRONTAB_SCHEMA, crontab, crontab_crd


def msgs(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def crd_errors(crd: Obj) -> list[str]:
    default_crd(crd)
    return msgs(validate_crd(crd, celrules.compile_errors))


# ------------------------------------------------------------------ CRD validation
def test_valid_crd_has_no_errors() -> None:
    assert crd_errors(crontab_crd()) == []


def test_defaults_singular_list_kind_and_conversion() -> None:
    crd = crontab_crd()
    del crd["spec"]["names"]["singular"]
    default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "crontab"
    assert crd["spec"]["names"]["listKind"] == "CronTabList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_name_must_be_plural_dot_group() -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "crontab.stable.example.com"
    assert crd_errors(crd) == [
        'metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group'
    ]


def test_group_needs_a_dot_and_scope_is_an_enum() -> None:
    crd = crontab_crd(scope="Global")
    crd["spec"]["group"] = "stable"
    crd["metadata"]["name"] = "crontabs.stable"
    errs = crd_errors(crd)
    assert 'spec.group: Invalid value: "stable": should be a domain with at least one dot' in errs
    assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in errs


def test_names_are_dns1035_labels_and_kind_differs_from_list_kind() -> None:
    crd = crontab_crd(plural="Cron_Tabs", listKind="CronTab")
    crd["metadata"]["name"] = "Cron_Tabs.stable.example.com"
    errs = crd_errors(crd)
    assert any(
        e.startswith('spec.names.plural: Invalid value: "Cron_Tabs": a DNS-1035 label must consist')
        for e in errs
    )
    assert 'spec.names.listKind: Invalid value: "CronTab": kind and listKind may not be the same' in errs


def test_exactly_one_storage_version() -> None:
    crd = crontab_crd()
    v2 = copy.deepcopy(crd["spec"]["versions"][0])
    v2["name"] = "v2"
    crd["spec"]["versions"].append(v2)
    errs = crd_errors(crd)
    assert len(errs) == 1 and errs[0].startswith("spec.versions: Invalid value: ")
    assert errs[0].endswith(": must have exactly one version marked as storage version")


def test_schema_is_required_and_must_be_structural() -> None:
    crd = crontab_crd()
    del crd["spec"]["versions"][0]["schema"]
    assert "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required" in crd_errors(crd)
    crd = crontab_crd()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["cronSpec"] = {"description": "no type"}
    errs = crd_errors(crd)
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].type: Required value: "
        "must not be empty for specified object fields"
    ) in errs


def test_structural_rules() -> None:
    p = new_path("s")
    assert msgs(validate_structural({"type": "string"}, p)) == [
        's.type: Invalid value: "string": must be object at the root'
    ]
    errs = msgs(
        validate_structural(
            {
                "type": "object",
                "properties": {
                    "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
                    "a": {
                        "type": "object",
                        "properties": {"x": {"type": "string"}},
                        "additionalProperties": {"type": "string"},
                    },
                    "b": {"type": "array"},
                    "c": {"$ref": "#/x", "type": "string"},
                    "d": {"type": "integer", "x-kubernetes-int-or-string": True},
                    "e": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}},
                    "f": {"type": "integer", "default": "x"},
                },
            },
            p,
        )
    )
    assert (
        "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but "
        "metadata is implicitly specified"
    ) in errs
    assert (
        "s.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        in errs
    )
    assert "s.properties[b].items: Required value: must be specified" in errs
    assert "s.properties[c].$ref: Forbidden: $ref is not supported" in errs
    assert (
        's.properties[d].type: Invalid value: "integer": must be empty if x-kubernetes-int-or-string is true'
        in errs
    )
    assert (
        "s.properties[e].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
    ) in errs
    assert (
        's.properties[f].default: Invalid value: "string": s.properties[f].default in body must be of type integer: "string"'
        in errs
    )


def test_cel_rule_must_compile() -> None:
    crd = crontab_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [
        {"rule": "self.replicas <"},
        {"rule": "nope.size() > 0"},
        {"rule": "true", "reason": "Bad"},
    ]
    errs = crd_errors(crd)
    base = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    assert any(
        e.startswith(f'{base}[0].rule: Invalid value: "self.replicas <": compilation failed: ERROR:')
        for e in errs
    )
    assert (
        f"{base}[1].rule: Invalid value: \"nope.size() > 0\": compilation failed: ERROR: undeclared reference to 'nope' (in container '')"
    ) in errs
    assert any(e.startswith(f'{base}[2].reason: Unsupported value: "Bad"') for e in errs)


def test_scale_paths_and_printer_columns() -> None:
    crd = crontab_crd()
    v = crd["spec"]["versions"][0]
    v["subresources"]["scale"]["specReplicasPath"] = ".status.replicas"
    v["additionalPrinterColumns"].append({"name": "X", "type": "time", "jsonPath": ".spec.x"})
    errs = crd_errors(crd)
    assert (
        'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec'
        in errs
    )
    assert (
        'spec.versions[0].additionalPrinterColumns[4].type: Unsupported value: "time": supported values: '
        '"boolean", "date", "integer", "number", "string"'
    ) in errs


def test_update_keeps_scope_and_stored_versions() -> None:
    old = crontab_crd()
    default_crd(old)
    old["status"] = {"storedVersions": ["v1"], "conditions": [{"type": "Established", "status": "True"}]}
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    new["spec"]["versions"][0]["name"] = "v2"
    errs = msgs(validate_crd_update(new, old))
    assert 'spec.scope: Invalid value: "Cluster": field is immutable' in errs
    assert 'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions' in errs


def test_webhook_conversion_needs_a_client_config_and_review_versions() -> None:
    crd = crontab_crd()
    crd["spec"]["conversion"] = {"strategy": "Webhook"}
    assert crd_errors(crd) == [
        "spec.conversion.webhook: Required value: required when strategy is set to Webhook"
    ]
    crd["spec"]["conversion"]["webhook"] = {"clientConfig": {"service": {"namespace": "ns"}}}
    assert crd_errors(crd) == [
        "spec.conversion.webhook.clientConfig.service.name: Required value: service name is required",
        "spec.conversion.webhook.conversionReviewVersions: Required value: must specify one of v1, v1beta1",
    ]
    crd["spec"]["conversion"]["webhook"] = {
        "clientConfig": {"url": "https://127.0.0.1:9443/convert"},
        "conversionReviewVersions": ["v1"],
    }
    assert crd_errors(crd) == []


# ------------------------------------------------------------------ pruning and defaulting
def test_pruning_drops_unknown_fields_and_keeps_preserved_and_embedded() -> None:
    obj = crontab(
        "a",
        junk=1,
        extra={"anything": {"goes": 1}},
        template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": 1},
    )
    obj["metadata"]["bogus"] = True
    obj["status"] = {"replicas": 1, "nope": 2}
    obj["top"] = 1
    pruned = prune_custom_resource(CRONTAB_SCHEMA, obj)
    assert sorted(pruned) == ["metadata.bogus", "spec.junk", "status.nope", "top"]
    assert obj["spec"]["extra"] == {"anything": {"goes": 1}}
    assert obj["spec"]["template"]["x"] == 1 and obj["spec"]["template"]["kind"] == "Pod"
    assert "bogus" not in obj["metadata"]


def test_pruning_drops_nulls_of_non_nullable_fields() -> None:
    obj = crontab("a", image=None)
    prune_custom_resource(CRONTAB_SCHEMA, obj)
    assert "image" not in obj["spec"]


def test_defaults_apply_to_missing_fields_only() -> None:
    obj = crontab("a", replicas=3)
    apply_defaults(CRONTAB_SCHEMA, obj)
    assert (
        obj["spec"]["replicas"] == 3
        and obj["spec"]["maxReplicas"] == 10
        and obj["spec"]["allowScaleDown"] is True
    )
    nested = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "default": {}, "properties": {"b": {"type": "integer", "default": 5}}}
        },
    }
    obj = {}
    apply_defaults(nested, obj)
    assert obj == {"a": {"b": 5}}


# ------------------------------------------------------------------ value validation
def validate(obj: Obj) -> list[str]:
    errs: list[Any] = []
    validate_value(CRONTAB_SCHEMA, obj, Path(), errs, root=True)
    return msgs(errs)


def test_value_errors_carry_kube_messages_and_paths() -> None:
    obj = crontab("a", replicas="3", image="x" * 65, mode="Sometimes", tags=["a", "a"], port=1.5)
    del obj["spec"]["cronSpec"]
    assert validate(obj) == [
        "spec.cronSpec: Required value",
        "spec.image: Too long: may not be more than 64 bytes",
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        'spec.mode: Unsupported value: "Sometimes": supported values: "Allow", "Forbid"',
        'spec.tags[1]: Duplicate value: "a"',
        'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
    ]


def test_bounds_patterns_and_list_map_keys() -> None:
    obj = crontab("a", cronSpec="hello", replicas=-1, ports=[{"name": "a"}, {"name": "a", "port": 1}])
    assert validate(obj) == [
        "spec.cronSpec: Invalid value: \"hello\": spec.cronSpec in body should match '^[0-9*/ ,-]+$'",
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        'spec.ports[1]: Duplicate value: {"name":"a"}',
    ]


def test_embedded_resource_needs_api_version_and_kind() -> None:
    assert validate(crontab("a", template={"metadata": {}})) == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
    ]


# ------------------------------------------------------------------ CEL rules
def cel(obj: Obj, old: Obj | None = None) -> list[str]:
    o = copy.deepcopy(obj)
    apply_defaults(CRONTAB_SCHEMA, o)
    p = None
    if old is not None:
        p = copy.deepcopy(old)
        apply_defaults(CRONTAB_SCHEMA, p)
    return msgs(celrules.validate_object(CRONTAB_SCHEMA, o, p))


def test_rule_with_message() -> None:
    assert cel(crontab("a", replicas=11)) == [
        'spec: Invalid value: "object": replicas must not exceed maxReplicas'
    ]
    assert cel(crontab("a", replicas=10)) == []


def test_transition_rule_uses_old_self_only_on_update() -> None:
    assert cel(crontab("a", replicas=1, allowScaleDown=False)) == []
    assert cel(crontab("a", replicas=1, allowScaleDown=False), crontab("a", replicas=3)) == [
        'spec: Invalid value: "object": cannot scale down from 3 to 1'
    ]


def test_default_message_reason_and_field_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "x-kubernetes-validations": [
                    {"rule": "self.a == self.b"},
                    {
                        "rule": "has(self.a)",
                        "reason": "FieldValueRequired",
                        "fieldPath": ".a",
                        "message": "a is required",
                    },
                    {"rule": "self.b != 'x'", "reason": "FieldValueForbidden", "message": "b may not be x"},
                ],
            }
        },
    }
    assert msgs(celrules.validate_object(schema, {"spec": {"b": "x"}})) == [
        'spec: Invalid value: "object": no such key: a evaluating rule: failed rule: self.a == self.b',
        "spec.a: Required value: a is required",
        "spec: Forbidden: b may not be x",
    ]
    assert msgs(celrules.validate_object(schema, {"spec": {"a": "y", "b": "z"}})) == [
        'spec: Invalid value: "object": failed rule: self.a == self.b'
    ]


def test_list_map_items_correlate_for_transition_rules() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
                    "x-kubernetes-validations": [
                        {"rule": "self.v >= oldSelf.v", "message": "v may only grow"}
                    ],
                },
            }
        },
    }
    old = {"items": [{"name": "a", "v": 2}, {"name": "b", "v": 2}]}
    new = {"items": [{"name": "b", "v": 3}, {"name": "a", "v": 1}, {"name": "c", "v": 0}]}
    assert msgs(celrules.validate_object(schema, new, old)) == [
        'items[1]: Invalid value: "object": v may only grow'
    ]


# ------------------------------------------------------------------ printers, versions
def test_printer_columns_from_json_paths() -> None:
    printer = printer_for_columns(crontab_crd()["spec"]["versions"][0]["additionalPrinterColumns"])
    assert [c.name for c in printer.columns] == ["Name", "Spec", "Replicas", "Image", "Age"]
    assert printer.columns[3].priority == 1
    obj = crontab("a", replicas=2)
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    now = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
    assert printer.cells(obj, now) == ["a", "*/5 * * * *", 2, "cron:1", "5m"]
    del obj["spec"]["image"]
    assert printer.cells(obj, now)[3] is None
    default = printer_for_columns([])
    assert [c.name for c in default.columns] == ["Name", "Age"]


def test_versions_sort_as_kube_orders_them() -> None:
    names = ["v1alpha1", "foo", "v2beta1", "v1", "v1beta2", "v2", "v1beta1", "bar"]
    assert sorted(names, key=version_priority) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "bar",
        "foo",
    ]


def test_schema_may_narrow_metadata_name() -> None:
    schema = copy.deepcopy(CRONTAB_SCHEMA)
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 5}},
    }
    errs: list[Any] = []
    validate_value(schema, crontab("toolongname"), Path(), errs, root=True)
    assert msgs(errs) == ["metadata.name: Too long: may not be more than 5 bytes"]


def test_optional_old_self_runs_on_create_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"v": {"type": "integer"}},
                "x-kubernetes-validations": [
                    {
                        "rule": "!oldSelf.hasValue() ? self.v == 0 : self.v >= oldSelf.value().v",
                        "optionalOldSelf": True,
                        "message": "starts at 0 and only grows",
                    }
                ],
            }
        },
    }
    assert msgs(celrules.validate_object(schema, {"spec": {"v": 1}})) == [
        'spec: Invalid value: "object": starts at 0 and only grows'
    ]
    assert msgs(celrules.validate_object(schema, {"spec": {"v": 0}})) == []
    assert msgs(celrules.validate_object(schema, {"spec": {"v": 2}}, {"spec": {"v": 3}})) == [
        'spec: Invalid value: "object": starts at 0 and only grows'
    ]
    assert msgs(celrules.validate_object(schema, {"spec": {"v": 4}}, {"spec": {"v": 3}})) == []


def test_printer_column_with_a_filter() -> None:
    printer = printer_for_columns(
        [{"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'}]
    )
    obj = {
        "metadata": {"name": "a"},
        "status": {
            "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]
        },
    }
    assert printer.cells(obj, datetime(2026, 1, 1, tzinfo=UTC)) == ["a", "True"]
