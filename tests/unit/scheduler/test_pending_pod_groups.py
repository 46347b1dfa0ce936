"""``scheduler_pending_entities{type="podgroup"}``: the queue counts a group held whole at
PreEnqueue from unschedulablePods' per-group index instead of asking where each member is. On
random sequences of queue operations (members added and held, groups released, pods popped
with their group and parked after a rejection, deletes) the counts equal the per-member scan's."""

from __future__ import annotations

import random
from typing import Any

from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from tests.unit.scheduler.test_parked_pods import _pod, _queue


def _scan(q: SchedulingQueue) -> dict[str, int]:
    """The per-member scan the index replaces."""
    counts = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
    for uids in q._group_members.values():
        for where in {q.where(uid) for uid in uids}:
            if where in counts:
                counts[where] += 1
    return counts


def test_pending_pod_groups_equal_the_per_member_scan() -> None:
    shortcuts = 0
    for seed in range(40):
        r = random.Random(seed)
        q, gate = _queue(scoped=True)
        groups = [f"g{i}" for i in range(r.randint(1, 5))]
        pods: list[dict[str, Any]] = []
        for step in range(200):
            op = r.random()
            if op < 0.45:
                p = _pod(f"p{step}", r.choice([*groups, ""]), r.choice([0, 5]))
                pods.append(p)
                q.add(p)
            elif op < 0.6:
                qp = q.pop_nowait()
                if qp is not None:
                    members = [qp]
                    if q.group_of(qp.uid):
                        members += q.pop_group_members(q.group_of(qp.uid), exclude=qp.uid)
                    for m in members:
                        if r.random() < 0.6:
                            m.unschedulable_plugins = {"NodeAffinity"}
                            q.add_unschedulable_if_not_present(m)
                        else:
                            q.done(m.uid)
            elif op < 0.68:
                g = r.choice(groups)
                gate.released.add(f"default/{g}")
                q.pod_group_changed(f"default/{g}", requeue_rejected=r.random() < 0.5)
            elif op < 0.75:
                gate.released.discard(f"default/{r.choice(groups)}")
            elif op < 0.85 and pods:
                q.delete(pods.pop(r.randrange(len(pods))))
            elif op < 0.9:
                q.flush_backoff_completed()
            else:
                q.activate(r.sample(pods, min(3, len(pods))))
            held_whole = sum(
                1
                for key, uids in q._group_members.items()
                if uids and uids == q._unschedulable.held_of(key).keys()
            )
            shortcuts += held_whole
            assert q.pending_pod_groups() == _scan(q), (seed, step)
    assert shortcuts > 0  # the index answered for some groups


def test_a_group_held_whole_is_counted_without_asking_where_its_members_are() -> None:
    q, _ = _queue(scoped=True)
    for i in range(50):
        q.add(_pod(f"m{i}", "g", 0))
    q.add(_pod("loose", "", 0))
    asked: list[str] = []
    where = q.where

    def counting_where(pod: Any) -> Any:
        asked.append(pod)
        return where(pod)

    q.where = counting_where  # type: ignore[method-assign]
    assert q.pending_pod_groups() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    assert asked == []
