"""managedFields tracking on every write: the registry hook and the fast paths behind it.

The tracker's per-write path (:func:`updated_managed_fields`) skips equal subtrees, never walks
reset fields, memoizes schema facts, elements and (de)coded field sets, and does not copy the
object. These tests pin that all of that is invisible: same results as :func:`record_update`
and as a plain, unoptimized structured-merge-diff comparison, and no shared state leaking
between writes through the caches.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

import apiserver.patch.apply as apply_mod
from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import (
    APPLY,
    UPDATE,
    ManagerId,
    VersionedSet,
    _compare_excluding,
    compare_values,
    decode_managed_fields,
    default_reset_fields,
    encode_managed_fields,
    json_equal,
    record_update,
    updated_managed_fields,
)
from apiserver.patch.fieldpath import (
    FieldPathError,
    FieldSet,
    Path,
    field,
    field_schema,
    fields_of,
    item_schema,
    key,
    list_item_element,
    list_semantics,
    make_path,
    map_is_atomic,
    value,
)
from apiserver.patch.tracker import FieldTracker

POD = schema.for_gvk("", "v1", "Pod")
T0, T1, T2 = (f"2030-01-01T00:00:0{i}Z" for i in range(3))


def pod(name: str = "p", labels: dict[str, Any] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "b"}},
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}}},
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def stored(obj: Obj, uid: str = "uid-1") -> Obj:
    out = copy.deepcopy(obj)
    out["metadata"]["uid"] = uid
    return out


def entries(obj: Obj) -> list[Obj]:
    return obj["metadata"].get("managedFields") or []


def rd() -> Any:
    return SimpleNamespace(group="", version="v1", kind="Pod", api_version="v1", is_view=False)


# -- the registry hook --------------------------------------------------------------------------


def test_tracker_sets_what_record_update_would_and_nothing_else() -> None:
    tracker = FieldTracker()
    created = pod()
    expected = record_update(None, created, "b", schema_node=POD, now=T0, api_version="v1")
    tracker.on_create(rd(), created, SimpleNamespace(field_manager="b"), T0)
    assert created == expected

    live = stored(created)
    status = copy.deepcopy(live)
    status["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    expected = record_update(
        live, status, "kubelet", schema_node=POD, now=T1, api_version="v1", subresource="status"
    )
    tracker.on_update(rd(), live, status, SimpleNamespace(field_manager="kubelet"), "Update", "status", T1)
    assert status == expected
    assert [e["manager"] for e in entries(status)] == ["b", "kubelet"]

    live = stored(status)
    labelled = copy.deepcopy(live)
    labelled["metadata"]["labels"]["x"] = "y"
    expected = record_update(live, labelled, "ctl", schema_node=POD, now=T2, api_version="v1")
    tracker.on_update(rd(), live, labelled, SimpleNamespace(field_manager="ctl"), "Update", "", T2)
    assert labelled == expected
    assert entries(labelled)[-1]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:x": {}}}}


def test_tracker_leaves_apply_writes_and_anonymous_writes_alone() -> None:
    tracker = FieldTracker()
    obj = pod()
    before = copy.deepcopy(obj)
    tracker.on_create(rd(), obj, SimpleNamespace(field_manager=""), T0)
    tracker.on_update(rd(), stored(before), obj, SimpleNamespace(field_manager="m"), "Apply", "", T0)
    assert obj == before


def test_tracker_falls_back_for_objects_without_a_metadata_object() -> None:
    tracker = FieldTracker()
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "spec": {}}
    tracker.on_create(rd(), obj, SimpleNamespace(field_manager="b"), T0)
    assert obj == {"apiVersion": "v1", "kind": "Pod", "spec": {}, "metadata": {}}
    assert updated_managed_fields(None, {"metadata": None}, "b", POD) is None
    assert updated_managed_fields(None, pod(), "", POD) is None


def test_a_status_write_keeps_the_other_entries_verbatim() -> None:
    live = stored(record_update(None, pod(), "b", schema_node=POD, now=T0, api_version="v1"))
    new = copy.deepcopy(live)
    new["status"]["phase"] = "Running"
    out = record_update(live, new, "kubelet", schema_node=POD, now=T1, api_version="v1", subresource="status")
    assert entries(out)[0] == entries(live)[0]
    assert entries(out)[1]["fieldsV1"] == {"f:status": {"f:phase": {}}}
    assert entries(out)[1]["time"] == T1


def test_no_copy_path_does_not_modify_its_inputs_and_returns_fresh_entries() -> None:
    live = stored(record_update(None, pod(), "b", schema_node=POD, now=T0, api_version="v1"))
    new = copy.deepcopy(live)
    new["metadata"]["labels"]["x"] = "y"
    snapshot_live, snapshot_new = copy.deepcopy(live), copy.deepcopy(new)
    first = updated_managed_fields(live, new, "ctl", POD, T1, "v1")
    assert live == snapshot_live and new == snapshot_new
    assert first is not None
    # scribbling over the result must not leak into the next write through any cache
    for e in first:
        e["fieldsV1"].clear()
        e["manager"] = "scribbled"
    again = updated_managed_fields(live, new, "ctl", POD, T1, "v1")
    assert (
        again
        == record_update(live, new, "ctl", schema_node=POD, now=T1, api_version="v1")["metadata"][
            "managedFields"
        ]
    )
    assert all(e["fieldsV1"] for e in again)


# -- the comparison against a plain structured-merge-diff walk -----------------------------------

_MISSING: Any = object()


def _reference_compare(lhs: Any, rhs: Any, node: Any, path: Path, out: dict[str, set[Path]]) -> None:
    """``TypedValue.Compare`` as first written: walk everything, no shortcuts."""
    present = [v for v in (lhs, rhs) if v is not _MISSING and v is not None]
    leaf = True
    if present and all(isinstance(v, dict) for v in present):
        lm = lhs if isinstance(lhs, dict) else {}
        rm = rhs if isinstance(rhs, dict) else {}
        if not map_is_atomic(node) and (lm or rm):
            leaf = False
            for k in [*lm, *(k for k in rm if k not in lm)]:
                child = field_schema(node, k)[0]
                _reference_compare(lm.get(k, _MISSING), rm.get(k, _MISSING), child, (*path, field(k)), out)
    elif present and all(isinstance(v, list) for v in present):
        ll = lhs if isinstance(lhs, list) else []
        rl = rhs if isinstance(rhs, list) else []
        semantics = list_semantics(node)
        if semantics[0] != "atomic" and (ll or rl):
            leaf = False

            def element(it: Any) -> Any:
                try:
                    return list_item_element(it, node, semantics)
                except ValueError:
                    return None

            l_map: dict[Any, Any] = {}
            for it in ll:
                pe = element(it)
                if pe is not None:
                    l_map.setdefault(pe, it)
            seen: set[Any] = set()
            for it in rl:
                pe = element(it)
                if pe is None or pe in seen:
                    continue
                seen.add(pe)
                _reference_compare(l_map.get(pe, _MISSING), it, item_schema(node), (*path, pe), out)
            for pe, it in l_map.items():
                if pe not in seen:
                    _reference_compare(it, _MISSING, item_schema(node), (*path, pe), out)
    if not path:
        return
    if lhs is _MISSING:
        out["added"].add(path)
    elif rhs is _MISSING:
        out["removed"].add(path)
    elif leaf and not json_equal(lhs, rhs):
        out["modified"].add(path)


def reference(lhs: Any, rhs: Any, node: Any, ignored: FieldSet | None = None) -> dict[str, FieldSet]:
    out: dict[str, set[Path]] = {"added": set(), "modified": set(), "removed": set()}
    _reference_compare(lhs, rhs, node, (), out)
    sets = {name: FieldSet(paths) for name, paths in out.items()}
    if ignored is not None:
        sets = {name: fs.recursive_difference(ignored) for name, fs in sets.items()}
    return sets


def _random_pod(rnd: random.Random) -> Obj:
    scalars = ["a", "b", 0, 1, True, False, None, 1.0, -0.0, ""]
    obj = pod(labels={k: rnd.choice(scalars) for k in rnd.sample(["app", "x", "y"], rnd.randint(0, 3))})
    c = obj["spec"]["containers"][0]
    if rnd.random() < 0.5:
        c["ports"] = [{"containerPort": rnd.choice([80, 81])} for _ in range(rnd.randint(0, 3))]
    if rnd.random() < 0.5:
        c["env"] = [
            {"name": rnd.choice("AB"), "value": rnd.choice(scalars)} for _ in range(rnd.randint(0, 3))
        ]
    if rnd.random() < 0.3:
        obj["spec"]["containers"].append({"name": rnd.choice(["c", "d"]), "image": rnd.choice(scalars)})
    if rnd.random() < 0.3:
        obj["metadata"]["finalizers"] = rnd.sample(["a/b", "c/d", "e/f"], rnd.randint(0, 3))
    if rnd.random() < 0.3:
        obj["spec"]["nodeSelector"] = rnd.choice([None, {}, {"k": rnd.choice(scalars)}])
    if rnd.random() < 0.3:
        obj["status"]["conditions"] = [{"type": rnd.choice(["Ready", "X"]), "status": rnd.choice(scalars)}]
    if rnd.random() < 0.2:
        obj["unknown"] = {"u": [rnd.choice(scalars)], "v": {"w": rnd.choice(scalars)}}
    return obj


def _maps_in(v: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(v, dict):
        out.append(v)
        for x in v.values():
            _maps_in(x, out)
    elif isinstance(v, list):
        for x in v:
            _maps_in(x, out)


def _mutate(rnd: random.Random, obj: Obj) -> Obj:
    out = copy.deepcopy(obj)
    for _ in range(rnd.randint(0, 3)):
        maps: list[dict[str, Any]] = []
        _maps_in(out, maps)
        target = rnd.choice(maps)
        if target and rnd.random() < 0.4:
            del target[rnd.choice(list(target))]
        else:
            name = rnd.choice([*target, "app", "phase", "z"]) if target else "z"
            target[name] = rnd.choice(["a", 1, True, None, {}, [], {"q": 1}, [1]])
    return out


def random_pod_field_sets(rnd: random.Random, n: int) -> Iterator[tuple[int, FieldSet]]:
    """The field sets of ``n`` random, mutated pods (those a field path error leaves out are
    skipped), with their draw's index: the random input of the field-set encoding tests."""
    for i in range(n):
        obj = _mutate(rnd, _random_pod(rnd))
        try:
            fs = fields_of(obj, POD)
        except FieldPathError:
            continue
        yield i, fs


@pytest.mark.parametrize("seed", range(4))
def test_comparison_matches_a_full_walk(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(150):
        a = _random_pod(rnd)
        b = _mutate(rnd, a) if rnd.random() < 0.8 else json.loads(json.dumps(a))
        got = compare_values(a, b, POD)
        want = reference(a, b, POD)
        assert (got.added, got.modified, got.removed) == (want["added"], want["modified"], want["removed"])
        for ignored in (default_reset_fields(""), default_reset_fields("status")):
            excluded = got.exclude(ignored)
            want = reference(a, b, POD, ignored)
            assert (excluded.added, excluded.modified, excluded.removed) == (
                want["added"],
                want["modified"],
                want["removed"],
            )


#: Reset fields a strategy may pass: top-level, nested under a field, under a list item, mixed.
_RESETS = [
    FieldSet([make_path("status")]),
    FieldSet([make_path("spec"), make_path("metadata", "deletionTimestamp")]),
    FieldSet([make_path("metadata", "labels", "app"), make_path("status", "conditions")]),
    FieldSet([make_path("spec", "containers", key({"name": "c"}), "image"), make_path("unknown", "u")]),
    FieldSet([make_path("metadata", "finalizers", value("a/b")), make_path("spec", "nodeSelector")]),
]


@pytest.mark.parametrize("seed", range(3))
def test_the_walk_that_skips_reset_fields_matches_a_full_walk_then_excluding(seed: int) -> None:
    """The skip trie (fields keyed by name, list items by element) leaves out exactly what
    excluding the reset fields from a full comparison does, at any depth."""
    rnd = random.Random(seed)
    for _ in range(120):
        a = _random_pod(rnd)
        b = _mutate(rnd, a) if rnd.random() < 0.8 else json.loads(json.dumps(a))
        for ignored in _RESETS:
            got = _compare_excluding(a, b, POD, ignored)
            want = reference(a, b, POD, ignored)
            assert (got.added, got.modified, got.removed) == (
                want["added"],
                want["modified"],
                want["removed"],
            )


def test_entries_are_ordered_apply_first_then_by_time_manager_version_subresource() -> None:
    fs = FieldSet([make_path("metadata", "labels", "app")])
    managers = {
        ManagerId("z", UPDATE, "v1"): VersionedSet(fs, "v1", False, T1),
        ManagerId("b", UPDATE, "v1", "status"): VersionedSet(fs, "v1", False, T0),
        ManagerId("b", UPDATE, "v1"): VersionedSet(fs, "v1", False, T0),
        ManagerId("a", UPDATE, "v2"): VersionedSet(fs, "v2", False, T0),
        ManagerId("a", UPDATE, "v1"): VersionedSet(fs, "v1", False, T0),
        ManagerId("y", APPLY, ""): VersionedSet(fs, "v1", True, T2),
        ManagerId("n", UPDATE, "v1"): VersionedSet(fs, "v1", False, None),
    }
    got = [
        (e["operation"], e["manager"], e["apiVersion"], e.get("subresource"))
        for e in encode_managed_fields(managers)
    ]
    assert got == [
        ("Apply", "y", "v1", None),
        ("Update", "n", "v1", None),  # no time sorts as the earliest
        ("Update", "a", "v1", None),
        ("Update", "a", "v2", None),
        ("Update", "b", "v1", None),
        ("Update", "b", "v1", "status"),
        ("Update", "z", "v1", None),
    ]
    assert decode_managed_fields(encode_managed_fields(managers)) == managers


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (True, 1),  # == says equal, JSON does not
        (False, 0),
        ([True], [1]),
        ("a", type("Sub", (str,), {})("a")),  # exact types, as json_equal insists
        (float("nan"), float("nan")),  # never equal, even to itself
    ],
)
def test_equal_looking_subtrees_are_still_compared_exactly(old: Any, new: Any) -> None:
    lhs = {"metadata": {"annotations": {"k": old}}, "spec": {"x": {"y": old}}}
    rhs = {"metadata": {"annotations": {"k": new}}, "spec": {"x": {"y": new}}}
    got = compare_values(lhs, rhs, POD)
    assert got.modified == reference(lhs, rhs, POD)["modified"]
    assert make_path("metadata", "annotations", "k") in got.modified
    # the very same object on both sides: only NaN differs from itself
    same = compare_values(lhs, lhs, POD)
    assert same.modified == reference(lhs, lhs, POD)["modified"]


def test_an_update_is_not_taken_as_a_change_of_reset_fields() -> None:
    live = stored(record_update(None, pod(), "b", schema_node=POD, now=T0, api_version="v1"))
    new = copy.deepcopy(live)
    new["status"] = {"phase": "Failed"}  # the main resource resets status: not owned
    new["spec"]["containers"][0]["image"] = "nginx:2"
    out = record_update(live, new, "ctl", schema_node=POD, now=T1, api_version="v1")
    ctl = FieldSet.from_fields_v1(entries(out)[-1]["fieldsV1"])
    assert set(ctl) == {make_path("spec", "containers", key({"name": "c"}), "image")}


# -- the memo tables -------------------------------------------------------------------------------


def test_decoded_field_sets_are_shared_and_encodings_are_fresh() -> None:
    doc = {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}}
    fs = FieldSet.from_fields_v1(doc)
    assert FieldSet.from_fields_v1(copy.deepcopy(doc)) is fs
    first = fs.to_fields_v1()
    first["f:spec"].clear()
    assert fs.to_fields_v1() == doc
    assert FieldSet(set(fs)).to_fields_v1() == doc
    with pytest.raises(ValueError):
        FieldSet.from_fields_v1({"f:a": 1})
    with pytest.raises(ValueError):
        FieldSet.from_fields_v1({"f:a": 1})


def test_set_operations_that_change_nothing_keep_the_instance() -> None:
    fs = FieldSet([make_path("a"), make_path("b", "c")])
    assert fs - FieldSet([make_path("z")]) is fs
    assert fs | FieldSet([make_path("a")]) is fs
    assert fs.recursive_difference(FieldSet([make_path("z")])) is fs
    assert fs.recursive_difference(FieldSet([make_path("b")])) == FieldSet([make_path("a")])
    assert fs.recursive_difference(FieldSet([make_path("b"), make_path("a", "x")])) == FieldSet(
        [make_path("a")]
    )


def test_memoized_elements_keep_values_that_compare_equal_apart() -> None:
    assert key({"port": True}).serialize() == 'k:{"port":true}'
    assert key({"port": 1}).serialize() == 'k:{"port":1}'
    assert key({"port": 1.0}).serialize() == 'k:{"port":1.0}'
    assert value(0.0).serialize() == "v:0.0"
    assert value(-0.0).serialize() == "v:-0.0"
    assert value(False).serialize() == "v:false"
    assert value(0).serialize() == "v:0"
    assert field("x") is field("x")


def test_schema_facts_follow_the_node_not_its_address() -> None:
    for _ in range(50):
        # short-lived schema nodes: a recycled id() must not answer with another node's facts
        atomic = {
            "type": "object",
            "x-kubernetes-map-type": "atomic",
            "properties": {"a": {"type": "string"}},
        }
        assert map_is_atomic(atomic) and field_schema(atomic, "a") == ({"type": "string"}, True)
        del atomic
        granular = {"type": "object", "additionalProperties": {"type": "integer"}}
        assert not map_is_atomic(granular) and field_schema(granular, "a") == ({"type": "integer"}, False)
        del granular
        listing = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
        assert list_semantics(listing) == ("map", ("k",))
        del listing


def test_creates_from_one_template_share_walks_but_not_types() -> None:
    def ports_of(port: Any) -> list[str]:
        obj = pod()
        obj["spec"]["containers"][0]["ports"] = [{"containerPort": port}]
        out = record_update(None, obj, "b", schema_node=POD, now=T0, api_version="v1")
        container = entries(out)[0]["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}']
        return [k for k in container["f:ports"] if k != "."]

    assert ports_of(80) == ['k:{"containerPort":80,"protocol":"TCP"}']
    assert ports_of(80) == ['k:{"containerPort":80,"protocol":"TCP"}']
    assert ports_of(80.0) == ['k:{"containerPort":80.0,"protocol":"TCP"}']
    assert ports_of(True) == ['k:{"containerPort":true,"protocol":"TCP"}']


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_values_that_cannot_name_an_item_fail_a_write_even_under_reset_fields(bad: float) -> None:
    # Reset fields are not walked for their paths, but a value in them that cannot be keyed
    # (YAML can deliver .nan/.inf) still fails the write, as the full comparison did.
    live = stored(record_update(None, pod(), "b", schema_node=POD, now=T0, api_version="v1"))
    live["spec"]["containers"][0]["name"] = bad
    new = copy.deepcopy(live)
    new["status"]["phase"] = "Running"
    with pytest.raises(ValueError):
        record_update(live, new, "kubelet", schema_node=POD, now=T1, api_version="v1", subresource="status")
    live["spec"]["containers"][0]["name"] = "c"
    live["status"]["conditions"] = [{"type": bad, "status": "True"}]
    new = copy.deepcopy(live)
    new["metadata"]["labels"]["x"] = "y"
    with pytest.raises(ValueError):
        record_update(live, new, "ctl", schema_node=POD, now=T1, api_version="v1")


def test_per_object_maps_of_scalars_are_walked_without_crowding_out_the_template_walks() -> None:
    # An Event's involvedObject/source (a pod's labels) differ from object to object: their
    # paths are one per key, and memoizing them only evicted the templates' walks.
    event = schema.for_gvk("", "v1", "Event")
    apply_mod._WALKS.clear()
    apply_mod._CREATED.clear()  # else the pod's create is answered by its shape, without a walk
    record_update(None, pod(), "b", schema_node=POD, now=T0, api_version="v1")
    template_walks = set(apply_mod._WALKS)
    assert template_walks
    for i in range(2 * apply_mod._MEMO_ENTRIES):
        obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"e{i}", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": f"p{i}", "uid": f"u{i}", "fieldPath": None},
            "source": {"component": "kubelet", "host": f"n{i}"},
            "reason": "Started",
            "count": 1,
        }
        out = record_update(None, obj, "kubelet", schema_node=event, now=T0, api_version="v1")
        fields = entries(out)[0]["fieldsV1"]
        assert fields["f:involvedObject"] == {}  # an ObjectReference is an atomic struct
        assert fields["f:source"] == {".": {}, "f:component": {}, "f:host": {}}
        assert fields["f:count"] == {} and fields["f:reason"] == {}
    assert template_walks <= set(apply_mod._WALKS)
