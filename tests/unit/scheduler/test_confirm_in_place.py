"""A bound pod confirming its assumed self in place (``Cache._confirm_in_place``) against the
general confirmation (``Cache._confirm``: a new PodInfo, the node touched, the next snapshot update
refreshing or copying it).

On random histories (assumes, bindings finished or not, confirmations by revisions that keep or
change the spec, labels, deletion state, start time or node; several pods per node, so the
confirmed pod is often not its node's last; other schedulers' pods, label updates, forgets,
removals, snapshot updates, a scheduling cycle holding the snapshot or not) everything a plugin or
the scheduler can read must be what the general path leaves: in the cache and, after each
snapshot update, in the snapshot, every node's pods in order with every PodInfo slot (the pod by
value and whether it is the revision the informer delivered), the affinity lists, the aggregates,
the capacity index and the pod-label index; the cache's pods, assumed set and group states. Only
generations, the recency list and the refreshed marks (bookkeeping of what to copy) may differ.
While a cycle holds the snapshot, the snapshot must not change at all (every pod by value: a
revision taken in place would show its resourceVersion), as it does not on the general path.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo
from tests.unit.scheduler.test_confirm_fastpath import _bound, _groups, _pending, _pod_info, gated_fast_path

NODES = [f"n{i}" for i in range(8)]
_IN_PLACE = Cache._confirm_in_place  # the fast path, before a test patches it


def _node(ni: NodeInfo | None, known: dict[str, Obj]) -> Any:
    if ni is None:
        return None
    return (
        ni.name,
        ni.node is not None,
        [_pod_info(p, known) for p in ni.pods],
        [p.key for p in ni.pods_with_affinity],
        [p.key for p in ni.pods_with_required_anti_affinity],
        sorted(ni.requested.items()),
        ni.non_zero_cpu,
        ni.non_zero_memory,
        repr(sorted(ni.used_ports._by_ip.items())),
    )


def _cache_view(cache: Cache, known: dict[str, Obj]) -> Any:
    return (
        [(name, _node(ni, known)) for name, ni in sorted(cache.nodes.items())],
        sorted((k, _pod_info(pi, known)) for k, pi in cache._pods.items()),
        sorted(cache._assumed),
        _groups(cache.pod_groups),
    )


def _snapshot_view(snap: Snapshot, known: dict[str, Obj]) -> Any:
    labels = snap._pod_label_index()
    return (
        [(name, _node(ni, known)) for name, ni in sorted(snap.node_info_map.items())],
        [ni.name for ni in snap.ordered()],
        sorted((r, sorted(v)) for r, v in snap.index.entries().items()),
        sorted((t, sorted(names)) for t, names in labels.as_sets().items()),
    )


def _history(seed: int, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], int]:
    """The views after every step of one random history, and how many confirmations went in place."""
    rng = random.Random(seed)
    cache = Cache()
    taken = gated_fast_path(monkeypatch, "_confirm_in_place", _IN_PLACE, fast)
    snap = Snapshot()
    from scheduler.testing import make_node

    for n in NODES:
        cache.add_node(make_node(n))
    pending = {f"p{i}": _pending(rng, f"p{i}") for i in range(14)}
    known: dict[str, Obj] = {}
    views: list[Any] = []
    held: Any = None  # the snapshot as the cycle holding it (snapshot_in_use) began with it
    rv = 100
    for _step in range(300):
        rv += 1
        r = rng.random()
        name = rng.choice(list(pending))
        pod = pending[name]
        key = f"{pod['metadata']['namespace']}/{name}"
        in_cache = key in cache._pods
        assumed = key in cache._assumed
        if r < 0.25 and not in_cache:
            cache.assume_pod(pod, rng.choice(NODES), PodInfo(pod))
        elif r < 0.6 and assumed:
            if key not in cache._binding_done and rng.random() < 0.7:
                cache.finish_binding(cache._pods[key].pod)
            if key in cache._binding_done or rng.random() < 0.3:
                # the bound revision, its binding over or (now and then) still under way
                new = _bound(rng, cache._pods[key].pod, rv)
                known[key] = new
                cache.add_pod(new)
        elif r < 0.64 and not in_cache:
            new = _bound(rng, {**pod, "spec": {**pod["spec"], "nodeName": rng.choice(NODES)}}, rv)
            known[key] = new
            cache.add_pod(new)  # another scheduler's pod
        elif r < 0.68 and in_cache and not assumed:
            cur = cache._pods[key].pod
            new = {**cur, "metadata": {**cur["metadata"], "labels": {"app": rng.choice("abc")}}}
            known[key] = new
            cache.update_pod(cur, new)
        elif r < 0.71 and assumed:
            cache.forget_pod(cache._pods[key].pod)
        elif r < 0.85 and in_cache:
            cache.remove_pod(cache._pods[key].pod)
            known.pop(key, None)
        elif r < 0.88:
            cache.snapshot_in_use = rng.random() < 0.2
            held = _snapshot_view(snap, {}) if cache.snapshot_in_use else None
        elif not cache.snapshot_in_use:
            cache.update_snapshot(snap)
            views.append(_snapshot_view(snap, known))
        if held is not None:
            # a cycle reading the snapshot sees it as it was when the cycle began
            assert _snapshot_view(snap, {}) == held, f"seed {seed}: the snapshot changed under a cycle"
        views.append(_cache_view(cache, known))
    cache.update_snapshot(snap)
    views.append(_snapshot_view(snap, known))
    return views, taken[0]


@pytest.mark.parametrize("seed", range(30))
def test_confirming_in_place_leaves_what_the_general_confirmation_leaves(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    general, none = _history(seed, False, monkeypatch)
    fast, _ = _history(seed, True, monkeypatch)
    assert none == 0
    for step, (a, b) in enumerate(zip(general, fast, strict=True)):
        assert a == b, f"seed {seed} view {step}"


def test_the_histories_take_the_fast_path_and_its_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    took = [_history(seed, True, monkeypatch)[1] for seed in range(30)]
    assert sum(took) > 40 and sum(1 for t in took if t) > 20


def test_not_in_place_while_a_cycle_holds_the_snapshot_or_the_binding_is_under_way() -> None:
    from scheduler.testing import make_node

    cache = Cache()
    cache.add_node(make_node("n0"))
    pod = _pending(random.Random(1), "p0")
    pi = cache.assume_pod(pod, "n0", PodInfo(pod))
    key = pi.key
    bound = {**pi.pod, "metadata": {**pi.pod["metadata"], "resourceVersion": "7"}}
    assert not cache._confirm_in_place(key, pi, bound)  # Bind has not come back
    cache.finish_binding(pi.pod)
    cache.snapshot_in_use = True
    assert not cache._confirm_in_place(key, pi, bound)
    cache.snapshot_in_use = False
    assert cache._confirm_in_place(key, pi, bound)
    assert pi.pod is bound and cache._pods[key] is pi and key not in cache._assumed
    assert key not in cache._binding_done


# -- the scheduler's part: the flag around a cycle, and a gang confirmed in place ------------------


@pytest.mark.anyio
async def test_a_gang_cycle_holds_the_snapshot_until_its_condition_write_and_its_members_confirm_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search runs with ``snapshot_in_use`` set, the condition write without it, the flag is
    clear after the cycle; the bound members, delivered as the informer delivers them, are
    confirmed in place: the cache keeps the PodInfo the kept placement left in the snapshot,
    now holding the bound revision, and the next snapshot update copies no node."""
    from apiserver.client.interface import NODES, PODGROUPS, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler
    from scheduler.testing import make_node, make_pod

    plane = ControlPlane()
    sched: Scheduler | None = None
    seen: dict[str, bool] = {}
    try:
        client = plane.client("kube-scheduler")
        sched = Scheduler(client, seed=1)
        cache = sched.cache
        for i in range(4):
            cache.add_node(await client.create(NODES, make_node(f"n{i}", cpu="8")))
        pg = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
        }
        sched._on_pod_group_add(await client.create(PODGROUPS, pg, "default"))
        created = []
        for i in range(3):
            p = make_pod(f"g-{i}", labels={"app": "g"}, requests={"cpu": "100m"})
            p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
            c = await client.create(PODS, p, "default")
            sched.pods._items[f"default/g-{i}"] = c  # the informer's store, fed by hand
            sched._on_pod_add(c)
            created.append(c)
        run_async, condition = PodGroupAlgorithm.run_async, PodGroupCycle._set_pod_group_condition

        async def search(self: Any, *a: Any, **k: Any) -> Any:
            seen["search"] = cache.snapshot_in_use
            return await run_async(self, *a, **k)

        async def write(self: Any, *a: Any) -> None:
            seen["condition"] = cache.snapshot_in_use
            await condition(self, *a)

        monkeypatch.setattr(PodGroupAlgorithm, "run_async", search)
        monkeypatch.setattr(PodGroupCycle, "_set_pod_group_condition", write)
        assert await sched.schedule_one()
        assert seen == {"search": True, "condition": False} and not cache.snapshot_in_use
        await sched.wait_idle()
        assumed = {k: cache._pods[k] for k in cache._assumed}
        assert len(assumed) == 3 and cache._binding_done == set(assumed)
        cache.update_snapshot(sched.snapshot)  # the next cycle's catch-up, before the confirmations
        for old in created:
            new = (await client.list(PODS, "default"))["items"]
            bound = next(p for p in new if p["metadata"]["name"] == old["metadata"]["name"])
            sched._on_pod_update(old, bound)
            pi = assumed[f"default/{old['metadata']['name']}"]
            assert cache._pods[pi.key] is pi and pi.pod is bound
            assert sched.snapshot.node_info_map[pi.node_name].pods[-1] is pi
        assert not cache._assumed and not cache._binding_done
        puts: list[str] = []
        monkeypatch.setattr(type(sched.snapshot), "_put", lambda self, name, ni: puts.append(name))
        monkeypatch.setattr(type(sched.snapshot), "refresh", lambda self, name, ni: puts.append(name))
        cache.update_snapshot(sched.snapshot)
        assert puts == []
    finally:
        if sched is not None:
            await sched.recorder.stop()
        await plane.stop()
