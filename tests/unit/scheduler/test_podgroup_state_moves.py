"""PodGroupStates: a member moving between states (unscheduled -> assumed -> assigned) keeps its
group's state object, so a PodGroup cycle holding that object sees the move - including for a
gang of one, whose only member leaving ``unscheduled`` would otherwise empty (and drop) it."""

from __future__ import annotations

from scheduler.podgroups import ASSIGNED, ASSUMED, UNSCHEDULED, PodGroupStates
from scheduler.testing import make_pod


def test_a_gang_of_one_keeps_its_state_object_through_assume_and_assign() -> None:
    pod = make_pod("solo-0")
    pod["spec"]["schedulingGroup"] = {"podGroupName": "solo"}
    states = PodGroupStates()
    states.set(pod, UNSCHEDULED)
    held = states.get("default/solo")
    assert held is not None and held.all_count() == 1
    states.set(pod, ASSUMED, "n1")
    assert states.get("default/solo") is held and held.scheduled_count() == 1
    states.set(pod, ASSIGNED, "n1")
    assert states.get("default/solo") is held and held.assigned == {"default/solo-0": "n1"}
    states.remove(pod)
    assert states.get("default/solo") is None and len(states) == 0


def test_a_pod_leaving_for_another_group_empties_the_old_one() -> None:
    pod = make_pod("p")
    pod["spec"]["schedulingGroup"] = {"podGroupName": "a"}
    states = PodGroupStates()
    states.set(pod, UNSCHEDULED)
    moved = {**pod, "spec": {**pod["spec"], "schedulingGroup": {"podGroupName": "b"}}}
    states.set(moved, UNSCHEDULED)
    assert states.get("default/a") is None and states.get("default/b") is not None
