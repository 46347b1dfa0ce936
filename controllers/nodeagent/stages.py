"""The simulated kubelet's stages of *match → delay → apply*, after KWOK: the machinery and the
kubelet rules the shipped ``lifecycle.yaml`` names.

The stage *list* — which stages exist, their order, selectors, delays and outcomes — is data
(``lifecycle.yaml``, compiled by :mod:`.lifecycle`); this module holds :class:`Stage`/:func:`select`,
the contexts, and the registries that data refers to by name (``POD_PREDICATES``, ``POD_DELAYS``,
``POD_EFFECTS``, their node counterparts). ``POD_STAGES``/``NODE_STAGES``/``LEASE_STAGES`` are the
compiled defaults. The table below describes the shipped stages.

A stage names a situation (``match``), how long after a stable *anchor* it takes effect
(``delay``, simulated seconds, multiplied by the agent's ``time_scale``) and what happens then
(``apply``, returning an :class:`Action`: a new status, a deletion, events). When an object
changes or a deadline passes the agent evaluates every stage against it; among the stages that
match, the one due **earliest** runs (ties: list order). Anything not yet due is parked on the
timer heap and re-evaluated when it fires, so a stage whose situation has gone (the pod was
deleted meanwhile) simply no longer matches. ``match``/``delay``/``apply`` are pure functions
of a context holding the object, the agent's memory of it and ``now``; the agent performs the
returned action and records what it wrote.

Pod stages (first the exits, then the lifecycle):

==========================  ====================================================  ====================
stage                       when                                                  delay (× time_scale)
==========================  ====================================================  ====================
``pod-orphaned``            its node is gone (PodGC)                              ``orphan_quarantine``
``pod-delete-unstarted``    deleting, no container ever started / terminal        0
``pod-kill``                deleting, containers running: ``Killing`` events      0
``pod-delete``              deleting: containers stop, pod removed (grace 0)      deletionGracePeriodSeconds
``pod-release``             terminal: resources and IP given back                 0
``pod-admit``               bound, not admitted: fit check (OutOfcpu…)            0
``pod-start``               admitted: Running (+ Ready when due at once)          0
``pod-ephemeral-start``     running, a debug container has no status: it runs     0
``pod-ready``               running, not Ready                                    ``ready_delay`` / ready-after
``pod-finish``              ``complete-after`` / ``fail``: Succeeded or Failed    complete-after (or 0)
                            ``Never``/``OnFailure`` pod without either: exits 0   ``run_to_completion``
``pod-crash``               ``crash``: container exits 1, CrashLoopBackOff        ``crash_run``
``pod-restart``             backing off: container restarted                      10s·2^restarts (≤300s)
==========================  ====================================================  ====================

Node stages: ``node-pod-cidr`` (assign the pod range), ``node-status`` (post the healthy
status: conditions, nodeInfo, addresses, allocatable), ``node-untaint`` (drop
``node.kubernetes.io/not-ready`` once Ready, as the node lifecycle controller does),
``node-devices`` (publish the fleet's DRA devices as ResourceSlices, as a kubelet plugin does),
``node-heartbeat`` (re-post conditions every ``status_report_interval``); lease stage
``lease-renew`` (every ``lease_renew_interval``). Heartbeat intervals are wall-clock rates, not
simulated durations: they are *not* scaled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING
from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.admission import NodeUsage, Rejection
from controllers.nodeagent.status import (
    ContainerFate,
    container_state,
    gc_status,
    has_not_ready_taint,
    is_node_ready,
    is_ready,
    missing_ephemeral,
    node_needs_status,
    node_status,
    phase_of,
    pod_status,
    rejected_status,
    restart_count,
    without_not_ready_taint,
)

C = TypeVar("C")

TERMINAL = ("Succeeded", "Failed")
#: kubelet's container restart back-off: 10s doubling to 5 minutes
BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0


# ============================================================================ options & memory


@dataclass(frozen=True)
class AgentOptions:
    """Knobs of the simulated kubelets (all durations in seconds).

    ``time_scale`` multiplies every *simulated* duration (grace periods, readiness delays,
    annotation delays, crash back-off, orphan quarantine); heartbeat rates are real rates.
    """

    time_scale: float = 1.0
    ready_delay: float = 0.0
    crash_run: float = 1.0
    #: how long a ``Never``/``OnFailure`` pod's containers run before exiting 0 when the pod has no
    #: ``complete-after`` annotation (so Jobs finish); ``None`` keeps such pods running forever
    run_to_completion: float | None = 1.0
    orphan_quarantine: float = 40.0
    lease_duration: int = 40
    lease_renew_interval: float = 10.0
    status_report_interval: float = 300.0
    container_events: bool = True
    node_events: bool = True
    workers: int = 4

    def __post_init__(self) -> None:
        if self.time_scale < 0:
            raise ValueError("time_scale must be >= 0")
        if self.ready_delay < 0:
            raise ValueError("ready_delay must be >= 0")
        if self.lease_renew_interval <= 0 or self.status_report_interval <= 0:
            raise ValueError("heartbeat intervals must be > 0")
        if self.workers < 1:
            raise ValueError("workers must be >= 1")


@dataclass(slots=True)
class NodeState:
    """The agent's memory of one simulated node (rebuilt from the API after a restart)."""

    name: str
    ordinal: int
    internal_ip: str
    pod_cidr: str
    allocatable: dict[str, int] = field(default_factory=dict)
    usage: NodeUsage = field(default_factory=NodeUsage)
    #: monotonic time of the last status post / lease renewal by this agent (None: never)
    status_posted: float | None = None
    lease_renewed: float | None = None
    #: the node's Lease as this agent last wrote (or read) it: the next renewal is a copy of it
    #: with a new ``renewTime``, as kubelet's lease controller renews its ``latestLease``
    lease: dict[str, Any] | None = None
    started_events: bool = False
    #: DRA devices this node publishes (from the fleet) and whether they are published
    devices: tuple[Any, ...] = ()
    devices_published: bool = False
    written_rv: int = 0
    #: monotonic time the agent first saw the node (user node stages count from it)
    first_seen: float = 0.0
    #: data stages: when each began to match (anchor ``matched``; None until one does) and which
    #: one-shot ones ran (replaced, never changed in place: the empty default is shared)
    since: dict[str, float] | None = None
    fired: frozenset[str] = frozenset()


@dataclass(slots=True)
class PodRecord:
    """The agent's memory of one pod bound to a simulated node (slots: one per pod, 10,000s of them)."""

    key: str
    uid: str
    node: str
    request: dict[str, int]
    admitted: bool = False
    pod_ip: str = ""
    #: monotonic times anchoring delays: containers (re)started, deletion seen, crash, orphaned
    started: float | None = None
    start_wall: float | None = None
    admitted_wall: float | None = None
    deleting: float | None = None
    crashed: float | None = None
    crashed_wall: float | None = None
    orphaned: float | None = None
    #: flags, and data stages: when each began to match (anchor ``matched``; None until one does)
    #: and which one-shot ones ran. A running pod usually has none of them, so nothing is allocated
    #: per pod until then (the sets are replaced, never changed in place: the empty one is shared).
    flags: frozenset[str] = frozenset()
    since: dict[str, float] | None = None
    fired: frozenset[str] = frozenset()
    #: the newest object this agent wrote (used until the informer catches up)
    written: Obj | None = None
    written_rv: int = 0


@dataclass
class PodContext:
    """What a pod stage's ``match``/``delay``/``apply`` may look at: the pod, the agent's record of it,
    its node and the time."""

    pod: Obj
    record: PodRecord
    node: NodeState | None
    now: float
    mono: float
    options: AgentOptions
    #: every ResourceClaim of the pod is allocated and reserved for it or its PodGroup
    claims_ready: bool = True
    #: the pod's phase and its containers' state as last written, read once per evaluation:
    #: nearly every stage's selector asks for one of them
    phase: str = field(init=False)
    containers_state: str = field(init=False)

    def __post_init__(self) -> None:
        self.phase = phase_of(self.pod)
        self.containers_state = container_state(self.pod)


@dataclass
class NodeContext:
    """What a node stage's ``match``/``delay``/``apply`` may look at: the node, the agent's state of it
    and the time."""

    node: Obj
    state: NodeState
    now: float
    mono: float
    options: AgentOptions
    #: the kubelet's container runtime is down (the ``not-ready`` fault): Ready=False is posted
    not_ready: bool = False


@dataclass(frozen=True, slots=True)
class Event:
    """An event kubelet records; ``field_path`` names the container (``spec.containers{web}``)."""

    type: str
    reason: str
    message: str
    field_path: str = ""


@dataclass
class Action:
    """What a stage wants done; the agent performs it in this order: record, status, spec, delete, events."""

    status: Obj | None = None
    #: node only: replacement ``spec`` fields (taints, podCIDR)
    spec: Obj | None = None
    delete: bool = False
    events: list[Event] = field(default_factory=list)
    #: pod only: commit the admission (usage + IP) / give resources back
    admit: bool = False
    release: bool = False
    #: flags to add to the record, and record fields to set (``started``, ``crashed``…)
    flags: tuple[str, ...] = ()
    mark: dict[str, Any] = field(default_factory=dict)
    #: lease only: renew the node's Lease; node only: publish its DRA ResourceSlices
    renew_lease: bool = False
    publish_devices: bool = False
    #: a one-shot data stage that ran (remembered per object so it does not run again)
    fired: str = ""
    #: finalizers to add and to remove (metadata update)
    finalizers: tuple[tuple[str, ...], tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Stage(Generic[C]):
    """match → delay → apply.

    ``delay`` is seconds after ``anchor`` (a monotonic time the agent recorded; None = now,
    which only makes sense for a zero delay). ``scaled`` stages are simulated durations and
    get multiplied by ``time_scale``; unscaled ones are real rates (heartbeats).
    """

    name: str
    match: Callable[[C], bool]
    apply: Callable[[C], Action]
    delay: Callable[[C], float] = lambda _c: 0.0
    anchor: Callable[[C], float | None] = lambda _c: None
    scaled: bool = True
    #: among stages due at the same moment the heavier one runs (then file order), as KWOK's weight
    weight: int = 0


def select(stages: Sequence[Stage[Any]], ctx: Any, time_scale: float) -> tuple[Stage[Any], float] | None:
    """The matching stage due earliest and its monotonic deadline; None when nothing matches."""
    best: tuple[Stage[Any], float] | None = None
    for stage in stages:
        if not stage.match(ctx):
            continue
        anchor = stage.anchor(ctx)
        base = ctx.mono if anchor is None else anchor
        due = base + max(stage.delay(ctx), 0.0) * (time_scale if stage.scaled else 1.0)
        if best is None or due < best[1] or (due == best[1] and stage.weight > best[0].weight):
            best = (stage, due)
    return best


# ============================================================================ pod helpers


def _deleting(c: PodContext) -> bool:
    return bool((c.pod.get("metadata") or {}).get("deletionTimestamp"))


def _terminal(c: PodContext) -> bool:
    return c.phase in TERMINAL


def _restart_policy(c: PodContext) -> str:
    return (c.pod.get("spec") or {}).get("restartPolicy") or "Always"


def _running(c: PodContext) -> bool:
    """Containers were started by this agent (running or backing off) and the pod is not terminal."""
    return c.record.admitted and not _terminal(c) and c.containers_state in ("running", "waiting")


def ready_delay(pod: Obj, options: AgentOptions) -> float | None:
    """Seconds from start to Ready (unscaled); None when the pod never becomes Ready."""
    if ann.flag(pod, ann.NEVER_READY) or ann.flag(pod, ann.CRASH):
        return None
    after = ann.duration(pod, ann.READY_AFTER)
    return max(options.ready_delay, after or 0.0)


def _fails_at_once(c: PodContext) -> bool:
    return ann.flag(c.pod, ann.FAIL) and ann.duration(c.pod, ann.COMPLETE_AFTER) is None


def _start_events(pod: Obj, options: AgentOptions, regular_only: bool = False) -> list[Event]:
    """``Pulled``/``Created``/``Started`` per container, in start order (init containers first)."""
    if not options.container_events:
        return []
    out: list[Event] = []
    spec = pod.get("spec") or {}
    inits = [] if regular_only else spec.get("initContainers") or []
    for c in inits + (spec.get("containers") or []):
        name, image = c.get("name", ""), c.get("image", "")
        if c.get("imagePullPolicy") == "Always":
            pulled = f'Successfully pulled image "{image}" in 0s (0s including waiting). Image size: 0 bytes.'
        else:
            pulled = f'Container image "{image}" already present on machine'
        fp = _field_path(c, spec)
        out.append(Event(NORMAL, "Pulled", pulled, fp))
        out.append(Event(NORMAL, "Created", f"Created container: {name}", fp))
        out.append(Event(NORMAL, "Started", f"Started container {name}", fp))
    return out


def _field_path(container: Obj, spec: Obj) -> str:
    key = "initContainers" if any(container is x for x in spec.get("initContainers") or []) else "containers"
    return f"spec.{key}{{{container.get('name', '')}}}"


def _fate_from_pod(c: PodContext, **over: Any) -> ContainerFate:
    started = c.record.start_wall if c.record.start_wall is not None else c.now
    base: dict[str, Any] = {"state": "running", "started_at": started, "restart_count": restart_count(c.pod)}
    base.update(over)
    return ContainerFate(**base)


def _write(c: PodContext, fate: ContainerFate, phase: str) -> Obj:
    host_ip = c.node.internal_ip if c.node else ""
    start = c.record.admitted_wall if c.record.admitted_wall is not None else c.now
    return pod_status(
        c.pod, fate, host_ip=host_ip, pod_ip=c.record.pod_ip, start=start, now=c.now, phase=phase
    )


def backoff(restarts: int) -> float:
    """kubelet's CrashLoopBackOff wait after the ``restarts``-th restart's exit."""
    return min(BACKOFF_INITIAL * (2 ** min(restarts, 16)), BACKOFF_MAX)


# ============================================================================ pod stages


def _orphaned_match(c: PodContext) -> bool:
    return c.node is None and "gc" not in c.record.flags


def _orphaned_apply(c: PodContext) -> Action:
    return Action(status=gc_status(c.pod, c.now), delete=True, release=True, flags=("gc", "deleted"))


def _unstarted_delete_match(c: PodContext) -> bool:
    return (
        c.node is not None
        and _deleting(c)
        and "deleted" not in c.record.flags
        and (not c.record.admitted or _terminal(c) or not c.containers_state)
    )


def _delete_apply(c: PodContext) -> Action:
    return Action(delete=True, release=True, flags=("deleted",))


def _kill_match(c: PodContext) -> bool:
    return c.node is not None and _deleting(c) and _running(c) and "killed" not in c.record.flags


def _kill_apply(c: PodContext) -> Action:
    spec = c.pod.get("spec") or {}
    running = [x for x in spec.get("initContainers") or [] if x.get("restartPolicy") == "Always"]
    running += spec.get("containers") or []
    events = [
        Event(NORMAL, "Killing", f"Stopping container {x.get('name', '')}", _field_path(x, spec))
        for x in running
    ]
    return Action(events=events if c.options.container_events else [], flags=("killed",))


def _grace(c: PodContext) -> float:
    md = c.pod.get("metadata") or {}
    g = md.get("deletionGracePeriodSeconds")
    return (
        float(g)
        if g is not None
        else float((c.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 0)
    )


def _delete_match(c: PodContext) -> bool:
    return (
        c.node is not None
        and _deleting(c)
        and _running(c)
        and "killed" in c.record.flags
        and "deleted" not in c.record.flags
    )


def _stop_apply(c: PodContext) -> Action:
    crashed = c.containers_state == "waiting"
    code = 1 if crashed else 0
    fate = _fate_from_pod(c, state="terminated", exit_code=code, finished_at=c.now)
    phase = "Failed" if code else "Succeeded"
    return Action(status=_write(c, fate, phase), delete=True, release=True, flags=("deleted",))


def _release_match(c: PodContext) -> bool:
    return _terminal(c) and c.record.admitted


def _release_apply(c: PodContext) -> Action:
    return Action(release=True)


def _admit_match(c: PodContext) -> bool:
    return c.node is not None and not c.record.admitted and not _deleting(c) and c.phase == "Pending"


def _admit_apply(c: PodContext) -> Action:
    assert c.node is not None
    rej: Rejection | None = c.node.usage.check(c.record.request, c.node.allocatable)
    if rej is not None:
        return Action(
            status=rejected_status(c.pod, rej.reason, rej.status_message, c.now),
            events=[Event(WARNING, rej.reason, rej.message)],
            flags=("rejected",),
        )
    events = [Event(WARNING, "InvalidAnnotation", m) for m in ann.invalid_annotations(c.pod)]
    return Action(
        admit=True, events=events, mark={"started": c.mono, "start_wall": c.now, "admitted_wall": c.now}
    )


def _start_match(c: PodContext) -> bool:
    # kubelet prepares the pod's DRA devices (NodePrepareResources) before any container starts
    return (
        c.node is not None
        and c.claims_ready
        and c.record.admitted
        and not _deleting(c)
        and c.phase == "Pending"
        and not c.containers_state
    )


def _start_apply(c: PodContext) -> Action:
    rd = ready_delay(c.pod, c.options)
    fate = _fate_from_pod(c, ready=rd == 0.0, restart_count=0)
    return Action(status=_write(c, fate, "Running"), events=_start_events(c.pod, c.options))


def _lifecycle_ok(c: PodContext) -> bool:
    return c.node is not None and not _deleting(c) and _running(c)


def _ready_match(c: PodContext) -> bool:
    return (
        _lifecycle_ok(c)
        and c.containers_state == "running"
        and not is_ready(c.pod)
        and ready_delay(c.pod, c.options) is not None
    )


def _ready_apply(c: PodContext) -> Action:
    return Action(status=_write(c, _fate_from_pod(c, ready=True), "Running"))


def _finish_match(c: PodContext) -> bool:
    if not _lifecycle_ok(c):
        return False
    if ann.flag(c.pod, ann.FAIL):
        return True
    if _restart_policy(c) not in ("Never", "OnFailure"):
        return False
    if ann.duration(c.pod, ann.COMPLETE_AFTER) is not None:
        return True
    return _runs_to_completion(c)


def _runs_to_completion(c: PodContext) -> bool:
    """A run-to-completion pod with no behaviour annotation exits 0 after ``run_to_completion``."""
    return (
        c.options.run_to_completion is not None
        and not ann.flag(c.pod, ann.CRASH)
        and not ann.flag(c.pod, ann.NEVER_READY)
    )


def _finish_delay(c: PodContext) -> float:
    after = ann.duration(c.pod, ann.COMPLETE_AFTER)
    if after is not None:
        return after
    if ann.flag(c.pod, ann.FAIL):
        return 0.0
    return c.options.run_to_completion or 0.0


def _finish_apply(c: PodContext) -> Action:
    failed = ann.flag(c.pod, ann.FAIL)
    code = 1 if failed else 0
    fate = _fate_from_pod(c, state="terminated", exit_code=code, finished_at=c.now)
    return Action(status=_write(c, fate, "Failed" if failed else "Succeeded"), release=True)


def _crash_match(c: PodContext) -> bool:
    return (
        _lifecycle_ok(c)
        and ann.flag(c.pod, ann.CRASH)
        and not _fails_at_once(c)
        and c.containers_state == "running"
    )


def _crash_apply(c: PodContext) -> Action:
    n = restart_count(c.pod)
    if _restart_policy(c) == "Never":
        fate = _fate_from_pod(c, state="terminated", exit_code=1, finished_at=c.now)
        return Action(status=_write(c, fate, "Failed"), release=True)
    started = c.record.start_wall if c.record.start_wall is not None else c.now
    fate = ContainerFate(state="waiting", restart_count=n, last_exit=(1, started, c.now), backoff=backoff(n))
    events: list[Event] = []
    if c.options.container_events:
        md = c.pod.get("metadata") or {}
        who = f"{md.get('name', '')}_{md.get('namespace', '')}({md.get('uid', '')})"
        spec = c.pod.get("spec") or {}
        for x in spec.get("containers") or []:
            msg = f"Back-off restarting failed container {x.get('name', '')} in pod {who}"
            events.append(Event(WARNING, "BackOff", msg, _field_path(x, spec)))
    return Action(
        status=_write(c, fate, "Running"), events=events, mark={"crashed": c.mono, "crashed_wall": c.now}
    )


def _restart_match(c: PodContext) -> bool:
    return _lifecycle_ok(c) and c.containers_state == "waiting" and ann.flag(c.pod, ann.CRASH)


def _restart_apply(c: PodContext) -> Action:
    n = restart_count(c.pod) + 1
    last = (1, c.record.start_wall or c.now, c.record.crashed_wall or c.now)
    fate = ContainerFate(state="running", started_at=c.now, restart_count=n, last_exit=last)
    events = _start_events(c.pod, c.options, regular_only=True)
    return Action(
        status=_write(c, fate, "Running"), events=events, mark={"started": c.mono, "start_wall": c.now}
    )


def _ephemeral_match(c: PodContext) -> bool:
    return _lifecycle_ok(c) and c.containers_state == "running" and bool(missing_ephemeral(c.pod))


def _ephemeral_apply(c: PodContext) -> Action:
    """kubelet starts a debug container ``kubectl debug`` added; the pod's readiness is unchanged."""
    events: list[Event] = []
    if c.options.container_events:
        spec = c.pod.get("spec") or {}
        for x in spec.get("ephemeralContainers") or []:
            name = x.get("name", "")
            if name not in missing_ephemeral(c.pod):
                continue
            fp = f"spec.ephemeralContainers{{{name}}}"
            image = x.get("image", "")
            events.append(
                Event(NORMAL, "Pulled", f'Container image "{image}" already present on machine', fp)
            )
            events.append(Event(NORMAL, "Created", f"Created container: {name}", fp))
            events.append(Event(NORMAL, "Started", f"Started container {name}", fp))
    return Action(status=_write(c, _fate_from_pod(c, ready=is_ready(c.pod)), "Running"), events=events)


def _unstarted(c: PodContext) -> bool:
    return not c.record.admitted or _terminal(c) or not c.containers_state


def _becomes_ready(c: PodContext) -> bool:
    return ready_delay(c.pod, c.options) is not None


def _finishes(c: PodContext) -> bool:
    if ann.flag(c.pod, ann.FAIL):
        return True
    if _restart_policy(c) not in ("Never", "OnFailure"):
        return False
    if ann.duration(c.pod, ann.COMPLETE_AFTER) is not None:
        return True
    return _runs_to_completion(c)


#: what a data stage's ``when:`` may name about a pod: the agent's memory and kubelet rules that are
#: not fields of the object (``!name`` negates; ``flag:X`` tests the record's flag X)
POD_PREDICATES: dict[str, Callable[[PodContext], bool]] = {
    "node-known": lambda c: c.node is not None,
    "node-gone": lambda c: c.node is None,
    "admitted": lambda c: c.record.admitted,
    "claims-ready": lambda c: c.claims_ready,
    "unstarted": _unstarted,
    "containers-started": _running,
    "container-running": lambda c: c.containers_state == "running",
    "container-waiting": lambda c: c.containers_state == "waiting",
    "no-container-status": lambda c: not c.containers_state,
    "ephemeral-missing": lambda c: bool(missing_ephemeral(c.pod)),
    "becomes-ready": _becomes_ready,
    "finishes": _finishes,
    "crashes": lambda c: ann.flag(c.pod, ann.CRASH),
    "fails-at-once": _fails_at_once,
}

#: delays computed by kubelet's rules (seconds, before ``time_scale``)
POD_DELAYS: dict[str, Callable[[PodContext], float]] = {
    "grace-period": _grace,
    "ready-delay": lambda c: ready_delay(c.pod, c.options) or 0.0,
    "finish-delay": _finish_delay,
    "crash-backoff": lambda c: backoff(restart_count(c.pod)),
}

#: record fields a delay may count from
POD_ANCHORS = {"started": "started", "deleting": "deleting", "crashed": "crashed", "orphaned": "orphaned"}

#: kubelet-shaped outcomes a stage's ``next.effect`` may name: each builds the whole status kubelet
#: would write (conditions, containerStatuses, events) from the pod and the agent's record
POD_EFFECTS: dict[str, Callable[[PodContext], Action]] = {
    "gc": _orphaned_apply,
    "kill": _kill_apply,
    "stop-and-delete": _stop_apply,
    "release": _release_apply,
    "admit": _admit_apply,
    "start": _start_apply,
    "start-ephemeral": _ephemeral_apply,
    "ready": _ready_apply,
    "finish": _finish_apply,
    "crash": _crash_apply,
    "restart": _restart_apply,
}


# ============================================================================ node stages


def _cidr_match(c: NodeContext) -> bool:
    spec = c.node.get("spec") or {}
    return not spec.get("podCIDR") and bool(c.state.pod_cidr)


def _cidr_apply(c: NodeContext) -> Action:
    return Action(spec={"podCIDR": c.state.pod_cidr, "podCIDRs": [c.state.pod_cidr]})


def _status_match(c: NodeContext) -> bool:
    return node_needs_status(c.node, c.not_ready)


def node_status_events(
    name: str, options: AgentOptions, *, starting: bool, becoming_ready: bool
) -> list[Event]:
    """kubelet's events when it starts (``starting``) and when the node's Ready turns True."""
    events: list[Event] = []
    if not options.node_events:
        return events
    if starting:
        events.append(Event(NORMAL, "Starting", "Starting kubelet."))
        for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"):
            events.append(Event(NORMAL, reason, f"Node {name} status is now: {reason}"))
        events.append(Event(NORMAL, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"))
    if becoming_ready:
        events.append(Event(NORMAL, "NodeReady", f"Node {name} status is now: NodeReady"))
    return events


def _node_status_apply(c: NodeContext) -> Action:
    name = (c.node.get("metadata") or {}).get("name", "")
    events = node_status_events(
        name,
        c.options,
        starting=not c.state.started_events,
        becoming_ready=not c.not_ready and not is_node_ready(c.node),
    )
    if c.not_ready and is_node_ready(c.node) and c.options.node_events:
        events.append(Event(NORMAL, "NodeNotReady", f"Node {name} status is now: NodeNotReady"))
    return Action(
        status=node_status(c.node, internal_ip=c.state.internal_ip, now=c.now, not_ready=c.not_ready),
        events=events,
        mark={"status_posted": c.mono, "started_events": True},
    )


def _untaint_match(c: NodeContext) -> bool:
    return is_node_ready(c.node) and has_not_ready_taint(c.node)


def _untaint_apply(c: NodeContext) -> Action:
    return Action(spec={"taints": without_not_ready_taint((c.node.get("spec") or {}).get("taints") or [])})


def _heartbeat_match(c: NodeContext) -> bool:
    return not node_needs_status(c.node, c.not_ready)


def _heartbeat_apply(c: NodeContext) -> Action:
    return Action(
        status=node_status(c.node, internal_ip=c.state.internal_ip, now=c.now, not_ready=c.not_ready),
        mark={"status_posted": c.mono},
    )


def _devices_match(c: NodeContext) -> bool:
    return bool(c.state.devices) and not c.state.devices_published


def _devices_apply(c: NodeContext) -> Action:
    return Action(publish_devices=True, mark={"devices_published": True})


def _lease_delay(c: NodeContext) -> float:
    return c.options.lease_renew_interval if c.state.lease_renewed is not None else 0.0


def _lease_apply(c: NodeContext) -> Action:
    return Action(renew_lease=True, mark={"lease_renewed": c.mono})


NODE_PREDICATES: dict[str, Callable[[NodeContext], bool]] = {
    "pod-cidr-assigned": lambda c: bool(c.state.pod_cidr),
    "needs-status": _status_match,
    "has-devices": lambda c: bool(c.state.devices),
    "devices-published": lambda c: c.state.devices_published,
    "not-ready-fault": lambda c: c.not_ready,
}

NODE_DELAYS: dict[str, Callable[[NodeContext], float]] = {
    "status-report-interval": lambda c: c.options.status_report_interval,
    "lease-renew-interval": _lease_delay,
}

NODE_ANCHORS = {
    "status-posted": "status_posted",
    "lease-renewed": "lease_renewed",
    "first-seen": "first_seen",
}

NODE_EFFECTS: dict[str, Callable[[NodeContext], Action]] = {
    "pod-cidr": _cidr_apply,
    "post-status": _node_status_apply,
    "publish-devices": _devices_apply,
    "untaint": _untaint_apply,
    "heartbeat": _heartbeat_apply,
    "renew-lease": _lease_apply,
}


def __getattr__(name: str) -> Any:
    """``POD_STAGES``/``NODE_STAGES``/``LEASE_STAGES``: the shipped default stages, compiled from
    ``lifecycle.yaml`` on first use (the data lives there; this module holds what it names)."""
    if name in ("POD_STAGES", "NODE_STAGES", "LEASE_STAGES"):
        from controllers.nodeagent.lifecycle import default_lifecycle

        lc = default_lifecycle()
        return {"POD_STAGES": lc.pods, "NODE_STAGES": lc.nodes, "LEASE_STAGES": lc.leases}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
