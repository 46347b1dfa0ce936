"""A strategic merge patch's new subtree (a key the stored object lacks) is taken as it is when
it holds no directive and no ``null`` (``strategic._plain``): the result is exactly what the
general rebuild gives - the same object, key order included, or the same error - on random
stored objects and random patches (nested maps and lists, ``null`` s, directives at any depth),
and the result never shares a value with the caller's patch."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.errors import StatusError
from apiserver.openapi import schema
from apiserver.patch import strategic
from apiserver.patch.strategic import strategic_merge

NODES = {
    "Pod": schema.for_gvk("", "v1", "Pod"),
    "PodGroup": schema.for_gvk("scheduling.k8s.io", "v1beta1", "PodGroup"),
}

KEYS = st.sampled_from(
    [
        "status",
        "conditions",
        "type",
        "reason",
        "message",
        "labels",
        "a",
        "b",
        "name",
        "containers",
        "$patch",
        "$retainKeys",
        "$setElementOrder/conditions",
        "$deleteFromPrimitiveList/finalizers",
    ]
)
DIRECTIVE_VALUES = st.sampled_from(["delete", "replace", "merge", "bogus"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x", "PodScheduled", "Ready"])
)


def _values() -> Any:
    return st.recursive(
        st.one_of(SCALARS, DIRECTIVE_VALUES),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(KEYS, inner, max_size=4),
        ),
        max_leaves=12,
    )


def _outcome(original: dict[str, Any], patch: dict[str, Any], node: Any) -> tuple[str, Any]:
    try:
        merged = strategic_merge(original, patch, node)
    except StatusError as e:
        return ("error", (e.code, e.reason, str(e)))
    return ("ok", merged)


def _general(monkeypatch: pytest.MonkeyPatch, *args: Any) -> tuple[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(strategic, "_plain", lambda value: False)
        m.setattr(strategic, "_plain_list", lambda value: False)
        return _outcome(*args)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(sorted(NODES)),
    stored=st.dictionaries(st.sampled_from(["metadata", "spec", "a"]), _values(), max_size=2),
    patch=st.dictionaries(
        st.sampled_from(["status", "metadata", "spec", "b", "$patch"]), _values(), max_size=3
    ),
)
def test_a_new_subtree_merges_as_the_general_rebuild_gives(
    monkeypatch: pytest.MonkeyPatch, kind: str, stored: dict[str, Any], patch: dict[str, Any]
) -> None:
    node = NODES[kind]
    sent = copy.deepcopy(patch)
    fast = _outcome(stored, patch, node)
    general = _general(monkeypatch, stored, patch, node)
    if fast[0] == "ok" and general[0] == "ok":
        assert orjson.dumps(fast[1]) == orjson.dumps(general[1])
        # the caller's patch is never part of the result
        _scribble(fast[1])
        assert patch == sent
    else:
        assert fast == general


def _scribble(value: Any) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _scribble(v)
        value["scribbled"] = True
    elif isinstance(value, list):
        for v in value:
            _scribble(v)
        value.append("scribbled")


def test_a_first_condition_is_taken_whole_and_a_null_or_directive_inside_is_still_cleaned() -> None:
    node = NODES["PodGroup"]
    cond = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}
    patch = {"status": {"conditions": [cond]}}
    assert strategic_merge({"spec": {}}, patch, node) == {"spec": {}, "status": {"conditions": [cond]}}
    assert strategic._plain(patch) and strategic._plain_list([cond, None, 1])
    nulls = {"status": {"conditions": [{**cond, "message": None}], "x": None}}
    assert not strategic._plain(nulls)
    assert strategic_merge({}, nulls, node) == {
        "status": {"conditions": [{k: cond[k] for k in cond if k != "message"}]}
    }
    assert not strategic._plain({"status": {"conditions": [{**cond, "$patch": "delete"}]}})
    assert strategic_merge({}, {"status": {"conditions": [{**cond, "$patch": "delete"}]}}, node) == {
        "status": {"conditions": []}
    }
