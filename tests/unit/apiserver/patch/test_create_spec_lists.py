"""A create whose ``spec`` lists name the object itself (:mod:`apiserver.patch.createlists`).

Each StatefulSet's Workload names its PodGroup template after the set, so no two Workloads
share a shape; their entries are now the remembered rest of the object joined with the lists'
subtrees walked on their own. Every entry, stored (shared trees) or dry run (fresh trees), must
equal the unoptimized reference walk byte for byte, key order included, whatever the memo
holds when the object arrives.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

import apiserver.patch.apply as apply_mod
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.createlists import split_spec_lists
from apiserver.patch.fieldpath import FieldSet

from .test_create_fields_memo import _reference_entries
from .test_tracker import _mutate, _random_pod

WORKLOAD = schema.for_gvk("scheduling.k8s.io", "v1beta1", "Workload")
POD = schema.for_gvk("", "v1", "Pod")
T0 = "2030-01-01T00:00:00Z"


def _shared(fs: FieldSet) -> Any:
    return fs.to_fields_v1()


def _workload(rnd: random.Random, i: int) -> dict[str, Any]:
    """A Workload as the StatefulSet controller makes one, with random variations: several or
    duplicate templates, items without their key, odd scalars, an empty list, extra spec lists,
    a spec holding nothing but lists, owner references or none."""
    names = [f"gang-{i}", f"gang-{rnd.randint(0, 3)}", "x", 'q"<&>\u00e9']
    templates: list[Any] = []
    for _ in range(rnd.choice([1, 1, 1, 2, 3])):
        t: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": rnd.choice([1, 3, 3.0, True, "3"])}}}
        r = rnd.random()
        if r < 0.9:
            t["name"] = rnd.choice(names) if rnd.random() < 0.5 else names[0]
        elif r < 0.95:
            t["name"] = rnd.choice([1, True, 2.5])
        if rnd.random() < 0.2:
            t["schedulingPolicy"] = {"basic": {}}
        templates.append(t)
    spec: dict[str, Any] = {}
    if rnd.random() < 0.9:
        spec["controllerRef"] = {"apiGroup": "apps", "kind": "StatefulSet", "name": f"gang-{i}"}
    spec["podGroupTemplates"] = templates if rnd.random() < 0.95 else []
    if rnd.random() < 0.2:
        spec["extra"] = [f"v-{i}", rnd.choice(["a", 1])]  # not in the schema: a granular field
    if rnd.random() < 0.1:
        spec["podGroupTemplates"] = [{"name": f"n{i}", "schedulingPolicy": {"gang": {"minCount": None}}}]
    meta: dict[str, Any] = {"name": f"gang-{i}-{rnd.getrandbits(32):x}", "namespace": "bench"}
    if rnd.random() < 0.5:
        meta["annotations"] = {"scheduling.k8s.io/managed-by": "statefulset-controller"}
    if rnd.random() < 0.7:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": f"gang-{i}",
                "uid": f"u-{i}",
                "controller": True,
            }
        ]
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta, "spec": spec}


def _check(obj: dict[str, Any], node: Any, api_version: str, rnd: random.Random) -> None:
    want = orjson.dumps(_reference_entries(obj, node))
    for stored in rnd.sample([True, False], 2):  # either may meet the shape first
        kept = copy.deepcopy(obj)
        got = updated_managed_fields(None, obj, "m", node, T0, "v1", fields_v1=_shared if stored else None)
        assert orjson.dumps(got) == want
        assert obj == kept  # the created object is not modified
        if got and not stored:  # a dry run's response is its client's: changing it changes nothing kept
            got[0]["fieldsV1"].setdefault("f:spec", {})["f:x"] = {}


@pytest.mark.parametrize("seed", range(4))
def test_workloads_of_every_set_record_the_full_walk_byte_for_byte(seed: int) -> None:
    rnd = random.Random(seed)
    apply_mod._CREATED.clear()
    for i in range(300):
        _check(_workload(rnd, i), WORKLOAD, "scheduling.k8s.io/v1beta1", rnd)


@pytest.mark.parametrize("seed", range(4))
def test_pods_with_random_spec_lists_record_the_full_walk_byte_for_byte(seed: int) -> None:
    rnd = random.Random(100 + seed)
    apply_mod._CREATED.clear()
    pool = []
    for _ in range(60):
        a = _mutate(rnd, _random_pod(rnd))
        if isinstance(a.get("metadata"), dict):
            pool.append(a)
    for _ in range(400):  # shapes recur: the full shape, the rest's, or neither is known
        _check(copy.deepcopy(rnd.choice(pool)), POD, "v1", rnd)


def test_one_rest_shape_for_all_sets_and_no_one_off_entries() -> None:
    apply_mod._CREATED.clear()
    apply_mod._SPEC_LISTS.clear()
    refs = {"apiVersion": "apps/v1", "kind": "StatefulSet", "controller": True}
    for i in range(200):
        wl = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "name": f"gang-{i}",
                "namespace": "bench",
                "ownerReferences": [{**refs, "name": f"gang-{i}", "uid": f"u-{i}"}],
            },
            "spec": {
                "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": f"gang-{i}"},
                "podGroupTemplates": [{"name": f"gang-{i}", "schedulingPolicy": {"gang": {"minCount": 3}}}],
            },
        }
        got = updated_managed_fields(None, wl, "m", WORKLOAD, T0, "v1", fields_v1=_shared)
        assert got == _reference_entries(wl, WORKLOAD)
        tmpl = got[0]["fieldsV1"]["f:spec"]["f:podGroupTemplates"]
        assert list(tmpl) == [".", f'k:{{"name":"gang-{i}"}}']
    # the rest of the object (one shape) and the first set's whole shape; nothing per set
    assert len(apply_mod._CREATED._table) == 2
    assert len(apply_mod._SPEC_LISTS._table) == 1  # one template for the sets' templates


def _created_templates(name: str, stored: bool) -> Any:
    wl = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": name},
            "podGroupTemplates": [{"name": name, "schedulingPolicy": {"gang": {"minCount": 3}}}],
        },
    }
    got = updated_managed_fields(None, wl, "m", WORKLOAD, T0, "v1", fields_v1=_shared if stored else None)
    assert orjson.dumps(got) == orjson.dumps(_reference_entries(wl, WORKLOAD))
    return got[0]["fieldsV1"]["f:spec"]["f:podGroupTemplates"]


def test_stored_sets_share_the_item_subtree_and_a_dry_run_gets_its_own() -> None:
    apply_mod._CREATED.clear()
    apply_mod._SPEC_LISTS.clear()
    _created_templates("a", True)  # the first of its rest shape: walked in full
    b, c = _created_templates("b", True), _created_templates("c", True)
    assert b['k:{"name":"b"}'] is c['k:{"name":"c"}']  # stored objects are never modified
    dry = _created_templates("d", False)
    assert dry['k:{"name":"d"}'] == b['k:{"name":"b"}'] and dry['k:{"name":"d"}'] is not b['k:{"name":"b"}']
    dry['k:{"name":"d"}']["f:extra"] = {}  # a dry run's response is its client's to modify
    assert "f:extra" not in _created_templates("e", True)['k:{"name":"e"}']
    # names the template cannot write (escaped by Go's JSON) take the walk, with the same result
    # (each checked against the reference walk byte for byte in _created_templates)
    for odd in ('q"x', "a<b", "\u00e9t\u00e9", "k&", "", "x" * 300):
        for stored in (True, False):
            _created_templates(odd, stored)


def test_split_leaves_the_object_alone_and_keeps_a_non_empty_spec() -> None:
    obj = {"metadata": {}, "spec": {"a": [1], "b": 2, "c": [], "d": [{"x": 1}]}}
    kept = copy.deepcopy(obj)
    rest, lists = split_spec_lists(obj) or ({}, [])
    assert rest == {"metadata": {}, "spec": {"b": 2, "c": []}}
    assert lists == [("a", [1]), ("d", [{"x": 1}])]
    assert obj == kept
    assert split_spec_lists({"spec": {"a": [1]}}) is None  # spec would be left empty
    assert split_spec_lists({"spec": {"a": [], "b": 1}}) is None  # nothing to split off
    assert split_spec_lists({"spec": None}) is None
