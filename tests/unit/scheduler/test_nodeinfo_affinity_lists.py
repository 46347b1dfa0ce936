"""A NodeInfo's pods with (anti-)affinity are the shared empty ``NO_PODS`` until it has one.

Random histories of pods with and without (anti-)affinity terms added to, removed from and
replaced in NodeInfos and their clones (each clone then changed on its own, as the snapshot's
assumes change its copy): every NodeInfo's two lists hold exactly its pods with those terms, in
its pods' order (what plain lists kept by every change give), a NodeInfo that never had such a
pod holds ``NO_PODS``, no two NodeInfos share a changeable list, and ``NO_PODS`` stays empty.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.nodeinfo import NO_PODS, NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod

_TERM = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}
_AFFINITY: list[Any] = [
    None,
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
    {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": _TERM}]
        }
    },
]


def _pod(rng: random.Random, name: str) -> PodInfo:
    affinity = rng.choice(_AFFINITY) if rng.random() < 0.3 else None
    return PodInfo(make_pod(name, uid=f"u-{name}", affinity=affinity))


@pytest.mark.parametrize("seed", range(20))
def test_affinity_lists_follow_pods_through_clones(seed: int) -> None:
    rng = random.Random(seed)
    infos = [NodeInfo(make_node("n"))]
    assert infos[0].pods_with_affinity is NO_PODS and infos[0].pods_with_required_anti_affinity is NO_PODS
    shared = terms = 0
    for step in range(300):
        ni = rng.choice(infos)
        op = rng.random()
        if op < 0.4:
            ni.add_pod_info(_pod(rng, f"p{step}"))
        elif op < 0.6 and ni.pods:
            ni.remove_pod(rng.choice(ni.pods).key)
        elif op < 0.8 and ni.pods:
            # the same pod again (a bound pod confirming its assumed self): moved to the end
            old = rng.choice(ni.pods)
            assert ni.replace_pod_info(PodInfo(old.pod))
        elif len(infos) < 12:
            infos.append(ni.clone())
        for each in infos:
            aff, anti = each.pods_with_affinity, each.pods_with_required_anti_affinity
            assert list(aff) == [p for p in each.pods if p.has_affinity], step
            assert list(anti) == [p for p in each.pods if p.has_required_anti_affinity], step
            terms += bool(aff) + bool(anti)
            shared += (aff is NO_PODS) + (anti is NO_PODS)
        owned = [
            lst
            for each in infos
            for lst in (each.pods_with_affinity, each.pods_with_required_anti_affinity)
            if lst is not NO_PODS
        ]
        assert len({id(lst) for lst in owned}) == len(owned), step  # none shared but NO_PODS
        assert all(type(lst) is list for lst in owned), step
        assert NO_PODS == ()
    assert terms > 100 and shared > 0  # nodes with such pods, and nodes sharing the empty one


def test_a_clone_of_an_emptied_list_shares_the_empty_one() -> None:
    ni = NodeInfo(make_node("n"))
    pi = PodInfo(make_pod("p", uid="u", affinity=_AFFINITY[2]))
    ni.add_pod_info(pi)
    assert ni.pods_with_affinity == [pi] and ni.pods_with_required_anti_affinity == [pi]
    c = ni.clone()
    ni.remove_pod(pi.key)
    assert c.pods_with_affinity == [pi]  # the clone's own list
    assert ni.pods_with_affinity == []
    again = ni.clone()
    assert again.pods_with_affinity is NO_PODS and again.pods_with_required_anti_affinity is NO_PODS
