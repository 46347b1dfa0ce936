"""A status write of an *owned* object from its transition's template (:mod:`apiserver.patch.owneruids`).

Each PodGroup names its own owners' uids in its create entry, so :mod:`.statusentry` keys its
stored entries' text without them and answers with the write's own stored entries. These tests
drive random PodGroup condition writes — one to three owner references with random uids (their
order in the stored text varies from object to object), stored objects with and without a
status, odd uids (escaped, numbers, a ``~``, keys of two fields), another manager owning a
status field, the writer's own earlier entry, entries a client wrote out of order — through one
:class:`StatusWriteTemplates` and through the general path, and compare the bytes of every
answer; they also check that the templates are used and what the key leaves out.
"""

from __future__ import annotations

import copy
import random
import uuid
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import EXACT_JSON
from apiserver.patch.owneruids import without_owner_uids
from apiserver.patch.statusentry import StatusWriteTemplates
from apiserver.patch.updateentry import UpdatedEntryTemplates
from tests.unit.apiserver.patch.test_status_entry_template import registry_answers_as_untemplated

PG = schema.for_gvk("scheduling.k8s.io", "v1beta1", "PodGroup")
API = "scheduling.k8s.io/v1beta1"
TIMES = ["2026-12-05T08:00:00Z", "2026-12-05T08:00:01Z", "2026-12-05T08:00:02Z"]
CONDITION = "PodGroupInitiallyScheduled"


def _uid(rnd: random.Random) -> Any:
    r = rnd.random()
    if r < 0.9:
        return str(uuid.UUID(int=rnd.getrandbits(128)))
    return rnd.choice(['a"b', "til~de", "n\u00e9", 7, "", "x" * 300])


def _stored_group(rnd: random.Random, i: int, others: float = 0.1, before: float = 0.1) -> Obj:
    """A PodGroup as its controller made it (owned by its set and Workload), maybe with a
    status, another manager's status field or the writer's own entry; as stored."""
    refs = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": f"s{i}",
            "uid": _uid(rnd),
            "controller": True,
        },
        {
            "apiVersion": API,
            "kind": "Workload",
            "name": f"s{i}",
            "uid": _uid(rnd),
            "blockOwnerDeletion": True,
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "name": f"c{i}", "uid": _uid(rnd)},
    ][: rnd.choice([1, 2, 2, 2, 3])]
    group: Obj = {
        "apiVersion": API,
        "kind": "PodGroup",
        "metadata": {
            "name": f"s{i}-0",
            "namespace": "default",
            "uid": f"pg-{i}",
            "resourceVersion": str(100 + i),
            "finalizers": ["scheduling.k8s.io/podgroup-protection"],
            "ownerReferences": refs,
        },
        "spec": {
            "workloadRef": {"workloadName": f"s{i}", "templateName": "gang"},
            "schedulingPolicy": {"gang": {"minCount": 3}},
        },
    }
    if rnd.random() < 0.3:
        group["status"] = rnd.choice([{}, {"conditions": []}])
    entries = updated_managed_fields(None, group, "kube-controller-manager", PG, TIMES[0], API)
    assert entries
    group["metadata"]["managedFields"] = entries
    for manager, p in (("other", others), ("kube-scheduler", before)):
        if rnd.random() < p:
            new = copy.deepcopy(group)
            cond = {"type": rnd.choice([CONDITION, "Other"]), "status": "False", "reason": "R", "message": ""}
            new["status"] = {"conditions": [cond]}
            group["metadata"]["managedFields"] = updated_managed_fields(
                group, new, manager, PG, TIMES[0], API, subresource="status"
            )
            group["status"] = new["status"]
    return orjson.loads(orjson.dumps(group))


def _write(rnd: random.Random, old: Obj) -> Obj:
    """The object the scheduler's condition write stores (before its managed fields)."""
    cond = {
        "type": CONDITION if rnd.random() < 0.9 else "Custom",
        "status": "True",
        "reason": "Scheduled",
        "message": rnd.choice(["", "", "", "placed"]),
        "lastTransitionTime": rnd.choice(TIMES),
    }
    conditions = [c for c in (old.get("status") or {}).get("conditions", []) if c["type"] != cond["type"]]
    return {**old, "metadata": dict(old["metadata"]), "status": {"conditions": [*conditions, cond]}}


def _general(old: Obj, new: Obj, now: str, fields_v1: Any = None) -> Any:
    return updated_managed_fields(
        old,
        new,
        "kube-scheduler",
        PG,
        now,
        API,
        subresource="status",
        fields_v1=fields_v1,
        old_is_stored=True,
    )


@pytest.mark.parametrize(("seed", "others", "before"), [(s, 0.1, 0.1) for s in range(8)] + [(8, 0.5, 0.5)])
def test_every_answer_equals_the_general_paths(seed: int, others: float, before: float) -> None:
    rnd = random.Random(seed)
    templates = StatusWriteTemplates()
    hits = 0
    for i in range(300):
        old = _stored_group(rnd, i, others, before)
        new = _write(rnd, old)
        now = rnd.choice(TIMES[1:])
        calls: list[int] = []

        def general(old: Obj = old, new: Obj = new, now: str = now, calls: list[int] = calls) -> Any:
            calls.append(1)
            return _general(old, new, now, UpdatedEntryTemplates().fields_v1)

        got = templates.entries(old, new, "kube-scheduler", API, PG, now, general)
        assert orjson.dumps(got) == orjson.dumps(_general(old, new, now)), (seed, i)
        hits += not calls
    assert hits > (50 if others < 0.5 else 5), hits  # the templates were used


def test_a_gangs_groups_are_answered_from_one_template() -> None:
    """Every set's PodGroup, created in one second and marked scheduled in another: all but the
    first three writes (the stored text seen, the key seen, learnt) are answered by the template, whichever order their owners' uids are in."""
    rnd = random.Random(5)
    templates = StatusWriteTemplates()
    general_calls = 0
    for i in range(100):
        old = _stored_group(rnd, i, 0.0, 0.0)
        old["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": kind,
                "name": f"s{i}",
                "uid": str(uuid.UUID(int=rnd.getrandbits(128))),
            }
            for kind in ("StatefulSet", "Workload")
        ]
        old.pop("status", None)
        del old["metadata"]["managedFields"]
        old["metadata"]["managedFields"] = updated_managed_fields(
            None, old, "kube-controller-manager", PG, TIMES[0], API
        )
        old = orjson.loads(orjson.dumps(old))
        new = _write(random.Random(0), old)  # one condition for all

        def general(old: Obj = old, new: Obj = new) -> Any:
            nonlocal general_calls
            general_calls += 1
            return _general(old, new, TIMES[1])

        got = templates.entries(old, new, "kube-scheduler", API, PG, TIMES[1], general)
        assert orjson.dumps(got) == orjson.dumps(_general(old, new, TIMES[1]))
    assert general_calls == 3, general_calls


def _entries_text(uids: list[str], extra: str = "") -> bytes:
    tree = {"f:metadata": {"f:ownerReferences": {".": {}, **{f'k:{{"uid":"{u}"}}': {} for u in uids}}}}
    if extra:
        tree["f:metadata"]["f:ownerReferences"][extra] = {}
    entry = {
        "manager": "m",
        "operation": "Update",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": tree,
    }
    return orjson.dumps([entry], option=EXACT_JSON)


def test_the_key_leaves_out_plain_uids_in_order_only() -> None:
    a = without_owner_uids(_entries_text(["0a", "1b"]))
    assert a is not None and a == without_owner_uids(_entries_text(["2c", "3d"]))
    assert b"0a" not in a and not a.startswith(b"[")
    assert without_owner_uids(_entries_text(["1b", "0a"])) is None  # not in the encoder's order
    assert without_owner_uids(_entries_text(["0a", "0b"]).replace(b"0b", b"0a")) is None
    assert without_owner_uids(_entries_text(["0a", "b~"])) is None
    assert without_owner_uids(_entries_text(['a"b'])) is None  # escaped
    assert without_owner_uids(_entries_text(["0a"], 'k:{"uid":7}')) is None
    assert without_owner_uids(_entries_text(["0a"], 'k:{"uid":"1b","z":1}')) is None
    assert without_owner_uids(_entries_text([])) is None  # nothing to take out: the text itself
    manager = orjson.dumps([{"manager": 'k:{"uid":"0a"}'}], option=EXACT_JSON)
    assert without_owner_uids(manager) is None  # a value that looks like a key


def test_entries_written_out_of_order_keep_the_general_path() -> None:
    """Stored entries a client wrote with its owners' keys in another order than the encoder's
    (as the first objects of the key had them): the general path sorts them again, so the
    template (which would hand them back as stored) must not answer."""
    templates = StatusWriteTemplates()
    for i in range(6):
        old = _stored_group(random.Random(1), i, 0.0, 0.0)
        refs = old["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "A", "name": "a", "uid": f"{i}a"},
            {"apiVersion": "v1", "kind": "B", "name": "b", "uid": f"{i}b"},
        ]
        old.pop("status", None)
        del old["metadata"]["managedFields"]
        entries = updated_managed_fields(None, old, "kube-controller-manager", PG, TIMES[0], API)
        if i >= 4:  # the keys swapped in the stored text
            tree = entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
            keys = [f'k:{{"uid":"{r["uid"]}"}}' for r in refs]
            tree = {".": {}, keys[1]: {}, keys[0]: {}}
            entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"] = tree
        old["metadata"]["managedFields"] = entries
        old = orjson.loads(orjson.dumps(old))
        new = _write(random.Random(2), old)
        got = templates.entries(
            old, new, "kube-scheduler", API, PG, TIMES[1], lambda o=old, n=new: _general(o, n, TIMES[1])
        )
        assert orjson.dumps(got) == orjson.dumps(_general(old, new, TIMES[1])), i


def test_the_registry_answers_as_without_the_templates() -> None:
    """PodGroup condition writes through the tracker: same stored managedFields with the
    templates as with them turned off."""
    from types import SimpleNamespace

    def writes(rnd: random.Random, i: int) -> tuple[Obj, Obj]:
        old = _stored_group(rnd, i)
        return old, _write(rnd, old)

    rd = SimpleNamespace(
        group="scheduling.k8s.io", version="v1beta1", kind="PodGroup", api_version=API, is_view=False
    )
    registry_answers_as_untemplated(rd, "kube-scheduler", writes)
