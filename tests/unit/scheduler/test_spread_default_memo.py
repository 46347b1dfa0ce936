"""PodTopologySpread derives a pod's default constraints once per scheduling attempt: the same
PodInfo within one snapshot generation gets the same constraints; another pod, or the same pod
after the snapshot is updated, gets them derived again from the handle's current answer (a
Service or owner change is seen from the next attempt on)."""

from __future__ import annotations

import random
from typing import Any

from scheduler.cache import Cache
from scheduler.framework import Handle
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins.pod_topology_spread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, PodTopologySpread
from scheduler.testing import make_node, make_pod


def test_default_constraints_are_derived_once_per_pod_and_snapshot_generation() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", labels={"kubernetes.io/hostname": "n1"}))
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(0))
    handle.snapshot = snap
    selects: dict[str, Any] = {"app": "a"}
    asked: list[str] = []

    def default_selector(pod: dict[str, Any]) -> Any:
        asked.append(pod["metadata"]["name"])
        return compile_selector({"matchLabels": dict(selects)})

    handle.default_spread_selector = default_selector
    plugin = PodTopologySpread({}, handle)
    p1 = PodInfo(make_pod("p1", uid="p1", labels={"app": "a"}))
    p2 = PodInfo(make_pod("p2", uid="p2", labels={"app": "a"}))

    first = plugin._constraints(p1, SCHEDULE_ANYWAY)
    assert [c.topology_key for c in first] == ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
    assert plugin._constraints(p1, SCHEDULE_ANYWAY) is first
    assert plugin._constraints(p1, DO_NOT_SCHEDULE) == []  # the system defaults are all soft
    plugin._constraints(p2, SCHEDULE_ANYWAY)
    assert asked == ["p1", "p2"]

    selects["tier"] = "x"  # e.g. a Service now selects the pods too
    assert plugin._constraints(p1, SCHEDULE_ANYWAY) is first  # the same attempt
    cache.update_snapshot(snap)  # the next attempt
    again = plugin._constraints(p1, SCHEDULE_ANYWAY)
    assert asked == ["p1", "p2", "p1"]
    assert again[0].selector.matches({"app": "a", "tier": "x"})
    assert not again[0].selector.matches({"app": "a"})


def test_pods_with_the_same_default_selector_share_constraints_and_run_keys() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", labels={"kubernetes.io/hostname": "n1"}))
    handle = Handle(rng=random.Random(0))
    handle.snapshot = cache.snapshot()
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    plugin = PodTopologySpread({}, handle)
    a0, a1, b0 = (
        PodInfo(make_pod(name, uid=name, labels={"app": app, "apps.kubernetes.io/pod-index": name[-1]}))
        for name, app in (("a-0", "a"), ("a-1", "a"), ("b-0", "b"))
    )
    assert plugin._constraints(a0, SCHEDULE_ANYWAY) is plugin._constraints(a1, SCHEDULE_ANYWAY)
    assert plugin._constraints(b0, SCHEDULE_ANYWAY) is not plugin._constraints(a0, SCHEDULE_ANYWAY)
    assert plugin.score_run_key(a0) == plugin.score_run_key(a1) != plugin.score_run_key(b0)
    other_ns = PodInfo(make_pod("a-2", "other", uid="a-2", labels={"app": "a"}))
    assert plugin.score_run_key(other_ns) != plugin.score_run_key(a0)  # the namespace is part of it
