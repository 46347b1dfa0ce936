"""The write path's fast paths give exactly what the full checks give, for good and bad input."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.field import new_path
from apiserver.patch import limits
from apiserver.patch.strategic import strategic_merge
from apiserver.patch.typecheck import check_kind_types
from apiserver.validation.meta import (
    validate_managed_fields,
    validate_object_meta,
    validate_object_meta_update,
)
from apiserver.validation.names import is_qualified_name, is_valid_label_value, name_is_dns_subdomain


def _walk_only(value: Any, limit: int) -> bool:
    """``depth_exceeds`` by its Python walk alone (the C-level shortcut switched off)."""
    saved = limits._within
    limits._within = lambda *_: False  # type: ignore[assignment]
    try:
        return limits.depth_exceeds(value, limit)
    finally:
        limits._within = saved  # type: ignore[assignment]


def _nested(rng: random.Random, depth: int) -> Any:
    v: Any = rng.choice([0, "x", None, [], {}])
    for _ in range(depth):
        v = [v] if rng.random() < 0.5 else {"k": v, "other": 1}
    return v


@pytest.mark.parametrize("seed", range(4))
def test_depth_exceeds_agrees_with_the_walk_around_every_limit(seed: int) -> None:
    rng = random.Random(seed)
    for depth in [*range(195, 212), *range(248, 262)]:
        v = _nested(rng, depth)
        if rng.random() < 0.4:  # managedFields may nest MANAGED_FIELDS_SLACK deeper
            v = {"metadata": {"managedFields": _nested(rng, depth - 3)}, "spec": _nested(rng, depth // 2)}
        for limit in (3, limits.MAX_DEPTH, 254, 260):
            assert limits.depth_exceeds(v, limit) == _walk_only(v, limit), (depth, limit)


def test_depth_exceeds_of_values_orjson_cannot_write_falls_back_to_the_walk() -> None:
    deep: Any = 0
    for _ in range(limits.MAX_DEPTH + 1):
        deep = {1: deep}  # non-string keys: orjson refuses, the walk decides
    assert limits.depth_exceeds(deep)
    assert not limits.depth_exceeds({"big": 2**80, "k": [[{}]]})


def test_a_remembered_valid_name_stays_valid_and_invalid_ones_are_reported_every_time() -> None:
    assert is_qualified_name("app.kubernetes.io/name") == []
    assert is_qualified_name("app.kubernetes.io/name") == []
    first = is_qualified_name("bad key!")
    assert first and is_qualified_name("bad key!") == first
    first.append("caller's own list")
    assert is_qualified_name("bad key!") != first
    assert is_valid_label_value("x" * 64) == ["must be no more than 63 bytes"]
    assert is_valid_label_value("x" * 64) == ["must be no more than 63 bytes"]
    assert name_is_dns_subdomain("Upper", False) == name_is_dns_subdomain("Upper", False) != []


def test_a_str_subclass_equal_to_a_remembered_value_is_checked_itself() -> None:
    class Weird(str):
        pass

    assert is_valid_label_value("fine") == []
    assert is_valid_label_value(Weird("fine")) == []
    assert is_valid_label_value(Weird("not fine")) != []


def _rendered(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def test_metadata_errors_keep_kubes_order_and_paths() -> None:
    meta = {
        "name": "ok",
        "namespace": "default",
        "labels": {"bad key!": "v", "k": "bad value!"},
        "annotations": {"/x": "1"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}],
        "finalizers": ["orphan", "foregroundDeletion", "nope"],
        "managedFields": [
            {"manager": "m", "operation": "Update", "fieldsType": "FieldsV1"},
            {
                "manager": "bad\x00manager",
                "operation": "Patch",
                "fieldsType": "FieldsV2",
                "subresource": "s" * 257,
            },
        ],
    }
    got = _rendered(validate_object_meta(meta, True, name_is_dns_subdomain, new_path("metadata")))
    fields = [e.split(":", 1)[0] for e in got]
    assert fields == [
        "metadata.labels",
        "metadata.labels",
        "metadata.annotations",
        "metadata.ownerReferences",
        "metadata.finalizers",
        "metadata.managedFields[1].operation",
        "metadata.managedFields[1].fieldsType",
        "metadata.managedFields[1].manager",
        "metadata.managedFields[1].subresource",
        "metadata.finalizers[2]",
    ]
    assert "invalid character U+0000 (at position 3)" in got[7]
    # the same entries again: the valid manager was remembered, the invalid one is still reported
    again = _rendered(validate_managed_fields(meta["managedFields"], new_path("metadata", "managedFields")))
    assert again == got[5:9]


def test_metadata_update_errors_for_changed_identity_and_times() -> None:
    old = {"name": "a", "namespace": "n", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"}
    same_instant = dict(old, resourceVersion="1", creationTimestamp="2026-01-01T00:00:00+00:00")
    assert validate_object_meta_update(same_instant, old, new_path("metadata")) == []
    changed = dict(old, resourceVersion="1", uid="v", creationTimestamp="2026-01-02T00:00:00Z")
    changed["deletionGracePeriodSeconds"] = 3
    assert _rendered(validate_object_meta_update(changed, old, new_path("metadata"))) == [
        'metadata.uid: Invalid value: "v": field is immutable',
        'metadata.creationTimestamp: Invalid value: "2026-01-02T00:00:00Z": field is immutable',
        "metadata.deletionGracePeriodSeconds: Invalid value: 3: field is immutable",
    ]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
            "cannot unmarshal string into Go struct field ContainerPort.spec.containers[0].ports[0].containerPort of type int32",
        ),
        (
            {"metadata": {"labels": {"a": 1}}},
            "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels[a] of type string",
        ),
        (
            {"spec": {"hostNetwork": 1}},
            "cannot unmarshal number into Go struct field PodSpec.spec.hostNetwork of type bool",
        ),
        ({"spec": []}, "cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec"),
        ([], "cannot unmarshal array into Go value of type v1.Pod"),
    ],
)
def test_typecheck_names_the_first_wrong_value(obj: Any, message: str) -> None:
    with pytest.raises(errors.StatusError) as e:
        check_kind_types("", "v1", "Pod", obj)
    assert e.value.code == 400
    assert message in e.value.status()["message"]


def test_typecheck_accepts_integral_floats_and_fills_null_elements() -> None:
    obj: dict[str, Any] = {
        "spec": {"priority": 5.0, "tolerations": [None]},
        "metadata": {"labels": {"a": None}},
    }
    check_kind_types("", "v1", "Pod", obj)
    assert obj["spec"]["tolerations"] == [{}]
    assert obj["metadata"]["labels"] == {"a": ""}


def test_strategic_merge_copies_the_original_unless_told_it_is_private() -> None:
    original = {"status": {"phase": "Pending"}, "spec": {"nodeName": "n"}}
    patch = {"status": {"phase": "Running"}}
    out = strategic_merge(original, patch, None)
    assert out == {"status": {"phase": "Running"}, "spec": {"nodeName": "n"}}
    assert original["status"]["phase"] == "Pending"
    private = {"status": {"phase": "Pending"}}
    assert strategic_merge(private, patch, None, copy_original=False) == {"status": {"phase": "Running"}}
    assert patch == {"status": {"phase": "Running"}}
