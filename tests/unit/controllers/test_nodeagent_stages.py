"""The node agent's stage table, driven without an API server.

A small in-memory driver plays the agent's role (evaluate stages, apply the due one to the pod
dict, keep the record and node usage) with a fake clock, so each lifecycle reads as a script:
which stages ran, in which order, and what status they left behind.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.meta import FakeClock, rfc3339
from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.admission import pod_request_units
from controllers.nodeagent.stages import (
    LEASE_STAGES,
    NODE_STAGES,
    POD_STAGES,
    Action,
    AgentOptions,
    NodeContext,
    NodeState,
    PodContext,
    PodRecord,
    Stage,
    backoff,
    select,
)
from controllers.nodeagent.status import NOT_READY_TAINT_KEY, container_state, is_ready, phase_of


def make_pod(
    annotations: dict[str, str] | None = None, restart: str = "Always", cpu: str = "1", grace: int = 30
) -> Obj:
    md: Obj = {"name": "web-0", "namespace": "default", "uid": "uid-1", "generation": 1}
    if annotations:
        md["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {
            "nodeName": "n1",
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": grace,
            "initContainers": [{"name": "setup", "image": "busybox"}],
            "containers": [{"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}
            ],
        },
    }


def make_node_state(cpu: int = 4000) -> NodeState:
    return NodeState(
        name="n1",
        ordinal=0,
        internal_ip="172.16.0.2",
        pod_cidr="10.128.0.0/24",
        allocatable={"cpu": cpu, "pods": 110},
    )


@dataclass
class Driver:
    """Applies due stages the way the agent does, minus the API."""

    pod: Obj
    node: NodeState | None
    clock: FakeClock = field(default_factory=FakeClock)
    options: AgentOptions = field(default_factory=AgentOptions)
    ran: list[str] = field(default_factory=list)
    deleted: bool = False
    events: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        md = self.pod["metadata"]
        self.rec = PodRecord(
            key="default/web-0", uid=md["uid"], node="n1", request=pod_request_units(self.pod)
        )

    def run(self) -> float | None:
        """Apply every stage due now; return the next deadline (monotonic) or None."""
        for _ in range(50):
            if self.deleted:
                return None
            if self.node is None and self.rec.orphaned is None:
                self.rec.orphaned = self.clock.monotonic()
            if self.pod["metadata"].get("deletionTimestamp") and self.rec.deleting is None:
                self.rec.deleting = self.clock.monotonic()
            ctx = PodContext(
                self.pod, self.rec, self.node, self.clock.now(), self.clock.monotonic(), self.options
            )
            picked = select(POD_STAGES, ctx, self.options.time_scale)
            if picked is None:
                return None
            stage, due = picked
            if due > ctx.mono:
                return due
            self.apply(stage, stage.apply(ctx))
        raise AssertionError(f"stages do not settle: {self.ran[-10:]}")

    def apply(self, stage: Stage[Any], action: Action) -> None:
        self.ran.append(stage.name)
        if action.admit and self.node is not None:
            self.node.usage.admit(self.rec.key, self.rec.request)
            self.rec.admitted = True
            self.rec.pod_ip = self.rec.pod_ip or "10.128.0.2"
        if action.release and self.rec.admitted:
            self.rec.admitted = False
            if self.node is not None:
                self.node.usage.release(self.rec.key, self.rec.request)
        if action.status is not None:
            self.pod = {**self.pod, "status": copy.deepcopy(action.status)}
        self.rec.flags = self.rec.flags.union(action.flags)
        for k, v in action.mark.items():
            setattr(self.rec, k, v)
        self.events += [e.reason for e in action.events]
        if action.delete:
            self.deleted = True

    def advance(self, seconds: float) -> float | None:
        self.clock.step(seconds)
        return self.run()

    def delete(self, grace: int = 30) -> None:
        self.pod["metadata"]["deletionTimestamp"] = rfc3339(self.clock.now() + grace)
        self.pod["metadata"]["deletionGracePeriodSeconds"] = grace


def cstatus(pod: Obj) -> Obj:
    return pod["status"]["containerStatuses"][0]


def cond(pod: Obj, ctype: str) -> Obj:
    return next(c for c in pod["status"]["conditions"] if c["type"] == ctype)


# ============================================================================ start & readiness


def test_a_bound_pod_runs_and_is_ready_in_one_write() -> None:
    d = Driver(make_pod(), make_node_state())
    assert d.run() is None
    assert d.ran == ["pod-admit", "pod-start"]
    st = d.pod["status"]
    assert st["phase"] == "Running" and st["podIP"] == "10.128.0.2" and st["hostIP"] == "172.16.0.2"
    assert st["podIPs"] == [{"ip": "10.128.0.2"}] and st["hostIPs"] == [{"ip": "172.16.0.2"}]
    assert st["startTime"] == rfc3339(d.clock.now()) and st["qosClass"] == "Burstable"
    assert [c["type"] for c in st["conditions"]] == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c["status"] == "True" for c in st["conditions"])
    assert cond(d.pod, "PodScheduled")["lastTransitionTime"] == "2020-01-01T00:00:00Z", (
        "unchanged status keeps its time"
    )
    cs = cstatus(d.pod)
    assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
    assert cs["state"] == {"running": {"startedAt": rfc3339(d.clock.now())}}
    assert cs["image"] == "docker.io/library/nginx:1.27" and cs["imageID"].startswith(
        "docker.io/library/nginx@sha256:"
    )
    assert cs["containerID"].startswith("containerd://")
    init = st["initContainerStatuses"][0]
    assert (
        init["state"]["terminated"]["reason"] == "Completed" and init["state"]["terminated"]["exitCode"] == 0
    )
    assert d.events == ["Pulled", "Created", "Started", "Pulled", "Created", "Started"]


def test_ready_after_delays_only_readiness() -> None:
    d = Driver(make_pod({ann.READY_AFTER: "2s"}), make_node_state())
    due = d.run()
    assert d.ran == ["pod-admit", "pod-start"] and due == d.clock.monotonic() + 2
    assert phase_of(d.pod) == "Running" and not is_ready(d.pod)
    ready = cond(d.pod, "Ready")
    assert (
        ready["reason"] == "ContainersNotReady"
        and ready["message"] == "containers with unready status: [app]"
    )
    assert d.advance(1.9) is not None and not is_ready(d.pod)
    assert d.advance(0.1) is None
    assert is_ready(d.pod) and d.ran[-1] == "pod-ready" and cstatus(d.pod)["ready"]


def test_the_agent_ready_delay_and_time_scale_combine() -> None:
    d = Driver(
        make_pod({ann.READY_AFTER: "2s"}),
        make_node_state(),
        options=AgentOptions(ready_delay=5, time_scale=0.5),
    )
    due = d.run()
    assert due == d.clock.monotonic() + 2.5  # max(5, 2) * 0.5


def test_never_ready_runs_forever_unready() -> None:
    d = Driver(make_pod({ann.NEVER_READY: "true"}), make_node_state())
    assert d.run() is None
    assert phase_of(d.pod) == "Running" and not is_ready(d.pod)
    assert d.advance(3600) is None and not is_ready(d.pod)


# ============================================================================ admission


def test_a_pod_that_does_not_fit_is_rejected_with_kubelets_reason() -> None:
    node = make_node_state(cpu=4000)
    node.usage.admit("default/other", {"cpu": 2000})
    d = Driver(make_pod(cpu="4"), node)
    assert d.run() is None
    assert d.ran == ["pod-admit"]
    st = d.pod["status"]
    assert st["phase"] == "Failed" and st["reason"] == "OutOfcpu"
    assert (
        st["message"]
        == "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 2000, capacity: 4000"
    )
    assert "containerStatuses" not in st and d.events == ["OutOfcpu"]
    assert node.usage.pods == {"default/other"}


# ============================================================================ completion & failure


@pytest.mark.parametrize(("restart", "phase"), [("Never", "Succeeded"), ("OnFailure", "Succeeded")])
def test_complete_after_finishes_non_restarting_pods(restart: str, phase: str) -> None:
    node = make_node_state()
    d = Driver(make_pod({ann.COMPLETE_AFTER: "5s"}, restart=restart), node)
    assert d.run() == d.clock.monotonic() + 5
    assert is_ready(d.pod)
    assert d.advance(5) is None
    assert d.ran[-1] == "pod-finish" and phase_of(d.pod) == phase
    term = cstatus(d.pod)["state"]["terminated"]
    assert term["exitCode"] == 0 and term["reason"] == "Completed"
    assert (
        cond(d.pod, "Ready")["reason"] == "PodCompleted"
        and cond(d.pod, "PodReadyToStartContainers")["status"] == "False"
    )
    assert not node.usage.pods, "a finished pod gives its resources back"


@pytest.mark.parametrize("restart", ["Never", "OnFailure"])
def test_run_to_completion_pods_without_annotation_succeed_after_default_run(restart: str) -> None:
    d = Driver(make_pod({}, restart=restart), make_node_state())
    assert d.run() == d.clock.monotonic() + AgentOptions().run_to_completion
    assert d.advance(AgentOptions().run_to_completion) is None
    assert d.ran[-1] == "pod-finish" and phase_of(d.pod) == "Succeeded"


def test_run_to_completion_default_off_keeps_pods_running() -> None:
    d = Driver(make_pod({}, restart="Never"), make_node_state(), options=AgentOptions(run_to_completion=None))
    assert d.run() is None
    assert phase_of(d.pod) == "Running"


def test_complete_after_is_ignored_for_restart_always() -> None:
    d = Driver(make_pod({ann.COMPLETE_AFTER: "5s"}, restart="Always"), make_node_state())
    assert d.run() is None
    assert phase_of(d.pod) == "Running"


def test_fail_fails_right_after_start_with_exit_code_1() -> None:
    d = Driver(make_pod({ann.FAIL: "true"}), make_node_state())
    assert d.run() is None
    assert d.ran == ["pod-admit", "pod-start", "pod-finish"]
    assert phase_of(d.pod) == "Failed"
    term = cstatus(d.pod)["state"]["terminated"]
    assert term["exitCode"] == 1 and term["reason"] == "Error"
    assert cond(d.pod, "Ready")["reason"] == "PodFailed"


def test_fail_with_complete_after_fails_later() -> None:
    d = Driver(make_pod({ann.FAIL: "true", ann.COMPLETE_AFTER: "1m"}, restart="Never"), make_node_state())
    assert d.run() == d.clock.monotonic() + 60
    assert d.advance(60) is None and phase_of(d.pod) == "Failed"


# ============================================================================ crash loop


def test_crash_backs_off_with_growing_restart_counts() -> None:
    d = Driver(make_pod({ann.CRASH: "true"}), make_node_state())
    assert d.run() == d.clock.monotonic() + 1  # runs crash_run (1 s) before exiting
    assert not is_ready(d.pod)
    assert d.advance(1) == d.clock.monotonic() + 10
    cs = cstatus(d.pod)
    assert (
        cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["restartCount"] == 0 and not cs["ready"]
    )
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert phase_of(d.pod) == "Running" and not is_ready(d.pod) and d.events[-1] == "BackOff"
    d.advance(10)  # restarted, runs 1 s, exits, backs off 20 s
    assert cstatus(d.pod)["restartCount"] == 1 and container_state(d.pod) == "running"
    d.advance(1)
    assert container_state(d.pod) == "waiting"
    assert "back-off 20s" in cstatus(d.pod)["state"]["waiting"]["message"]
    d.advance(20)
    assert cstatus(d.pod)["restartCount"] == 2
    assert [backoff(n) for n in (0, 1, 2, 4, 5, 10)] == [10, 20, 40, 160, 300, 300]


def test_crash_with_restart_never_fails_the_pod() -> None:
    d = Driver(make_pod({ann.CRASH: "true"}, restart="Never"), make_node_state())
    d.run()
    d.advance(1)
    assert phase_of(d.pod) == "Failed" and cstatus(d.pod)["state"]["terminated"]["exitCode"] == 1


# ============================================================================ deletion & GC


def test_graceful_deletion_stops_containers_after_the_scaled_grace_period() -> None:
    node = make_node_state()
    d = Driver(make_pod(grace=30), node, options=AgentOptions(time_scale=0.1))
    d.run()
    d.delete(30)
    assert d.run() == pytest.approx(d.clock.monotonic() + 3.0)
    assert d.ran[-1] == "pod-kill" and d.events[-1] == "Killing" and not d.deleted
    assert d.advance(2.9) is not None and not d.deleted
    d.advance(0.1)
    assert d.ran[-1] == "pod-delete" and d.deleted
    assert phase_of(d.pod) == "Succeeded" and cstatus(d.pod)["state"]["terminated"]["exitCode"] == 0
    assert not node.usage.pods


def test_a_shorter_second_grace_period_wins() -> None:
    d = Driver(make_pod(grace=30), make_node_state())
    d.run()
    d.delete(30)
    d.run()
    d.clock.step(1)
    d.delete(5)
    assert d.run() == d.rec.deleting + 5


def test_deleting_a_pod_that_never_started_removes_it_at_once() -> None:
    node = make_node_state(cpu=1000)
    d = Driver(make_pod(cpu="2"), node)
    d.run()  # rejected: never started
    d.delete(30)
    d.run()
    assert d.ran[-1] == "pod-delete-unstarted" and d.deleted


def test_pods_of_a_vanished_node_are_collected_after_the_quarantine() -> None:
    d = Driver(make_pod(), None, options=AgentOptions(orphan_quarantine=40, time_scale=0.5))
    assert d.run() == d.clock.monotonic() + 20
    d.advance(20)
    assert d.ran == ["pod-orphaned"] and d.deleted
    dt = cond(d.pod, "DisruptionTarget")
    assert dt["reason"] == "DeletionByPodGC" and dt["message"] == "PodGC: node no longer exists"
    assert phase_of(d.pod) == "Failed"


# ============================================================================ selection rule


def test_the_earliest_due_matching_stage_wins_and_ties_keep_list_order() -> None:
    def stage(name: str, delay: float) -> Stage[Any]:
        return Stage(name, lambda c: True, lambda c: Action(), lambda c, d=delay: d)

    @dataclass
    class Ctx:
        mono: float = 100.0

    stages = [stage("slow", 5), stage("fast", 1), stage("fast-too", 1)]
    picked = select(stages, Ctx(), 2.0)
    assert picked is not None and picked[0].name == "fast" and picked[1] == 102.0
    unscaled = Stage("hb", lambda c: True, lambda c: Action(), lambda c: 3, scaled=False)
    picked = select([unscaled], Ctx(), 0.01)
    assert picked is not None and picked[1] == 103.0
    assert select([Stage("never", lambda c: False, lambda c: Action())], Ctx(), 1.0) is None


# ============================================================================ node stages


def test_node_stages_register_then_untaint_then_heartbeat() -> None:
    clock = FakeClock()
    opts = AgentOptions(status_report_interval=60, time_scale=0.01)
    node: Obj = {
        "metadata": {"name": "n1", "labels": {"kubernetes.io/arch": "arm64"}},
        "spec": {
            "taints": [
                {"key": NOT_READY_TAINT_KEY, "effect": "NoSchedule"},
                {"key": "x", "effect": "NoSchedule"},
            ]
        },
        "status": {"capacity": {"cpu": "8"}},
    }
    state = NodeState(name="n1", ordinal=3, internal_ip="172.16.0.5", pod_cidr="10.128.3.0/24")
    ran: list[str] = []
    for _ in range(10):
        ctx = NodeContext(node, state, clock.now(), clock.monotonic(), opts)
        picked = select(NODE_STAGES, ctx, opts.time_scale)
        assert picked is not None
        stage, due = picked
        if due > ctx.mono:
            break
        action = stage.apply(ctx)
        ran.append(stage.name)
        if action.status is not None:
            node = {**node, "status": action.status}
        if action.spec is not None:
            node = {**node, "spec": {**node["spec"], **action.spec}}
        for k, v in action.mark.items():
            setattr(state, k, v)
    assert ran == ["node-pod-cidr", "node-status", "node-untaint"]
    assert due == clock.monotonic() + 60, "heartbeats are real rates: not scaled"
    assert node["spec"]["podCIDR"] == "10.128.3.0/24" and node["spec"]["taints"] == [
        {"key": "x", "effect": "NoSchedule"}
    ]
    st = node["status"]
    assert (
        st["allocatable"] == st["capacity"]
        and st["capacity"]["cpu"] == "8"
        and st["capacity"]["pods"] == "110"
    )
    assert st["nodeInfo"]["kubeletVersion"] == "v1.37.0" and st["nodeInfo"]["architecture"] == "arm64"
    assert st["addresses"] == [
        {"type": "InternalIP", "address": "172.16.0.5"},
        {"type": "Hostname", "address": "n1"},
    ]
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["Ready"]["status"] == "True" and conds["Ready"]["reason"] == "KubeletReady"
    assert conds["MemoryPressure"]["reason"] == "KubeletHasSufficientMemory"
    assert conds["NetworkUnavailable"]["status"] == "False"
    first_hb = conds["Ready"]["lastHeartbeatTime"]
    clock.step(60)
    ctx = NodeContext(node, state, clock.now(), clock.monotonic(), opts)
    stage, due = select(NODE_STAGES, ctx, opts.time_scale) or (None, 0.0)
    assert stage is not None and stage.name == "node-heartbeat" and due <= ctx.mono
    hb = stage.apply(ctx).status
    assert hb is not None
    ready = next(c for c in hb["conditions"] if c["type"] == "Ready")
    assert ready["lastHeartbeatTime"] == rfc3339(clock.now()) != first_hb
    assert ready["lastTransitionTime"] == conds["Ready"]["lastTransitionTime"]


def test_the_lease_is_renewed_at_once_then_every_interval() -> None:
    clock = FakeClock()
    opts = AgentOptions(lease_renew_interval=10, time_scale=0.01)
    state = NodeState(name="n1", ordinal=0, internal_ip="172.16.0.2", pod_cidr="10.128.0.0/24")
    ctx = NodeContext({"metadata": {"name": "n1"}}, state, clock.now(), clock.monotonic(), opts)
    picked = select(LEASE_STAGES, ctx, opts.time_scale)
    assert picked is not None and picked[1] == ctx.mono
    state.lease_renewed = ctx.mono
    picked = select(LEASE_STAGES, ctx, opts.time_scale)
    assert picked is not None and picked[1] == ctx.mono + 10


def test_options_are_validated() -> None:
    with pytest.raises(ValueError):
        AgentOptions(time_scale=-1)
    with pytest.raises(ValueError):
        AgentOptions(lease_renew_interval=0)
