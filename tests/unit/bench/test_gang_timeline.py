"""``bench/micro/gang_timeline.py``: each set's creates, bindings, syncs and PodGroup cycles,
stamped where they happen, and the plane's methods as they were afterwards."""

from __future__ import annotations

import pytest

from bench.micro.gang_timeline import run

pytestmark = pytest.mark.anyio


async def test_each_set_has_its_pods_stamped_in_order_and_its_cycles_named() -> None:
    import apiserver.registry.subresources as subresources
    import scheduler.scheduler as scheduler_module
    from apiserver.registry.generic import GenericStore
    from controllers.statefulset.controller import StatefulSetController
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler

    def patched() -> tuple[object, ...]:
        return (
            GenericStore.create,
            subresources.bind,
            StatefulSetController.sync,
            PodGroupCycle.schedule_one_podgroup,
            PodGroupCycle._submit_success,
            PodGroupAlgorithm.run_async,
            Scheduler._binding_cycle,
            Scheduler._report_held_pod,
            scheduler_module.patch_pod_status,
        )

    before = patched()
    rows, reports = await run(sets=3, replicas=4, nodes=40)
    assert [r["set"] for r in sorted(rows, key=lambda r: r["set"])] == ["gang-0", "gang-1", "gang-2"]
    for r in rows:
        (c0, c1), (b0, b1) = r["created"], r["bound"]
        assert 0 <= c0 <= c1 <= b1 and c0 <= b0 <= b1
        assert r["placed"] == pytest.approx(b1 - c1)
        assert r["syncs"] and all(a <= b for a, b in r["syncs"])
        # a gang is bound by a PodGroup cycle that began once its last pod was created
        assert r["cycles"] and any(c1 <= a <= b1 and a <= b for a, b, _ in r["cycles"])
        # inside a cycle: its search, then its submit, which starts the binding tasks
        (s0, s1), (u0, u1) = r["searches"][-1], r["submits"][-1]
        assert s0 <= s1 <= u0 <= u1 <= b1
        first, last = r["binding_starts"]
        assert u0 <= first <= last <= b1
    # sets of four are complete long before a member has waited the 5 s a report needs
    assert reports == {"due": 0, "written": 0}
    assert patched() == before
