"""The PodGroup search asks PlacementFeasible once per stretch of Wait, not once per pod.

``Framework.placement_feasible_waits_below`` promises that, while every further pod is placed,
PlacementFeasible says Wait again under a bound; the search then skips those calls (5,000 Wait
statuses for a 5,000-pod gang). The promise is checked against GangScheduling's verdicts over
every small (minCount, scheduled, remaining), and the search with the skips against the search
asking after every pod (``skip_waits`` off) on the random clusters of ``test_placement_run``.
"""

from __future__ import annotations

import pytest

from featuregates import FeatureGate
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.interfaces import CycleState, Handle, PodGroupInfo
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.podgroups import PodGroupState
from scheduler.status import Code
from tests.unit.scheduler.test_placement_run import _search


def _gang_fw() -> Framework:
    return Framework(default_profile(), Handle(gates=FeatureGate()), registry=default_registry())


def _group(min_count: int | None) -> PodGroupInfo:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    pg = {"metadata": {"name": "g", "namespace": "default"}, "spec": {"schedulingPolicy": policy}}
    return PodGroupInfo("default", "g", pg, [], PodGroupState("default/g"))


@pytest.mark.parametrize("min_count", [None, 1, 2, 3, 7, 12])
def test_the_bound_holds_for_every_later_call_while_pods_are_placed(min_count: int | None) -> None:
    fw = _gang_fw()
    group = _group(min_count)
    state = CycleState()
    promised = 0
    for total in range(0, 16):
        for s in range(total + 1):
            r = total - s
            st = fw.run_placement_feasible_plugins(state, group, s, r)
            below = fw.placement_feasible_waits_below(state, group, s, r)
            if st is None or not st.is_wait():
                continue
            promised += below > s
            for j in range(r + 1):
                if s + j >= below:
                    break
                later = fw.run_placement_feasible_plugins(state, group, s + j, r - j)
                assert later is not None and later.code == Code.WAIT, (s, r, j)
    assert promised or min_count in (None, 1)


#: 120 seeds in blocks of 15: a wide block takes ~20 s alone, well inside pytest's timeout on a
#: loaded runner, and the blocks spread over the xdist workers
BLOCK = 15


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("block", range(120 // BLOCK))
def test_the_search_with_the_skips_sees_what_it_sees_asking_after_every_pod(
    block: int, wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {True: 0, False: 0}
    real_init = PodGroupAlgorithm.__init__
    real_run = Framework.run_placement_feasible_plugins
    mode = {"skip": True}

    def init(self: PodGroupAlgorithm, *a: object, **kw: object) -> None:
        real_init(self, *a, **kw)  # type: ignore[arg-type]
        self.skip_waits = mode["skip"]

    def counting(self: Framework, *a: object) -> object:
        calls[mode["skip"]] += 1
        return real_run(self, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(PodGroupAlgorithm, "__init__", init)
    monkeypatch.setattr(Framework, "run_placement_feasible_plugins", counting)
    for seed in range(block * BLOCK, block * BLOCK + BLOCK):
        for carry in (True, False):
            mode["skip"] = False
            every = _search(seed, carry_runs=carry, wide=wide)
            mode["skip"] = True
            skips = _search(seed, carry_runs=carry, wide=wide)
            assert skips[3] == every[3], f"seed {seed}"
            assert skips[1] == every[1], f"seed {seed}: random draws differ"
            assert skips[2] == every[2], f"seed {seed}: rotation index differs"
    assert calls[True] < calls[False] * 0.9  # the skips were taken
