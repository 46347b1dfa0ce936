"""A pod's condition patches on ``pods/status`` through the registry answer, store and version
exactly as the general strategic merge does: the same answer bytes, stored bytes,
resourceVersions and error Status (code, reason, message, field causes) for random sequences of
the scheduler's and kubelet's condition patches, invalid ones included."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.errors import StatusError
from apiserver.meta import FakeClock
from apiserver.patch import strategic
from apiserver.registry.generic import STRATEGIC_PATCH, WriteOptions
from apiserver.server.instance import build_api

TYPES = st.sampled_from(["PodScheduled", "Ready", "Initialized", "DisruptionTarget", 7])
VALUES = st.one_of(
    st.none(),
    st.sampled_from(["True", "False", "Unknown", "", "maybe", "Unschedulable", "NotReadyForScheduling"]),
    st.integers(-1, 1),
    st.just({"a": 1}),
)
FIELDS = st.sampled_from(["status", "reason", "message", "lastProbeTime", "lastTransitionTime", "bogus"])


@st.composite
def condition(draw: Any) -> dict[str, Any]:
    item: dict[str, Any] = {}
    if draw(st.integers(0, 9)) > 0:
        item["type"] = draw(TYPES)
    for field in draw(st.lists(FIELDS, max_size=4, unique=True)):
        item[field] = draw(VALUES)
    if draw(st.integers(0, 9)) == 0:
        item["$patch"] = draw(st.sampled_from(["delete", "replace", "bogus"]))
    return item


@st.composite
def patch(draw: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": draw(st.lists(condition(), min_size=1, max_size=2))}
    if draw(st.integers(0, 5)) == 0:
        status["nominatedNodeName"] = draw(st.sampled_from([None, "n1", "Bad_Name"]))
    body: dict[str, Any] = {"status": status}
    if draw(st.integers(0, 7)) == 0:
        body["metadata"] = {"resourceVersion": draw(st.sampled_from(["", "stale", "current"]))}
    return body


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


def _run(patches: list[dict[str, Any]]) -> list[Any]:
    api = build_api(clock=FakeClock())
    rd = api.registry.get("", "v1", "pods")
    created = api.create(rd, "default", _pod()).obj["metadata"]
    base = int(created["resourceVersion"])  # each API numbers from its own start

    def norm(obj: dict[str, Any]) -> bytes:
        raw = orjson.dumps(obj).replace(created["uid"].encode(), b"U")
        return re.sub(rb'"resourceVersion":"(\d+)"', lambda m: b"%d" % (int(m[1]) - base), raw)

    out: list[Any] = []
    for i, body in enumerate(patches):
        opts = WriteOptions(field_manager=("kube-scheduler", "kubelet")[i % 2])
        body = orjson.loads(orjson.dumps(body))
        if "metadata" in body:  # a precondition: the version read now, or an older one
            rec = api.store.get(api._skey(rd), api._key(rd, "default", "p"))
            want = body["metadata"]["resourceVersion"]
            body["metadata"]["resourceVersion"] = {"current": str(rec.rv), "stale": str(base)}.get(want, want)
        try:
            res = api.patch(rd, "default", "p", body, STRATEGIC_PATCH, opts, "status")
            out.append(("ok", res.code, norm(res.obj)))
        except StatusError as e:
            out.append(("error", orjson.dumps(e.status())))
        rec = api.store.get(api._skey(rd), api._key(rd, "default", "p"))
        out.append(("stored", rec.rv - base, norm(rec.obj)))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patches=st.lists(patch(), min_size=1, max_size=5))
def test_condition_patches_same_as_general_merge(
    monkeypatch: pytest.MonkeyPatch, patches: list[dict[str, Any]]
) -> None:
    fast = _run(patches)
    with monkeypatch.context() as m:
        m.setattr(strategic, "_merge_one", lambda *a: None)
        m.setattr(strategic, "_FACTS_LIMIT", 0)  # no memo either: every lookup from the schema
        general = _run(patches)
    assert fast == general
