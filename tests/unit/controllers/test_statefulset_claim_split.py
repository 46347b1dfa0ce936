"""The claim's first cut of a set's members (:meth:`SetFacts.split`), patched by position between
syncs, is the per-pod walk's, and the facts kept for the next sync stay bounded by the pods listed.

Differential: random sequences of member lists — pods replaced by new versions (labels, owner,
name), two positions swapped, pods added and removed, the whole list shuffled, lookups of pods
beyond the members — each split compared with the plain walk over :func:`pod_facts`.
"""

from __future__ import annotations

import copy
import random

import pytest

from apiserver.api.types import Obj
from apiserver.selectors import label_selector_from_dict
from controllers.statefulset import utils
from controllers.statefulset.podfacts import PodFactsCache, pod_facts

SEL = label_selector_from_dict({"matchLabels": {"app": "web"}})


def _walk(pods: list[Obj], uid: str, name: str) -> tuple[list[Obj], list[Obj], int]:
    """The claim's loop as it was written before the split: one pod at a time."""
    kept: list[Obj] = []
    others: list[Obj] = []
    controlled = 0
    for p in pods:
        f = pod_facts(p)
        if f.controller_uid == uid:
            controlled += 1
            if SEL.matches(p["metadata"].get("labels") or {}) and f.parent == name:
                kept.append(p)
                continue
        others.append(p)
    return kept, others, controlled


def _pod(rnd: random.Random, ordinal: int) -> Obj:
    name = rnd.choice([f"web-{ordinal}"] * 6 + [f"webx-{ordinal}"])
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"u-{rnd.random()}",
            "labels": {"app": rnd.choice(["web"] * 5 + ["db"]), utils.POD_NAME_LABEL: name},
            "ownerReferences": [
                {
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": rnd.choice(["set"] * 5 + ["other"]),
                    "controller": True,
                }
            ],
        }
    }


@pytest.mark.parametrize("seed", range(30))
def test_the_split_patched_by_position_is_the_walks(seed: int) -> None:
    rnd = random.Random(seed)
    cache = PodFactsCache()
    pods = [_pod(rnd, o) for o in range(rnd.randint(0, 20))]
    for step in range(80):
        facts = cache.begin("default/web", "set", SEL)
        got = facts.split(list(pods), "set", "web")
        want = _walk(pods, "set", "web")
        assert [id(p) for p in got[0]] == [id(p) for p in want[0]], step
        assert [id(p) for p in got[1]] == [id(p) for p in want[1]], step
        assert got[2] == want[2], step
        for p in got[0][:2]:
            assert facts(p) == pod_facts(p)
        if rnd.random() < 0.1:
            facts(_pod(rnd, 99))  # a pod beyond the members (a claimed non-member)
        facts.end()
        # at most the listed pods and one sync's extra lookup are kept
        assert len(cache) <= len(pods) + 1, step
        op = rnd.random()
        if op < 0.5 and pods:
            j = rnd.randrange(len(pods))
            new = copy.deepcopy(pods[j])
            new["metadata"]["labels"]["app"] = rnd.choice(["web", "db"])
            new["metadata"]["ownerReferences"][0]["uid"] = rnd.choice(["set", "other"])
            pods[j] = new
        elif op < 0.65 and len(pods) > 1:
            i, j = rnd.sample(range(len(pods)), 2)
            pods[i], pods[j] = pods[j], pods[i]
        elif op < 0.75:
            pods.append(_pod(rnd, len(pods)))
        elif op < 0.85 and pods:
            pods.pop(rnd.randrange(len(pods)))
        elif op < 0.9:
            rnd.shuffle(pods)


def test_entries_of_pods_no_longer_listed_are_dropped() -> None:
    rnd = random.Random(1)
    cache = PodFactsCache()
    pods = [_pod(rnd, o) for o in range(8)]
    for _ in range(3):
        facts = cache.begin("default/web", "set", SEL)
        facts.split(list(pods), "set", "web")
        facts.end()
        pods[0] = copy.deepcopy(pods[0])  # patched in place: the old version's entry goes
        assert len(cache) == 8
    facts = cache.begin("default/web", "set", SEL)
    facts.split(list(pods), "set", "web")
    facts(_pod(rnd, 50))
    facts.end()
    assert len(cache) == 9
    facts = cache.begin("default/web", "set", SEL)
    facts.split(list(pods), "set", "web")  # rebuilt from the members alone
    facts.end()
    assert len(cache) == 8
