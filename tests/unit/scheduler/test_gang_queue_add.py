"""The queue's add of a created pod and GangScheduling's PreEnqueue, against their general paths.

``SchedulingQueue.add`` runs PreEnqueue and places the new pod itself instead of through
``_move_to_active`` (the pod is in no sub-queue once ``add`` cleared them), and
``GangScheduling.pre_enqueue`` reads its two gates once per ``FeatureGate`` object. Random
histories of gang members arriving (some gated, some moving to another group, some of another profile, some in groups whose
PodGroup comes later), PodGroups appearing or changing (minCount, the initially-scheduled
condition), gates swapped on the handle, updates, deletes and pops are replayed on a queue with
these paths and on one with the general ones (``_move_to_active`` for every add; the plugin's
code as it was, reading the gates each call). Every pod's sub-queue, PreEnqueue verdict and
holding plugins, the pending counts and the pop order must agree after every step, and the
cache's members per PodGroup (``PodGroupStates.set``, which skips the drop of a pod it never
recorded) and the queue's (``_track_group``) must equal those counted afresh.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from featuregates import (
    GENERIC_WORKLOAD,
    POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY,
    FeatureGate,
)
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.events import UNSCHEDULED_POD_ADD
from scheduler.framework import Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.plugins import gang_scheduling
from scheduler.plugins.gang_scheduling import (
    WAITING_FOR_MIN_COUNT,
    GangScheduling,
    waiting_for_pod_group,
)
from scheduler.podgroup_status import replacements_schedule_freely
from scheduler.podgroups import gang_min_count, is_gang, min_count, pod_group_key, pod_group_name
from scheduler.queue import SchedulingQueue
from scheduler.status import Code, Status
from scheduler.testing import FakeClock, make_pod

GATE_SETS = [
    FeatureGate(),
    FeatureGate(overrides={GENERIC_WORKLOAD: False}),
    FeatureGate(overrides={POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY: True}),
    None,
]


class _ReferenceGang(GangScheduling):
    """The plugin's PreEnqueue as it was before the per-gate-set flags (the general path)."""

    def pre_enqueue(self, pod_info: PodInfo) -> Status | None:
        name = pod_group_name(pod_info.pod)
        if not name or not self._enabled():
            return None
        getter = self.handle.get_pod_group
        ns = (pod_info.pod.get("metadata") or {}).get("namespace", "")
        pg = getter(ns, name) if getter is not None else None
        if pg is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, waiting_for_pod_group(name))
        if not is_gang(pg) or replacements_schedule_freely(self.handle.gates, pg):
            return None
        state_of = self.handle.pod_group_state
        st = state_of(pod_info.namespace, name) if state_of is not None else None
        known = st.all_count() if st is not None else 0
        if known < min_count(pg):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_MIN_COUNT)
        return None


class _ReferenceQueue(SchedulingQueue):
    """``add`` through ``_move_to_active``, as before the inlined placement (the general path)."""

    def add(self, pod: Any) -> None:
        q = self._new(pod)
        self._remove_everywhere(q.uid)
        self._track_group(q.uid, pod)
        if self._move_to_active(q):
            self._activate_held_members(q)
        self._add_nominated_from_status(q.pod_info)
        if self._interested(UNSCHEDULED_POD_ADD):
            self.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, pod)
        else:
            self._record_event([UNSCHEDULED_POD_ADD], None, pod)


class _Plane:
    """A cache, a framework (two profiles) and a queue, fed as the scheduler's handlers feed them."""

    def __init__(self, reference: bool) -> None:
        self.cache = Cache()
        registry = default_registry()
        if reference:
            registry[gang_scheduling.NAME] = lambda args, handle: _ReferenceGang(args, handle)
        self.handle = Handle(
            rng=random.Random(1),
            get_pod_group=self.cache.get_pod_group,
            pod_group_state=self.cache.pod_group_state,
            gates=GATE_SETS[0],
        )
        fw = Framework(default_profile(), self.handle, registry=registry)
        other = Framework(default_profile(), self.handle, registry=registry)
        cls = _ReferenceQueue if reference else SchedulingQueue
        self.queue = cls(
            fw.queue_sort_less,
            FakeClock(),
            {"default-scheduler": fw, "other": other},
            sort_key=fw.queue_sort_key(),
        )
        self.handle.nominator = self.queue
        self.pods: dict[str, Any] = {}
        #: uid -> the group of the pod as last added (the queue tracks a pod's group on add)
        self.added_group: dict[str, str] = {}

    def add(self, pod: Any) -> None:
        self.pods[pod["metadata"]["uid"]] = pod
        self.added_group[pod["metadata"]["uid"]] = pod_group_key(pod)
        self.cache.add_unscheduled_pod(pod)
        self.queue.add(pod)

    def update(self, old: Any, new: Any) -> None:
        self.pods[new["metadata"]["uid"]] = new
        self.cache.add_unscheduled_pod(new)
        self.queue.update(old, new)

    def delete(self, pod: Any) -> None:
        self.pods.pop(pod["metadata"]["uid"], None)
        self.added_group.pop(pod["metadata"]["uid"], None)
        self.cache.remove_unscheduled_pod(pod)
        self.queue.delete(pod)

    def pod_group(self, pg: Any) -> None:
        self.cache.add_pod_group(pg)
        meta = pg["metadata"]
        self.queue.pod_group_changed(f"{meta['namespace']}/{meta['name']}")

    def pop(self) -> list[str]:
        q = self.queue.pop_nowait()
        if q is None:
            return []
        key = self.queue.group_of(q.uid)
        members = [q] + (self.queue.pop_group_members(key, exclude=q.uid) if key else [])
        for m in members:
            self.queue.done(m.uid)
            self.delete(m.pod)
        return [m.uid for m in members]

    def group_counts(self) -> dict[str, set[str]]:
        """The cache's members per PodGroup (``PodGroupStates``, written by ``add_unscheduled_pod``)."""
        groups = self.cache.pod_groups
        return {k: set(groups.get(k).unscheduled) for k in list(groups._groups)}  # type: ignore[union-attr]

    def expected_group_counts(self) -> dict[str, set[str]]:
        """The same counted afresh from the pods the plane holds."""
        out: dict[str, set[str]] = {}
        for pod in self.pods.values():
            key = pod_group_key(pod)
            if key:
                out.setdefault(key, set()).add(f"default/{pod['metadata']['name']}")
        return out

    def queue_groups(self) -> dict[str, set[str]]:
        """The queue's members per PodGroup (by uid; ``_track_group``)."""
        return {k: set(v) for k, v in self.queue._group_members.items()}

    def expected_queue_groups(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for uid, key in self.added_group.items():
            if key:
                out.setdefault(key, set()).add(uid)
        return out

    def view(self) -> Any:
        out = []
        for uid in sorted(self.pods):
            q = self.queue.get(uid)
            s = q.gating_status if q is not None else None
            out.append(
                (
                    uid,
                    self.queue.where(uid),
                    q is not None and q.gated,
                    s.message() if s is not None else None,
                    s.plugin if s is not None else None,
                    sorted(q.unschedulable_plugins) if q is not None else None,
                )
            )
        return out, self.queue.pending_pods(), self.queue.pending_pod_groups()


def _pod(rng: random.Random, i: int) -> Any:
    pod = make_pod(f"p{i}", uid=f"u{i}")
    group = rng.choice(["a", "b", "c", "d", ""])
    if group:
        pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    if rng.random() < 0.15:
        pod["spec"]["schedulingGates"] = [{"name": "hold"}]
    if rng.random() < 0.1:
        pod["spec"]["schedulerName"] = "other"
    return pod


def _pod_group(rng: random.Random, name: str) -> Any:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if rng.random() < 0.8:
        spec = {"schedulingPolicy": {"gang": {"minCount": rng.randint(1, 5)}}}
    pg: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
        "spec": spec,
    }
    if rng.random() < 0.3:
        pg["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True"}]}
    return pg


def _step(rng: random.Random, planes: list[_Plane], i: int) -> None:
    r = rng.random()
    pods = planes[0].pods
    if r < 0.5 or not pods:
        pod = _pod(rng, i)
        if pods and rng.random() < 0.2:  # an Add again for a known pod (a re-list), its group maybe new
            known = pods[rng.choice(sorted(pods))]
            pod = {**pod, "metadata": known["metadata"]}
        for p in planes:
            p.add(pod)
    elif r < 0.62:
        pg = _pod_group(rng, rng.choice("abcd"))
        for p in planes:
            p.pod_group(pg)
    elif r < 0.7:
        gates = rng.choice(GATE_SETS)
        if rng.random() < 0.3 and gates is not None:
            gates = gates.with_overrides({})  # an equal set, another object
        for p in planes:
            p.handle.gates = gates
    elif r < 0.8:
        old = pods[rng.choice(sorted(pods))]
        new = {**old, "spec": {k: v for k, v in old["spec"].items() if k != "schedulingGates"}}
        if rng.random() < 0.3:  # another group (or none): the member leaves its old group's count
            group = rng.choice(["a", "b", "c", "d", ""])
            new["spec"].pop("schedulingGroup", None)
            if group:
                new["spec"]["schedulingGroup"] = {"podGroupName": group}
        new["metadata"] = {**old["metadata"], "labels": {"step": str(i)}}
        for p in planes:
            p.update(old, new)
    elif r < 0.88:
        pod = pods[rng.choice(sorted(pods))]
        for p in planes:
            p.delete(pod)
    else:
        popped = [p.pop() for p in planes]
        assert popped[0] == popped[1]


@pytest.mark.parametrize("seed", range(30))
def test_add_and_pre_enqueue_equal_the_general_paths(seed: int) -> None:
    rng = random.Random(seed)
    planes = [_Plane(reference=False), _Plane(reference=True)]
    for i in range(120):
        _step(rng, planes, i)
        assert planes[0].view() == planes[1].view(), f"step {i}"
        assert planes[0].group_counts() == planes[0].expected_group_counts(), f"step {i}"
        assert planes[0].queue_groups() == planes[0].expected_queue_groups(), f"step {i}"
    while True:
        popped = [p.pop() for p in planes]
        assert popped[0] == popped[1]
        if not popped[0]:
            break


def test_the_flags_follow_the_handles_gates() -> None:
    handle = Handle(gates=FeatureGate())
    plugin = GangScheduling(None, handle)
    assert plugin._gate_flags() == (True, False)
    handle.gates = FeatureGate(
        overrides={GENERIC_WORKLOAD: False, POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY: True}
    )
    assert plugin._gate_flags() == (False, True)
    handle.gates = None
    assert plugin._gate_flags() == (True, False)


def _shapes() -> list[Any]:
    """Pods and PodGroups with every field of the read missing, empty, ``None`` or set."""
    pods: list[Any] = [{}, {"spec": None}, {"metadata": None, "spec": {}}]
    for group in (None, {}, {"podGroupName": None}, {"podGroupName": ""}, {"podGroupName": "g"}):
        for meta in (None, {}, {"namespace": ""}, {"namespace": "ns"}):
            pods.append({"metadata": meta, "spec": {"schedulingGroup": group}})
    return pods


def test_pod_group_key_reads_the_name_as_pod_group_name() -> None:
    for pod in _shapes():
        name = pod_group_name(pod)
        ns = (pod.get("metadata") or {}).get("namespace", "")
        assert pod_group_key(pod) == (f"{ns}/{name}" if name else ""), pod


def test_gang_min_count_is_is_gang_and_min_count() -> None:
    groups: list[Any] = [{}, {"spec": None}, {"spec": {"schedulingPolicy": None}}]
    for gang in (
        None,
        {},
        {"minCount": None},
        {"minCount": 0},
        {"minCount": -2},
        {"minCount": 1},
        {"minCount": 7},
        {"minCount": "3"},
    ):
        groups.append({"spec": {"schedulingPolicy": {"gang": gang}}})
        groups.append({"spec": {"schedulingPolicy": {"basic": {}, "gang": gang}}})
    for pg in groups:
        assert gang_min_count(pg) == (min_count(pg) if is_gang(pg) else None), pg


@pytest.mark.parametrize("seed", range(6))
def test_members_waiting_for_min_count_share_one_status(seed: int) -> None:
    """Every member held for its gang's minCount holds its profile's plugin's one status (equal,
    above, to the reference's fresh one per call): no Status and reasons list of its own."""
    rng = random.Random(seed)
    planes = [_Plane(reference=False), _Plane(reference=True)]
    most = 0
    for i in range(120):
        _step(rng, planes, i)
        plane = planes[0]
        held = [plane.queue.get(uid) for uid in plane.pods]
        waiting = [
            q.gating_status
            for q in held
            if q is not None
            and q.gating_status is not None
            and q.gating_status.message() == WAITING_FOR_MIN_COUNT
        ]
        assert len({id(s) for s in waiting}) <= 2, f"step {i}"  # (the plane has two profiles)
        most = max(most, len(waiting))
    assert most > 1  # several members did wait at once
