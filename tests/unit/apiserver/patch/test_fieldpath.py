"""Field sets and their fieldsV1 encoding (structured-merge-diff's ``fieldpath``)."""

from __future__ import annotations

import json

import pytest

from apiserver.openapi import schema
from apiserver.patch.fieldpath import (
    FieldPathError,
    FieldSet,
    ensure_named_fields_are_members,
    field,
    fields_of,
    go_json,
    index,
    key,
    make_path,
    parse_path_element,
    path_string,
    value,
)

DEPLOYMENT = schema.for_gvk("apps", "v1", "Deployment")
POD = schema.for_gvk("", "v1", "Pod")

BRIEF_EXAMPLE = {
    "f:metadata": {"f:labels": {"f:app": {}}},
    "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}}}},
}


def containers_path(*rest: object) -> tuple:
    return make_path("spec", "containers", key({"name": "c"}), *rest)  # type: ignore[arg-type]


def test_fields_v1_round_trips_the_documented_shape() -> None:
    fs = FieldSet.from_fields_v1(BRIEF_EXAMPLE)
    assert set(fs) == {
        make_path("metadata", "labels", "app"),
        containers_path(),
        containers_path("image"),
    }
    assert fs.to_fields_v1() == BRIEF_EXAMPLE
    assert fs.to_json() == json.dumps(BRIEF_EXAMPLE, separators=(",", ":"))


def test_dot_marks_a_member_that_also_has_children() -> None:
    fs = FieldSet([make_path("a"), make_path("a", "b"), make_path("c", "d")])
    assert fs.to_fields_v1() == {"f:a": {".": {}, "f:b": {}}, "f:c": {"f:d": {}}}
    assert make_path("c") not in fs


def test_elements_serialize_in_structured_merge_diff_order() -> None:
    fs = FieldSet(
        [
            (index(1),),
            (value("b"),),
            (value(10),),
            (key({"port": 80, "protocol": "TCP"}),),
            (field("z"),),
            (field("a"),),
            (value(True),),
        ]
    )
    assert list(fs.to_fields_v1()) == [
        "f:a",
        "f:z",
        'k:{"port":80,"protocol":"TCP"}',
        "v:10",
        'v:"b"',
        "v:true",
        "i:1",
    ]


def test_key_fields_are_sorted_by_name_whatever_the_input_order() -> None:
    assert (
        key({"protocol": "TCP", "containerPort": 80}).serialize() == 'k:{"containerPort":80,"protocol":"TCP"}'
    )
    assert parse_path_element('k:{"protocol":"TCP","containerPort":80}') == key(
        {"containerPort": 80, "protocol": "TCP"}
    )


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (make_path("spec", "replicas"), ".spec.replicas"),
        (containers_path("image"), '.spec.containers[name="c"].image'),
        (
            make_path("ports", key({"containerPort": 80, "protocol": "TCP"})),
            '.ports[containerPort=80,protocol="TCP"]',
        ),
        (make_path("metadata", "finalizers", value("x")), '.metadata.finalizers[="x"]'),
        (make_path("items", 3), ".items[3]"),
    ],
)
def test_path_strings_match_conflict_messages(path: tuple, text: str) -> None:
    assert path_string(path) == text


def test_iteration_lists_members_before_deeper_paths_like_set_iterate() -> None:
    fs = FieldSet([make_path("a", "b", "c"), make_path("a", "d"), make_path("a", "b"), make_path("0")])
    assert list(fs) == [make_path("0"), make_path("a", "b"), make_path("a", "d"), make_path("a", "b", "c")]


def test_set_algebra() -> None:
    a = FieldSet([make_path("x"), make_path("y"), make_path("s", "t")])
    b = FieldSet([make_path("y"), make_path("z")])
    assert a | b == FieldSet([make_path("x"), make_path("y"), make_path("z"), make_path("s", "t")])
    assert a - b == FieldSet([make_path("x"), make_path("s", "t")])
    assert a & b == FieldSet([make_path("y")])
    # exact difference keeps children, recursive difference removes them
    assert a - FieldSet([make_path("s")]) == a
    assert a.recursive_difference(FieldSet([make_path("s")])) == FieldSet([make_path("x"), make_path("y")])
    assert a.with_prefix(make_path("s")) == FieldSet([make_path("t")])
    assert not FieldSet() and len(a) == 3


def test_fields_of_a_deployment_keys_list_maps_and_treats_atomics_as_leaves() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a/b"]},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"rollingUpdate": {}},
            "template": {
                "spec": {
                    "containers": [
                        {"name": "c", "image": "nginx", "args": ["-x"], "ports": [{"containerPort": 80}]}
                    ],
                    "nodeSelector": None,
                }
            },
        },
    }
    fs = fields_of(obj, DEPLOYMENT)
    c = make_path("spec", "template", "spec", "containers", key({"name": "c"}))
    assert set(fs) == {
        make_path("apiVersion"),
        make_path("kind"),
        make_path("metadata", "name"),
        make_path("metadata", "labels", "app"),
        make_path("metadata", "finalizers", value("a/b")),
        make_path("spec", "replicas"),
        make_path("spec", "selector"),  # x-kubernetes-map-type: atomic
        make_path("spec", "strategy", "rollingUpdate"),  # empty map is a leaf
        make_path("spec", "template", "spec", "nodeSelector"),  # null is a leaf
        c,
        c + make_path("name"),
        c + make_path("image"),
        c + make_path("args"),  # atomic list
        # the protocol key takes its TCP default, as kube's schema declares it
        c + make_path("ports", key({"containerPort": 80, "protocol": "TCP"})),
        c + make_path("ports", key({"containerPort": 80, "protocol": "TCP"}), "containerPort"),
    }


def test_without_schema_maps_are_granular_and_lists_atomic() -> None:
    obj = {"a": {"b": {"c": 1}}, "l": [{"x": 1}]}
    assert set(fields_of(obj, None)) == {
        make_path("a"),
        make_path("a", "b"),
        make_path("a", "b", "c"),
        make_path("l"),
    }


def test_strict_mode_reports_duplicates_and_missing_keys_like_structured_merge_diff() -> None:
    dup = {"spec": {"containers": [{"name": "c"}, {"name": "c"}]}}
    with pytest.raises(FieldPathError, match=r'^\.spec\.containers: duplicate entries for key \[name="c"\]$'):
        fields_of(dup, POD, strict=True)
    assert set(fields_of(dup, POD)) == {containers_path(), containers_path("name")}

    missing = {"spec": {"containers": [{"image": "x"}]}}
    with pytest.raises(
        FieldPathError, match="element 0: associative list with keys has an element that omits key"
    ):
        fields_of(missing, POD, strict=True)


def test_malformed_fields_v1_is_rejected() -> None:
    for bad in ([], {"x:y": {}}, {"f:a": 1}, {'k:["a"]': {}}, {"i:z": {}}):
        with pytest.raises(FieldPathError):
            FieldSet.from_fields_v1(bad)
    assert FieldSet.from_fields_v1(None) == FieldSet()


def test_named_struct_fields_become_members_but_map_keys_and_items_do_not() -> None:
    fs = FieldSet(
        [
            make_path("spec", "strategy", "rollingUpdate", "maxSurge"),
            make_path("metadata", "labels", "app"),
            make_path("spec", "template", "spec", "containers", key({"name": "c"}), "image"),
        ]
    )
    out = ensure_named_fields_are_members(fs, DEPLOYMENT)
    added = set(out) - set(fs)
    assert make_path("spec") in added
    assert make_path("spec", "strategy", "rollingUpdate") in added
    assert make_path("metadata", "labels") in added
    assert make_path("spec", "template", "spec", "containers") in added
    assert make_path("spec", "template", "spec", "containers", key({"name": "c"})) not in added


def test_go_json_escapes_like_encoding_json() -> None:
    assert go_json({"a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e"}'
    assert go_json({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'
