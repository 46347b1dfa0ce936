"""``bench/micro/gang_timeline.py``: each set's creates, bindings, syncs and PodGroup cycles,
stamped where they happen, and the plane's methods as they were afterwards."""

from __future__ import annotations

import pytest

from bench.micro.gang_timeline import run

pytestmark = pytest.mark.anyio


async def test_each_set_has_its_pods_stamped_in_order_and_its_cycles_named() -> None:
    from apiserver.registry.generic import GenericStore
    from scheduler.schedule_one_podgroup import PodGroupCycle

    before = (GenericStore.create, PodGroupCycle.schedule_one_podgroup)
    rows = await run(sets=3, replicas=4, nodes=40)
    assert [r["set"] for r in sorted(rows, key=lambda r: r["set"])] == ["gang-0", "gang-1", "gang-2"]
    for r in rows:
        (c0, c1), (b0, b1) = r["created"], r["bound"]
        assert 0 <= c0 <= c1 <= b1 and c0 <= b0 <= b1
        assert r["placed"] == pytest.approx(b1 - c1)
        assert r["syncs"] and all(a <= b for a, b in r["syncs"])
        # a gang is bound by a PodGroup cycle that began once its last pod was created
        assert r["cycles"] and any(c1 <= a <= b1 and a <= b for a, b, _ in r["cycles"])
    assert (GenericStore.create, PodGroupCycle.schedule_one_podgroup) == before
