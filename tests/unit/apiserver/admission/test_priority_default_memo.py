"""Priority admission's global default kept per state of the PriorityClasses
(:mod:`apiserver.admission.prioritydefault`), against a fresh look at every step.

Random runs of PriorityClass creates, updates (``globalDefault`` toggled: the count stays, the
records change) and deletes, with ties in value, each followed by the remembered answer, a
fresh one, and a pod and a PodGroup created without ``priorityClassName`` through the whole
admission chain.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.admission.prioritydefault import GROUP, PLURAL, GlobalDefault, lowest_global_default
from apiserver.registry.generic import WriteOptions
from apiserver.server.instance import build_api

NAMES = [f"pc-{i}" for i in range(6)]


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }


def _class(name: str, value: int, default: bool) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def _step(api: Any, rd: Any, rnd: random.Random) -> None:
    """One random change of the classes (or none)."""
    name = rnd.choice(NAMES)
    stored = api.peek(GROUP, PLURAL, "", name)
    roll = rnd.random()
    try:
        if stored is None and roll < 0.5:
            api.create(rd, "", _class(name, rnd.choice([10, 20, 20, 30]), rnd.random() < 0.5), WriteOptions())
        elif stored is not None and roll < 0.4:
            body = api.get(rd, "", name).copy()
            body["globalDefault"] = not body.get("globalDefault")
            api.update(rd, "", name, body, WriteOptions())
        elif stored is not None and roll < 0.6:
            api.delete(rd, "", name)
    except errors.StatusError:
        pass


@pytest.mark.parametrize("seed", range(4))
def test_remembered_default_is_a_fresh_look(seed: int) -> None:
    rnd = random.Random(seed)
    api = build_api()
    rd = api.registry.get(GROUP, "v1", PLURAL)
    pods = api.registry.get("", "v1", "pods")
    memo = GlobalDefault()
    remembered = 0
    for i in range(250):
        _step(api, rd, rnd)
        before = memo._records
        got = memo.find(api)
        remembered += memo._records is before
        want = lowest_global_default(api.peek_all(GROUP, PLURAL))
        assert got == want
        assert (got or {}).get("metadata", {}).get("name") == (want or {}).get("metadata", {}).get("name")
        spec = api.create(pods, "default", _pod(i), WriteOptions(field_manager="t")).obj["spec"]
        if want is None:
            assert spec["priority"] == 0 and "priorityClassName" not in spec
        else:
            assert spec["priorityClassName"] == want["metadata"]["name"]
            assert spec["priority"] == want["value"]
            assert spec["preemptionPolicy"] == want.get("preemptionPolicy")
    assert remembered > 50  # most steps change nothing: the answer comes from memory


def test_without_live_records_every_ask_looks() -> None:
    class Plain:
        def __init__(self, classes: list[dict[str, Any]]) -> None:
            self.classes = classes

        def peek_all(self, group: str, plural: str) -> list[dict[str, Any]]:
            return self.classes

    memo = GlobalDefault()
    lookup = Plain([_class("a", 5, True)])
    assert memo.find(lookup)["metadata"]["name"] == "a"
    lookup.classes = [_class("b", 3, True), _class("a", 5, True)]
    assert memo.find(lookup)["metadata"]["name"] == "b"
