"""The cycle state's memos keyed by the identity of a list of nodes (gangplane).

Within one pod's cycle every array-capable Filter or Score plugin asks the same questions about
the same list of NodeInfos (is it a window of consecutive nodes? which node-table rows are
they?), so the first answer is kept in the pod's :class:`~scheduler.interfaces.CycleState`
with the list itself, compared by identity (``is``) on the next question. Holding the list is
what makes the identity check sound (a live list's ``id`` cannot be reused), but it also keeps
the cycle's window of nodes (~400-500 NodeInfo references) alive as long as the state.

A PodGroup cycle keeps every member's CycleState until the group is bound (Reserve, Permit and
binding read it), so a 1,000-pod gang held ~750 such lists, ~300,000 references that every
young pass of the cyclic collector traversed while the group was placed. No question is asked
about a cycle's list after its cycle has ended (a :class:`~scheduler.placement_run.PlacementRun`
carrying the cycle on scores its own copy of the list), so the PodGroup cycle forgets the memos
when a member's cycle ends (:func:`forget_cycle_scratch`): the answers stay the same, the
state no longer holds the nodes.

The in-tree Score plugins' PreScore results (:data:`PRE_SCORE_KEYS`) are read only by Score and
NormalizeScore of the same cycle (never by Reserve, Permit or binding, here or upstream), and a
run's pods never had them (:mod:`scheduler.placement_run`); the PodGroup cycle forgets them with
the memos, so a full cycle's member keeps what a run's member keeps: its PreFilter results and
skipped plugins. Another plugin's PreScore state stays where it is.
"""

from __future__ import annotations

from scheduler.interfaces import CycleState

#: the node-table rows of a list of nodes: ``(nodes, table, table version, rows)``
#: (:func:`scheduler.nodetable.rows_for`)
ROWS_KEY = "gangplane.dev/node-table-rows"
#: whether a list of nodes is worth the node table: ``(nodes, snapshot, answer)``
#: (:func:`scheduler.plugins.resource_allocation.wants_table`)
WANTS_TABLE_KEY = "gangplane.dev/wants-node-table"
#: every memo that holds a cycle's list of nodes
NODE_LIST_MEMOS = (ROWS_KEY, WANTS_TABLE_KEY)
#: the in-tree Score plugins whose PreScore state only their Score and NormalizeScore read
IN_TREE_PRE_SCORE_PLUGINS = (
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "PodTopologySpread",
    "InterPodAffinity",
    "TaintToleration",
    "NodeAffinity",
)
#: their cycle-state keys (each plugin module's ``"PreScore" + NAME``)
PRE_SCORE_KEYS = tuple("PreScore" + name for name in IN_TREE_PRE_SCORE_PLUGINS)
#: what a member's state forgets once its cycle is over
CYCLE_SCRATCH = NODE_LIST_MEMOS + PRE_SCORE_KEYS


def forget_cycle_scratch(state: CycleState) -> None:
    """Drop a finished cycle's node-list memos and in-tree PreScore results from ``state`` (see
    the module docstring): nothing after the cycle reads them."""
    for key in CYCLE_SCRATCH:
        state.delete(key)
