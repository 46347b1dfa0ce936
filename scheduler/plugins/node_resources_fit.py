"""NodeResourcesFit: the pod's requests must fit the node's free allocatable; score by usage.

Requests are kube's ``PodRequests``: containers plus restartable (sidecar) init containers,
the peak of each classic init container next to the sidecars started before it, pod-level
requests, plus ``spec.overhead``. Filter reasons are kube's: ``Too many pods``,
``Insufficient cpu``, ``Insufficient memory``, ``Insufficient ephemeral-storage``,
``Insufficient <extended resource>``. A request larger than the node's whole allocatable is
UnschedulableAndUnresolvable (preemption cannot help there); otherwise Unschedulable.

Score uses the scoring strategy from args (``scoringStrategy.type`` LeastAllocated, the
default, or MostAllocated) over ``scoringStrategy.resources`` (cpu:1, memory:1), with the
non-zero request defaults so pods without requests still spread.

The plugin also answers ``filter_hint`` from the snapshot's capacity index (the nodes short of
the requests, or those with room when most are short), so Filter runs only where it can fail.

As a PlacementScore plugin (the PodGroup cycle, KEP-5732) it prefers the tightest fit: a
placement scores the share of its capacity in use once the group's pods are in it, averaged
over the resources the group requests, so a group fills a partly used rack before it
fragments an empty one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scheduler.events import (
    ASSIGNED_POD,
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from scheduler.interfaces import (
    MAX_NODE_SCORE,
    NO_REJECTIONS,
    CycleState,
    FilterHint,
    Handle,
    Placement,
    PlacementResult,
    PodGroupInfo,
    PreFilterResult,
    ScoreColumn,
)
from scheduler.nodeinfo import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, NodeInfo, PodInfo
from scheduler.plugins.requested_to_capacity_ratio import (
    REQUESTED_TO_CAPACITY_RATIO,
    RequestedToCapacityRatioScorer,
)
from scheduler.plugins.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    Scorer,
    array_column,
    array_scores,
    least_allocated_scorer,
    most_allocated_scorer,
    node_scorer,
    parse_resources,
    pod_request,
    score_node,
    score_nodes,
)
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "NodeResourcesFit"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: namespaced, outside ``kubernetes.io/``, not ``requests.*``."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


class InsufficientResource:
    __slots__ = ("resource", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(
        self, resource: str, reason: str, requested: int, used: int, capacity: int, unresolvable: bool
    ):
        self.resource = resource
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable


def fits_request(
    requests: dict[str, int],
    node_info: NodeInfo,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """kube's ``fitsRequest``: every shortage on the node, in kube's order."""
    out: list[InsufficientResource] = []
    alloc, used = node_info.allocatable, node_info.requested
    allowed = alloc.get(PODS, 0)
    if len(node_info.pods) + 1 > allowed:
        out.append(InsufficientResource(PODS, "Too many pods", 1, len(node_info.pods), allowed, False))
    # the common case first: nothing short at all (ignored resources only make this stricter)
    for r, want in requests.items():
        if want > 0 and want > alloc.get(r, 0) - used.get(r, 0):
            break
    else:
        return out
    for r in _NATIVE:
        want = requests.get(r, 0)
        if want > 0 and want > alloc.get(r, 0) - used.get(r, 0):
            out.append(
                InsufficientResource(
                    r, f"Insufficient {r}", want, used.get(r, 0), alloc.get(r, 0), want > alloc.get(r, 0)
                )
            )
    for r, want in requests.items():
        if r in _NATIVE or r == PODS or want == 0:
            continue
        if is_extended_resource(r) and (r in ignored or r.split("/", 1)[0] in ignored_groups):
            continue
        if want > alloc.get(r, 0) - used.get(r, 0):
            out.append(
                InsufficientResource(
                    r, f"Insufficient {r}", want, used.get(r, 0), alloc.get(r, 0), want > alloc.get(r, 0)
                )
            )
    return out


def _fits_after_node_change(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    """Requeue on a node add/update only if the pod would fit the (empty) new node."""
    if not isinstance(new, dict):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if not fits_request(PodInfo(pod).requests, NodeInfo(new)) else QueueingHint.SKIP


def _assigned_pod_deleted(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    if new is None and isinstance(old, dict):
        spec = old.get("spec") or {}
        if not spec.get("nodeName") and not (old.get("status") or {}).get("nominatedNodeName"):
            return QueueingHint.SKIP
    return QueueingHint.QUEUE


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        strategy = args.get("scoringStrategy") or {}
        self.strategy = strategy.get("type") or LEAST_ALLOCATED
        self.resources = parse_resources(strategy.get("resources"))
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
            self.scorer: Scorer = RequestedToCapacityRatioScorer(shape)
        elif self.strategy in (LEAST_ALLOCATED, MOST_ALLOCATED):
            self.scorer = (
                least_allocated_scorer if self.strategy == LEAST_ALLOCATED else most_allocated_scorer
            )
        else:
            raise ValueError(f"scoring strategy {self.strategy} is not supported")
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE), _assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                _fits_after_node_change,
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_PRE_FILTER_KEY, pod_info.requests)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        requests = state.get(_PRE_FILTER_KEY)
        if requests is None:
            requests = pod_info.requests
        alloc, used = node_info.allocatable, node_info.requested
        if len(node_info.pods) < alloc.get(PODS, 0):
            # the common case, inline: room for everything (fits_request would find no shortage)
            for r, want in requests.items():
                if want > 0 and want > alloc.get(r, 0) - used.get(r, 0):
                    break
            else:
                return None
        short = fits_request(requests, node_info, self.ignored, self.ignored_groups)
        if not short:
            return None
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(s.unresolvable for s in short) else Code.UNSCHEDULABLE
        )
        return Status(code, *[s.reason for s in short])

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint:
        """From the snapshot's capacity index: the nodes short of the requests (all rejected), or,
        when most nodes are short, the nodes with room (all accepted)."""
        requests = state.get(_PRE_FILTER_KEY)
        if requests is None:
            requests = pod_info.requests
        wanted: Mapping[str, int] = requests
        if self.ignored or self.ignored_groups:
            # the index skips requests of 0 or less itself: only ignored resources need leaving out
            wanted = {
                r: v
                for r, v in requests.items()
                if v > 0
                and not (
                    is_extended_resource(r)
                    and (r in self.ignored or r.split("/", 1)[0] in self.ignored_groups)
                )
            }
        short, fits = snapshot.short_of(wanted)
        if short is not None:
            # no node short (a cluster with room): what a hint naming no node says
            return FilterHint(check=short, rejects=True) if short else NO_REJECTIONS
        return FilterHint(passes=fits)

    def score_placement(
        self, state: CycleState, group: PodGroupInfo, result: PlacementResult, snapshot: Snapshot
    ) -> tuple[int, Status | None]:
        """Tightest fit: the placement's utilisation of the group's resources, with the group in it."""
        names = result.placement.node_names
        if names is None:
            names = sorted({a.node_name for a in result.fitting()})
        return _utilisation_score(group, names, snapshot, {}), None

    def score_placement_with(
        self,
        state: CycleState,
        group: PodGroupInfo,
        placement: Placement,
        pods: Sequence[PodInfo],
        snapshot: Snapshot,
    ) -> tuple[int | None, Status | None]:
        """:meth:`score_placement` of a topology placement once ``pods`` are in it, before they
        are (:mod:`scheduler.placement_certain`): the utilisation sums the nodes' requests, so it
        is the same wherever each pod lands. ``None`` for the whole cluster, whose nodes are
        those the pods land on."""
        if placement.node_names is None:
            return None, None
        extra: dict[str, int] = {}
        for pi in pods:
            for r, v in pi.requests.items():
                extra[r] = extra.get(r, 0) + v
        return _utilisation_score(group, placement.node_names, snapshot, extra), None

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, [pod_request(pod_info, r, False) for r, _ in self.resources])
        return None

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, False) for r, _ in self.resources]
        return score_node(node_info, reqs, self.resources, self.scorer, False), None

    def node_scorer(self, state: CycleState, pod_info: PodInfo) -> Callable[[NodeInfo], int]:
        """:meth:`score`'s raw score of a node as a function of the node alone, for ``state`` and
        ``pod_info`` as they are now (a run's first pod: :mod:`scheduler.placement_run`)."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, False) for r, _ in self.resources]
        return node_scorer(reqs, self.resources, self.scorer, False)

    def score_nodes(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for every node in one call (the framework's batch path)."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, False) for r, _ in self.resources]
        arr = array_scores(state, self.handle, nodes, reqs, self.resources, self.scorer, False)
        if arr is not None:
            return arr
        return score_nodes(nodes, reqs, self.resources, self.scorer, False)

    def score_array(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any:
        """:meth:`score_nodes` as an int64 array from the node table (no NormalizeScore), or ``None``."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, False) for r, _ in self.resources]
        return array_scores(state, self.handle, nodes, reqs, self.resources, self.scorer, False, True)

    def score_column(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> ScoreColumn | None:
        """The node-table column :meth:`score_array` reads (:class:`ColumnScorePlugin`), or ``None``."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, False) for r, _ in self.resources]
        return array_column(state, self.handle, nodes, reqs, self.resources, self.scorer, False)


def new(args: dict[str, Any], handle: Handle) -> NodeResourcesFit:
    return NodeResourcesFit(args, handle)


def _utilisation_score(
    group: PodGroupInfo, names: Sequence[str], snapshot: Snapshot, extra: Mapping[str, int]
) -> int:
    """The share of the nodes' allocatable in use, averaged over the group's requested resources
    (cpu and memory if none), with ``extra`` more requested (pods not in the snapshot yet)."""
    resources = sorted({r for pi in group.pods for r, v in pi.requests.items() if v > 0 and r != PODS})
    if not resources:
        resources = [CPU, MEMORY]
    infos = snapshot.node_info_map
    shares: list[float] = []
    for r in resources:
        alloc = used = 0
        for n in names:
            ni = infos.get(n)
            if ni is None:
                continue
            a = ni.allocatable.get(r, 0)
            alloc += a
            used += a - ni.free(r)
        used += extra.get(r, 0)
        if alloc > 0:
            shares.append(min(1.0, max(0.0, used / alloc)))
    if not shares:
        return 0
    return int(MAX_NODE_SCORE * sum(shares) / len(shares))
