"""The scheduler's default-spreading selector kept per set (``DefaultSelectors``) answers as kube's
``helper.DefaultSelector`` read from the listers at every call: random Services, ReplicaSets and
StatefulSets added, changed (selector or status only) and deleted between random pods' calls,
each cached answer compared with the uncached derivation; and the pods of one set derive once."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.client.informer import Informer
from apiserver.client.interface import REPLICASETS, SERVICES, STATEFULSETS
from scheduler.plugins.pod_topology_spread import _selector_text
from scheduler.plugins.pod_topology_spread_defaults import DefaultSelectors

NAMESPACES = ("a", "b")
SETS = ("s1", "s2", "s3")
APPS = ("web", "db", "cache")


def _informers() -> tuple[Informer, Informer, Informer]:
    # fed directly (as a watch would), never started
    return (
        Informer(None, SERVICES),  # type: ignore[arg-type]
        Informer(None, REPLICASETS),  # type: ignore[arg-type]
        Informer(None, STATEFULSETS),  # type: ignore[arg-type]
    )


def _selector(rnd: random.Random) -> dict[str, str]:
    sel: dict[str, str] = {}
    for _ in range(rnd.choice([0, 1, 1, 2])):
        key = rnd.choice(["app", "tier", "apps.kubernetes.io/pod-index"])
        sel[key] = rnd.choice(APPS) if key == "app" else rnd.choice(["x", "y", "0", "1"])
    return sel


def _service(rnd: random.Random, ns: str, name: str) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name}, "spec": {"selector": _selector(rnd)}}


def _set(rnd: random.Random, ns: str, name: str) -> dict[str, Any]:
    labels = {"app": rnd.choice(APPS)}
    if rnd.random() < 0.3:
        labels["tier"] = rnd.choice(["x", "y"])
    return {
        "metadata": {"namespace": ns, "name": name},
        "spec": {"selector": {"matchLabels": labels}},
        "status": {"replicas": rnd.randint(0, 3)},
    }


def _pod(rnd: random.Random) -> dict[str, Any]:
    labels = {"app": rnd.choice(APPS), "apps.kubernetes.io/pod-index": str(rnd.randint(0, 2))}
    if rnd.random() < 0.5:
        labels["tier"] = rnd.choice(["x", "y"])
    refs = []
    if rnd.random() < 0.8:
        refs.append(
            {
                "apiVersion": rnd.choice(["apps/v1", "apps/v1", "v1"]),
                "kind": rnd.choice(["ReplicaSet", "StatefulSet", "ReplicationController"]),
                "name": rnd.choice(SETS),
                "uid": "u",
                "controller": rnd.random() < 0.9,
            }
        )
    return {
        "metadata": {
            "namespace": rnd.choice(NAMESPACES),
            "name": "p",
            "labels": labels,
            "ownerReferences": refs,
        }
    }


def _canonical(selector: Any) -> Any:
    return None if selector is None else _selector_text(selector)


LABEL_SETS = [
    {"app": app, "tier": tier, "apps.kubernetes.io/pod-index": idx}
    for app in APPS
    for tier in ("x", "y")
    for idx in ("0", "1")
] + [{"app": app} for app in APPS]


@pytest.mark.parametrize("seed", range(20))
def test_cached_default_selector_equals_the_uncached_derivation(seed: int) -> None:
    rnd = random.Random(seed)
    services, replicasets, statefulsets = _informers()
    selectors = DefaultSelectors(services, replicasets, statefulsets)
    for _ in range(300):
        roll = rnd.random()
        ns = rnd.choice(NAMESPACES)
        if roll < 0.1:
            services._upsert(_service(rnd, ns, rnd.choice(["svc1", "svc2", "svc3"])))
        elif roll < 0.15:
            key = rnd.choice(services.keys() or ["-"])
            if (obj := services.get(key)) is not None:
                services._remove(obj)
        elif roll < 0.25:
            inf = rnd.choice([replicasets, statefulsets])
            name = rnd.choice(SETS)
            old = inf.get_by_name(ns, name)
            if old is not None and rnd.random() < 0.5:  # a status write: the selector kept
                inf._upsert({**old, "status": {"replicas": rnd.randint(0, 3)}})
            else:
                inf._upsert(_set(rnd, ns, name))
        elif roll < 0.3:
            inf = rnd.choice([replicasets, statefulsets])
            key = rnd.choice(inf.keys() or ["-"])
            if (obj := inf.get(key)) is not None:
                inf._remove(obj)
        else:
            p = _pod(rnd)
            cached, fresh = selectors(p), selectors.derive(p)
            assert _canonical(cached) == _canonical(fresh)
            if fresh is not None:
                for labels in LABEL_SETS:
                    assert cached.matches(labels) == fresh.matches(labels)


def test_the_pods_of_a_set_derive_once_until_a_service_or_set_changes() -> None:
    services, replicasets, statefulsets = _informers()
    selectors = DefaultSelectors(services, replicasets, statefulsets)
    services._upsert({"metadata": {"namespace": "a", "name": "web"}, "spec": {"selector": {"app": "web"}}})
    sts = {
        "metadata": {"namespace": "a", "name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"replicas": 0},
    }
    statefulsets._upsert(sts)
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u", "controller": True}]

    def member(i: int) -> dict[str, Any]:
        labels = {"app": "web", "apps.kubernetes.io/pod-index": str(i)}
        return {
            "metadata": {"namespace": "a", "name": f"web-{i}", "labels": labels, "ownerReferences": owner}
        }

    first = selectors(member(0))
    assert first is not None and first.matches({"app": "web"})
    assert all(selectors(member(i)) is first for i in range(1, 50))
    assert selectors.derived == 1

    statefulsets._upsert({**sts, "status": {"replicas": 3}})  # status only: answers kept
    assert selectors(member(3)) is first and selectors.derived == 1

    services._upsert({"metadata": {"namespace": "a", "name": "tier"}, "spec": {"selector": {"tier": "x"}}})
    assert selectors(member(4)) is not first  # the namespace's answers dropped
    assert selectors.derived == 2
    assert not selectors(member(5)).matches({"app": "other"})

    statefulsets._remove(sts)
    got = selectors(member(6))
    assert selectors.derived == 3
    assert got.matches({"app": "web"})  # the Service still selects the pod


def test_an_action_without_default_constraints_does_not_ask_for_the_default_selector() -> None:
    from scheduler.framework import Handle
    from scheduler.nodeinfo import PodInfo, compile_selector
    from scheduler.plugins.pod_topology_spread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, PodTopologySpread
    from scheduler.testing import make_pod

    asked: list[str] = []

    def default_selector(pod: dict[str, Any]) -> Any:
        asked.append(pod["metadata"]["name"])
        return compile_selector({"matchLabels": {"app": "a"}})

    handle = Handle(rng=random.Random(0))
    handle.default_spread_selector = default_selector
    p = PodInfo(make_pod("p", uid="p", labels={"app": "a"}))
    system = PodTopologySpread({}, handle)
    assert system._constraints(p, DO_NOT_SCHEDULE) == [] and asked == []  # kube's system defaults are soft
    assert [c.max_skew for c in system._constraints(p, SCHEDULE_ANYWAY)] == [3, 5] and asked == ["p"]

    hard = {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": DO_NOT_SCHEDULE, "maxSkew": 2}
    listed = PodTopologySpread({"defaultingType": "List", "defaultConstraints": [hard]}, handle)
    assert listed._constraints(p, SCHEDULE_ANYWAY) == [] and asked == ["p"]
    got = listed._constraints(p, DO_NOT_SCHEDULE)
    assert [c.max_skew for c in got] == [2] and asked == ["p", "p"]
    assert got[0].selector.matches({"app": "a"}) and not got[0].selector.matches({"app": "b"})


def test_a_new_set_keeps_the_other_sets_answers_and_a_selector_change_drops_its_own() -> None:
    services, replicasets, statefulsets = _informers()
    selectors = DefaultSelectors(services, replicasets, statefulsets)

    def sts(name: str, app: str) -> dict[str, Any]:
        return {
            "metadata": {"namespace": "a", "name": name},
            "spec": {"selector": {"matchLabels": {"app": app}}},
        }

    def pod(owner: str, kind: str = "StatefulSet") -> dict[str, Any]:
        ref = {"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": "u", "controller": True}
        return {"metadata": {"namespace": "a", "name": "p", "labels": {"app": "x"}, "ownerReferences": [ref]}}

    statefulsets._upsert(sts("one", "x"))
    first = selectors(pod("one"))
    statefulsets._upsert(sts("two", "y"))  # a new set of the namespace (and a ReplicaSet named alike)
    replicasets._upsert(sts("one", "z"))
    assert selectors(pod("one")) is first and selectors.derived == 1
    assert selectors(pod("two")).matches({"app": "y"}) and selectors.derived == 2
    assert selectors(pod("one", "ReplicaSet")).matches({"app": "z"}) and selectors.derived == 3

    statefulsets._upsert(sts("one", "w"))  # its selector changed: its pods' answers dropped
    got = selectors(pod("one"))
    assert got.matches({"app": "w"}) and not got.matches({"app": "x"}) and selectors.derived == 4
    assert selectors(pod("two")).matches({"app": "y"}) and selectors.derived == 4
    statefulsets._remove(sts("one", "w"))
    assert selectors(pod("one")) is None and selectors.derived == 5
