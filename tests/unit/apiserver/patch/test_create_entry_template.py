"""A stored create's managedFields entry made from its shape's template (:mod:`apiserver.patch.createentry`).

The template is only sound if it gives exactly what the general path gives: these tests create
random Events and pods (rewritten scalars of one shape, missing and extra fields, nulls, owner
references, managed fields sent with the request, lists), each through the templates and through
:func:`updated_managed_fields` with the stored write's shared trees, and compare the entries as
text (key order included), for varied managers, API versions and times.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.createentry import CreatedEntryTemplates
from apiserver.patch.sharedtrees import shared_fields_v1

from .test_create_fields_memo import _reblank
from .test_tracker import _mutate, _random_pod

POD = schema.for_gvk("", "v1", "Pod")
EVENT = schema.for_gvk("", "v1", "Event")


def _random_event(rnd: random.Random, i: int) -> Obj:
    ref: dict[str, Any] = {"kind": "Pod", "name": f"p{i}", "uid": f"u{i}", "apiVersion": "v1"}
    for k, v in (("namespace", "default"), ("resourceVersion", str(i)), ("fieldPath", "spec.containers{c}")):
        if rnd.random() < 0.6:
            ref[k] = v
    ev: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"p{i}.{i:x}", "namespace": "default"},
        "involvedObject": ref,
        "reason": rnd.choice(["Pulled", "Created", "Started", "Scheduled"]),
        "message": f"m{i}",
        "type": rnd.choice(["Normal", "Warning"]),
        "source": rnd.choice([{"component": "kubelet", "host": "n1"}, {"component": "c"}, {}]),
        "firstTimestamp": "2026-12-05T09:00:00Z",
        "lastTimestamp": "2026-12-05T09:00:01Z",
        "count": 1,
    }
    if rnd.random() < 0.7:
        ev["reportingComponent"] = "kubelet"
        ev["reportingInstance"] = "n1"
    roll = rnd.random()
    if roll < 0.1:
        ev["related"] = {"kind": "Node", "name": "n1"}
    elif roll < 0.2:
        ev["series"] = {"count": 2, "lastObservedTime": "2026-12-05T09:00:02.000000Z"}
    elif roll < 0.3:
        ev["metadata"]["labels"] = {"a": rnd.choice(["x", None, 1])}
    elif roll < 0.4:
        ev["metadata"]["finalizers"] = rnd.choice([["a/b"], [None], []])
    elif roll < 0.45:
        ev["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": f"p{i}", "uid": f"u{i % 3}"}
        ]
    elif roll < 0.5:
        ev["metadata"]["managedFields"] = rnd.choice(
            [
                [],
                [
                    {
                        "manager": "other",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:reason": {}},
                    }
                ],
            ]
        )
    elif roll < 0.55:
        ev["status"] = {"x": 1}  # a reset field (and unknown to the schema)
    elif roll < 0.6:
        ev["count"] = None
    return _reblank(rnd, ev) if rnd.random() < 0.5 else ev


def _objects(rnd: random.Random, n: int) -> list[tuple[Obj, Any]]:
    out: list[tuple[Obj, Any]] = []
    for i in range(n):
        if rnd.random() < 0.7:
            out.append((_random_event(rnd, i), EVENT))
        else:
            p = _mutate(rnd, _random_pod(rnd))
            if isinstance(p.get("metadata"), dict) and rnd.random() < 0.3:
                p["metadata"]["ownerReferences"] = [
                    {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": f"u{i % 4}"}
                ]
            out.append((p, POD))
    return out


def _text(entries: list[Obj] | None) -> bytes:
    return orjson.dumps(entries)


def template_entries(
    templates: CreatedEntryTemplates, obj: Obj, node: Any, manager: str, api_version: str, now: str
) -> tuple[list[Obj] | None, bool]:
    """``templates``' answer for a stored create of ``obj``, and whether it asked the general path
    (:func:`updated_managed_fields` with shared trees); asserts the object is left as it was."""
    asked = False

    def general() -> Any:
        nonlocal asked
        asked = True
        return updated_managed_fields(None, obj, manager, node, now, api_version, fields_v1=shared_fields_v1)

    sent = copy.deepcopy(obj)
    got = templates.entries(obj, node, manager, api_version, now, general)
    assert obj == sent  # the object itself is left as it was
    return got, asked


@pytest.mark.parametrize("seed", range(4))
def test_template_entries_equal_the_general_paths_on_random_objects(seed: int) -> None:
    rnd = random.Random(seed)
    templates = CreatedEntryTemplates()
    general_calls = 0
    hits_with_entry = 0
    for obj, node in _objects(rnd, 400):
        manager = rnd.choice(["kubelet", "default-scheduler", "m"])
        api_version = rnd.choice(["v1", "events.k8s.io/v1"])
        now = rnd.choice(["2026-12-05T09:00:00Z", "2026-12-05T09:00:01Z", ""])
        want = updated_managed_fields(
            None, copy.deepcopy(obj), manager, node, now, api_version, fields_v1=shared_fields_v1
        )
        got, asked_general = template_entries(templates, obj, node, manager, api_version, now)
        assert _text(got) == _text(want), obj
        general_calls += asked_general
        hits_with_entry += not asked_general and bool(got)
    # most creates were answered by a template (the test exercised it), not the general path
    assert hits_with_entry > 80
    assert general_calls < 320


def test_a_remembered_shape_answers_each_create_with_its_own_entry() -> None:
    templates = CreatedEntryTemplates()
    ev = _random_event(random.Random(1), 1)
    ev["metadata"].pop("ownerReferences", None)
    ev["metadata"].pop("managedFields", None)

    def general() -> Any:
        return updated_managed_fields(None, ev, "kubelet", EVENT, "t0", "v1", fields_v1=shared_fields_v1)

    first = templates.entries(ev, EVENT, "kubelet", "v1", "t0", general)
    second = templates.entries(ev, EVENT, "kubelet", "v1", "t1", lambda: pytest.fail("general path"))
    assert first is not None and second is not None
    assert first[0] is not second[0]  # each stored object has its own entry (its time differs)
    assert second[0]["time"] == "t1" and first[0]["time"] == "t0"
    assert second[0]["fieldsV1"] == first[0]["fieldsV1"]
    # objects of one second share their list (stored revisions would share it anyway)
    third = templates.entries(ev, EVENT, "kubelet", "v1", "t1", lambda: pytest.fail("general path"))
    assert third is second


def test_dry_runs_and_view_kinds_take_the_general_path_through_the_tracker() -> None:
    from types import SimpleNamespace

    from apiserver.patch.tracker import FieldTracker

    tracker = FieldTracker()
    rd = SimpleNamespace(group="", version="v1", kind="Event", api_version="v1", is_view=False)
    opts = SimpleNamespace(field_manager="kubelet", dry_run=False)
    stored = [_random_event(random.Random(2), i) for i in range(3)]
    for e in stored:
        for k in ("ownerReferences", "managedFields"):
            e["metadata"].pop(k, None)
        e.pop("count", None)
        tracker.on_create(rd, e, opts, "t0")  # type: ignore[arg-type]
    dry = copy.deepcopy(stored[0])
    dry["metadata"].pop("managedFields")
    tracker.on_create(rd, dry, SimpleNamespace(field_manager="kubelet", dry_run=True), "t0")  # type: ignore[arg-type]
    # a dry run's answer is the client's to modify: its tree is not the stored objects' shared one
    assert dry["metadata"]["managedFields"] == stored[0]["metadata"]["managedFields"]
    assert (
        dry["metadata"]["managedFields"][0]["fieldsV1"]
        is not stored[0]["metadata"]["managedFields"][0]["fieldsV1"]
    )
