"""The scheduling framework runtime: a profile's plugins instantiated and run extension point by extension point.

The interfaces plugins implement (protocols, CycleState, Handle, Profile) live in
:mod:`scheduler.interfaces` and are re-exported here for callers that import them from the framework.

A :class:`Profile` (``default-scheduler`` by default) lists plugins in kube's multi-point order
with Score weights; the :class:`Framework` instantiates them from a registry and sorts each
into the extension points it implements (a plugin implements an extension point by having the
method, so one class may be PreFilter + Filter + Score at once).

kube's pod algorithm that drives these points for one pod (``schedule_one.go``: Filter from a
rotating start, Score, selectHost) is :mod:`scheduler.schedule_one`; the PodGroup algorithm is
:mod:`scheduler.podgroup_algorithm`. Both drive the plugins only through the framework's public methods.
gangplane's FilterHint point (:meth:`Framework.run_filter_hints`) is run here too; what the
algorithm does with the hints is described in :mod:`scheduler.schedule_one`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from scheduler import lazymodule
from scheduler.diagnosis import NodeToStatus
from scheduler.events import ClusterEventWithHint
from scheduler.interfaces import (
    DEFAULT_SCHEDULER_NAME,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NOMINATING_NOOP,
    NOMINATING_OVERRIDE,
    ArrayScorePlugin,
    BatchNormalizeScorePlugin,
    BatchScorePlugin,
    BindPlugin,
    ColumnScorePlugin,
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
    "Status",
    "default_normalize_score",
    "go_list",
]


# --- waiting pods (Permit) -----------------------------------------------------------------------


class WaitingPod:
    """A pod held at Permit until every waiting plugin allows it, one rejects it, or a timeout fires.

    Slots, and no timer list when no plugin set a timeout (a gang's members wait without one):
    a 5,000-pod gang holds 5,000 of these at once, each a few containers fewer for the
    cyclic collector to allocate and traverse. The future its binding cycle awaits is made
    only when someone awaits the outcome before it is known (:meth:`outcome`): a gang placed
    in one cycle is allowed as a whole by its last member's Permit, before any member's
    binding cycle has run, so those find the outcome known and take it with no future (awaiting
    a finished future returns at once as well: the binding cycle goes on in the same step)."""

    __slots__ = ("pod_info", "pending", "_future", "_timers", "_finished", "_status")

    def __init__(self, pod_info: PodInfo, plugin_timeouts: dict[str, float]) -> None:
        self.pod_info = pod_info
        self.pending: set[str] = set(plugin_timeouts)
        self._future: asyncio.Future[Status | None] | None = None
        self._finished = False
        self._status: Status | None = None
        timers: tuple[asyncio.TimerHandle, ...] = ()
        for name, t in plugin_timeouts.items():
            if t > 0:
                msg = f"rejected due to timeout after waiting {t:g}s at plugin {name}"
                timers += (asyncio.get_running_loop().call_later(t, self.reject, name, msg),)
        self._timers = timers

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def preempt(self, plugin: str, message: str) -> None:
        self.reject(plugin, message)

    def _finish(self, status: Status | None) -> None:
        """The first outcome wins (a future cancelled by its awaiting task's cancellation keeps
        the outcome from being set, as a future does)."""
        for t in self._timers:
            t.cancel()
        fut = self._future
        if fut is None:
            if not self._finished:
                self._finished, self._status = True, status
        elif not fut.done():
            fut.set_result(status)

    def finished(self) -> tuple[bool, Status | None]:
        """(whether the outcome is known without waiting, that outcome): what awaiting
        :meth:`outcome` would return at once, without making its future."""
        fut = self._future
        if fut is None:
            return self._finished, self._status
        if fut.done() and not fut.cancelled():
            return True, fut.result()
        return False, None

    async def wait(self) -> Status | None:
        return await self.outcome()

    def outcome(self) -> asyncio.Future[Status | None]:
        """What :meth:`wait` awaits (made on first use; already resolved when the outcome is
        known): :meth:`Framework.wait_on_permit` awaits it itself, one coroutine fewer per
        waiting pod, and only when :meth:`finished` says the outcome is not known yet."""
        fut = self._future
        if fut is None:
            fut = self._future = asyncio.get_running_loop().create_future()
            if self._finished:
                fut.set_result(self._status)
        return fut


# --- the framework -------------------------------------------------------------------------------

#: the codes :meth:`Status.is_rejected` says yes to
_REJECTED = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


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
    """One profile's plugins wired to the extension points (kube's ``frameworkImpl``)."""

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
        #: each PreBind plugin's synchronous "anything to do for this cycle?" (None: always)
        self._pre_bind_needed: list[Callable[[CycleState], bool] | None] = [
            getattr(pl, "pre_bind_needed", None) for pl in self.pre_bind_plugins
        ]
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
        self._array_scorers = {p.name for p in self.score_plugins if implements(p, ArrayScorePlugin)}
        #: the array scorers whose array is also their raw Score column (no NormalizeScore): while
        #: scheduling records keep raw scores, only these take the array path (a normalizing one's
        #: raw column exists only on its list path)
        self._raw_array_scorers = self._array_scorers - self._normalizers - self._batch_normalizers
        #: the raw array scorers whose column is kept per row (:mod:`scheduler.score_fusion`)
        self.column_scorers = {
            p.name for p in self.score_plugins if implements(p, ColumnScorePlugin)
        } & self._raw_array_scorers
        #: gangplane: the scheduling cycle adds the Score columns and picks the host in numpy
        #: arrays when the plugins offer them (off: lists only; the differential tests compare)
        self.array_scores = True
        #: :func:`scheduler.score_fusion.fused_totals`' plans per set of PreScore-skipped plugins,
        #: and the plugin list and scorer sets they were made from (compared by identity)
        self.fusion_plans: dict[frozenset[str], Any] = {}
        self.fusion_plans_from: tuple[Any, ...] | None = None

    @property
    def uniform_scorers(self) -> set[str]:
        """The Score plugins that may answer ``uniform_score`` (:class:`UniformScorePlugin`)."""
        return self._uniform_scorers

    @property
    def array_scorers(self) -> set[str]:
        """The Score plugins that may give their column as an array (:class:`ArrayScorePlugin`)."""
        return self._array_scorers

    @property
    def scheduler_name(self) -> str:
        return self.profile.scheduler_name

    # -- queue-side extension points --------------------------------------------------------

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if self.queue_sort_plugin is None:
            return a.timestamp < b.timestamp
        return self.queue_sort_plugin.less(a, b)

    def queue_sort_key(self) -> Callable[[QueuedPodInfo], Any] | None:
        """gangplane: :meth:`queue_sort_less` as a sort key (``less(a, b)`` exactly when
        ``key(a) < key(b)``), or ``None`` when the QueueSort plugin offers none (its ``sort_key``).
        The activeQ then compares keys in C instead of calling ``less`` per heap comparison."""
        if self.queue_sort_plugin is None:
            return _timestamp_key
        key = getattr(self.queue_sort_plugin, "sort_key", None)
        return key if callable(key) else None

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
        return run_filter_chain(
            [pl for pl in self.filter_plugins if pl.name not in skip] if skip else self.filter_plugins,
            state,
            pod_info,
            node_info,
        )

    def run_filter_hints(
        self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot, active: list[FilterPlugin]
    ) -> list[FilterHint | None]:
        """gangplane's FilterHint point: each active Filter plugin's :class:`FilterHint` for this cycle (``None``: no hint)."""
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

    def any_nominated_pods(self) -> bool:
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

    def placement_feasible_waits_below(
        self, state: CycleState, group: PodGroupInfo, scheduled: int, remaining: int
    ) -> int:
        """gangplane: after :meth:`run_placement_feasible_plugins` returned Wait for (``scheduled``,
        ``remaining``), a bound under which it returns that Wait again for every later call whose
        ``scheduled + remaining`` is the same (each further pod placed): the least of the plugins'
        ``placement_feasible_waits_below``, 0 (no promise) when a plugin offers none. The
        plugins' verdicts are pure functions of their arguments, so the calls skipped under the
        bound change nothing; the last pod's call is always made (its Wait is the result's)."""
        below: int | None = None
        for pl in self.placement_feasible_plugins:
            hint = getattr(pl, "placement_feasible_waits_below", None)
            if hint is None:
                return 0
            try:
                b = int(hint(state, group, scheduled, remaining))
            except Exception:
                return 0
            below = b if below is None else min(below, b)
        return below or 0

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
        per_plugin, s = self.score_columns(state, pod_info, nodes)
        if s is not None:
            return [], s
        out = []
        for i, ni in enumerate(nodes):
            scores = {k: v if isinstance(v, int) else v[i] for k, v in per_plugin.items()}
            out.append(NodePluginScores(ni.name, scores, sum(scores.values())))
        return out, None

    def score_columns(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], arrays: bool = False
    ) -> tuple[dict[str, list[int] | int], Status | None]:
        """Weighted, normalized scores per plugin, one column per plugin in node order.

        A plugin that scores every node alike (its :class:`UniformScorePlugin` answer, or a
        column whose minimum is its maximum) gets a plain ``int`` instead of a column.
        ``arrays``: a plugin offering :class:`ArrayScorePlugin` may give its column as a numpy
        array (read-only, for this cycle). While the scheduling records keep this pod's scores,
        they get each plugin's raw column (before NormalizeScore and weight): an array plugin's
        array is its raw column when it does not normalize, so only those take the array path then.
        """
        active = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        per_plugin: dict[str, list[int] | int] = {}
        records = self.handle.records  # --- scheduling-records hook (gangplane): raw scores ---
        arrays = arrays and bool(nodes)
        keeps_raw = records is not None and records.keeps_scores()
        array_scorers = self._raw_array_scorers if keeps_raw else self._array_scorers
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
            if arrays and pl.name in array_scorers:
                try:
                    col = pl.score_array(state, pod_info, nodes)  # type: ignore[attr-defined]
                except Exception as e:
                    return {}, Status(
                        Code.ERROR, f"running Score plugin {pl.name!r}: {Status.as_status(e).message()}"
                    )
                if col is not None:
                    if keeps_raw:  # the unweighted array (or int) is the raw column: no normalizer
                        records.raw_scores(pl.name, col)
                    if isinstance(col, int):
                        lo = hi = col
                    else:
                        # numpy: the column is an array
                        lo, hi = lazymodule.module("scheduler.score_totals").bounds(col)
                    if lo < MIN_NODE_SCORE or hi > MAX_NODE_SCORE:
                        bad = next(int(v) for v in col if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
                        return {}, _invalid_score(pl.name, bad)
                    weight = self.score_weights.get(pl.name, 1)
                    if lo == hi:
                        per_plugin[pl.name] = lo * weight
                    else:
                        per_plugin[pl.name] = col * weight if weight != 1 else col
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
            if s is None:
                continue
            code = s.code  # (the Status methods' tests, read once: this runs for every gang member)
            if code == Code.SUCCESS:
                continue
            if code in _REJECTED:
                return s.with_plugin(pl.name)
            if code == Code.WAIT:
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
            done, status = wp.finished()
            if done:  # what awaiting its finished future would return, in the same step
                return status
            return await wp.outcome()
        finally:
            self.waiting_pods.pop(pod_info.uid, None)

    def pre_bind_has_work(self, state: CycleState) -> bool:
        """False when every PreBind plugin tells, without awaiting, that its ``pre_bind`` would
        answer None for this cycle (its ``pre_bind_needed``): :meth:`run_pre_bind_plugins`
        would then answer None too, so the binding cycle skips it and its coroutines (two per
        member of a big gang: the runner and DynamicResources' for a pod with no claims). A
        plugin without ``pre_bind_needed`` always runs."""
        for needed in self._pre_bind_needed:  # noqa: SIM110 (no generator per bound pod)
            if needed is None or needed(state):
                return True
        return False

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

    # -- helpers ----------------------------------------------------------------------------

    def _call(self, pl: Any, method: str, *args: Any) -> Status | None:
        try:
            return getattr(pl, method)(*args)
        except Exception as e:
            return Status.as_status(e)


def _timestamp_key(q: QueuedPodInfo) -> float:
    """The order without a QueueSort plugin: the earlier-queued pod first."""
    return q.timestamp


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


def run_filter_chain(
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
