"""The base both Workload hooks share: an object created from a create response is found until the
informer has it, then the cache is authoritative; an owner's deletion forgets what it remembered."""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from controllers.workloadhook import WorkloadHookBase


class FakeInformer:
    def __init__(self) -> None:
        self.items: dict[str, Obj] = {}

    def get(self, key: str) -> Obj | None:
        return self.items.get(key)


def obj(kind: str, name: str, uid: str) -> Obj:
    return {"kind": kind, "metadata": {"namespace": "ns", "name": name, "uid": uid}}


def hook() -> tuple[WorkloadHookBase, Any, Any]:
    h = WorkloadHookBase()
    wl, pg = FakeInformer(), FakeInformer()
    h.workloads, h.pod_groups = wl, pg  # type: ignore[assignment]
    return h, wl, pg


def test_recent_objects_until_the_cache_has_them() -> None:
    h, wl_inf, _ = hook()
    owner = obj("StatefulSet", "web", "o-1")
    wl, pg = obj("Workload", "w", "u-1"), obj("PodGroup", "p", "u-2")
    h._remember(owner, wl)
    h._remember(owner, pg)
    assert h._recent(owner, "Workload") == [wl]
    assert h._recent(owner, "PodGroup") == [pg]
    wl_inf.items["ns/w"] = wl
    assert h._recent(owner, "Workload") == []  # the informer has it now
    assert h._recent(owner, "PodGroup", cached=[pg]) == []  # or the caller's read of the cache does
    assert h._created == {}


def test_a_same_named_object_with_another_uid_does_not_count_as_cached() -> None:
    h, wl_inf, _ = hook()
    owner = obj("Job", "j", "o-1")
    wl = obj("Workload", "w", "u-new")
    h._remember(owner, wl)
    wl_inf.items["ns/w"] = obj("Workload", "w", "u-old")  # a stale, deleted predecessor
    assert h._recent(owner, "Workload") == [wl]


def test_an_owner_deletion_forgets_its_objects() -> None:
    h, _, _ = hook()
    owner = obj("Job", "j", "o-1")
    h._remember(owner, obj("Workload", "w", "u-1"))
    h._forget(owner)
    assert h._recent(owner, "Workload") == []
