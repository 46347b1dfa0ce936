"""A PodGroup cycle's members keep no scratch of their cycle in their CycleState (gangplane).

Every member's CycleState lives until the group is bound; the per-cycle memos keyed by a list of
nodes and the in-tree plugins' PreScore results (:mod:`scheduler.cycle_memo`) are dropped when
the member's cycle ends, so a large gang does not hold one window of NodeInfos per member for
the cyclic collector to traverse. The search's decisions and what Reserve, Permit and binding
get must not change: the same random clusters are searched with the scratch kept (the general
path) and dropped, and everything a caller sees is compared.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import scheduler.podgroup_algorithm as pga
from scheduler.cycle_memo import CYCLE_SCRATCH, PRE_SCORE_KEYS
from scheduler.nodeinfo import NodeInfo

from .test_placement_run import _search


def _node_lists(value: Any, depth: int = 0) -> int:
    """How many lists of NodeInfos ``value`` holds, looking two containers deep."""
    if isinstance(value, list) and value and isinstance(value[0], NodeInfo):
        return 1
    if depth >= 2:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(_node_lists(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(_node_lists(v, depth + 1) for v in value.values())
    return 0


def _member_node_lists(result: pga.PodGroupAlgorithmResult) -> tuple[int, int]:
    """(members with a cycle state, node lists their states hold) over every evaluated placement."""
    states = [a.state for ev in result.evaluated for a in ev.assignments if a.state is not None]
    return len(states), sum(_node_lists(st._data) for st in states)


@pytest.mark.parametrize("wide", [False, True])
def test_members_hold_no_node_lists_and_the_search_chooses_as_with_the_memos_kept(
    wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    members = held = 0
    for seed in range(40):
        with monkeypatch.context() as m:
            m.setattr(pga, "forget_cycle_scratch", lambda state: None)  # kept, as before
            kept = _search(seed, carry_runs=True, wide=wide)
            held += _member_node_lists(kept[0])[1]
        dropped = _search(seed, carry_runs=True, wide=wide)
        assert dropped[3] == kept[3], f"seed {seed}"
        assert dropped[1] == kept[1], f"seed {seed}: random draws differ"
        assert dropped[2] == kept[2], f"seed {seed}: rotation index differs"
        n, lists = _member_node_lists(dropped[0])
        members += n
        assert lists == 0, f"seed {seed}: {lists} node lists held by the members' states"
        for ev in dropped[0].evaluated:
            for a in ev.assignments:
                if a.state is not None:
                    assert not set(CYCLE_SCRATCH) & set(a.state._data), f"seed {seed}"
    assert members > 200
    assert held > 0  # with the memos kept the states did hold the cycles' node lists


@pytest.mark.parametrize(
    "module",
    [
        "balanced_allocation",
        "pod_topology_spread",
        "inter_pod_affinity",
        "node_resources_fit",
        "taint_toleration",
        "node_affinity",
    ],
)
def test_every_in_tree_pre_score_key_is_forgotten(module: str) -> None:
    """The keys the cycle forgets are the plugins' own (a renamed key would be kept, not lost)."""
    mod = importlib.import_module(f"scheduler.plugins.{module}")
    assert mod._PRE_SCORE_KEY in PRE_SCORE_KEYS
