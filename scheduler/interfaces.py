"""The scheduling framework's interfaces: what plugins implement and what they may reach.

Everything a plugin author needs lives here and nothing here runs a cycle (that is
:mod:`scheduler.framework`, the runtime): the per-cycle :class:`CycleState`, the result types,
one ``Protocol`` per named extension point (a plugin implements an extension point by having
the method), the :class:`Handle` plugins receive, and the :class:`Profile` that lists them.

Extension points of the pod-by-pod cycle follow kube's framework (PreEnqueue, QueueSort,
PreFilter, Filter, PostFilter, PreScore, Score, NormalizeScore, Reserve, Permit, PreBind, Bind,
PostBind). The PodGroup cycle (``schedule_one_podgroup``, KEP-4671 / KEP-5732 / KEP-5710) adds:

* **PlacementGenerate** - split the cluster into candidate placements (node subsets), e.g. one
  per value of a topology label; generators are intersected; none means "the whole cluster";
* **PlacementFeasible** - after each pod of the group was tried in a placement: can the group
  still succeed there (``Unschedulable`` ends the placement early), is it satisfied yet
  (``Wait``), or is it done (Success)?
* **PlacementScore** - score the feasible placements; the highest total wins;
* **PodGroupPostFilter** - run once when the whole group is unschedulable (workload-aware
  preemption); it may re-run the group algorithm through the ``schedule`` callback it gets.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from apiserver.api.types import Obj
from scheduler.diagnosis import Diagnosis as NodeDiagnosis
from scheduler.diagnosis import NodeToStatus
from scheduler.events import ClusterEventWithHint
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.status import Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot
    from scheduler.podgroups import PodGroupState
    from scheduler.queue import QueuedPodInfo


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


#: no plugins (a fresh :class:`CycleState`'s skipped ones, a fitting pod's rejecting ones, a
#: queued pod's): one shared immutable set for the fields that are replaced, never changed in place
NO_PLUGINS: frozenset[str] = frozenset()


class CycleState:
    """Per-cycle scratch space plugins share (kube's ``CycleState``).

    Values with a ``clone()`` method are cloned by :meth:`clone` (preemption dry-runs each node
    on its own copy); other values are treated as immutable and shared.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: the plugins PreFilter / PreScore skipped: replaced by the framework, never changed in
        #: place, so a fresh state and a placement run's pods share immutable ones (a 5,000-pod
        #: gang's members wait with their states until bound: two GC-tracked sets fewer each)
        self.skip_filter_plugins: AbstractSet[str] = NO_PLUGINS
        self.skip_score_plugins: AbstractSet[str] = NO_PLUGINS

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


@dataclass(frozen=True)
class Nominating:
    """kube's ``NominatingInfo``: Override sets (or with ``""`` clears) the nomination, Noop keeps it."""

    mode: str = NOMINATING_NOOP
    node_name: str = ""


CLEAR_NOMINATION = Nominating(NOMINATING_OVERRIDE, "")


@dataclass
class PostFilterResult:
    """What a PostFilter (preemption) decided: the node to nominate, and the victims it evicted."""

    nominated_node_name: str = ""
    mode: str = NOMINATING_OVERRIDE
    victims: list[Obj] = field(default_factory=list)


@dataclass
class NodeScore:
    """One plugin's score for one node."""

    name: str
    score: int


@dataclass
class NodePluginScores:
    """A node's weighted scores per Score plugin and their total (kube's ``NodePluginScores``)."""

    name: str
    scores: dict[str, int]
    total_score: int


@dataclass
class ScheduleResult:
    """A scheduling cycle's answer: the chosen node and how many nodes were evaluated and found feasible."""

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


@dataclass(frozen=True, slots=True)
class FilterHint:
    """gangplane: what a Filter plugin knows, before running, about the nodes of this cycle.

    Exactly one of the two is set:

    * ``check``: the only nodes this plugin's Filter may reject; on every other node it would
      return Success, so the framework does not call it there. ``rejects`` True says every
      node in ``check`` *is* rejected (the framework then tries those nodes last);
    * ``passes``: the only nodes this plugin's Filter accepts; it rejects every other node and
      accepts every node listed (so it is not called on them).

    ``status``, when set, is what Filter returns on each surely-rejected node.

    Only a speed-up: the framework reaches kube's result (the same feasible nodes, and for
    every node it reports, the status of the first plugin that rejects it) by running Filter
    on fewer nodes.
    """

    check: Collection[str] | None = None
    passes: Collection[str] | None = None
    rejects: bool = False
    #: the status Filter returns on every node it surely rejects, when it is the same for all
    #: (the framework then reports it without calling Filter there)
    status: Status | None = None


#: a hint for a plugin that cannot reject any node this cycle
NO_REJECTIONS = FilterHint(check=frozenset())


@runtime_checkable
class FilterHintPlugin(Protocol):
    """gangplane: a Filter plugin that can say up front which nodes it may reject.

    ``None`` means "no idea": Filter runs on every node visited.
    """

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint | None: ...


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
class ArrayScorePlugin(Protocol):
    """gangplane: a Score plugin that can give its final column as a numpy array.

    ``score_array`` returns what Score on every one of ``nodes`` followed by NormalizeScore
    would give, unweighted, as a one-dimensional int64 numpy array in node order, or as an
    ``int`` when every node gets that one score, or ``None`` when it cannot (then the plugin is
    run as usual). The scheduling cycle then adds the
    columns and picks the host in arrays (:mod:`scheduler.score_totals`). The array may be a
    view of a column the plugin keeps: read it within the cycle, never modify it.
    """

    def score_array(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any: ...


class BoundedArrayScorePlugin(Protocol):
    """gangplane: an :class:`ArrayScorePlugin` that can also give its column's least and greatest
    value, which it knows without reading the column back (PodTopologySpread: the normalization
    is monotonic, so they follow from the raw scores' bounds). ``score_array_bounded`` returns
    ``(column, least, greatest)`` for what ``score_array`` returns (an ``int`` column is its
    own bounds), or ``None`` exactly where ``score_array`` does. The fused totals
    (:mod:`scheduler.score_fusion`) then range-check the column without two reductions over it.
    """

    def score_array_bounded(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[Any, int, int] | None: ...


class ScoreColumn(NamedTuple):
    """gangplane: a Score plugin's final column for one pod shape, as a per-row function of the
    snapshot's node table (:meth:`scheduler.nodetable.NodeTable.derived`).

    ``key`` names the column (the plugin's scorer and the pod's requests: equal keys, equal
    columns); ``compute(rows)`` gives the scores of many rows as an int64 array, ``rescore(row)``
    the score of one row; ``table`` and ``rows`` are the table and the rows of the cycle's
    nodes. The scheduling cycle may add several plugins' columns into one kept column of
    totals (:mod:`scheduler.score_fusion`) instead of slicing and adding each one per cycle.
    """

    table: Any
    rows: Any
    key: object
    compute: Callable[[Any], Any]
    rescore: Callable[[int], int]


@runtime_checkable
class ColumnScorePlugin(Protocol):
    """gangplane: an :class:`ArrayScorePlugin` whose column is a pure function of each node's row.

    ``score_column`` returns the :class:`ScoreColumn` whose ``rows`` hold exactly what
    ``score_array`` would return for ``nodes`` (Score then NormalizeScore, unweighted, every value
    within ``[MIN_NODE_SCORE, MAX_NODE_SCORE]``), or ``None`` when it has none (then
    ``score_array`` or the per-node path is used).
    """

    def score_column(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> ScoreColumn | None: ...


@runtime_checkable
class UniformScorePlugin(Protocol):
    """gangplane: a Score plugin that can tell, without scoring, that every node gets one score.

    ``uniform_score`` returns the final (normalized, unweighted) score that Score followed by
    NormalizeScore would give every one of ``nodes``, or ``None`` when it cannot say so
    cheaply (then the plugin is run as usual). E.g. TaintToleration on a cluster without
    taints: every count is 0, so every node normalizes to the maximum.
    """

    def uniform_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> int | None: ...


@runtime_checkable
class NormalizeScorePlugin(Protocol):
    def normalize_score(
        self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]
    ) -> Status | None: ...


@runtime_checkable
class BatchNormalizeScorePlugin(Protocol):
    """gangplane: NormalizeScore over the plain score column of ``nodes``, without NodeScore objects.

    Must compute what ``normalize_score`` computes; returns the new column.
    """

    def normalize_scores(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], scores: list[int]
    ) -> list[int]: ...


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


# --- the PodGroup cycle ----------------------------------------------------------------------------


@dataclass
class PodGroupInfo:
    """The group being scheduled in one PodGroup cycle (kube's ``PodGroupInfo``).

    ``pods`` are the queued (unscheduled) members tried in this cycle, in the order the cycle
    tries them (priority, then first seen); members already bound or assumed are in
    ``state``. ``pod_group`` is the PodGroup object from the scheduler's cache.
    """

    namespace: str
    name: str
    pod_group: Obj
    pods: list[PodInfo]
    state: PodGroupState

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def spec(self) -> Obj:
        return self.pod_group.get("spec") or {}


@dataclass
class Placement:
    """A candidate set of nodes for the whole group (KEP-5732), e.g. every node of one rack.

    ``name`` is what users read (the domain value, ``rack-2``); ``node_names`` is sorted (the
    order Filter visits); ``None`` node names means every node of the snapshot.
    """

    name: str
    node_names: list[str] | None = None
    #: the topology label key and value that define it ("" for the whole cluster)
    key: str = ""
    value: str = ""

    def is_cluster(self) -> bool:
        return self.node_names is None


@dataclass
class PodAssignment:
    """One pod's outcome in a placement: the node it fits (``""`` if it does not) and its status."""

    pod_info: PodInfo
    node_name: str = ""
    status: Status | None = None
    #: the FitError text when the pod fit no node of the placement
    message: str = ""
    #: plugins that rejected the pod (the queue requeues it on their events); replaced, never
    #: changed in place: a pod that fits keeps the shared empty :data:`NO_PLUGINS` (a gang's
    #: members hold their assignments until bound: no empty set of their own)
    unschedulable_plugins: AbstractSet[str] = NO_PLUGINS
    #: the distinct rejection reasons, most frequent first (``Insufficient nvidia.com/gpu``);
    #: replaced, never changed in place (empty: the shared ``()``, not a list per pod)
    reasons: Sequence[str] = ()
    #: the pod's own cycle state, carried on to Reserve, Permit and binding
    state: CycleState | None = None
    #: why the pod fit no node of the placement, node by node (kept for the scheduling records)
    diagnosis: NodeDiagnosis | None = None


@dataclass
class PlacementResult:
    """What running the group over one placement gave (``status`` None = feasible)."""

    placement: Placement
    assignments: list[PodAssignment] = field(default_factory=list)
    status: Status | None = None
    score: int = 0
    #: gangplane: pods placed by a run of identical pods whose CycleState gets its PreFilter
    #: results only if this placement is the one chosen (:mod:`scheduler.placement_run`)
    pending_pre_filter: list[PodAssignment] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        return self.status is None or self.status.is_success()

    def fitting(self) -> list[PodAssignment]:
        return [a for a in self.assignments if a.node_name]


@dataclass
class PodGroupPostFilterResult:
    """What a PodGroupPostFilter (workload-aware preemption) decided: pod key -> nominated node."""

    nominated_node_names: dict[str, str] = field(default_factory=dict)


#: ``schedule() -> (proposed assignments, status)``: re-run the group algorithm on the current
#: snapshot (after a PodGroupPostFilter removed victims from it) without side effects.
PodGroupSchedulingFunc = Callable[[], tuple[list[PodAssignment], Status | None]]


@runtime_checkable
class PlacementGeneratePlugin(Protocol):
    """Candidate placements for the group, or ``None`` when the plugin does not constrain it.

    A Status that is not Success ends the cycle with it (e.g. no domain exists at all).
    """

    def generate_placements(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot
    ) -> tuple[list[Placement] | None, Status | None]: ...


@runtime_checkable
class PlacementFeasiblePlugin(Protocol):
    """After a pod of the group was tried: Unschedulable (give up on the placement), Wait (not
    satisfied yet) or Success. ``scheduled`` counts members bound or assumed before the cycle
    plus pods that fit so far; ``remaining`` the pods not tried yet."""

    def placement_feasible(
        self, state: CycleState, group: PodGroupInfo, scheduled: int, remaining: int
    ) -> Status | None: ...


@runtime_checkable
class PlacementScorePlugin(Protocol):
    """Score a feasible placement in ``[0, 100]`` (the snapshot holds the placement's pods)."""

    def score_placement(
        self, state: CycleState, group: PodGroupInfo, result: PlacementResult, snapshot: Snapshot
    ) -> tuple[int, Status | None]: ...


@runtime_checkable
class PodGroupPostFilterPlugin(Protocol):
    """Run once when the whole group was unschedulable (all PostFilter plugins are skipped in
    the PodGroup cycle). Success means victims were chosen and the group's pods should be
    nominated (``result``, pod key -> node) and retried; the first Success wins; a rejection's
    message is appended to the group's (``, <message>``).

    To try a set of victims: ``mark = handle.snapshot.backup()``, ``snapshot.forget_pod(victim,
    node)`` for each, ``schedule()`` (the group algorithm on that snapshot, no side effects; it
    returns the best placement's assignments and its status, None when the group fits), then
    ``snapshot.restore(mark)``."""

    async def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedulingFunc
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]: ...


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
    #: (namespace, name) -> PodGroup dict or None (the scheduler's PodGroup informer cache)
    get_pod_group: Callable[[str, str], Obj | None] | None = None
    #: (namespace, name) -> the group's members as the scheduler's cache tracks them, or None
    pod_group_state: Callable[[str, str], PodGroupState | None] | None = None
    #: ``async record_event(regarding, type, reason, action, message, related)``
    record_event: Callable[..., Any] | None = None
    #: the scheduler's shared InformerFactory: plugins take the listers they need from it at construction
    informer_factory: Any = None
    #: the :class:`~scheduler.framework.Framework` this handle belongs to (set by it; typed loosely
    #: so the interfaces never import the runtime)
    framework: Any = None
    #: gangplane's scheduling records (:class:`scheduler.records.Recorder`), or None when off:
    #: the framework and the preemption plugins report what they decided to it
    records: Any = None

    async def event(
        self, regarding: Obj, etype: str, reason: str, action: str, note: str, related: Any = None
    ) -> None:
        """Record an event through :attr:`record_event`, awaiting it when the recorder is async;
        nothing without one. The preemption plugins (DefaultPreemption, WorkloadPreemption) both
        report their victims' ``Preempted`` events this way."""
        if self.record_event is None:
            return
        r = self.record_event(regarding, etype, reason, action, note, related)
        if inspect.isawaitable(r):
            await r


PluginFactory = Callable[[dict[str, Any], Handle], Any]


@dataclass(frozen=True)
class PluginSpec:
    """A plugin enabled in a profile, with its Score weight."""

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


def default_normalize_scores(max_priority: int, reverse: bool, scores: list[int]) -> list[int]:
    """:func:`default_normalize_score` over a plain column of scores (the batch path)."""
    max_count = max(scores, default=0)
    if max_count == 0:
        return [max_priority] * len(scores) if reverse else scores
    if reverse:
        return [max_priority - max_priority * v // max_count for v in scores]
    return [max_priority * v // max_count for v in scores]
