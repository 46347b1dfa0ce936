"""The scheduling framework: plugin protocols, profiles, and one scheduling cycle run like kube's.

A :class:`Profile` (``default-scheduler`` by default) lists plugins in kube's multi-point order
with Score weights; the :class:`Framework` instantiates them from a registry and sorts each
into the extension points it implements (a plugin implements an extension point by having the
method, so one class may be PreFilter + Filter + Score at once).

The scheduling algorithm (:meth:`Framework.schedule_pod`) follows ``schedule_one.go``:
PreFilter (results may narrow the nodes), Filter over the nodes starting at a rotating index
and stopping once ``numFeasibleNodesToFind`` fit, the first failing plugin deciding a node's
status; on failure a :class:`~scheduler.diagnosis.FitError` whose text is kube's; otherwise
PreScore, Score, NormalizeScore, weighting, and a random pick among the best.

gangplane addition: Filter plugins may also offer ``candidate_nodes(state, pod, snapshot)``,
a *superset* of the nodes that pass them, answered from the snapshot's capacity index. The
framework filters those nodes first and only visits the others when nothing fits, to give the
exact per-node reasons for the FitError. The result is the same as kube's; only the work is
smaller. (A PreFilterResult would change the diagnosis text, so the hint is not one.)
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import itertools
import random
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scheduler.diagnosis import Diagnosis, FitError, NodeToStatus, NoNodesAvailableError
from scheduler.events import ClusterEventWithHint
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.status import Code, Status, is_success

if TYPE_CHECKING:
    from scheduler.cache import Snapshot
    from scheduler.queue import QueuedPodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "Code",
    "CycleState",
    "Framework",
    "Handle",
    "NodeInfo",
    "NodePluginScores",
    "NodeScore",
    "PodInfo",
    "PostFilterResult",
    "PreFilterResult",
    "Profile",
    "PluginSpec",
    "ScheduleResult",
    "Status",
    "default_normalize_score",
]

Obj = dict[str, Any]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
#: kube's ``minFeasibleNodesToFind`` / ``minFeasibleNodesPercentageToFind``.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_SCHEDULER_NAME = "default-scheduler"


def go_list(items: Iterable[str]) -> str:
    """How Go's ``%v`` prints a ``[]string``: ``[A B]``."""
    return "[" + " ".join(items) + "]"


# --- cycle state ---------------------------------------------------------------------------------


class CycleState:
    """Per-cycle scratch space plugins share (kube's ``CycleState``).

    Values with a ``clone()`` method are cloned by :meth:`clone` (preemption dry-runs each node
    on its own copy); other values are treated as immutable and shared.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def read(self, key: str) -> Any:
        """Raises ``KeyError`` when absent, as kube's ``Read`` returns ``ErrNotFound``."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if callable(clone) else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        return c


@dataclass
class PreFilterResult:
    """Nodes a PreFilter plugin allows; ``None`` means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.node_names is None else set(self.node_names))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


NOMINATING_NOOP = "Noop"
NOMINATING_OVERRIDE = "Override"


@dataclass
class PostFilterResult:
    """What a PostFilter (preemption) decided: the node to nominate, and the victims it evicted."""

    nominated_node_name: str = ""
    mode: str = NOMINATING_OVERRIDE
    victims: list[Obj] = field(default_factory=list)


@dataclass
class NodeScore:
    name: str
    score: int


@dataclass
class NodePluginScores:
    name: str
    scores: dict[str, int]
    total_score: int


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int = 0
    feasible_nodes: int = 0


# --- plugin protocols ----------------------------------------------------------------------------


class Plugin(Protocol):
    """Every plugin has a ``name`` (its module's ``NAME``)."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    """Gate a pod before it may enter activeQ; a rejected pod waits "gated", with no condition or event."""

    def pre_enqueue(self, pod_info: PodInfo) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """The cluster events after which a pod this plugin rejected may become schedulable."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


class PreFilterExtensions(Protocol):
    """Keep PreFilter state right when preemption or nominated pods add/remove pods on a node."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Protocol):
    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class CandidateNodesHint(Protocol):
    """gangplane: a superset of the nodes that pass this plugin's Filter, or ``None`` for "no idea"."""

    def candidate_nodes(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot
    ) -> Collection[str] | None: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    def score(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo
    ) -> tuple[int, Status | None]: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """gangplane: a Score plugin that scores all nodes in one call, exactly as ``score`` per node would.

    Only a speed-up (one Python call instead of one per node); errors are raised, not returned.
    """

    def score_nodes(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]: ...


@runtime_checkable
class NormalizeScorePlugin(Protocol):
    def normalize_score(
        self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]
    ) -> Status | None: ...


@runtime_checkable
class ReservePlugin(Protocol):
    def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    """Return ``(Status(WAIT), timeout)`` to hold the pod until allowed/rejected (the gang barrier)."""

    def permit(self, state: CycleState, pod_info: PodInfo, node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Protocol):
    """Return ``Status(SKIP)`` to let the next Bind plugin handle the pod."""

    async def bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    def post_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None: ...


class Nominator(Protocol):
    """Pods nominated to nodes by preemption (implemented by the scheduling queue)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


# --- handle, profile, registry -------------------------------------------------------------------


@dataclass
class Handle:
    """What plugins may reach: the current snapshot, the API client, listers and hooks.

    Listers are plain callables so the scheduler wiring can back them with informer caches and
    tests with lists. Every field is optional; plugins degrade the way kube does without them
    (no PDBs, no namespace labels, no default spreading selector).
    """

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    client: Any = None
    clock: Any = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    snapshot: Snapshot | None = None
    nominator: Nominator | None = None
    metrics: Any = None
    gates: Any = None
    #: namespace name -> labels, or None if the namespace is unknown
    namespace_labels: Callable[[str], dict[str, str] | None] = lambda ns: None
    #: all PodDisruptionBudgets (dicts)
    list_pdbs: Callable[[], list[Obj]] = list
    #: pod -> label selector dict built from the Services/ReplicaSets/StatefulSets selecting it, or None
    default_spread_selector: Callable[[Obj], Obj | None] | None = None
    #: (namespace, name) -> PodGroup dict or None
    get_pod_group: Callable[[str, str], Obj | None] | None = None
    #: ``async record_event(regarding, type, reason, action, message, related)``
    record_event: Callable[..., Any] | None = None
    #: the framework this handle belongs to (set by :class:`Framework`)
    framework: Framework | None = None


PluginFactory = Callable[[dict[str, Any], Handle], Any]


@dataclass(frozen=True)
class PluginSpec:
    name: str
    #: Score weight; 0 means 1 (kube does the same for enabled score plugins)
    weight: int = 0


@dataclass
class Profile:
    """One scheduler profile: plugins in kube's multi-point order, per-plugin args, and tuning."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: list[PluginSpec] = field(default_factory=list)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: None = kube's adaptive percentage (all nodes below 100, down to 5% at 5000+ nodes)
    percentage_of_nodes_to_score: int | None = None
    #: extension point name ("score", "filter", ...) -> plugin names disabled there only
    disabled: dict[str, set[str]] = field(default_factory=dict)


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """kube's ``helper.DefaultNormalizeScore``: scale to ``[0, max_priority]`` by the max, optionally reversed."""
    max_count = max((s.score for s in scores), default=0)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        v = max_priority * s.score // max_count
        s.score = max_priority - v if reverse else v


# --- waiting pods (Permit) -----------------------------------------------------------------------


class WaitingPod:
    """A pod held at Permit until every waiting plugin allows it, one rejects it, or a timeout fires."""

    def __init__(self, pod_info: PodInfo, plugin_timeouts: dict[str, float]) -> None:
        self.pod_info = pod_info
        self.pending: set[str] = set(plugin_timeouts)
        self._future: asyncio.Future[Status | None] = asyncio.get_running_loop().create_future()
        self._timers = [
            asyncio.get_running_loop().call_later(
                t, self.reject, name, f"rejected due to timeout after waiting {t:g}s at plugin {name}"
            )
            for name, t in plugin_timeouts.items()
            if t > 0
        ]

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def preempt(self, plugin: str, message: str) -> None:
        self.reject(plugin, message)

    def _finish(self, status: Status | None) -> None:
        for t in self._timers:
            t.cancel()
        if not self._future.done():
            self._future.set_result(status)

    async def wait(self) -> Status | None:
        return await self._future


# --- the framework -------------------------------------------------------------------------------


class Framework:
    """One profile's plugins wired to the extension points, plus the scheduling algorithm."""

    def __init__(
        self,
        profile: Profile,
        handle: Handle | None = None,
        *,
        registry: Mapping[str, PluginFactory],
    ) -> None:
        """``registry`` maps plugin names to factories (kube's ``frameworkruntime.Registry``): the
        framework knows no plugin itself; the scheduler's wiring (:mod:`scheduler.defaults`)
        passes the in-tree registry merged with any out-of-tree plugins."""
        self.profile = profile
        self.handle = handle or Handle(scheduler_name=profile.scheduler_name)
        self.handle.scheduler_name = profile.scheduler_name
        self.handle.framework = self
        reg = registry
        self.plugins: dict[str, Any] = {}
        self.score_weights: dict[str, int] = {}
        for spec in profile.plugins:
            if spec.name in self.plugins:
                raise ValueError(
                    f"plugin {spec.name!r} already registered in profile {profile.scheduler_name!r}"
                )
            factory = reg.get(spec.name)
            if factory is None:
                raise ValueError(f"{spec.name!r} does not exist in the plugin registry")
            self.plugins[spec.name] = factory(dict(profile.plugin_args.get(spec.name, {})), self.handle)
            self.score_weights[spec.name] = spec.weight or 1

        def at(point: str, proto: type) -> list[Any]:
            off = profile.disabled.get(point, set())
            return [p for n, p in self.plugins.items() if n not in off and isinstance(p, proto)]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = at("preEnqueue", PreEnqueuePlugin)
        sorters = at("queueSort", QueueSortPlugin)
        self.queue_sort_plugin: QueueSortPlugin | None = sorters[0] if sorters else None
        self.pre_filter_plugins: list[PreFilterPlugin] = at("preFilter", PreFilterPlugin)
        self.filter_plugins: list[FilterPlugin] = at("filter", FilterPlugin)
        self.post_filter_plugins: list[PostFilterPlugin] = at("postFilter", PostFilterPlugin)
        self.pre_score_plugins: list[PreScorePlugin] = at("preScore", PreScorePlugin)
        self.score_plugins: list[ScorePlugin] = at("score", ScorePlugin)
        self.reserve_plugins: list[ReservePlugin] = at("reserve", ReservePlugin)
        self.permit_plugins: list[PermitPlugin] = at("permit", PermitPlugin)
        self.pre_bind_plugins: list[PreBindPlugin] = at("preBind", PreBindPlugin)
        self.bind_plugins: list[BindPlugin] = at("bind", BindPlugin)
        self.post_bind_plugins: list[PostBindPlugin] = at("postBind", PostBindPlugin)
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.next_start_node_index = 0
        # protocol checks are slow: decide once which Score plugins batch and which normalize
        self._hinting_filters = [p for p in self.filter_plugins if isinstance(p, CandidateNodesHint)]
        self._batch_scorers = {p.name for p in self.score_plugins if isinstance(p, BatchScorePlugin)}
        self._normalizers = {p.name for p in self.score_plugins if isinstance(p, NormalizeScorePlugin)}

    @property
    def scheduler_name(self) -> str:
        return self.profile.scheduler_name

    # -- queue-side extension points --------------------------------------------------------

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if self.queue_sort_plugin is None:
            return a.timestamp < b.timestamp
        return self.queue_sort_plugin.less(a, b)

    def enqueue_extensions(self) -> dict[str, list[ClusterEventWithHint]]:
        """Registered events per plugin name (plugins without EventsToRegister get none)."""
        return {
            name: list(p.events_to_register())
            for name, p in self.plugins.items()
            if isinstance(p, EnqueueExtensions)
        }

    def run_pre_enqueue_plugins(self, pod_info: PodInfo) -> Status | None:
        for pl in self.pre_enqueue_plugins:
            s = self._call(pl, "pre_enqueue", pod_info)
            if not is_success(s):
                assert s is not None
                return s.with_plugin(pl.name)
        return None

    # -- filtering --------------------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns (merged result, rejection, plugins that narrowed the nodes)."""
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        skip: set[str] = set()
        for pl in self.pre_filter_plugins:
            try:
                r, s = pl.pre_filter(state, pod_info, nodes)
            except Exception as e:  # a plugin bug is an Error status, not a crashed scheduler
                r, s = None, Status.as_status(e)
            if s is not None and s.is_skip():
                skip.add(pl.name)
                continue
            if not is_success(s):
                assert s is not None
                s.plugin = pl.name
                if not s.is_rejected():
                    return (
                        None,
                        Status(
                            Code.ERROR, f"running PreFilter plugin {pl.name!r}: {s.message()}", plugin=pl.name
                        ),
                        [],
                    )
                return None, s, []
            if r is not None and not r.all_nodes():
                narrowing.append(pl.name)
            result = (result or PreFilterResult()).merge(r)
            if not result.all_nodes() and not result.node_names:
                if len(narrowing) == 1:
                    msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) {go_list(narrowing)} simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), narrowing
        state.skip_filter_plugins = skip
        return result, None, narrowing

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for pl in self.pre_filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            s = ext.add_pod(state, pod_to_schedule, pod_to_add, node_info)
            if not is_success(s):
                assert s is not None
                return s.with_plugin(pl.name)
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for pl in self.pre_filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            s = ext.remove_pod(state, pod_to_schedule, pod_to_remove, node_info)
            if not is_success(s):
                assert s is not None
                return s.with_plugin(pl.name)
        return None

    def run_filter_plugins(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        """Run Filter plugins in order and stop at the first that rejects the node."""
        skip = state.skip_filter_plugins
        return _run_filters(
            [pl for pl in self.filter_plugins if pl.name not in skip] if skip else self.filter_plugins,
            state,
            pod_info,
            node_info,
        )

    def _any_nominated_pods(self) -> bool:
        """Whether any pod is nominated anywhere (if not, Filter runs once per node)."""
        nominator = self.handle.nominator
        if nominator is None:
            return False
        probe = getattr(nominator, "has_nominated_pods", None)
        return True if probe is None else bool(probe())

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Filter twice when higher-or-equal priority pods are nominated to the node: with and without them.

        The pod must not take room freed for a more important pod, and must not rely on that
        pod being there either (e.g. for pod affinity) since it may land elsewhere.
        """
        status: Status | None = None
        for attempt in range(2):
            state_to_use, info_to_use = state, node_info
            if attempt == 0:
                added, state_to_use, info_to_use, err = self._add_ge_nominated_pods(
                    state, pod_info, node_info
                )
                if err is not None:
                    return err
                pods_added = added
            elif not pods_added or not is_success(status):
                break
            status = self.run_filter_plugins(state_to_use, pod_info, info_to_use)
            if status is not None and not status.is_success() and not status.is_rejected():
                return status
        return status

    def _add_ge_nominated_pods(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        nominator = self.handle.nominator
        if nominator is None or node_info.node is None:
            return False, state, node_info, None
        nominated = nominator.nominated_pods_for_node(node_info.name)
        if not nominated:
            return False, state, node_info, None
        info_out = node_info.clone()
        state_out = state.clone()
        added = False
        for pi in nominated:
            if pi.priority >= pod_info.priority and pi.uid != pod_info.uid:
                info_out.add_pod_info(pi)
                s = self.run_pre_filter_extension_add_pod(state_out, pod_info, pi, info_out)
                if not is_success(s):
                    return False, state, node_info, Status(Code.ERROR, s.message() if s else "")
                added = True
        return added, state_out, info_out, None

    async def run_post_filter_plugins(
        self, state: CycleState, pod_info: PodInfo, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            try:
                r, s = await pl.post_filter(state, pod_info, node_to_status)
            except Exception as e:
                r, s = None, Status.as_status(e)
            if is_success(s):
                return r, Status(Code.SUCCESS, plugin=pl.name)
            assert s is not None
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.ERROR, s.message(), plugin=pl.name, error=s.error)
            if r is not None and r.mode != NOMINATING_NOOP:
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # -- scoring ----------------------------------------------------------------------------

    def run_pre_score_plugins(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> Status | None:
        skip: set[str] = set()
        for pl in self.pre_score_plugins:
            try:
                s = pl.pre_score(state, pod_info, nodes)
            except Exception as e:
                s = Status.as_status(e)
            if s is not None and s.is_skip():
                skip.add(pl.name)
                continue
            if not is_success(s):
                assert s is not None
                return Status(
                    Code.ERROR, f"running PreScore plugin {pl.name!r}: {s.message()}", plugin=pl.name
                )
        state.skip_score_plugins = skip
        return None

    def run_score_plugins(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status | None]:
        per_plugin, s = self._score_columns(state, pod_info, nodes)
        if s is not None:
            return [], s
        return per_plugin, None

    def _score_columns(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[dict[str, list[int]], Status | None]:
        """Weighted, normalized scores per plugin, one column per plugin in node order."""
        active = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        per_plugin: dict[str, list[int]] = {}
        for pl in active:
            batch = pl.score_nodes if pl.name in self._batch_scorers else None
            score = pl.score
            values: list[int] = []
            append = values.append
            try:
                if batch is not None:
                    values = batch(state, pod_info, nodes)
                else:
                    for ni in nodes:
                        v, s = score(state, pod_info, ni)
                        if s is not None and s.code != Code.SUCCESS:
                            return {}, Status(Code.ERROR, f"running Score plugin {pl.name!r}: {s.message()}")
                        append(int(v))
            except Exception as e:
                return {}, Status(
                    Code.ERROR, f"running Score plugin {pl.name!r}: {Status.as_status(e).message()}"
                )
            if pl.name in self._normalizers:
                scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, values, strict=True)]
                s = pl.normalize_score(state, pod_info, scores)
                if not is_success(s):
                    return {}, Status(
                        Code.ERROR, f"running Normalize on Score plugins: {s.message() if s else ''}"
                    )
                values = [ns.score for ns in scores]
            if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
                bad = next(v for v in values if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
                return {}, Status(
                    Code.ERROR,
                    f"plugin {pl.name!r} returns an invalid score {bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                )
            weight = self.score_weights.get(pl.name, 1)
            per_plugin[pl.name] = [v * weight for v in values] if weight != 1 else values
        return per_plugin, None

    # -- reserve / permit / bind ------------------------------------------------------------

    def run_reserve_plugins_reserve(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status | None:
        for pl in self.reserve_plugins:
            try:
                s = pl.reserve(state, pod_info, node_name)
            except Exception as e:
                s = Status.as_status(e)
            if not is_success(s):
                assert s is not None
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return Status(
                    Code.ERROR, f"running Reserve plugin {pl.name!r}: {s.message()}", plugin=pl.name
                )
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        """Unreserve in reverse order; must not fail."""
        for pl in reversed(self.reserve_plugins):
            pl.unreserve(state, pod_info, node_name)

    def run_permit_plugins(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        """Success, a rejection, or Wait (then the pod is registered as a :class:`WaitingPod`)."""
        timeouts: dict[str, float] = {}
        for pl in self.permit_plugins:
            try:
                s, timeout = pl.permit(state, pod_info, node_name)
            except Exception as e:
                s, timeout = Status.as_status(e), 0.0
            if is_success(s):
                continue
            assert s is not None
            if s.is_rejected():
                return s.with_plugin(pl.name)
            if s.is_wait():
                timeouts[pl.name] = min(timeout, 15 * 60) if timeout else 0.0
                continue
            return Status(Code.ERROR, f"running Permit plugin {pl.name!r}: {s.message()}", plugin=pl.name)
        if timeouts:
            self.waiting_pods[pod_info.uid] = WaitingPod(pod_info, timeouts)
            return Status(
                Code.WAIT, f"one or more plugins asked to wait and no plugin rejected pod {pod_info.name!r}"
            )
        return None

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str, plugin: str = "", message: str = "removed") -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject(plugin, message)
        return True

    async def wait_on_permit(self, pod_info: PodInfo) -> Status | None:
        wp = self.waiting_pods.get(pod_info.uid)
        if wp is None:
            return None
        try:
            return await wp.wait()
        finally:
            self.waiting_pods.pop(pod_info.uid, None)

    async def run_pre_bind_plugins(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status | None:
        for pl in self.pre_bind_plugins:
            try:
                s = await pl.pre_bind(state, pod_info, node_name)
            except Exception as e:
                s = Status.as_status(e)
            if s is not None and (s.is_success() or s.is_skip()):
                continue
            if s is not None:
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return Status(
                    Code.ERROR, f"running PreBind plugin {pl.name!r}: {s.message()}", plugin=pl.name
                )
        return None

    async def run_bind_plugins(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds; Skip from all means nobody bound the pod."""
        if not self.bind_plugins:
            return Status(Code.SKIP)
        for pl in self.bind_plugins:
            try:
                s = await pl.bind(state, pod_info, node_name)
            except Exception as e:
                s = Status.as_status(e)
            if s is not None and s.is_skip():
                continue
            if is_success(s):
                return Status(Code.SUCCESS, plugin=pl.name)
            assert s is not None
            if s.is_rejected():
                return s.with_plugin(pl.name)
            return Status(
                Code.ERROR, f"running Bind plugin {pl.name!r}: {s.message()}", plugin=pl.name, error=s.error
            )
        return Status(Code.SKIP)

    def run_post_bind_plugins(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        for pl in self.post_bind_plugins:
            pl.post_bind(state, pod_info, node_name)

    # -- the scheduling algorithm (schedule_one.go) -----------------------------------------

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int:
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        pct = self.profile.percentage_of_nodes_to_score
        if not pct:
            pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        n = num_all_nodes * pct // 100
        return max(n, MIN_FEASIBLE_NODES_TO_FIND)

    def schedule_pod(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot | None = None
    ) -> ScheduleResult:
        """Pick a node for the pod or raise :class:`FitError` (no node fits) / :class:`NoNodesAvailableError`.

        A plugin Error raises :class:`SchedulingError`. The snapshot defaults to ``handle.snapshot``.
        """
        snap = snapshot or self.handle.snapshot
        if snap is None:
            raise SchedulingError("no snapshot")
        self.handle.snapshot = snap
        if snap.num_nodes() == 0:
            raise NoNodesAvailableError()
        feasible, diagnosis = self.find_nodes_that_fit(state, pod_info, snap)
        if not feasible:
            raise FitError(pod_info.key, snap.num_nodes(), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
        host = self._select_from_totals(feasible, self._prioritize_totals(state, pod_info, feasible))
        return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible))

    def find_nodes_that_fit(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = snapshot.list()
        pre_res, s, narrowing = self.run_pre_filter_plugins(state, pod_info, all_nodes)
        if s is not None and not s.is_success():
            if not s.is_rejected():
                raise SchedulingError(s.message(), s)
            diagnosis.node_to_status.absent_status = s
            diagnosis.pre_filter_msg = s.message()
            diagnosis.add_plugin_status(s)
            return [], diagnosis

        # A pod preempted its way onto a node before: try that node first.
        nominated = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if nominated:
            ni = snapshot.get(nominated)
            if ni is not None and (
                pre_res is None or pre_res.all_nodes() or nominated in (pre_res.node_names or ())
            ):
                st = self.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
                if is_success(st):
                    return [ni], diagnosis
                assert st is not None
                if not st.is_rejected():
                    raise SchedulingError(st.message(), st)
                diagnosis.node_to_status.set(nominated, st)
                diagnosis.add_plugin_status(st)

        names = snapshot.node_names
        if pre_res is not None and not pre_res.all_nodes():
            allowed = pre_res.node_names or set()
            names = [n for n in names if n in allowed]
            diagnosis.node_to_status.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))}",
            )
        feasible = self._find_nodes_that_pass_filters(state, pod_info, diagnosis, names, snapshot)
        return feasible, diagnosis

    def _candidate_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> set[str] | None:
        hint: set[str] | None = None
        for pl in self._hinting_filters:
            if pl.name in state.skip_filter_plugins:
                continue
            c = pl.candidate_nodes(state, pod_info, snapshot)
            if c is None:
                continue
            hint = set(c) if hint is None else hint & set(c)
        return hint

    def _find_nodes_that_pass_filters(
        self,
        state: CycleState,
        pod_info: PodInfo,
        diagnosis: Diagnosis,
        names: list[str],
        snapshot: Snapshot,
    ) -> list[NodeInfo]:
        """Filter nodes in name order from a rotating start until enough fit (``names`` is sorted)."""
        n = len(names)
        if n == 0:
            return []
        to_find = self.num_feasible_nodes_to_find(n)
        start = self.next_start_node_index % n
        if not self.filter_plugins:
            picked = [snapshot.get(names[(start + i) % n]) for i in range(to_find)]
            self.next_start_node_index = (start + to_find) % n
            return [ni for ni in picked if ni is not None]

        already = {name for name, _ in diagnosis.node_to_status.items()}
        first_pass: list[str] | None = None
        hint = self._candidate_hint(state, pod_info, snapshot)
        if hint is not None and len(hint) < n:
            allowed = None if names is snapshot.node_names else set(names)
            hinted = sorted(h for h in hint if h not in already and (allowed is None or h in allowed))
            cut = bisect.bisect_left(hinted, names[start])
            first_pass = hinted[cut:] + hinted[:cut]

        feasible: list[NodeInfo] = []
        node_infos = snapshot.node_info_map
        if self._any_nominated_pods():
            run_filters: Callable[[NodeInfo], Status | None] = functools.partial(
                self.run_filter_plugins_with_nominated_pods, state, pod_info
            )
        else:
            active = [pl for pl in self.filter_plugins if pl.name not in state.skip_filter_plugins]
            run_filters = functools.partial(_run_filters, active, state, pod_info)

        def visit(order: Iterable[str]) -> None:
            for name in order:
                if len(feasible) >= to_find:
                    return
                if name in already:
                    continue
                ni = node_infos.get(name)
                if ni is None:
                    continue
                st = run_filters(ni)
                if st is None or st.code == Code.SUCCESS:
                    feasible.append(ni)
                elif st.is_rejected():
                    diagnosis.node_to_status.set(name, st)
                    diagnosis.add_plugin_status(st)
                else:
                    raise SchedulingError(st.message(), st)

        ordered = list(names)
        rotation = itertools.chain(ordered[start:], ordered[:start])
        if first_pass is None:
            visit(rotation)
        else:
            visit(first_pass)
            if not feasible:
                # Nothing fits: visit the rest too, so the FitError names every node's real reason.
                hinted_set = set(first_pass)
                visit(x for x in rotation if x not in hinted_set)
        if len(feasible) >= to_find:
            # kube stops right after the last feasible node; continue from the node after it
            last = bisect.bisect_left(names, feasible[-1].name)
            self.next_start_node_index = (last + 1) % n
        else:
            self.next_start_node_index = start
        return feasible

    def prioritize_nodes(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> list[NodePluginScores]:
        if not self.score_plugins:
            return [NodePluginScores(ni.name, {}, 1) for ni in nodes]
        s = self.run_pre_score_plugins(state, pod_info, nodes)
        if not is_success(s):
            assert s is not None
            raise SchedulingError(s.message(), s)
        scores, s = self.run_score_plugins(state, pod_info, nodes)
        if not is_success(s):
            assert s is not None
            raise SchedulingError(s.message(), s)
        return scores

    def _prioritize_totals(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`prioritize_nodes` reduced to each node's total (the scheduling hot path)."""
        if not self.score_plugins:
            return [1] * len(nodes)
        s = self.run_pre_score_plugins(state, pod_info, nodes)
        if not is_success(s):
            assert s is not None
            raise SchedulingError(s.message(), s)
        columns, s = self._score_columns(state, pod_info, nodes)
        if s is not None:
            raise SchedulingError(s.message(), s)
        if not columns:
            return [0] * len(nodes)
        return [sum(row) for row in zip(*columns.values(), strict=True)]

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """Highest total score; ties broken uniformly at random (seeded rng)."""
        return self._select_from_totals(scores, [ns.total_score for ns in scores])

    def _select_from_totals(self, nodes: Sequence[Any], totals: list[int]) -> str:
        """The name of a node with the highest total, uniformly among ties (kube's reservoir sampling)."""
        if not totals:
            raise SchedulingError("empty priorityList")
        best = max(totals)
        ties = [i for i, t in enumerate(totals) if t == best]
        pick = ties[0] if len(ties) == 1 else ties[self.handle.rng.randrange(len(ties))]
        return nodes[pick].name

    # -- helpers ----------------------------------------------------------------------------

    def _call(self, pl: Any, method: str, *args: Any) -> Status | None:
        try:
            return getattr(pl, method)(*args)
        except Exception as e:
            return Status.as_status(e)


def _run_filters(
    plugins: list[FilterPlugin], state: CycleState, pod_info: PodInfo, node_info: NodeInfo
) -> Status | None:
    """The Filter loop: the first plugin that does not answer Success decides."""
    for pl in plugins:
        try:
            s = pl.filter(state, pod_info, node_info)
        except Exception as e:
            s = Status.as_status(e)
        if s is not None and s.code != Code.SUCCESS:
            if not s.is_rejected():
                s = Status(Code.ERROR, f"running {pl.name!r} filter plugin: {s.message()}", error=s.error)
            s.plugin = pl.name
            return s
    return None


class SchedulingError(Exception):
    """A plugin returned Error (or raised): the cycle is aborted and the pod retried with backoff."""

    def __init__(self, message: str, status: Status | None = None) -> None:
        super().__init__(message)
        self.status = status or Status(Code.ERROR, message)
