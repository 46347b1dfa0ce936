"""The scheduling queue: ordering, backoff on a fake clock, requeue on events, gating, nominations."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from scheduler.defaults import default_profile, default_registry
from scheduler.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    node_update_events,
)
from scheduler.framework import Framework
from scheduler.metrics import SchedulerMetrics
from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from scheduler.testing import FakeClock, make_node, make_pod


def new_queue(clock: FakeClock, **kw: Any) -> SchedulingQueue:
    fw = Framework(default_profile(), registry=default_registry())
    return SchedulingQueue(fw.queue_sort_less, clock, {"default-scheduler": fw}, **kw)


def fail(q: SchedulingQueue, *plugins: str, error: bool = False) -> str:
    """Pop the next pod and report it unschedulable by ``plugins`` (or failed with an error)."""
    qp = q.pop_nowait()
    assert qp is not None
    qp.unschedulable_plugins = set(plugins)
    qp.last_error = error
    return q.add_unschedulable_if_not_present(qp)


def names(q: SchedulingQueue) -> list[str]:
    out = []
    while (qp := q.pop_nowait()) is not None:
        out.append(qp.pod_info.name)
        q.done(qp.uid)
    return out


def test_active_queue_order_is_priority_then_arrival() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    for name, prio in [("low-1", 0), ("high", 100), ("low-2", 0), ("mid", 50)]:
        q.add(make_pod(name, priority=prio))
        clock.step(0.1)
    assert names(q) == ["high", "mid", "low-1", "low-2"]


@pytest.mark.parametrize(
    ("attempts", "seconds"), [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)]
)
def test_backoff_doubles_from_1s_to_10s(attempts: int, seconds: float) -> None:
    q = new_queue(FakeClock())
    q.add(make_pod("p"))
    qp = q.pop_nowait()
    assert qp is not None
    qp.attempts = attempts
    assert q.backoff_duration(qp) == seconds


def test_unschedulable_pod_waits_for_a_relevant_event_then_backs_off() -> None:
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=False)
    q.add(make_pod("p", requests={"cpu": "1"}))
    assert fail(q, "NodeResourcesFit") == UNSCHEDULABLE
    assert q.pending_pods() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 1, GATED: 0}

    assert q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, make_pod("x", node_name="n")) == 0
    assert q.where(make_pod("p")) == UNSCHEDULABLE

    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n2", cpu="2")) == 1
    assert q.where(make_pod("p")) == BACKOFF  # failed 0s ago, first backoff is 1s
    assert q.flush_backoff_completed() == 0
    clock.step(1.0)
    assert q.flush_backoff_completed() == 1
    assert q.where(make_pod("p")) == ACTIVE


def test_queueing_hint_skips_nodes_that_cannot_help() -> None:
    q = new_queue(FakeClock(), pop_from_backoff=False)
    q.add(make_pod("p", requests={"cpu": "8"}))
    fail(q, "NodeResourcesFit")
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("small", cpu="2")) == 0
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("big", cpu="16")) == 1


def test_node_label_update_requeues_node_affinity_rejects() -> None:
    q = new_queue(FakeClock())
    q.add(make_pod("p", node_selector={"disk": "ssd"}))
    fail(q, "NodeAffinity")
    old = make_node("n")
    new = make_node("n", labels={"disk": "ssd"})
    events = node_update_events(old, new)
    assert events == [ClusterEvent("Node", ActionType.UPDATE_NODE_LABEL)]
    assert q.move_all_to_active_or_backoff(events[0], old, new) == 1


def test_assigned_pod_delete_requeues_resource_rejects() -> None:
    q = new_queue(FakeClock())
    q.add(make_pod("p", requests={"cpu": "1"}))
    fail(q, "NodeResourcesFit")
    gone = make_pod("victim", node_name="n1")
    assert q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, gone, None) == 1


def test_event_during_the_cycle_is_not_lost() -> None:
    """A node added while the pod was being scheduled sends it back instead of parking it."""
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=False)
    q.add(make_pod("p", requests={"cpu": "1"}))
    qp = q.pop_nowait()
    assert qp is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("late"))
    qp.unschedulable_plugins = {"NodeResourcesFit"}
    assert q.add_unschedulable_if_not_present(qp) == BACKOFF


def test_a_bound_pod_with_nothing_parked_moves_none_and_still_reaches_the_pod_in_flight() -> None:
    """The common case of a plane that keeps up: no pod is parked when a bound pod arrives;
    the event is still kept for the pod being scheduled meanwhile, as kube's empty move does."""
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=False)
    q.add(make_pod("p", requests={"cpu": "1"}))
    qp = q.pop_nowait()
    assert qp is not None
    assert q.assigned_pod_added(make_pod("bound", node_name="n1")) == 0
    assert q.pending_pods()[UNSCHEDULABLE] == 0
    qp.unschedulable_plugins = {"InterPodAffinity"}
    assert q.add_unschedulable_if_not_present(qp) == BACKOFF


def test_events_are_kept_for_the_pods_still_in_flight_when_older_ones_finish() -> None:
    """Many pods in flight at once (a gang's): an event seen during a pod's flight sends it
    back after the pods popped before it have finished; one popped after the event parks."""
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=False)
    for i in range(5):
        q.add(make_pod(f"early-{i}", requests={"cpu": "1"}))
    early = [q.pop_nowait() for _ in range(5)]
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("late"))
    q.add(make_pod("after", requests={"cpu": "1"}))
    after = q.pop_nowait()
    assert after is not None and all(e is not None for e in early)
    for e in early[:4]:
        assert e is not None
        q.done(e.uid)  # bound: the event must stay for the one still in flight
    last = early[4]
    assert last is not None
    last.unschedulable_plugins = {"NodeResourcesFit"}
    assert q.add_unschedulable_if_not_present(last) == BACKOFF
    after.unschedulable_plugins = {"NodeResourcesFit"}
    assert q.add_unschedulable_if_not_present(after) == UNSCHEDULABLE


def test_irrelevant_event_during_the_cycle_still_parks_the_pod() -> None:
    q = new_queue(FakeClock())
    q.add(make_pod("p", node_selector={"disk": "ssd"}))
    qp = q.pop_nowait()
    assert qp is not None
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("x", node_name="n"), None)
    qp.unschedulable_plugins = {"NodeAffinity"}
    assert q.add_unschedulable_if_not_present(qp) == UNSCHEDULABLE


def test_error_goes_to_backoff_and_is_not_popped_early() -> None:
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=True)
    q.add(make_pod("p"))
    assert fail(q, error=True) == BACKOFF
    assert q.pop_nowait() is None  # errors wait out the backoff even when idle
    clock.step(1.0)
    assert q.flush_backoff_completed() == 1
    assert q.pop_nowait() is not None


def test_idle_scheduler_pops_from_backoff() -> None:
    clock = FakeClock()
    q = new_queue(clock, pop_from_backoff=True)
    q.add(make_pod("p", requests={"cpu": "1"}))
    fail(q, "NodeResourcesFit")
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("x", node_name="n"), None)
    assert q.where(make_pod("p")) == BACKOFF
    qp = q.pop_nowait()
    assert qp is not None and qp.attempts == 2


def test_scheduling_gates_keep_the_pod_gated_until_removed() -> None:
    q = new_queue(FakeClock())
    gated = make_pod("g", scheduling_gates=["example.com/wait"])
    q.add(gated)
    assert q.where(gated) == GATED
    assert q.pending_pods() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    assert q.pop_nowait() is None
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n")) == 0
    assert (
        q.get(gated["metadata"]["uid"]).gating_status.message()
        == "waiting for scheduling gates: [example.com/wait]"
    )  # type: ignore[union-attr]

    q.update(gated, make_pod("g"))
    assert q.where(gated) == ACTIVE


def test_status_only_update_of_a_held_pod_keeps_it_held_without_pre_enqueue() -> None:
    """kube's ``isPodUpdated``: a held pod's status write (KEP-5501's own report) does not run
    PreEnqueue again; a change of its metadata or spec does."""
    calls: list[str] = []

    class Hold:
        name = "Hold"

        def pre_enqueue(self, pod_info: Any) -> Any:
            from scheduler.status import Code, Status

            calls.append(pod_info.name)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held")

        def events_to_register(self) -> list[Any]:
            return []

    from scheduler.framework import PluginSpec, Profile

    fw = Framework(
        Profile(plugins=[PluginSpec("PrioritySort"), PluginSpec("Hold")]),
        registry={
            "PrioritySort": __import__("scheduler.plugins.priority_sort", fromlist=["new"]).new,
            "Hold": lambda args, handle: Hold(),
        },
    )
    q = SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw})
    old = make_pod("p")
    q.add(old)
    assert q.where(old) == GATED and calls == ["p"]
    reported = make_pod("p")
    reported["metadata"]["resourceVersion"] = "2"
    reported["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "NotReadyForScheduling", "message": "held"}
    ]
    q.update(old, reported)
    assert q.where(reported) == GATED and calls == ["p"]
    # the queue keeps the pod as it is now (the report's condition is what it reads next)
    kept = q.get(reported["metadata"]["uid"])
    assert kept is not None and kept.pod["status"]["conditions"][0]["reason"] == "NotReadyForScheduling"
    relabelled = make_pod("p", labels={"a": "b"})
    q.update(reported, relabelled)
    assert q.where(relabelled) == GATED and calls == ["p", "p"]


def test_custom_pre_enqueue_gate_is_rechecked_on_its_events() -> None:
    class WaitForNode:
        """A PreEnqueue plugin gating pods until a node named ``ready`` exists."""

        name = "WaitForNode"
        ready = False

        def pre_enqueue(self, pod_info: Any) -> Any:
            from scheduler.status import Code, Status

            return None if self.ready else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no node yet")

        def events_to_register(self) -> list[Any]:
            from scheduler.events import ClusterEventWithHint

            return [ClusterEventWithHint(NODE_ADD)]

    from scheduler.framework import PluginSpec, Profile

    gate = WaitForNode()
    fw = Framework(
        Profile(plugins=[PluginSpec("PrioritySort"), PluginSpec("WaitForNode")]),
        registry={
            "PrioritySort": __import__("scheduler.plugins.priority_sort", fromlist=["new"]).new,
            "WaitForNode": lambda args, handle: gate,
        },
    )
    q = SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw})
    q.add(make_pod("p"))
    assert q.where(make_pod("p")) == GATED
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n")) == 0
    gate.ready = True
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("ready")) == 1
    assert q.where(make_pod("p")) == ACTIVE


def test_parked_pods_are_flushed_after_five_minutes() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(make_pod("p", node_selector={"x": "y"}))
    fail(q, "NodeAffinity")
    clock.step(299)
    assert q.flush_unschedulable_leftover() == 0
    clock.step(2)
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(make_pod("p")) == ACTIVE  # backoff (1s) long over


@pytest.mark.parametrize(
    ("name", "change", "want"),
    [
        ("spec change requeues", lambda p: p["spec"].update(nodeSelector={"x": "z"}), BACKOFF),
        (
            "status-only change keeps it parked",
            lambda p: p["status"].update(conditions=[{"type": "PodScheduled"}]),
            UNSCHEDULABLE,
        ),
        ("label change requeues", lambda p: p["metadata"].update(labels={"a": "b"}), BACKOFF),
    ],
)
def test_update_of_a_parked_pod(name: str, change: Any, want: str) -> None:
    q = new_queue(FakeClock(), pop_from_backoff=False)
    old = make_pod("p", node_selector={"x": "y"})
    q.add(old)
    fail(q, "NodeAffinity")
    new = make_pod("p", node_selector={"x": "y"})
    change(new)
    q.update(old, new)
    assert q.where(new) == want


def test_delete_removes_the_pod_everywhere() -> None:
    q = new_queue(FakeClock())
    p = make_pod("p")
    q.add(p)
    q.delete(p)
    assert q.where(p) is None and q.pop_nowait() is None


def test_pod_deleted_while_in_flight_is_not_requeued() -> None:
    q = new_queue(FakeClock())
    p = make_pod("p")
    q.add(p)
    qp = q.pop_nowait()
    assert qp is not None
    q.delete(p)
    qp.unschedulable_plugins = {"NodeResourcesFit"}
    assert q.add_unschedulable_if_not_present(qp) == ""
    assert q.where(p) is None


def test_activate_moves_parked_pods_now() -> None:
    q = new_queue(FakeClock())
    p = make_pod("p", node_selector={"x": "y"})
    q.add(p)
    fail(q, "NodeAffinity")
    q.activate([p])
    assert q.where(p) == ACTIVE


def test_nominated_pods_by_node() -> None:
    q = new_queue(FakeClock())
    p = make_pod("p", priority=10, nominated_node_name="n1")
    q.add(p)
    assert [pi.name for pi in q.nominated_pods_for_node("n1")] == ["p"]
    cleared = make_pod("p", priority=10)
    q.update(p, cleared)
    assert q.nominated_pods_for_node("n1") == []
    q.update(cleared, p)
    q.delete(p)
    assert q.nominated_pods_for_node("n1") == []


@pytest.mark.anyio
async def test_pop_waits_for_a_pod_and_close_releases_it() -> None:
    q = new_queue(FakeClock())
    waiter = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.add(make_pod("p"))
    qp = await asyncio.wait_for(waiter, 1)
    assert qp is not None and qp.pod_info.name == "p"

    closed = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    q.close()
    assert await asyncio.wait_for(closed, 1) is None


def test_pending_pods_metric() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    q = new_queue(FakeClock())
    q.add(make_pod("a"))
    q.add(make_pod("g", scheduling_gates=["x"]))
    metrics.set_pending(q.pending_pods())
    for queue, want in [("active", 1), ("backoff", 0), ("unschedulable", 0), ("gated", 1)]:
        assert registry.get_sample_value("scheduler_pending_pods", {"queue": queue}) == want


def test_unscheduled_pod_add_rechecks_a_gang_gate() -> None:
    """A PreEnqueue gate counting group members lets the group in when the last member arrives."""
    from scheduler.events import UNSCHEDULED_POD_ADD, ClusterEventWithHint
    from scheduler.framework import PluginSpec, Profile
    from scheduler.plugins import priority_sort
    from scheduler.status import Code, Status

    class GangGate:
        name = "GangGate"

        def __init__(self) -> None:
            self.seen: set[str] = set()

        def pre_enqueue(self, pod_info: Any) -> Any:
            self.seen.add(pod_info.name)
            if len(self.seen) < 2:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    "waiting for minCount pods from a gang to appear in scheduling queue",
                )
            return None

        def events_to_register(self) -> list[Any]:
            return [ClusterEventWithHint(UNSCHEDULED_POD_ADD)]

    gate = GangGate()
    fw = Framework(
        Profile(plugins=[PluginSpec("PrioritySort"), PluginSpec("GangGate")]),
        registry={"PrioritySort": priority_sort.new, "GangGate": lambda args, handle: gate},
    )
    q = SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw})
    q.add(make_pod("m0"))
    assert q.where(make_pod("m0")) == GATED
    q.add(make_pod("m1"))
    assert (q.where(make_pod("m0")), q.where(make_pod("m1"))) == (ACTIVE, ACTIVE)


def test_gated_pods_share_their_holding_plugins_and_no_pod_owns_an_empty_set() -> None:
    """A pod's rejecting and pending plugins are replaced, never changed in place: pods held by one
    plugin share one immutable set of it, and a pod with none shares the empty one (a gang's
    members wait gated by thousands; a set each was two GC-tracked objects per member)."""
    from scheduler.queue import NO_PLUGINS

    q = new_queue(FakeClock())
    pods = [make_pod(f"g{i}", scheduling_gates=["example.com/wait"]) for i in range(50)]
    for p in pods:
        q.add(p)
    held = [q.get(p["metadata"]["uid"]) for p in pods]
    assert all(h is not None and q.where(p) == GATED for h, p in zip(held, pods, strict=True))
    assert {id(h.unschedulable_plugins) for h in held if h is not None} == {id(held[0].unschedulable_plugins)}  # type: ignore[union-attr]
    assert held[0].unschedulable_plugins == {"SchedulingGates"}  # type: ignore[union-attr]
    assert all(h.pending_plugins is NO_PLUGINS for h in held if h is not None)
    q.add(make_pod("free"))
    free = q.pop_nowait()
    assert (
        free is not None and free.unschedulable_plugins is NO_PLUGINS and free.pending_plugins is NO_PLUGINS
    )
    assert isinstance(NO_PLUGINS, frozenset) and not NO_PLUGINS
