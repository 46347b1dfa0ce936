"""A run's pods get PreFilter from the plugins the run's first pod did not skip.

:func:`scheduler.placement_run.materialize_states` fills the CycleState of each pod a run placed
(PreFilter deferred to the chosen placement) calling only the PreFilter plugins that did not skip
the run's first pod. Here every such state is compared with the one the framework's whole
PreFilter loop makes for the pod on a fresh CycleState over the same snapshot: the same keys, the
same values, the same skipped plugins, on the random clusters of ``test_placement_run``.
"""

from __future__ import annotations

from typing import Any

import pytest

import scheduler.podgroup_algorithm as pga
from scheduler.framework import Framework
from scheduler.interfaces import NO_PLUGINS, CycleState, PlacementResult
from tests.unit.scheduler.test_placement_run import _search


def _same_value(a: Any, b: Any) -> bool:
    if type(a).__eq__ is object.__eq__:  # no value equality of its own: its type and fields
        return type(a) is type(b) and getattr(a, "__dict__", None) == getattr(b, "__dict__", None)
    return bool(a == b)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("block", range(3))
def test_a_runs_pods_get_the_states_the_whole_pre_filter_loop_makes(
    block: int, wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pga.materialize_states
    compared = 0
    #: per skip set object, how many materialized states hold it (a run's pods share its own)
    shared: dict[int, int] = {}

    def checking(fw: Framework, snapshot: Any, result: PlacementResult) -> None:
        nonlocal compared
        pending = list(result.pending_pre_filter)
        real(fw, snapshot, result)
        names = result.placement.node_names
        infos = snapshot.node_info_map
        nodes = snapshot.ordered() if names is None else [infos[n] for n in names if n in infos]
        for a in pending:
            if a.state is None:
                continue
            fresh = CycleState()
            fw.run_pre_filter_plugins(fresh, a.pod_info, nodes)
            assert a.state.skip_filter_plugins == fresh.skip_filter_plugins, a.pod_info.key
            shared[id(a.state.skip_filter_plugins)] = shared.get(id(a.state.skip_filter_plugins), 0) + 1
            # a fitting pod's assignment owns no empty set or list (shared empties until replaced)
            assert a.unschedulable_plugins is NO_PLUGINS and a.reasons == (), a.pod_info.key
            assert set(a.state._data) == set(fresh._data), a.pod_info.key
            for k, v in fresh._data.items():
                assert _same_value(a.state._data[k], v), (a.pod_info.key, k)
            compared += 1

    monkeypatch.setattr(pga, "materialize_states", checking)
    for seed in range(block * 40, block * 40 + 40):
        _search(seed, carry_runs=True, wide=wide)
    assert compared > 50  # runs' pods were materialized
    assert max(shared.values()) > 1  # a run's pods share one immutable set of skipped plugins


def test_a_fresh_cycle_state_skips_nothing_with_the_shared_empty_set() -> None:
    a, b = CycleState(), CycleState()
    assert a.skip_filter_plugins is NO_PLUGINS and b.skip_score_plugins is NO_PLUGINS
    assert isinstance(NO_PLUGINS, frozenset) and not NO_PLUGINS
    c = a.clone()
    assert c.skip_filter_plugins == set() and c.skip_score_plugins == set()
