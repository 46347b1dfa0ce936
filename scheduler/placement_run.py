"""A placement's run of identical pods: each pod's cycle carried on from the previous one (gangplane).

The PodGroup search (:mod:`scheduler.podgroup_algorithm`) tries a placement by running kube's pod
cycle (:func:`~scheduler.schedule_one.schedule_pod`) for each pod and assuming it. For the pods
of one template on a placement of at most ``numFeasibleNodesToFind`` nodes (a rack of 100 nodes)
most of that work repeats: Filter visits every node of the placement, so the feasible nodes are
every node that passes, in the same rotation order; and assuming a pod changes one node. So,
after one full cycle, :class:`PlacementRun` keeps what that cycle found and carries it to the
next identical pods:

- **Filter**: the feasible nodes stay the same, since every active Filter plugin's verdict reads
  only the node and the pod (:data:`NODE_LOCAL_FILTERS`); only the node that took the previous
  pod is filtered again (by the plugins themselves). The rotating start index stays where it is:
  with every node of the placement visited, kube's cycle puts it back on the same node. When that
  node stops fitting, the run ends and the next pod gets a full cycle.
- **Score**: per Score plugin the raw column over the feasible nodes. For the plugins whose score
  reads only the node and the pod (:data:`NODE_LOCAL_SCORES`) only the previous pod's node is
  scored again, by the plugin's own ``score``; a plugin offering ``start_score_run`` (gangplane's
  PodTopologySpread: :mod:`scheduler.plugins.spread_run`) keeps its own column. NormalizeScore
  then runs as the framework runs it (the plugin's own code over the whole column), the columns
  are weighted and added, and the host is picked by :func:`~scheduler.schedule_one.select_from_totals`
  with the same feasible order, so the same ties and the same random draw. A run in arrays
  whose only carried column is PodTopologySpread's picks over classes of alike nodes instead
  (:mod:`scheduler.class_pick`: the same host, ties and draw), its columns left behind until
  they are read.
- **PreFilter** fills the pod's own CycleState (which Reserve, Permit and binding read). When
  every PreFilter plugin of the profile gives a run's pod the first pod's result
  (:data:`PURE_PRE_FILTERS`), a run's pods get PreFilter only in the placement that is chosen
  (:func:`materialize_states`); otherwise it runs for every pod, and any change in what it
  decides (a rejection, a narrowing, another set of skipped plugins) ends the run. PreScore's
  output is read only by Score and NormalizeScore of the same cycle, so a run's pods do not
  recompute it: their CycleState carries PreFilter's results and the skipped plugins.
- **Assume**: a run's pods go into the snapshot's NodeInfos at once and into its indexes when
  one is next read (``Snapshot.assume_pod(..., defer_index=True)``): a node taking many pods is
  reindexed once.

A pod is of the run when it has the first one's namespace, controller and spec (but for its
``hostname``, ``subdomain`` and ``volumes``), is not nominated, and its spreading constraints
count alike (:func:`run_signature`). Otherwise, and whenever a precondition fails (nominated pods
anywhere, a plugin not listed here active, a score out of range), the pod
gets the full cycle, so every failure text, status and record is kube's code's own.
``tests/unit/scheduler/test_placement_run.py`` compares runs with the pod-by-pod cycle on
random clusters.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from scheduler.arraypolicy import ARRAY_MIN_NODES
from scheduler.class_pick import ClassPick, SharedCounts
from scheduler.framework import Framework, implements, run_filter_chain
from scheduler.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchNormalizeScorePlugin,
    BatchScorePlugin,
    CycleState,
    NodeScore,
    NormalizeScorePlugin,
    PlacementResult,
)
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.schedule_one import CycleTrace, num_feasible_nodes_to_find, select_from_totals
from scheduler.status import Code

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

#: Filter plugins whose verdict on a node reads only that node and the pod
NODE_LOCAL_FILTERS = frozenset(
    {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"}
)
#: Score plugins whose raw score of a node reads only that node and the pod (InterPodAffinity:
#: when the pod has no affinity terms, its score is the existing pods' terms towards it, which
#: the run's own pods, having none, do not change)
NODE_LOCAL_SCORES = frozenset(
    {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "TaintToleration",
        "NodeAffinity",
        "InterPodAffinity",
    }
)
#: Score plugins of :data:`NODE_LOCAL_SCORES` whose raw score of a node reads only the node's own
#: labels and taints and the pod, never the node's pods: assuming a pod of the run on a node
#: leaves their score of it as it was, so :meth:`PlacementRun.assumed` does not score it again
#: (TaintToleration counts the node's PreferNoSchedule taints the pod does not tolerate,
#: NodeAffinity weighs the pod's preferred terms against the node's labels)
NODE_ONLY_SCORES = frozenset({"TaintToleration", "NodeAffinity"})
#: PreFilter plugins whose result for a pod of a run is the first pod's: they read the pod's spec
#: (NodeResourcesFit, NodePorts, NodeAffinity, DynamicResources), or they skipped themselves for
#: reasons the run's pods share: PodTopologySpread (its hard constraints, in the signature),
#: InterPodAffinity (the pod's terms, and existing pods' anti-affinity terms towards it: when any
#: pod has terms, the run's pods carry the first one's labels); a run's pods do not change them
PURE_PRE_FILTERS = frozenset(
    {
        "NodeResourcesFit",
        "NodePorts",
        "NodeAffinity",
        "InterPodAffinity",
        "PodTopologySpread",
        "DynamicResources",
    }
)
#: from this many feasible nodes on, a run keeps its columns, their base and the totals as int64
#: numpy arrays (:meth:`PlacementRun._to_arrays`): per pod a few array operations instead of
#: several Python passes over the nodes (a rack of 100 nodes, a window of 500)
ARRAY_RUN_MIN_NODES = ARRAY_MIN_NODES
#: a run in arrays picks over classes of alike nodes when it can (:mod:`scheduler.class_pick`);
#: off: from its columns (the tests' switch)
CLASS_PICK = True
#: the windows' runs with a class pick read one table of spreading domain counts
#: (:class:`~scheduler.class_pick.SharedCounts`); off: each run is told of every pod (the
#: tests' switch)
SHARED_COUNTS = True
#: a run scores the node that took one of its pods again by the plugin's ``node_scorer`` (the
#: plugin's ``score`` with its per-call dispatch done once per run) when it has one; off: by
#: ``score`` (the tests' switch)
NODE_SCORERS = True
#: the most window runs a PodGroup cycle keeps (:class:`WindowedRuns`): 5,000 or 10,000 nodes
#: make 10 or 20 windows with kube's default percentage of nodes to score
MAX_WINDOW_RUNS = 20
#: spec fields that differ between a template's pods and that no listed plugin reads (a
#: StatefulSet pod's hostname, and its volumes naming its own PersistentVolumeClaims: gangplane
#: has no volume plugins)
_IDENTITY_FIELDS = ("hostname", "subdomain", "volumes")


def run_keyers(fw: Framework) -> list[Callable[[PodInfo], Any]]:
    """Each PreFilter or Score plugin's ``score_run_key`` (a plugin once, skipped or not: a pod of
    another key may not skip alike), in the order :func:`run_signature` asks them: found once per
    PodGroup cycle (:func:`~scheduler.podgroup_algorithm._shared_signatures`), not per pod."""
    plugins = {id(pl): pl for pl in (*fw.pre_filter_plugins, *fw.score_plugins)}
    return [k for pl in plugins.values() if (k := getattr(pl, "score_run_key", None)) is not None]


def run_signature(
    fw: Framework, pi: PodInfo, keyers: list[Callable[[PodInfo], Any]] | None = None
) -> tuple[Any, ...] | None:
    """What must be equal for two pods to be of one run (``None``: a pod that never is).

    The namespace, controller and spec (but for the identity fields), and each PreFilter or
    Score plugin's ``score_run_key`` (PodTopologySpread: the constraints with their selectors,
    which come from the pod's labels, Services and controller). Computed once per pod and
    PodGroup cycle, and only for a group with a placement that can carry runs. ``keyers``:
    :func:`run_keyers` of ``fw``, when the caller asks for many pods.
    """
    pod = pi.pod
    if (pod.get("status") or {}).get("nominatedNodeName"):
        return None
    spec = pod.get("spec") or {}
    rest = dict(spec)  # (a copy and three pops: a fifth of a comprehension's cost per pod)
    for f in _IDENTITY_FIELDS:
        rest.pop(f, None)
    keys = []
    for keyer in run_keyers(fw) if keyers is None else keyers:
        key = keyer(pi)
        if key is None:
            return None
        keys.append(key)
    # compared with == (dicts compare in C, stopping at the first difference), never hashed
    return (pi.namespace, (pod.get("metadata") or {}).get("ownerReferences"), rest, tuple(keys))


class _Column:
    """One Score plugin's raw and normalized columns over the run's feasible nodes."""

    __slots__ = ("plugin", "weight", "raw", "norm", "carried", "normalizer", "node_only", "bounded", "scorer")

    def __init__(self, plugin: Any, weight: int, raw: list[int], carried: Any) -> None:
        self.plugin = plugin
        self.weight = weight
        self.raw = raw
        self.norm: list[int] = raw
        #: the plugin's own carried column (``start_score_run``), or None for a node-local one
        self.carried = carried
        #: its score of a node does not change when the node takes a pod (:data:`NODE_ONLY_SCORES`)
        self.node_only = carried is None and plugin.name in NODE_ONLY_SCORES
        #: how the framework normalizes this plugin's scores: "batch", "each" or "" (not at all)
        self.normalizer = (
            "batch"
            if implements(plugin, BatchNormalizeScorePlugin)
            else "each"
            if implements(plugin, NormalizeScorePlugin)
            else ""
        )
        #: the plugin's NormalizeScore that also says the least and greatest score it gave, when
        #: it has one (``normalize_scores_bounded``): the run's range check reads no column then
        self.bounded = (
            getattr(plugin, "normalize_scores_bounded", None) if self.normalizer == "batch" else None
        )
        #: the plugin's ``score`` of a node for the run's first pod as a function of the node
        #: alone (``node_scorer``), when it has one: :meth:`PlacementRun.assumed` scores the node
        #: that took a pod again without the plugin's per-call dispatch (set by ``start``)
        self.scorer: Callable[[NodeInfo], int] | None = None


class PlacementRun:
    """The cycle of the next identical pod from the previous pod's (see the module docstring)."""

    def __init__(self, fw: Framework, snapshot: Snapshot, signature: Any) -> None:
        self.fw = fw
        self.snapshot = snapshot
        self.signature = signature
        #: the placement's nodes, for PreFilter run per pod (``defer_pre_filter`` off), and
        #: where each is in them: made by :meth:`start` only then (a window's run over 5,000
        #: nodes would make both for each of its ten or twenty runs, and never read them)
        self.all_nodes: list[NodeInfo] = []
        self.all_pos: dict[str, int] = {}
        self.feasible: list[NodeInfo] = []
        self.pos: dict[str, int] = {}
        self.filters: list[Any] = []
        #: the skips of the run's first pod, which its pods' states share (immutable)
        self.filter_skip: frozenset[str] = frozenset()
        self.score_skip: frozenset[str] = frozenset()
        self.columns: list[_Column] = []
        self.base: list[int] = []
        self.state = CycleState()
        self.pod_info: PodInfo | None = None
        #: every PreFilter plugin is pure (:data:`PURE_PRE_FILTERS`): a run's pods get PreFilter
        #: only if their placement is chosen (:func:`materialize_states`), not in every placement
        self.defer_pre_filter = False
        #: existing pods have affinity terms, which select pods by their labels (InterPodAffinity's
        #: PreFilter, PreScore and Score read them): the run's pods must have the first one's
        self.labels_bound = False
        #: a carried column changed since it was last normalized, or pods were assumed outside
        #: the feasible nodes since (:meth:`assumed_elsewhere`): :meth:`next` catches up first
        self.stale = False
        #: the columns, the base and the totals are numpy arrays (:meth:`_to_arrays`)
        self.arrays = False
        #: the pick over classes of alike nodes (:mod:`scheduler.class_pick`), when its
        #: preconditions hold (in arrays); else None and the pick reads the columns
        self.classes: ClassPick | None = None

    @staticmethod
    def possible(fw: Framework, node_names: Sequence[str] | None) -> bool:
        """Whether a placement of these nodes can carry runs: a topology domain whose every node
        each cycle visits (``numFeasibleNodesToFind`` at least its size), so the feasible nodes
        do not move from pod to pod."""
        return node_names is not None and num_feasible_nodes_to_find(fw, len(node_names)) >= len(node_names)

    @classmethod
    def start(
        cls,
        fw: Framework,
        state: CycleState,
        pod_info: PodInfo,
        snapshot: Snapshot,
        node_names: Sequence[str] | None,
        trace: CycleTrace,
        signature: Any,
        *,
        window: bool = False,
    ) -> PlacementRun | None:
        """A run continuing the full cycle ``state``/``trace`` of ``pod_info`` just made, or ``None``.

        ``window``: the placement is wider than one cycle's window (``node_names`` None: the
        whole cluster), and the run is of the window this cycle scored only
        (:class:`WindowedRuns` keeps one per start index)."""
        if signature is None or trace.narrowed or len(trace.feasible) < 2:
            return None
        if node_names is None:
            if not window:
                return None
            node_names = snapshot.node_names
        # scheduling records need nothing of a run: inside a PodGroup cycle they keep the placements'
        # results (the same with a run, see the test), not the per-pod hooks
        if fw.any_nominated_pods():
            return None
        if not window and not cls.possible(fw, node_names):
            return None  # the window moves from pod to pod: see WindowedRuns
        filters = [pl for pl in fw.filter_plugins if pl.name not in state.skip_filter_plugins]
        if any(pl.name not in NODE_LOCAL_FILTERS for pl in filters):
            return None
        if pod_info.has_affinity:
            return None  # its own terms may select the pods it places: nothing node-local then
        run = cls(fw, snapshot, signature)
        run.labels_bound = bool(snapshot.have_pods_with_affinity_list())
        run.defer_pre_filter = all(pl.name in PURE_PRE_FILTERS for pl in fw.pre_filter_plugins)
        if not run.defer_pre_filter:
            infos = snapshot.node_info_map
            run.all_nodes = [infos[n] for n in node_names if n in infos]
            run.all_pos = {ni.name: i for i, ni in enumerate(run.all_nodes)}
        run.filters = filters
        run.filter_skip = frozenset(state.skip_filter_plugins)
        run.score_skip = frozenset(state.skip_score_plugins)
        run.state = state
        run.pod_info = pod_info
        run.feasible = list(trace.feasible)
        run.pos = {ni.name: q for q, ni in enumerate(run.feasible)}
        for pl in fw.score_plugins:
            if pl.name in state.skip_score_plugins:
                continue
            weight = fw.score_weights.get(pl.name, 1)
            starter = getattr(pl, "start_score_run", None)
            if starter is not None:
                carried = starter(state, pod_info, run.feasible)
                if carried is None:
                    return None
                col = _Column(pl, weight, carried.raw, carried)
            elif pl.name in NODE_LOCAL_SCORES and not (
                pl.name == "InterPodAffinity" and pod_info.has_affinity
            ):
                raw = run._score_all(pl)
                if raw is None:
                    return None
                col = _Column(pl, weight, raw, None)
                if not col.node_only and NODE_SCORERS:
                    scorer = getattr(pl, "node_scorer", None)
                    col.scorer = scorer(state, pod_info) if scorer is not None else None
            else:
                return None
            if not run._normalize(col):
                return None
            run.columns.append(col)
        run._rebuild_base()
        if len(run.feasible) >= ARRAY_RUN_MIN_NODES and not run._to_arrays():
            return None
        if run.arrays and CLASS_PICK:
            run.classes = ClassPick.of(run)
        return run

    # -- one pod -----------------------------------------------------------------------------

    def accepts(self, pod_info: PodInfo, signature: Any) -> bool:
        """Whether ``pod_info`` is of this run."""
        if signature is None or signature != self.signature:
            return False
        return not (
            self.labels_bound and self.pod_info is not None and pod_info.labels != self.pod_info.labels
        )

    def next(self, state: CycleState, pod_info: PodInfo) -> str | None:
        """The node kube's cycle picks for ``pod_info`` (of this run), PreFilter run into ``state``;
        ``None`` when the run cannot say (the caller then runs the full cycle on a fresh state)."""
        fw = self.fw
        if fw.any_nominated_pods():  # (a nomination may arrive while the cycle yields)
            return None
        if self.defer_pre_filter:
            state.skip_filter_plugins = self.filter_skip  # (shared: never changed in place)
        else:
            pre_res, s, _ = fw.run_pre_filter_plugins(state, pod_info, self.all_nodes)
            if s is not None or (pre_res is not None and not pre_res.all_nodes()):
                return None
            if state.skip_filter_plugins != self.filter_skip:
                return None
        state.skip_score_plugins = self.score_skip
        classes = self.classes
        if classes is not None:
            if classes.shared is not None:
                self.stale = True  # (the columns read the shared table when they are next read)
            q = classes.pick(fw.handle.rng)
            if q is not None:
                return self.feasible[q].name  # (the columns stay behind: ``stale`` is kept)
        return self._pick_from_columns()

    def _pick_from_columns(self) -> str | None:
        """The pick of :meth:`next` from the columns: the general path (and the reference of
        :mod:`scheduler.class_pick`)."""
        fw = self.fw
        if self.stale and not self._catch_up():
            return None
        cols = self.columns
        if not cols:
            totals = [0] * len(self.feasible)
        else:
            totals = self.base
            for c in cols:
                if c.carried is not None:
                    w = c.weight
                    if self.arrays:
                        totals = totals + (c.norm if w == 1 else w * c.norm)
                        continue
                    # the same integer sums, added in C (a Python comprehension costs 3x as much)
                    add = c.norm if w == 1 else map(w.__mul__, c.norm)
                    totals = list(map(operator.add, totals, add))
        return select_from_totals(fw, self.feasible, totals)

    def assumed(self, state: CycleState, pod_info: PodInfo, host: str) -> bool:
        """``pod_info`` (of this run) was assumed on ``host``: carry the columns; ``False`` when
        the run ends here (the node no longer fits, or a score cannot be carried)."""
        q = self.pos.get(host)
        ni = self.snapshot.node_info_map.get(host)
        if q is None or ni is None:
            return False
        self.feasible[q] = ni
        i = self.all_pos.get(host)
        if i is not None:
            self.all_nodes[i] = ni
        st = run_filter_chain(self.filters, state, pod_info, ni)
        if st is not None and st.code != Code.SUCCESS:
            return False
        for c in self.columns:
            if c.carried is not None:
                if c.carried.assumed(q, pod_info, ni):
                    self.stale = True  # normalized once, when the run next picks a node
                continue
            if c.node_only:
                continue  # the node's labels and taints are as they were: the same score
            if c.scorer is not None:
                v = int(c.scorer(ni))  # (the plugin's score: its Status is always None)
            else:
                v, s = c.plugin.score(self.state, self.pod_info, ni)
                if s is not None and s.code != Code.SUCCESS:
                    return False
                v = int(v)
            old = c.raw[q]
            if v == old:
                continue
            if c.norm is not c.raw or v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                # a normalized column would change everywhere (none of the listed plugins'
                # does: their raw scores read the node's labels and taints, not its pods)
                return False
            c.raw[q] = v
            self.base[q] += c.weight * (v - old)
        if self.classes is not None:
            self.classes.moved(q, self.base.item(q))
        return True

    def assumed_elsewhere(
        self, pod_info: PodInfo, node_info: NodeInfo, shared: list[Any] | None = None
    ) -> None:
        """A pod of the run was assumed on ``node_info``, a node outside the feasible ones (another
        window's): no feasible node changed, so neither did any Filter verdict nor node-local
        score; a carried column may have (PodTopologySpread's domain counts), and is told now and
        brought up to date when this run next picks a node. ``shared``: the pod's memo for the
        carried columns of every run it is told to (``assumed_elsewhere`` of
        :class:`~scheduler.plugins.spread_run.SpreadScoreRun`)."""
        i = self.all_pos.get(node_info.name)
        if i is not None:
            self.all_nodes[i] = node_info
        for c in self.columns:
            if c.carried is not None:
                c.carried.assumed_elsewhere(pod_info, node_info, shared)
                self.stale = True

    def assumed_elsewhere_many(self, entries: Sequence[_Assumed]) -> None:
        """:meth:`assumed_elsewhere` of each of ``entries`` (pods the other windows' runs placed
        since this run was last read, :meth:`WindowedRuns._catch_up`), told in one call per
        carried column. The NodeInfos of :attr:`all_nodes` are read only by PreFilter run per
        pod: kept current only then (``defer_pre_filter`` off)."""
        if not self.defer_pre_filter:
            all_pos, all_nodes = self.all_pos, self.all_nodes
            for a in entries:
                i = all_pos.get(a.node_info.name)
                if i is not None:
                    all_nodes[i] = a.node_info
        for c in self.columns:
            if c.carried is not None:
                c.carried.assumed_elsewhere_many(entries)
                self.stale = True

    # -- helpers -----------------------------------------------------------------------------

    def _catch_up(self) -> bool:
        """Bring the carried columns up to date (what :meth:`assumed_elsewhere` told them) and
        normalize them again; ``False``: a score is out of range and the run ends."""
        self.stale = False
        for c in self.columns:
            if c.carried is not None:
                c.carried.catch_up()
                if not self._normalize(c):
                    return False
        return True

    def _score_all(self, pl: Any) -> list[int] | None:
        nodes = self.feasible
        if implements(pl, BatchScorePlugin):
            return [int(v) for v in pl.score_nodes(self.state, self.pod_info, nodes)]
        out = []
        for ni in nodes:
            v, s = pl.score(self.state, self.pod_info, ni)
            if s is not None and s.code != Code.SUCCESS:
                return None
            out.append(int(v))
        return out

    def _normalize(self, c: _Column) -> bool:
        """NormalizeScore over ``c.raw`` as the framework runs it; ``False`` when a score is out of range."""
        pl, nodes = c.plugin, self.feasible
        if c.normalizer == "batch":
            if self.arrays and c.bounded is not None:
                got = c.bounded(self.state, self.pod_info, nodes, c.raw)
                if got is not None:
                    c.norm, lo, hi = got  # (not in place)
                    return bool(lo >= MIN_NODE_SCORE and hi <= MAX_NODE_SCORE)
            c.norm = pl.normalize_scores(self.state, self.pod_info, nodes, c.raw)  # (not in place)
        elif c.normalizer == "each":
            scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, c.raw, strict=True)]
            st = pl.normalize_score(self.state, self.pod_info, scores)
            if st is not None and st.code != Code.SUCCESS:
                return False
            c.norm = [ns.score for ns in scores]
        else:
            c.norm = c.raw
        if not len(c.norm):
            return True
        if self.arrays:
            return bool(c.norm.min() >= MIN_NODE_SCORE and c.norm.max() <= MAX_NODE_SCORE)
        return min(c.norm) >= MIN_NODE_SCORE and max(c.norm) <= MAX_NODE_SCORE

    def _to_arrays(self) -> bool:
        """Keep the columns, their base and the totals as int64 arrays (the same integers: scores
        of at most 100 times small weights), when every carried column can be carried in arrays
        (:meth:`~scheduler.plugins.spread_run.SpreadScoreRun.to_arrays`) and is normalized by a
        batch NormalizeScore that takes them; otherwise the run stays in lists (``True``).
        ``False``: a column normalized again in arrays is out of range (the run is not taken).

        Each pod then costs the run a few numpy operations over the feasible nodes (the carried
        column's sum, NormalizeScore, the weighted totals, the pick of
        :mod:`scheduler.score_totals`) instead of as many Python passes."""
        carried = [c for c in self.columns if c.carried is not None]
        if any(
            c.normalizer == "each" or not getattr(c.carried, "can_use_arrays", lambda: False)()
            for c in carried
        ):
            return True
        import numpy as np  # (already imported: the node table serves clusters this large)

        self.arrays = True
        for c in self.columns:
            if c.carried is not None:
                c.carried.to_arrays()
                c.raw = c.norm = c.carried.raw
                if not self._normalize(c):
                    return False
                continue
            same = c.norm is c.raw
            c.raw = np.array(c.raw, dtype=np.int64)
            c.norm = c.raw if same else np.array(c.norm, dtype=np.int64)
        self.base = np.array(self.base, dtype=np.int64)
        return True

    def _rebuild_base(self) -> None:
        """The weighted sum of the node-local columns (the carried ones are added per pod)."""
        base = [0] * len(self.feasible)
        for c in self.columns:
            if c.carried is None:
                w = c.weight
                base = list(map(operator.add, base, [v * w for v in c.norm] if w != 1 else c.norm))
        self.base = base


class _Assumed:
    """One pod a :class:`WindowedRuns` search assumed, kept until every run has been told of it."""

    __slots__ = ("state", "pod_info", "host", "node_info", "shared")

    def __init__(self, state: CycleState, pod_info: PodInfo, host: str, node_info: NodeInfo) -> None:
        self.state = state
        self.pod_info = pod_info
        self.host = host
        self.node_info = node_info
        #: the carried columns' memo of what the pod adds to (``PlacementRun.assumed_elsewhere``)
        self.shared: list[Any] = []


class WindowedRuns:
    """Runs over a placement wider than one cycle's window: the whole cluster (gangplane).

    Over 5,000 nodes kube's cycle scores ``numFeasibleNodesToFind`` (500) of them: the feasible
    nodes found in rotation from ``nextStartNodeIndex``, which then moves past the last one. So
    identical pods do not see the same nodes one after the other, but pod *i* and pod *i + 10*
    do: while every active Filter reads only the node and the pod (what a run requires), the
    nodes a cycle starting at index *s* finds change only when one of them takes a pod and no
    longer fits (which ends that run). This keeps one :class:`PlacementRun` per start index, each
    begun by a full cycle from that index: a pod whose start index has a run is placed by it, and
    the rotation index moves on as that full cycle moved it. Every assumed pod is told to every
    run: to the one(s) whose nodes include the host as to a run of one window, to the others as a
    pod :meth:`~PlacementRun.assumed_elsewhere` (spreading counts of domains span windows).

    A run is told when it is next read, not when the pod is assumed: the assumed pods are kept in
    order (:attr:`log`) and each run reads those after its own position (:meth:`_catch_up`) before
    it picks a node or is counted. The other windows' runs are not read while a window's run
    places its pod, so telling them at once or later comes to the same: each is told the same
    pods in the same order; the NodeInfo a host's pod is told with is the snapshot's (one object
    per node for the whole search, changed in place) as it is when told, which holds that pod and
    maybe later ones of that node, which this run is then told of too, before it is read. The Filter
    verdicts a run reads (resources, ports: a node that stops fitting fits no more) and its
    node-local scores (the node's latest) end up the same. What a pod adds to a carried column of
    every window's run is worked out once (``shared``), not once per run; and the runs with a
    class pick whose domain counts were equal when they began read one table of them
    (:class:`~scheduler.class_pick.SharedCounts`, :attr:`counts`), told of each pod once when
    it is assumed: such a run is told only of the pods on its own nodes.

    All runs are of one signature: a pod of another (an odd pod of the group) is placed by a full
    cycle and ends them all, as it ends a run of one window.

    The start indices come back only when the windows tile the rotation (5,000 nodes: ten windows
    of 500; 5,001 would not come back for 5,001 pods), and every run costs each assumed pod a
    look. So a run is begun only from a start index seen before (the rotation came back to it),
    and at most :data:`MAX_WINDOW_RUNS` are kept: elsewhere the cycles stay full ones, as before.
    """

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        #: start indices full cycles began from (a run is begun on the second)
        self.seen: set[int] = set()
        self.signature: Any = None
        #: start index -> (the run of that window, the rotation index its full cycle left)
        self.runs: dict[int, tuple[PlacementRun, int]] = {}
        #: the run that placed the last pod :meth:`next` placed
        self.placed_by: PlacementRun | None = None
        #: the pods assumed while runs were kept, in order (:meth:`_catch_up`)
        self.log: list[_Assumed] = []
        #: start index -> how many of :attr:`log` its run has been told of
        self.told: dict[int, int] = {}
        #: the spreading domain counts the runs with a class pick share (:class:`SharedCounts`),
        #: told of every pod at once; None when no run has begun one since the last was dropped
        self.counts: SharedCounts | None = None

    def start_index(self, snapshot: Snapshot) -> int:
        """The index the next cycle over the whole cluster starts from."""
        n = snapshot.num_nodes()
        return self.fw.next_start_node_index % n if n else 0

    def next(self, state: CycleState, pod_info: PodInfo, signature: Any, snapshot: Snapshot) -> str | None:
        """The node kube's cycle picks for ``pod_info``, with the rotation index moved as that cycle
        moves it; ``None`` when no run of this pod's window can say (then a full cycle)."""
        if not self.runs or signature is None or signature != self.signature:
            return None
        start = self.start_index(snapshot)
        if start not in self.runs or not self._catch_up(start):
            return None
        run, next_start = self.runs[start]
        if not run.accepts(pod_info, signature):
            return None
        host = run.next(state, pod_info)
        if host is None:
            del self.runs[start]
            return None
        self.fw.next_start_node_index = next_start
        self.placed_by = run
        return host

    def wants(self, start: int) -> bool:
        """Whether a full cycle from ``start`` should begin a run (see the class docstring)."""
        if start not in self.seen:
            self.seen.add(start)
            return False
        if start in self.runs and self._catch_up(start):
            return True
        if len(self.runs) >= MAX_WINDOW_RUNS:
            for s in list(self.runs):  # (runs that ended since they were last read do not count)
                self._catch_up(s)
        return len(self.runs) < MAX_WINDOW_RUNS

    def add(self, start: int, run: PlacementRun, next_start: int) -> None:
        """A full cycle from ``start`` (which left the rotation index at ``next_start``) began ``run``."""
        if run.signature != self.signature:
            self.runs.clear()
            self.counts = None
            self.signature = run.signature
        self.runs[start] = (run, next_start)
        self.told[start] = len(self.log)
        classes = run.classes
        if classes is not None and SHARED_COUNTS:
            if self.counts is None:
                self.counts = SharedCounts(classes.spread)
            classes.join(self.counts)

    def assumed(self, state: CycleState, pod_info: PodInfo, signature: Any, host: str) -> None:
        """``pod_info`` was assumed on ``host`` (by a run or by a full cycle): every run is told,
        each when it is next read (:meth:`_catch_up`)."""
        if not self.runs:
            self.counts = None  # (no run to keep it for: a table not told of a pod is dropped)
            return
        if signature is None or signature != self.signature:
            self.runs.clear()  # a pod not of the runs changed nodes they cannot account for
            self.counts = None
            return
        run, _ = next(iter(self.runs.values()))
        ni = run.snapshot.node_info_map.get(host)
        if ni is None:
            self.runs.clear()
            self.counts = None
            return
        self.log.append(_Assumed(state, pod_info, host, ni))
        if self.counts is not None:
            self.counts.add(pod_info, ni)

    def _catch_up(self, start: int) -> bool:
        """Tell the run of ``start`` the pods assumed since it was last told; ``False`` when that
        ends it (it is dropped, as it would have been when the pod was assumed)."""
        log = self.log
        at = self.told[start]
        if at == len(log):
            return True
        self.told[start] = len(log)
        run, _ = self.runs[start]
        pos = run.pos
        k, n = at, len(log)
        if run.defer_pre_filter and run.classes is not None and run.classes.shared is not None:
            # its domain counts are the shared table's: only the pods on its own nodes are told
            # (and no PreFilter per pod reads the other windows' NodeInfos: ``all_nodes``)
            for a in log[at:]:
                if a.host in pos and not run.assumed(a.state, a.pod_info, a.host):
                    del self.runs[start]
                    return False
            return True
        while k < n:
            a = log[k]
            if a.host in pos:
                if not run.assumed(a.state, a.pod_info, a.host):
                    del self.runs[start]
                    return False
                k += 1
                continue
            j = k + 1  # the pods placed elsewhere from here on are told at once, in order
            while j < n and log[j].host not in pos:
                j += 1
            run.assumed_elsewhere_many(log[k:j])
            k = j
        return True


def materialize_states(fw: Framework, snapshot: Snapshot, result: PlacementResult) -> None:
    """Run PreFilter into the CycleState of each pod a run placed without it (the placement was
    chosen: Reserve, Permit and binding read those states). PreFilter's result for such a pod is
    the run's first pod's (:data:`PURE_PRE_FILTERS`), whichever pods the snapshot then holds."""
    if not result.pending_pre_filter:
        return
    names = result.placement.node_names
    infos = snapshot.node_info_map
    nodes = snapshot.ordered() if names is None else [infos[n] for n in names if n in infos]
    # the plugins the run's first pod did not skip, per set of skips (:meth:`PlacementRun.next`
    # gave each pod that pod's): a pure plugin skips a run's pod as it skipped the first
    running: dict[frozenset[str], list[Any]] = {}
    for a in result.pending_pre_filter:
        st = a.state
        if st is None:
            continue
        skip = frozenset(st.skip_filter_plugins)
        plugins = running.get(skip)
        if plugins is None:
            plugins = running[skip] = [pl for pl in fw.pre_filter_plugins if pl.name not in skip]
        if not _pre_filter_unskipped(plugins, st, a.pod_info, nodes):
            fw.run_pre_filter_plugins(st, a.pod_info, nodes)  # (not for a pure plugin: kube's loop)
    result.pending_pre_filter = []


def _pre_filter_unskipped(
    plugins: list[Any], state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
) -> bool:
    """PreFilter of the plugins a run's first pod did not skip, into ``state``: what
    :meth:`~scheduler.framework.Framework.run_pre_filter_plugins` ends in when each of them
    succeeds for all nodes and the others skip, without calling the others (six plugins per pod,
    five of them skipping, for a default StatefulSet pod). ``False`` when one does not succeed
    for all nodes (the caller then runs the framework's loop)."""
    for pl in plugins:
        try:
            r, s = pl.pre_filter(state, pod_info, nodes)
        except Exception:
            return False
        if s is not None or (r is not None and not r.all_nodes()):
            return False
    return True
