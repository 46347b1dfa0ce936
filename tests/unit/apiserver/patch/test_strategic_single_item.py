"""The single-item merge of a strategic merge list (a condition patched by its ``type``) gives
exactly what the general merge and its ordering give: the same object, key order included, or
the same error. Random stored lists (keyless, repeated or odd keys) and random patches
(directives, ``null`` s, missing keys, several items) against the general path."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.errors import StatusError
from apiserver.openapi import schema
from apiserver.patch import strategic
from apiserver.patch.strategic import strategic_merge

POD = schema.for_gvk("", "v1", "Pod")

KEYS = st.sampled_from(["PodScheduled", "Ready", "Initialized", "DisruptionTarget", 1, 1.0, True])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x", "False"]))
FIELDS = st.sampled_from(["status", "reason", "message", "lastProbeTime", "lastTransitionTime", "x"])


@st.composite
def condition(draw: Any, patch: bool) -> dict[str, Any]:
    item: dict[str, Any] = {}
    if draw(st.integers(0, 9)) > 0:
        item["type"] = draw(st.one_of(KEYS, st.none()) if patch else KEYS)
    for field in draw(st.lists(FIELDS, max_size=4, unique=True)):
        item[field] = draw(SCALARS) if patch else draw(SCALARS.filter(lambda v: v is not None))
    if patch and draw(st.integers(0, 7)) == 0:
        item["$patch"] = draw(st.sampled_from(["delete", "replace", "merge", "bogus"]))
    if patch and draw(st.integers(0, 9)) == 0:
        item["$retainKeys"] = draw(st.lists(st.sampled_from(["type", "status", "reason"]), unique=True))
    return item


def _outcome(original: dict[str, Any], patch: dict[str, Any], node: Any) -> tuple[str, Any]:
    try:
        merged = strategic_merge(original, patch, node)
    except StatusError as e:
        return ("error", (e.code, e.reason, str(e)))
    return ("ok", orjson.dumps(merged))


def _general(monkeypatch: pytest.MonkeyPatch, *args: Any) -> tuple[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(strategic, "_merge_one", lambda *a: None)
        return _outcome(*args)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.lists(condition(patch=False), max_size=5),
    items=st.lists(condition(patch=True), min_size=1, max_size=3),
    other=st.booleans(),
)
def test_condition_patch_same_as_general_merge(
    monkeypatch: pytest.MonkeyPatch, stored: list[Any], items: list[Any], other: bool
) -> None:
    original = {"metadata": {"name": "p"}, "status": {"phase": "Pending", "conditions": stored}}
    patch: dict[str, Any] = {"status": {"conditions": items}}
    if other:
        patch["status"]["nominatedNodeName"] = None
    fast = _outcome(original, patch, POD)
    assert fast == _general(monkeypatch, original, patch, POD)


@pytest.mark.parametrize(
    ("stored", "item", "want"),
    [
        # a matched condition stays where it is, its fields merged
        (["Initialized", "PodScheduled", "Ready"], "PodScheduled", ["Initialized", "PodScheduled", "Ready"]),
        # a new one goes first (apimachinery's order for an item the stored list does not know)
        (["Initialized", "Ready"], "PodScheduled", ["PodScheduled", "Initialized", "Ready"]),
        ([], "PodScheduled", ["PodScheduled"]),
    ],
)
def test_condition_order(stored: list[str], item: str, want: list[str]) -> None:
    original = {"status": {"conditions": [{"type": t, "status": "True"} for t in stored]}}
    patch = {"status": {"conditions": [{"type": item, "status": "False", "reason": "Unschedulable"}]}}
    merged = strategic_merge(original, patch, POD)
    assert [c["type"] for c in merged["status"]["conditions"]] == want
    got = next(c for c in merged["status"]["conditions"] if c["type"] == item)
    assert got == {"type": item, "status": "False", "reason": "Unschedulable"}


def test_missing_merge_key_is_still_an_error() -> None:
    with pytest.raises(StatusError) as e:
        strategic_merge({"status": {"conditions": []}}, {"status": {"conditions": [{"status": "x"}]}}, POD)
    assert e.value.code == 422
    assert "does not contain declared merge key: type" in str(e.value)
