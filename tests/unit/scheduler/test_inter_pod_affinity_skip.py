"""InterPodAffinity skips PreFilter and PreScore exactly when no affinity term is on either side
(the pod's own, or an existing pod's), and still counts and scores when one is."""

from __future__ import annotations

from typing import Any

from scheduler.framework import CycleState, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.status import Code
from scheduler.testing import make_node, make_pod, snapshot_of

APP = {"app": "web"}


def _term(labels: dict[str, str]) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": "zone"}


def _nodes() -> list[Any]:
    return [make_node(f"n{i}", labels={"zone": z}) for i, z in enumerate("ab")]


def _codes(pod: Any, existing: list[Any]) -> tuple[Code | None, Code | None]:
    snap = snapshot_of(_nodes(), existing)
    plugin = InterPodAffinity({}, Handle(snapshot=snap))
    pi = PodInfo(pod)
    _, pre_filter = plugin.pre_filter(CycleState(), pi, snap.list())
    pre_score = plugin.pre_score(CycleState(), pi, snap.list())
    return (
        pre_filter.code if pre_filter is not None else None,
        pre_score.code if pre_score is not None else None,
    )


def test_no_term_anywhere_skips_both() -> None:
    existing = [make_pod("other", node_name="n0", labels=APP)]
    assert _codes(make_pod("p", labels=APP), existing) == (Code.SKIP, Code.SKIP)


def test_an_existing_pods_required_anti_affinity_is_counted() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(APP)]}}
    existing = [make_pod("lonely", node_name="n1", affinity=anti)]
    assert _codes(make_pod("p", labels=APP), existing)[0] is None


def test_an_existing_pods_preferred_affinity_scores_the_pod() -> None:
    pref = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": _term(APP)}]
        }
    }
    existing = [make_pod("friend", node_name="n0", affinity=pref)]
    assert _codes(make_pod("p", labels=APP), existing)[1] is None


def test_the_pods_own_required_affinity_is_not_skipped() -> None:
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(APP)]}}
    assert _codes(make_pod("p", labels=APP, affinity=aff), [])[0] is None
