"""A stored create's managedFields entry for an object with owner references, from its template
(:mod:`apiserver.patch.ownedentry`).

The template is only sound if it gives exactly what the general path gives. Random pods,
PodGroups, Workloads (their one template named after the set) and ControllerRevisions (a few
shapes, their scalars rewritten, as a controller's objects are) with one to three owner references (plain uids from a small pool, in any order;
``controller``/``blockOwnerDeletion`` present or not, true or false; now and then an odd uid,
a repeated uid, a ``null`` or a value of another type) are created through the templates and
through :func:`updated_managed_fields` with the stored write's shared trees, and the entries
compared as text (key order included), for varied managers, API versions and times. A join
placed wrongly, or items in the wrong order, fails that comparison.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch import fieldpath, ownedentry
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.createentry import CreatedEntryTemplates
from apiserver.patch.fieldpath import FieldSet
from apiserver.patch.sharedtrees import shared_fields_v1
from apiserver.storage import compact

from .test_create_entry_template import _text, template_entries
from .test_create_fields_memo import _reblank
from .test_tracker import _random_pod

POD = schema.for_gvk("", "v1", "Pod")
PODGROUP = schema.for_gvk("scheduling.k8s.io", "v1beta1", "PodGroup")
REVISION = schema.for_gvk("apps", "v1", "ControllerRevision")
WORKLOAD = schema.for_gvk("scheduling.k8s.io", "v1beta1", "Workload")
UIDS = [f"00000000-0000-4000-8000-{i:012d}" for i in range(6)] + ["u1", "U-2", "a.b_c"]
ODD_UIDS: list[Any] = ['odd"uid', "ü", "", 7, None, "x" * 300]


def _ref(rnd: random.Random, uid: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": f"s{rnd.randint(0, 9)}",
        "uid": uid,
    }
    if rnd.random() < 0.85:  # as controllers write it
        ref["controller"] = ref["blockOwnerDeletion"] = True
    else:
        for k in ("controller", "blockOwnerDeletion"):
            if rnd.random() < 0.6:
                ref[k] = rnd.random() < 0.5
    roll = rnd.random()
    if roll < 0.03:
        ref["controller"] = rnd.choice([1, None, "yes", {"a": 1}])
    elif roll < 0.05:
        del ref["kind"]
    elif roll < 0.07:
        ref["extra"] = [1]
    return dict(rnd.sample(list(ref.items()), len(ref))) if rnd.random() < 0.05 else ref


def _refs(rnd: random.Random) -> list[Any]:
    n = rnd.choice([1, 1, 1, 2, 2, 3])
    uids: list[Any] = rnd.sample(UIDS, n)
    if rnd.random() < 0.05:
        uids[0] = rnd.choice(ODD_UIDS)
    if n > 1 and rnd.random() < 0.05:
        uids[1] = uids[0]  # a repeated uid: the general path keeps the first item only
    refs: list[Any] = [_ref(rnd, uid) for uid in uids]
    if rnd.random() < 0.02:
        refs.append(rnd.choice(["x", None, 1]))
    return refs


def _pod_group(rnd: random.Random) -> Obj:
    pg: Obj = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": f"w{rnd.randint(0, 99)}-w",
            "namespace": "default",
            "labels": {"scheduling.k8s.io/managed-by": "statefulset-controller"},
        },
        "spec": {
            "workloadRef": {"workloadName": "w", "templateName": "w"},
            "schedulingPolicy": rnd.choice([{"gang": {"minCount": 3}}, {"basic": {}}]),
        },
    }
    if rnd.random() < 0.3:
        pg["spec"]["priority"] = 5
    return pg


def _revision(rnd: random.Random) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": f"w-{rnd.randint(0, 99)}", "namespace": "default", "labels": {"app": "w"}},
        "data": {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "w"}}}}},
        "revision": rnd.choice([1, 2]),
    }


def _workload(rnd: random.Random, local: random.Random) -> Obj:
    """A Workload as the StatefulSet controller writes one: its one template named after the
    set (``rnd``: a name of many, so only the templated form recurs; ``local``: the shape)."""
    name = rnd.choice([f"w{rnd.randint(0, 999)}", f"w{rnd.randint(0, 999)}", "odd name", "w" * 300, ""])
    spec: Obj = {
        "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": name},
        "podGroupTemplates": [
            {"name": name, "schedulingPolicy": {"gang": {"minCount": local.choice([2, 3])}}}
        ],
    }
    roll = local.random()
    if roll < 0.2:
        spec["podGroupTemplates"][0]["x"] = local.choice([[1], {"a": "b"}])
    elif roll < 0.3:  # nothing else in spec: the list is not templated (the rest would be empty)
        del spec["controllerRef"]
    elif roll < 0.4:
        spec["podGroupTemplates"].append({"name": "b"})  # two items: not templated either
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _base(rnd: random.Random, i: int) -> tuple[Obj, Any]:
    """One of a few shapes per kind (a controller's objects recur), scalars rewritten."""
    local = random.Random(rnd.randint(0, 2))  # the shape's draw: few distinct ones
    roll = rnd.random()
    if roll < 0.4:
        obj, node = _random_pod(local), POD
    elif roll < 0.6:
        obj, node = _pod_group(local), PODGROUP
    elif roll < 0.8:
        obj, node = _workload(rnd, local), WORKLOAD
    else:
        obj, node = _revision(local), REVISION
    obj = _reblank(rnd, obj) if rnd.random() < 0.3 else obj
    if type(obj.get("metadata")) is not dict:
        obj["metadata"] = {"name": f"o{i}"}
    return obj, node


def _owned_objects(rnd: random.Random, n: int) -> list[tuple[Obj, Any]]:
    out = []
    refs: list[Any] = []
    for i in range(n):
        obj, node = _base(rnd, i)
        md = obj["metadata"]
        if refs and rnd.random() < 0.5:
            # a set's next object: the same owners (the last join is kept), now and then listed
            # in another order or one of them changed
            refs = copy.deepcopy(refs)
            if rnd.random() < 0.2:
                rnd.shuffle(refs)
            if rnd.random() < 0.2:
                refs[rnd.randrange(len(refs))] = _ref(rnd, rnd.choice(UIDS))
        else:
            refs = _refs(rnd)
        # the references at any position in metadata (the joined tree's order is canonical)
        items = list(md.items())
        at = len(items) if rnd.random() < 0.7 else rnd.randint(0, len(items))
        md.clear()
        md.update([*items[:at], ("ownerReferences", copy.deepcopy(refs)), *items[at:]])
        out.append((obj, node))
    return out


def _compare(seed: int, n: int = 600) -> tuple[int, int, int, int]:
    """Creates ``n`` random owned objects both ways; ``(mismatches, creates answered by a
    template, general path calls, Workload creates answered by a template)``."""
    rnd = random.Random(seed)
    templates = CreatedEntryTemplates()
    mismatches = general_calls = answered = workloads = 0
    for obj, node in _owned_objects(rnd, n):
        manager = rnd.choice(["kube-controller-manager", "m"])
        api_version = rnd.choice(["v1", "apps/v1"])
        now = rnd.choice(["2026-12-05T09:00:00Z", "2026-12-05T09:00:01Z", ""])
        try:
            want = updated_managed_fields(
                None, copy.deepcopy(obj), manager, node, now, api_version, fields_v1=shared_fields_v1
            )
        except fieldpath.FieldPathError:
            continue  # refused by the general path: never stored
        got, asked_general = template_entries(templates, obj, node, manager, api_version, now)
        mismatches += _text(got) != _text(want)
        general_calls += asked_general
        answered += not asked_general
        workloads += not asked_general and node is WORKLOAD
    return mismatches, answered, general_calls, workloads


@pytest.mark.parametrize("seed", range(4))
def test_owned_template_entries_equal_the_general_paths_on_random_objects(seed: int) -> None:
    mismatches, answered, general_calls, workloads = _compare(seed)
    assert mismatches == 0
    assert workloads > 10  # the templated lists were exercised
    # most creates were answered by a template (the test exercised it), not the general path
    assert answered > 150
    assert general_calls < 450


def _refs_first(tree: Obj, refs_tree: Obj) -> Obj:
    """A wrong join: ``f:ownerReferences`` first in ``f:metadata`` (before ``f:name``)."""
    out = dict(tree)
    meta = {k: v for k, v in (out.get("f:metadata") or {}).items() if k != "f:ownerReferences"}
    out["f:metadata"] = {"f:ownerReferences": refs_tree, **meta}
    return out


def _spoil_after_learning(monkeypatch: pytest.MonkeyPatch, name: str, spoilt: Any) -> None:
    """``ownedentry.<name>`` replaced by ``spoilt`` except while a template is learnt (so the
    learning check lets the templates in, and only their use is wrong)."""
    learning = False
    learn, right = ownedentry._learn, getattr(ownedentry, name)

    def learn_right(*a: Any) -> Any:
        nonlocal learning
        learning = True
        try:
            return learn(*a)
        finally:
            learning = False

    monkeypatch.setattr(ownedentry, "_learn", learn_right)
    monkeypatch.setattr(ownedentry, name, lambda *a: right(*a) if learning else spoilt(right, *a))


def test_a_join_in_the_wrong_place_fails_the_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    _spoil_after_learning(monkeypatch, "with_owner_references", lambda _, tree, refs: _refs_first(tree, refs))
    assert _compare(0, 300)[0] > 0


def test_references_out_of_uid_order_fail_the_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    def reversed_refs(right: Any, dot: Obj, refs: list[Any], items: tuple[Obj, ...]) -> Obj:
        return right(dot, refs[::-1], items[::-1])

    _spoil_after_learning(monkeypatch, "_refs_tree", reversed_refs)
    mismatches, answered, *_ = _compare(0, 300)
    assert 0 < mismatches < answered  # the several references' creates (one reference: in order)


def test_a_join_that_does_not_rebuild_the_general_paths_entry_is_never_learnt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Learning rebuilds the general path's answer from the template and keeps it only where
    the two are equal: with the join spoilt, nothing is learnt and every create takes the
    general path."""
    monkeypatch.setattr(ownedentry, "with_owner_references", _refs_first)
    mismatches, answered, *_ = _compare(0, 300)
    assert mismatches == 0
    assert answered == 0


def _pod(uid: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"p-{uid}",
            "namespace": "default",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": uid, "controller": True}
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


def _set_workload(i: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": f"w{i}",
            "namespace": "default",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": f"w{i}",
                    "uid": f"u{i}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": f"w{i}"},
            "podGroupTemplates": [{"name": f"w{i}", "schedulingPolicy": {"gang": {"minCount": 3}}}],
        },
    }


def test_each_sets_workload_is_answered_from_the_template_of_its_named_list() -> None:
    templates = CreatedEntryTemplates()
    for i in range(4):
        wl = _set_workload(i)
        want = updated_managed_fields(
            None, copy.deepcopy(wl), "kcm", WORKLOAD, "t0", "v1", fields_v1=shared_fields_v1
        )

        def general(wl: Obj = wl, i: int = i) -> Any:
            assert i < 2, "general path"  # learnt on the second set's Workload
            return updated_managed_fields(None, wl, "kcm", WORKLOAD, "t0", "v1", fields_v1=shared_fields_v1)

        got = templates.entries(wl, WORKLOAD, "kcm", "v1", "t0", general)
        assert _text(got) == _text(want)
    assert got is not None
    assert list(got[0]["fieldsV1"]["f:spec"]["f:podGroupTemplates"]) == [".", 'k:{"name":"w3"}']


def _general(obj: Obj, now: str = "t0") -> Any:
    return lambda: updated_managed_fields(None, obj, "kcm", POD, now, "v1", fields_v1=shared_fields_v1)


def test_a_shape_is_learnt_when_met_again_and_then_answers_every_owner() -> None:
    templates = CreatedEntryTemplates()
    first = templates.entries(_pod("a"), POD, "kcm", "v1", "t0", _general(_pod("a")))
    second = templates.entries(_pod("b"), POD, "kcm", "v1", "t0", _general(_pod("b")))
    # learnt: a third owner's pod (another uid) is answered without the general path
    third = templates.entries(_pod("c"), POD, "kcm", "v1", "t1", lambda: pytest.fail("general path"))
    assert first is not None and second is not None and third is not None
    assert third[0]["time"] == "t1"
    refs = third[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
    assert list(refs) == [".", 'k:{"uid":"c"}']
    # the rest of the tree is shared with the learnt one (stored entries are never modified)
    assert third[0]["fieldsV1"]["f:spec"] is second[0]["fieldsV1"]["f:spec"]


def test_a_template_entry_is_not_told_to_the_decoder_which_parses_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unlike the general path's joined entries, a template's join is not remembered for the
    decoder (its objects' status writes are keyed by their entries' text instead): the first
    update parses the stored tree, and gets what a parse of a copy gets."""
    templates = CreatedEntryTemplates()
    for uid in ("a", "b"):
        templates.entries(_pod(uid), POD, "kcm", "v1", "t0", _general(_pod(uid)))
    monkeypatch.setattr(fieldpath, "_JOINED", {})
    got = templates.entries(_pod("c"), POD, "kcm", "v1", "t0", lambda: pytest.fail("general path"))
    assert got is not None
    tree = got[0]["fieldsV1"]
    assert fieldpath._JOINED == {}
    decoded = FieldSet.from_fields_v1(tree, stored=True)
    monkeypatch.setattr(fieldpath, "_JOINED", {})
    monkeypatch.setattr(fieldpath, "_DECODED", {})
    whole = FieldSet.from_fields_v1(copy.deepcopy(tree))
    assert decoded.paths == whole.paths
    assert decoded.decodes_to_itself() and whole.decodes_to_itself()


def _counting_joins(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``ownedentry._join`` counted: the count is the one item of the list returned."""
    count = [0]
    join = ownedentry._join

    def counted(*a: Any) -> Any:
        count[0] += 1
        return join(*a)

    monkeypatch.setattr(ownedentry, "_join", counted)
    return count


def _learnt() -> CreatedEntryTemplates:
    """Templates that learnt ``_pod``'s shape (from two owners' pods, at ``t0``)."""
    templates = CreatedEntryTemplates()
    for uid in ("a", "b"):
        templates.entries(_pod(uid), POD, "kcm", "v1", "t0", _general(_pod(uid)))
    return templates


def test_a_sets_pods_share_one_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pods of one set name the same owners: joined once, even with another set's pods in
    between (a controller creates the pods of several sets at once), and equal to the general
    path's entry each time."""
    joins = _counting_joins(monkeypatch)
    templates = _learnt()
    joins[0] = 0  # learning rebuilt the join once
    trees = []
    for uid in ("c", "c", "c", "d", "d", "c"):
        monkeypatch.setattr(fieldpath, "_JOINED", {})
        got = templates.entries(_pod(uid), POD, "kcm", "v1", "t1", lambda: pytest.fail("general path"))
        assert got is not None
        trees.append(got[0]["fieldsV1"])
        assert _text(got) == _text(_general(_pod(uid), "t1")())
    assert joins[0] == 2  # c and d: c's pod after d's finds c's join kept
    assert trees[0] is trees[1] is trees[2] is trees[5] and trees[3] is trees[4]
    assert trees[3] is not trees[0]


def test_the_recent_joins_are_bounded_and_a_dropped_one_is_made_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    joins = _counting_joins(monkeypatch)
    templates = _learnt()
    first = templates.entries(_pod("o0"), POD, "kcm", "v1", "t1", lambda: pytest.fail("general path"))
    for i in range(1, ownedentry._JOINS + 1):  # as many other owners as the table holds
        templates.entries(_pod(f"o{i}"), POD, "kcm", "v1", "t1", lambda: pytest.fail("general path"))
    joins[0] = 0
    again = templates.entries(_pod("o0"), POD, "kcm", "v1", "t1", lambda: pytest.fail("general path"))
    assert joins[0] == 1  # the oldest join was dropped: made again
    assert first is not None and again is not None
    # (an equal tree, canonical as built: its text is not a key, see compact.canonical_as_built)
    assert _text(again) == _text(first) == _text(_general(_pod("o0"), "t1")())
    assert compact.is_canonical(again[0]["fieldsV1"])


def test_creates_of_one_second_with_one_tree_share_their_entry_list() -> None:
    """The list stored revisions would share anyway (apiserver.storage.sharedsubtrees) is
    handed out as one object, equal to a fresh one; another second or manager gets its own."""
    templates = _learnt()

    def entries(uid: str, now: str, manager: str = "kcm") -> Any:
        return templates.entries(_pod(uid), POD, manager, "v1", now, lambda: pytest.fail("general path"))

    one, two = entries("c", "t1"), entries("c", "t1")
    assert one is two
    assert _text(one) == _text(_general(_pod("c"), "t1")())
    later, other_owner = entries("c", "t2"), entries("d", "t1")
    assert later is not one and later[0]["time"] == "t2"
    assert other_owner is not one
    assert later[0]["fieldsV1"] is one[0]["fieldsV1"]  # the same join, another second
    other_manager = entries("c", "t1", "other")
    assert other_manager is not one and other_manager[0]["manager"] == "other"


def test_a_refused_shape_is_not_learnt_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ownedentry, "with_owner_references", _refs_first)
    calls = 0
    learn = ownedentry._learn

    def counted(*a: Any) -> Any:
        nonlocal calls
        calls += 1
        return learn(*a)

    monkeypatch.setattr(ownedentry, "_learn", counted)
    templates = CreatedEntryTemplates()
    for uid in "abcdef":
        got = templates.entries(_pod(uid), POD, "kcm", "v1", "t0", _general(_pod(uid)))
        assert _text(got) == _text(_general(_pod(uid))())
    assert calls == 1  # tried on the second sighting, refused, and then left to the general path
