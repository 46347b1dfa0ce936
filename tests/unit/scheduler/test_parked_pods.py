"""unschedulablePods with held gangs indexed by PodGroup (scheduler/parked.py).

A registration declaring ``same_pod_group`` lets the queue ask its hint only about the held
members of the event pod's own group. On random sequences of queue operations (gang members
held at PreEnqueue, groups released, bound pods of any group, plain pods parked by a Filter
rejection, deletes and pops) the queue must move exactly the pods, to exactly the sub-queues and
in the same order, as the full scan does - while asking the hint about far fewer pods.
"""

from __future__ import annotations

import random
from typing import Any

from scheduler.events import ASSIGNED_POD_ADD, NODE_ADD, ClusterEventWithHint, QueueingHint
from scheduler.framework import Framework, PluginSpec, Profile
from scheduler.parked import ParkedPods
from scheduler.plugins import node_affinity, priority_sort
from scheduler.podgroups import pod_group_key
from scheduler.queue import SchedulingQueue
from scheduler.status import Code, Status
from scheduler.testing import FakeClock, make_node, make_pod


class GroupGate:
    """Holds a pod of a group at PreEnqueue until its group is released; a bound pod of the same
    group (only) may release it, as GangScheduling's minCount gate does."""

    name = "GroupGate"

    def __init__(self, scoped: bool) -> None:
        self.scoped = scoped
        self.released: set[str] = set()
        self.hint_calls = 0

    def pre_enqueue(self, pod_info: Any) -> Any:
        key = pod_group_key(pod_info.pod)
        if key and key not in self.released:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the group")
        return None

    def _same_group(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        self.hint_calls += 1
        key = pod_group_key(pod)
        return QueueingHint.QUEUE if key and pod_group_key(new) == key else QueueingHint.SKIP

    def events_to_register(self) -> list[Any]:
        return [ClusterEventWithHint(ASSIGNED_POD_ADD, self._same_group, same_pod_group=self.scoped)]


def _queue(scoped: bool) -> tuple[SchedulingQueue, GroupGate]:
    gate = GroupGate(scoped)
    fw = Framework(
        Profile(plugins=[PluginSpec("PrioritySort"), PluginSpec("GroupGate"), PluginSpec("NodeAffinity")]),
        registry={
            "PrioritySort": priority_sort.new,
            "GroupGate": lambda args, handle: gate,
            "NodeAffinity": node_affinity.new,
        },
    )
    return SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw}), gate


def _pod(name: str, group: str, priority: int) -> dict[str, Any]:
    p = make_pod(name, priority=priority)
    if group:
        p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


def _run(seed: int, scoped: bool) -> tuple[list[Any], int]:
    r = random.Random(seed)
    q, gate = _queue(scoped)
    groups = [f"g{i}" for i in range(r.randint(1, 6))]
    pods: list[dict[str, Any]] = []
    trace: list[Any] = []
    for step in range(300):
        op = r.random()
        if op < 0.45:
            p = _pod(f"p{step}", r.choice([*groups, ""]), r.choice([0, 0, 5]))
            pods.append(p)
            q.add(p)
        elif op < 0.55 and pods:
            qp = q.pop_nowait()  # popped and rejected by a Filter: parked, not held
            if qp is not None:
                qp.unschedulable_plugins = {"NodeAffinity"}
                trace.append(("parked", qp.pod_info.name, q.add_unschedulable_if_not_present(qp)))
        elif op < 0.62:
            g = r.choice(groups)
            gate.released.add(f"default/{g}")  # the gate compares pod_group_key's namespace/name
            trace.append(("released", g, q.pod_group_changed(f"default/{g}")))
        elif op < 0.9:
            bound = _pod(f"b{step}", r.choice([*groups, ""]), 0)
            bound["spec"]["nodeName"] = "n1"
            trace.append(("bound", q.assigned_pod_added(bound)))
        elif op < 0.95 and pods:
            p = r.choice(pods)
            q.delete(p)
        else:
            trace.append(("node", q.move_all_to_active_or_backoff(NODE_ADD, None, make_node(f"n{step}"))))
        trace.append([q.where(p) for p in pods])
    order = []
    while (qp := q.pop_nowait()) is not None:
        order.append(qp.pod_info.name)
        q.done(qp.uid)
    trace.append(order)
    return trace, gate.hint_calls


def test_held_gangs_of_other_groups_are_not_asked_and_the_moves_are_the_full_scans() -> None:
    asked_full = asked_scoped = 0
    for seed in range(60):
        full, calls_full = _run(seed, scoped=False)
        scoped, calls_scoped = _run(seed, scoped=True)
        assert scoped == full, f"seed {seed}"
        asked_full += calls_full
        asked_scoped += calls_scoped
    assert asked_scoped * 3 < asked_full  # the other groups' held pods were left out
    assert any(
        step[0] == "released" and step[2]
        for seed in range(60)
        for step in _run(seed, True)[0][:-1]
        if isinstance(step, tuple)
    ), "no release ever moved a held pod: the sequences test nothing"


def test_parked_pods_keep_dict_order_and_their_index_through_rewrites() -> None:
    parked = ParkedPods()
    qs = {}
    q_holder, _ = _queue(True)
    for name, group in [("a", "g1"), ("b", ""), ("c", "g2"), ("d", "g1")]:
        q_holder.add(_pod(name, group, 0))
        qs[name] = q_holder.get(make_pod(name)["metadata"]["uid"])
    for name in "abcd":
        parked[qs[name].uid] = qs[name]
    parked[qs["a"].uid] = qs["a"]  # stored again: keeps its place
    assert [q.pod_info.name for q in parked.candidates("default/g2", lambda p: True)] == ["b", "c"]
    assert [q.pod_info.name for q in parked.candidates("", lambda p: False)] == ["a", "b", "c", "d"]
    assert parked.pop(qs["c"].uid) is qs["c"]
    assert parked.pop("missing", None) is None
    del parked[qs["a"].uid]
    assert [q.pod_info.name for q in parked.candidates("default/g1", lambda p: True)] == ["b", "d"]
    assert list(parked) == [qs["b"].uid, qs["d"].uid]


def test_held_pods_share_one_record_per_group_and_holding_plugins() -> None:
    """Random stores, rewrites, deletes and pops: each held pod's (group, plugins) is recorded as
    its own were when stored, pods with equal ones share one tuple, and the shared tuples are
    exactly those some held pod has (none kept for a set no pod is held by any more)."""
    from scheduler.nodeinfo import PodInfo
    from scheduler.queue import QueuedPodInfo

    rng = random.Random(7)
    parked = ParkedPods()
    model: dict[str, tuple[str, frozenset[str]]] = {}
    for step in range(600):
        uid = f"u{rng.randrange(40)}"
        op = rng.random()
        if op < 0.6:
            group = rng.choice(["g1", "g2", "g3", ""])
            pod = make_pod(uid, uid=uid)
            if group:
                pod["spec"]["schedulingGroup"] = {"podGroupName": group}
            q = QueuedPodInfo(PodInfo(pod), timestamp=0.0)
            q.gated = rng.random() < 0.8
            q.unschedulable_plugins = set(rng.sample(["A", "B", "C"], rng.randrange(0, 3)))
            parked[uid] = q
            if q.gated and group:
                model[uid] = (f"default/{group}", frozenset(q.unschedulable_plugins))
            else:
                model.pop(uid, None)
        elif uid in parked:
            if op < 0.8:
                del parked[uid]
            else:
                parked.pop(uid)
            model.pop(uid, None)
        assert parked._where == model, step
        ids: dict[tuple[str, frozenset[str]], set[int]] = {}
        for rec in parked._where.values():
            ids.setdefault(rec, set()).add(id(rec))
        assert all(len(v) == 1 for v in ids.values()), step
        assert set(parked._pairs) == set(model.values()), step
