"""PodGroupStates: a member moving between states (unscheduled -> assumed -> assigned) keeps its
group's state object, so a PodGroup cycle holding that object sees the move - including for a
gang of one, whose only member leaving ``unscheduled`` would otherwise empty (and drop) it.
Members in one state of one group share one ``(group, state)`` record (a gang's thousands)."""

from __future__ import annotations

import random

import pytest

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


@pytest.mark.parametrize("seed", range(6))
def test_members_share_one_where_pair_per_group_and_state(seed: int) -> None:
    """Random sets, confirms, moves between groups and removals: every pod's recorded (group,
    state) is what the calls say (a model kept beside), members in one state of one group share
    one tuple, and the shared tuples are those of the groups alive only."""
    rng = random.Random(seed)
    states = PodGroupStates()
    model: dict[str, tuple[str, str]] = {}
    pods = {}
    for step in range(400):
        name = f"p{rng.randrange(30)}"
        group = rng.choice(["a", "b", "c"])
        pod = make_pod(name)
        pod["spec"]["schedulingGroup"] = {"podGroupName": group}
        key = f"default/{name}"
        op = rng.random()
        if op < 0.6:
            state = rng.choice([UNSCHEDULED, ASSUMED, ASSIGNED])
            states.set(pod, state, "n1" if state != UNSCHEDULED else "")
            model[key] = (f"default/{group}", state)
            pods[key] = pod
        elif op < 0.8 and key in model:
            ok = states.confirm(key, "n2")
            assert ok == (model[key][1] == ASSUMED), step
            if ok:
                model[key] = (model[key][0], ASSIGNED)
        elif key in model:
            states.remove(pods[key])
            del model[key]
        assert states._where == model, step
        assert {states.state_of(p) for k, p in pods.items() if k not in model} <= {""}
        by_value: dict[tuple[str, str], set[int]] = {}
        for pair in states._where.values():
            by_value.setdefault(pair, set()).add(id(pair))
        assert all(len(ids) == 1 for ids in by_value.values()), step  # one tuple per group and state
        assert {g for g, _ in states._pairs} <= set(states._groups), step  # dropped with their group
        assert set(by_value) <= set(states._pairs), step
    for key in list(model):
        states.remove(pods[key])
    assert not states._where and not states._groups and not states._pairs  # nothing kept for gone groups
