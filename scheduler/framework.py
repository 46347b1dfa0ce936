"""The scheduling framework runtime: profiles instantiated, extension points run, one cycle run like kube's.

The interfaces plugins implement (protocols, CycleState, Handle, Profile) live in
:mod:`scheduler.interfaces` and are re-exported here for callers that import them from the framework.

A :class:`Profile` (``default-scheduler`` by default) lists plugins in kube's multi-point order
with Score weights; the :class:`Framework` instantiates them from a registry and sorts each
into the extension points it implements (a plugin implements an extension point by having the
method, so one class may be PreFilter + Filter + Score at once).

The scheduling algorithm (:meth:`Framework.schedule_pod`) follows ``schedule_one.go``:
PreFilter (results may narrow the nodes), Filter over the nodes starting at a rotating index
and stopping once ``numFeasibleNodesToFind`` fit, the first failing plugin deciding a node's
status; on failure a :class:`~scheduler.diagnosis.FitError` whose text is kube's; otherwise
PreScore, Score, NormalizeScore, weighting, and a random pick among the best.

gangplane addition: Filter plugins may also offer ``filter_hint(state, pod, snapshot)``
(:class:`~scheduler.interfaces.FilterHint`): the only nodes they may reject this cycle (cordoned
nodes, tainted nodes, nodes short of the requests per the snapshot's capacity index) or the
only nodes they accept. The framework then runs a plugin only on nodes it may reject - on a
cluster with room, no Filter runs at all for a plain pod - and tries the surely-rejected nodes
last, only when nothing else fits, to give the exact per-node reasons for the FitError. The
result is the same as kube's; only the work is smaller. (A PreFilterResult would change the
diagnosis text, so the hint is not one.)
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import operator
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scheduler.diagnosis import Diagnosis, FitError, NodeToStatus, NoNodesAvailableError
from scheduler.events import ClusterEventWithHint
from scheduler.interfaces import (
    DEFAULT_SCHEDULER_NAME,
    MAX_NODE_SCORE,
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    MIN_NODE_SCORE,
    NOMINATING_NOOP,
    NOMINATING_OVERRIDE,
    BatchNormalizeScorePlugin,
    BatchScorePlugin,
    BindPlugin,
    CycleState,
    EnqueueExtensions,
    FilterHint,
    FilterHintPlugin,
    FilterPlugin,
    Handle,
    NodePluginScores,
    NodeScore,
    NormalizeScorePlugin,
    PermitPlugin,
    Placement,
    PlacementFeasiblePlugin,
    PlacementGeneratePlugin,
    PlacementResult,
    PlacementScorePlugin,
    PluginFactory,
    PluginSpec,
    PodGroupInfo,
    PodGroupPostFilterPlugin,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    Profile,
    QueueSortPlugin,
    ReservePlugin,
    ScheduleResult,
    ScorePlugin,
    UniformScorePlugin,
    default_normalize_score,
    go_list,
)
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.podgroups import pod_group_key
from scheduler.status import Code, Status, is_success

if TYPE_CHECKING:
    from scheduler.cache import Snapshot
    from scheduler.queue import QueuedPodInfo

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NOMINATING_NOOP",
    "NOMINATING_OVERRIDE",
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
    "PluginFactory",
    "PluginSpec",
    "ScheduleResult",
    "SchedulingError",
    "Status",
    "default_normalize_score",
    "go_list",
]


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


def _protocol_methods(proto: type) -> list[str] | None:
    """The methods plugin protocol ``proto`` (and its protocol bases) declares; None when it also
    declares data members, which only ``isinstance`` checks the way typing defines."""
    methods: list[str] = []
    for base in proto.__mro__:
        if base is object or base.__name__ in ("Protocol", "Generic"):
            continue
        if vars(base).get("__annotations__"):
            return None
        methods.extend(n for n, v in vars(base).items() if not n.startswith("_") and callable(v))
    return methods


def implements(plugin: object, proto: type) -> bool:
    """``isinstance(plugin, proto)`` for a runtime-checkable plugin protocol, decided cheaply.

    A plugin implements an extension point by having its methods, none of them None: the rule
    of Python's runtime protocol check for protocols whose members are all methods. On Python
    3.11 that check walks the protocol's and the plugin class's MROs three times per call
    (~40 µs), and a framework makes ~400 of them while it is built, so ~14 ms of every
    scheduler (and so ``gangplane serve``) start went there. Protocols with data members take
    ``isinstance`` itself.
    """
    methods = _protocol_methods(proto)
    if methods is None:
        return isinstance(plugin, proto)
    return all(getattr(plugin, m, None) is not None for m in methods)


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
            return [p for n, p in self.plugins.items() if n not in off and implements(p, proto)]

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
        self.placement_generate_plugins: list[PlacementGeneratePlugin] = at(
            "placementGenerate", PlacementGeneratePlugin
        )
        self.placement_feasible_plugins: list[PlacementFeasiblePlugin] = at(
            "placementFeasible", PlacementFeasiblePlugin
        )
        self.placement_score_plugins: list[PlacementScorePlugin] = at("placementScore", PlacementScorePlugin)
        self.pod_group_post_filter_plugins: list[PodGroupPostFilterPlugin] = at(
            "podGroupPostFilter", PodGroupPostFilterPlugin
        )
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.next_start_node_index = 0
        # decided once, not per cycle: which Filter plugins hint, which Score plugins batch and normalize
        self._hinting_filters = {p.name for p in self.filter_plugins if implements(p, FilterHintPlugin)}
        self._batch_normalizers = {
            p.name for p in self.score_plugins if implements(p, BatchNormalizeScorePlugin)
        }
        self._batch_scorers = {p.name for p in self.score_plugins if implements(p, BatchScorePlugin)}
        self._normalizers = {p.name for p in self.score_plugins if implements(p, NormalizeScorePlugin)}
        self._uniform_scorers = {p.name for p in self.score_plugins if implements(p, UniformScorePlugin)}

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
            if implements(p, EnqueueExtensions)
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
        # members of the pod's own PodGroup are placed together with it in this cycle (each one
        # assumed into the snapshot as it fits): their earlier nominations must not count twice
        group = pod_group_key(pod_info.pod)
        for pi in nominated:
            if group and pod_group_key(pi.pod) == group:
                continue
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

    # -- the PodGroup cycle's extension points ----------------------------------------------

    def run_placement_generate_plugins(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot
    ) -> tuple[list[Placement] | None, Status | None]:
        """The placements every generator agrees on (their intersection, by node set).

        ``None`` means no generator constrained the group: the whole cluster is its one placement.
        """
        result: list[Placement] | None = None
        for pl in self.placement_generate_plugins:
            try:
                placements, s = pl.generate_placements(state, group, snapshot)
            except Exception as e:
                placements, s = None, Status.as_status(e)
            if not is_success(s):
                assert s is not None
                if not s.is_rejected():
                    return None, Status(
                        Code.ERROR, f"running PlacementGenerate plugin {pl.name!r}: {s.message()}"
                    )
                return None, s.with_plugin(pl.name)
            if placements is None:
                continue
            result = placements if result is None else _intersect_placements(result, placements)
        return result, None

    def run_placement_feasible_plugins(
        self, state: CycleState, group: PodGroupInfo, scheduled: int, remaining: int
    ) -> Status | None:
        """Unschedulable beats Wait beats Success; an Error is returned as it is."""
        waiting: Status | None = None
        for pl in self.placement_feasible_plugins:
            try:
                s = pl.placement_feasible(state, group, scheduled, remaining)
            except Exception as e:
                s = Status.as_status(e)
            if is_success(s):
                continue
            assert s is not None
            if s.is_wait():
                waiting = waiting or s.with_plugin(pl.name)
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name)
            return Status(Code.ERROR, f"running PlacementFeasible plugin {pl.name!r}: {s.message()}")
        return waiting

    def run_placement_score_plugins(
        self, state: CycleState, group: PodGroupInfo, result: PlacementResult, snapshot: Snapshot
    ) -> tuple[int, Status | None]:
        """The weighted sum of the PlacementScore plugins' scores for one feasible placement."""
        total = 0
        for pl in self.placement_score_plugins:
            try:
                v, s = pl.score_placement(state, group, result, snapshot)
            except Exception as e:
                v, s = 0, Status.as_status(e)
            if not is_success(s):
                return 0, Status(
                    Code.ERROR, f"running PlacementScore plugin {pl.name!r}: {s.message() if s else ''}"
                )
            if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                return 0, Status(
                    Code.ERROR,
                    f"plugin {pl.name!r} returns an invalid placement score {v}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]",
                )
            total += v * self.score_weights.get(pl.name, 1)
        return total, None

    async def run_pod_group_post_filter_plugins(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedulingFunc
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """Like PostFilter, once per failed group: the first Success wins; rejections add reasons."""
        reasons: list[str] = []
        rejector = ""
        for pl in self.pod_group_post_filter_plugins:
            try:
                r, s = await pl.pod_group_post_filter(state, group, schedule)
            except Exception as e:
                r, s = None, Status.as_status(e)
            if is_success(s):
                return r, Status(Code.SUCCESS, plugin=pl.name)
            assert s is not None
            if not s.is_rejected():
                return None, Status(Code.ERROR, s.message(), plugin=pl.name, error=s.error)
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return None, s.with_plugin(pl.name)
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return None, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

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
        """kube's ``RunScorePlugins``: every node's weighted, normalized score per plugin and total."""
        per_plugin, s = self._score_columns(state, pod_info, nodes)
        if s is not None:
            return [], s
        out = []
        for i, ni in enumerate(nodes):
            scores = {k: v if isinstance(v, int) else v[i] for k, v in per_plugin.items()}
            out.append(NodePluginScores(ni.name, scores, sum(scores.values())))
        return out, None

    def _score_columns(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[dict[str, list[int] | int], Status | None]:
        """Weighted, normalized scores per plugin, one column per plugin in node order.

        A plugin that scores every node alike (its :class:`UniformScorePlugin` answer, or a
        column whose minimum is its maximum) gets a plain ``int`` instead of a column.
        """
        active = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        per_plugin: dict[str, list[int] | int] = {}
        records = self.handle.records  # --- scheduling-records hook (gangplane): raw scores ---
        for pl in active:
            if pl.name in self._uniform_scorers:
                try:
                    u = pl.uniform_score(state, pod_info, nodes)  # type: ignore[attr-defined]
                except Exception as e:
                    return {}, Status(
                        Code.ERROR, f"running Score plugin {pl.name!r}: {Status.as_status(e).message()}"
                    )
                if u is not None and nodes:
                    if u < MIN_NODE_SCORE or u > MAX_NODE_SCORE:
                        return {}, _invalid_score(pl.name, u)
                    per_plugin[pl.name] = u * self.score_weights.get(pl.name, 1)
                    continue
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
            if records is not None:  # (no normalizer changes the column in place)
                records.raw_scores(pl.name, values)
            if pl.name in self._batch_normalizers:
                values = pl.normalize_scores(state, pod_info, nodes, values)  # type: ignore[attr-defined]
            elif pl.name in self._normalizers:
                scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, values, strict=True)]
                s = pl.normalize_score(state, pod_info, scores)
                if not is_success(s):
                    return {}, Status(
                        Code.ERROR, f"running Normalize on Score plugins: {s.message() if s else ''}"
                    )
                values = [ns.score for ns in scores]
            if not values:
                per_plugin[pl.name] = values
                continue
            lo, hi = min(values), max(values)
            if lo < MIN_NODE_SCORE or hi > MAX_NODE_SCORE:
                bad = next(v for v in values if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
                return {}, _invalid_score(pl.name, bad)
            weight = self.score_weights.get(pl.name, 1)
            if lo == hi:
                per_plugin[pl.name] = lo * weight
            else:
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
        self,
        state: CycleState,
        pod_info: PodInfo,
        snapshot: Snapshot | None = None,
        node_names: list[str] | None = None,
    ) -> ScheduleResult:
        """Pick a node for the pod or raise :class:`FitError` (no node fits) / :class:`NoNodesAvailableError`.

        A plugin Error raises :class:`SchedulingError`. The snapshot defaults to ``handle.snapshot``.
        ``node_names`` (sorted) restricts the cycle to one placement's nodes, as if the
        snapshot held only those (the PodGroup cycle's placements).
        """
        snap = snapshot or self.handle.snapshot
        if snap is None:
            raise SchedulingError("no snapshot")
        self.handle.snapshot = snap
        num_nodes = snap.num_nodes() if node_names is None else len(node_names)
        if num_nodes == 0:
            raise NoNodesAvailableError()
        feasible, diagnosis = self.find_nodes_that_fit(state, pod_info, snap, node_names)
        records = self.handle.records  # --- scheduling-records hook (gangplane) ---
        if not feasible:
            if records is not None:
                records.pod_cycle(pod_info, diagnosis, num_nodes, 0, "")
            raise FitError(pod_info.key, num_nodes, diagnosis)
        if len(feasible) == 1:
            if records is not None:
                records.pod_cycle(pod_info, diagnosis, num_nodes, 1, feasible[0].name)
            return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
        host = self._select_from_totals(feasible, self._prioritize_totals(state, pod_info, feasible))
        if records is not None:
            records.pod_cycle(pod_info, diagnosis, num_nodes, len(feasible), host)
        return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible))

    def find_nodes_that_fit(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot, node_names: list[str] | None = None
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        if node_names is None:
            all_nodes = snapshot.ordered()
        else:
            infos = snapshot.node_info_map
            all_nodes = [infos[n] for n in node_names if n in infos]
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
            if node_names is not None and nominated not in set(node_names):
                ni = None
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

        names = snapshot.node_names if node_names is None else node_names
        if pre_res is not None and not pre_res.all_nodes():
            allowed = pre_res.node_names or set()
            names = [n for n in names if n in allowed]
            diagnosis.node_to_status.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))}",
            )
        feasible = self._find_nodes_that_pass_filters(state, pod_info, diagnosis, names, snapshot)
        return feasible, diagnosis

    def _filter_hints(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot, active: list[FilterPlugin]
    ) -> list[FilterHint | None]:
        """Each active Filter plugin's :class:`FilterHint` for this cycle (``None``: no hint)."""
        out: list[FilterHint | None] = []
        for pl in active:
            if pl.name in self._hinting_filters:
                try:
                    out.append(pl.filter_hint(state, pod_info, snapshot))  # type: ignore[attr-defined]
                except Exception:  # a broken hint only costs speed: Filter decides
                    out.append(None)
            else:
                out.append(None)
        return out

    def _find_nodes_that_pass_filters(
        self,
        state: CycleState,
        pod_info: PodInfo,
        diagnosis: Diagnosis,
        names: Sequence[str],
        snapshot: Snapshot,
    ) -> list[NodeInfo]:
        """Filter nodes in name order from a rotating start until enough fit (``names`` is sorted).

        The Filter plugins' hints decide, per node, which plugins must actually run there:
        none on a node no plugin may reject (it is feasible as it is), only the ones that may
        reject it otherwise. Nodes some plugin surely rejects are tried last, and only when
        nothing else fits, so that the FitError still names every node's real reason.
        """
        n = len(names)
        if n == 0:
            return []
        to_find = self.num_feasible_nodes_to_find(n)
        start = self.next_start_node_index % n
        node_infos = snapshot.node_info_map
        if not self.filter_plugins:
            picked = [node_infos.get(nm) for nm in itertools.islice(_rotation(names, start), to_find)]
            self.next_start_node_index = (start + to_find) % n
            return [ni for ni in picked if ni is not None]

        already = {name for name, _ in diagnosis.node_to_status.items()}
        skip = state.skip_filter_plugins
        active = [pl for pl in self.filter_plugins if pl.name not in skip]
        hints = self._filter_hints(state, pod_info, snapshot, active)
        # per node: which plugins run (in plugin order) and which nodes are surely rejected
        always: list[int] = []  # plugins without a hint
        checks: list[tuple[int, Collection[str]]] = []  # plugins that may reject only these
        surely: list[Collection[str]] = []  # nodes some plugin rejects for certain
        only: list[Collection[str]] = []  # nodes outside one of these are rejected for certain
        for i, h in enumerate(hints):
            if h is None:
                always.append(i)
            elif h.passes is not None:
                only.append(h.passes)
            elif h.check:
                if h.rejects:
                    surely.append(h.check)
                else:
                    checks.append((i, h.check))
        with_nominated = self._any_nominated_pods()
        nominated_nodes: Collection[str] = ()
        if with_nominated:
            nominator = self.handle.nominator
            names_of = getattr(nominator, "nominated_node_names", None)
            nominated_nodes = names_of() if names_of is not None else snapshot.node_info_map.keys()

        feasible: list[NodeInfo] = []
        deferred: list[str] = []
        append = feasible.append

        def record(name: str, ni: NodeInfo, st: Status | None) -> None:
            if st is None or st.code == Code.SUCCESS:
                append(ni)
            elif st.is_rejected():
                diagnosis.node_to_status.set(name, st)
                diagnosis.add_plugin_status(st)
            else:
                raise SchedulingError(st.message(), st)

        def visit_hinted(order: Iterable[str]) -> None:
            for name in order:
                if len(feasible) >= to_find:
                    return
                if name in already:
                    continue
                ni = node_infos.get(name)
                if ni is None:
                    continue
                if (surely and any(name in c for c in surely)) or (only and any(name not in c for c in only)):
                    deferred.append(name)
                    continue
                if with_nominated and name in nominated_nodes:
                    st = self.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
                else:
                    run = always + [i for i, c in checks if name in c] if checks else always
                    if not run:
                        append(ni)
                        continue
                    if len(run) > 1:
                        run.sort()
                    st = _run_filters([active[i] for i in run], state, pod_info, ni)
                record(name, ni, st)

        def hinted_status(name: str, ni: NodeInfo) -> Status | None:
            """The Filter result on a node, asking only the plugins whose hint does not decide it."""
            for pl, h in zip(active, hints, strict=True):
                if h is not None:
                    if h.passes is not None:
                        if name in h.passes:
                            continue
                        if h.status is not None:
                            return Status(h.status.code, *h.status.reasons, plugin=pl.name)
                    elif name not in h.check:  # type: ignore[operator]
                        continue
                    elif h.rejects and h.status is not None:
                        return Status(h.status.code, *h.status.reasons, plugin=pl.name)
                st = _run_filters([pl], state, pod_info, ni)
                if st is not None:
                    return st
            return None

        def visit_deferred(order: Iterable[str]) -> None:
            for name in order:
                if len(feasible) >= to_find:
                    return
                ni = node_infos.get(name)
                if ni is None:
                    continue
                if with_nominated and name in nominated_nodes:
                    st = self.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
                else:
                    st = hinted_status(name, ni)
                record(name, ni, st)

        if not always and not checks and not surely and not only and not with_nominated and not already:
            # nothing can reject any node: the next nodes in rotation are the feasible ones
            if names is snapshot.node_names:
                ordered = snapshot.ordered()  # the same nodes, in the same (name) order
                feasible = ordered[start : start + to_find]
                if len(feasible) < to_find:
                    feasible += ordered[: to_find - len(feasible)]
            else:
                feasible = [
                    ni
                    for ni in map(node_infos.get, itertools.islice(_rotation(names, start), to_find))
                    if ni is not None
                ]
        else:
            visit_hinted(_rotation(names, start))
            if not feasible and deferred:
                # Nothing fits: the surely-rejected nodes get their statuses too, so that the
                # FitError names every node's real reason (the first rejecting plugin, in order).
                visit_deferred(deferred)
        if len(feasible) >= to_find:
            # kube stops right after the last feasible node; continue from the node after it
            # (a SortedList bisects itself in O(log n); bisect.bisect_left would index it per step)
            bisect_left = getattr(names, "bisect_left", None)
            last_name = feasible[-1].name
            last = bisect_left(last_name) if bisect_left is not None else bisect.bisect_left(names, last_name)
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
        """:meth:`prioritize_nodes` reduced to each node's total (the scheduling hot path).

        The totals leave out the plugins that score every node alike: adding the same number
        to every node changes neither the best total nor which nodes tie for it, and those
        are all :meth:`_select_from_totals` looks at.
        """
        if not self.score_plugins:
            return [1] * len(nodes)
        s = self.run_pre_score_plugins(state, pod_info, nodes)
        if not is_success(s):
            assert s is not None
            raise SchedulingError(s.message(), s)
        columns, s = self._score_columns(state, pod_info, nodes)
        if s is not None:
            raise SchedulingError(s.message(), s)
        cols = [c for c in columns.values() if not isinstance(c, int)]
        if not cols:
            totals = [0] * len(nodes)
        else:
            totals = cols[0]
            for col in cols[1:]:
                totals = list(map(operator.add, totals, col))
        if self.handle.records is not None:  # --- scheduling-records hook (gangplane) ---
            self.handle.records.scored(pod_info, nodes, columns, self.score_weights, totals)
        return totals

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """Highest total score; ties broken uniformly at random (seeded rng)."""
        return self._select_from_totals(scores, [ns.total_score for ns in scores])

    def _select_from_totals(self, nodes: Sequence[Any], totals: list[int]) -> str:
        """The name of a node with the highest total, uniformly among ties (kube's reservoir sampling)."""
        if not totals:
            raise SchedulingError("empty priorityList")
        best = max(totals)
        ties = totals.count(best)
        if ties == 1:
            return nodes[totals.index(best)].name
        # the r-th of the tied nodes, found in C (the same draw as indexing a list of the ties)
        r = self.handle.rng.randrange(ties)
        tied = itertools.compress(itertools.count(), map(best.__eq__, totals))
        return nodes[next(itertools.islice(tied, r, None))].name

    # -- helpers ----------------------------------------------------------------------------

    def _call(self, pl: Any, method: str, *args: Any) -> Status | None:
        try:
            return getattr(pl, method)(*args)
        except Exception as e:
            return Status.as_status(e)


def _invalid_score(plugin: str, score: int) -> Status:
    return Status(
        Code.ERROR,
        f"plugin {plugin!r} returns an invalid score {score}, it should in the range of "
        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
    )


def _intersect_placements(a: list[Placement], b: list[Placement]) -> list[Placement]:
    """Placements of ``a`` narrowed by those of ``b`` (kept when they share nodes), in ``a``'s order."""
    out: list[Placement] = []
    for pa in a:
        for pb in b:
            if pa.node_names is None:
                out.append(pb)
                continue
            if pb.node_names is None:
                out.append(pa)
                continue
            common = sorted(set(pa.node_names) & set(pb.node_names))
            if common:
                out.append(Placement(f"{pa.name}/{pb.name}", common, pa.key, pa.value))
    return out


def _rotation(names: Sequence[str], start: int) -> Iterator[str]:
    """``names`` from index ``start`` to the end, then from the beginning (without copying a SortedList)."""
    isl = getattr(names, "islice", None)
    if isl is not None:
        return itertools.chain(isl(start), isl(0, start))
    return itertools.chain(itertools.islice(names, start, None), itertools.islice(names, 0, start))


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
