"""A PodGroup cycle that keeps its winning placement's pods in the snapshot and lets the snapshot
adopt those nodes (``keep_winner`` + ``Cache.adopt_assumed``) schedules exactly as the cycle that
rolls every placement back and copies the nodes again, through informer-like changes between
the search and the cache's assumes, forgotten members and bound pods confirming their assumed
selves; and after each cache update the snapshot is what a fresh copy of the cache would be."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.framework import CycleState
from scheduler.interfaces import PodGroupInfo
from scheduler.nodeinfo import PodInfo
from scheduler.podgroups import PodGroupState
from scheduler.testing import make_pod
from tests.unit.scheduler.random_gangs import gang_set, seeded_scheduler, zoned_nodes


class _Side:
    """One scheduler's cache, snapshot and framework (seeded alike on both sides)."""

    def __init__(self, seed: int, nodes: list[Any], keep: bool) -> None:
        self.keep = keep
        self.cache, self.snap, self.fw, self.algorithm = seeded_scheduler(seed, nodes)
        self.adopted = 0

    def place(self, group_obj: Any, pods: list[Any]) -> list[tuple[str, str]]:
        self.cache.update_snapshot(self.snap)
        self.fw.handle.snapshot = self.snap
        ns, name = "default", group_obj["metadata"]["name"]
        self.cache.add_pod_group(group_obj)
        group = PodGroupInfo(
            ns,
            name,
            self.cache.get_pod_group(ns, name),
            [PodInfo(p) for p in pods],
            self.cache.pod_group_state(ns, name) or PodGroupState(f"{ns}/{name}"),
        )
        result = self.algorithm.run(CycleState(), group, self.snap, keep_winner=self.keep)
        if not result.success or result.placement is None:
            return []
        return [(a.pod_info.pod["metadata"]["name"], a.node_name) for a in result.placement.fitting()], result

    def check_fresh(self) -> None:
        """After an update the snapshot holds what a fresh copy of the cache holds."""
        self.cache.update_snapshot(self.snap)
        fresh = self.cache.snapshot()
        assert set(self.snap.node_info_map) == set(fresh.node_info_map)
        for name, ni in fresh.node_info_map.items():
            mine = self.snap.node_info_map[name]
            assert [p.uid for p in mine.pods] == [p.uid for p in ni.pods], name
            assert mine.node is ni.node
            assert {k: v for k, v in mine.requested.items() if v} == {
                k: v for k, v in ni.requested.items() if v
            }


@pytest.mark.parametrize("seed", range(12))
def test_kept_winner_schedules_as_the_rolled_back_one(seed: int) -> None:
    r = random.Random(seed)
    nodes = zoned_nodes(r, [30, 80, 150])
    kept, plain = _Side(seed, nodes, keep=True), _Side(seed, nodes, keep=False)
    assumed: list[tuple[Any, str]] = []
    for k in range(40):
        app = f"g{k}"
        size = r.randrange(1, 5)
        cpu = r.choice(["100m", "500m", "1", "1500m"])
        pods, group_obj = gang_set(app, size, cpu)
        got_kept = kept.place(group_obj, pods)
        got_plain = plain.place(group_obj, pods)
        hosts = got_kept[0] if got_kept else []
        assert hosts == (got_plain[0] if got_plain else []), f"gang {k}"
        assert kept.fw.handle.rng.getstate() == plain.fw.handle.rng.getstate()
        if not hosts:
            continue
        # an informer event while the search yielded: another pod lands on a chosen node
        if r.random() < 0.2:
            other = make_pod(f"x{k}", uid=f"x{k}", requests={"cpu": "100m"}, node_name=hosts[0][1])
            for side in (kept, plain):
                side.cache.add_pod(other)
        forget = r.random() < 0.2
        for side, got in ((kept, got_kept), (plain, got_plain)):
            result = got[1]
            fitting = result.placement.fitting()
            for a in fitting:
                side.cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
            if forget:  # a Reserve failure: the first member forgotten
                side.cache.forget_pod(
                    {
                        **fitting[0].pod_info.pod,
                        "spec": {**fitting[0].pod_info.pod["spec"], "nodeName": fitting[0].node_name},
                    }
                )
            if result.kept:
                side.adopted += side.cache.adopt_assumed(
                    side.snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting}
                )
        if not forget:
            assumed.extend((p, h) for p, h in zip(pods, [h for _, h in hosts], strict=True))
        # bound pods confirming their assumed selves, now and then
        if assumed and r.random() < 0.4:
            pod, host = assumed.pop(r.randrange(len(assumed)))
            bound = {**pod, "spec": {**pod["spec"], "nodeName": host}}
            for side in (kept, plain):
                side.cache.add_pod(bound)
        kept.check_fresh()
        plain.check_fresh()
    assert kept.adopted > 0  # the kept path was taken
    assert plain.adopted == 0
