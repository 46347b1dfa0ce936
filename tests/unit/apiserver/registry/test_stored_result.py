"""An update's answer is its stored revision, decoded only when read.

The HTTP server answers with the record's bytes, so an update no longer decodes the revision
it just stored for an answer nobody reads; an in-process caller that reads the object gets its
own decoding of those bytes, as before.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from apiserver.registry.generic import StoredResult, WriteOptions
from apiserver.server.instance import build_api

MERGE = "application/merge-patch+json"


def _cm() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}


def test_updates_and_patches_answer_the_stored_bytes_and_decode_only_when_read() -> None:
    api = build_api()
    rd = api.registry.get("", "v1", "configmaps")
    created = api.create(rd, "default", _cm(), WriteOptions(field_manager="t")).obj
    body = copy.deepcopy(created)
    body["data"]["a"] = "2"
    results = [
        api.update(rd, "default", "c", body, WriteOptions(field_manager="t")),
        api.patch(rd, "default", "c", {"data": {"b": "3"}}, MERGE, WriteOptions(field_manager="u")),
        # a no-op: answered with the record it kept
        api.patch(rd, "default", "c", {"data": {"b": "3"}}, MERGE, WriteOptions(field_manager="u")),
    ]
    for res in results:
        assert isinstance(res, StoredResult) and res._obj is None  # nothing decoded yet
    stored = api.get(rd, "default", "c")
    assert results[-1].raw == stored.raw and results[1].raw == stored.raw
    for res in results:
        obj = res.obj
        assert obj == orjson.loads(res.raw) and res.obj is obj  # decoded once
        obj["data"]["x"] = "changed by the caller"
    assert api.get(rd, "default", "c").copy() == orjson.loads(stored.raw)  # the store kept its own
    assert results[0].code == 200 and results[0].warnings == []


def test_a_view_kinds_update_answers_its_converted_object() -> None:
    api = build_api()
    core = api.registry.get("", "v1", "events")
    view = api.registry.get("events.k8s.io", "v1", "events")
    assert view is not None and view.is_view
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "R",
        "message": "m",
        "type": "Normal",
    }
    api.create(core, "default", ev, WriteOptions(field_manager="t"))
    patch = {"metadata": {"labels": {"x": "y"}}}
    res = api.patch(view, "default", "e", patch, MERGE, WriteOptions(field_manager="t"))
    assert not isinstance(res, StoredResult) and res.raw is None
    assert res.obj["apiVersion"] == "events.k8s.io/v1" and res.obj["note"] == "m"
    assert res.obj["metadata"]["labels"] == {"x": "y"}
