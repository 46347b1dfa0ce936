"""Micro-benchmarks of gangplane's hot paths (pytest-benchmark; not part of the default test run).

    python -m pytest bench/micro --benchmark-autosave          # save a baseline in .benchmarks/
    python -m pytest bench/micro --benchmark-compare            # compare with the last saved run

Each benchmark drives a public surface (the in-process client, a pure helper, the scheduler
through the API) so that a refactor behind it keeps the numbers comparable.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest

from apiserver.client.interface import CONFIGMAPS, NODES, PODS, STATEFULSETS
from apiserver.patch.strategic import strategic_merge
from apiserver.selectors import parse_label_selector
from bench.workloads.common import node, pod
from bench.workloads.statefulsets import statefulset

pytestmark = pytest.mark.benchmark


def _counter() -> itertools.count[int]:
    return itertools.count()


def test_store_write_create_configmap(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    c = plane.client("bench")
    n = _counter()

    def create() -> None:
        i = next(n)
        loop.run_until_complete(
            c.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}}, "default")
        )

    benchmark(create)


def test_managed_fields_update_merge_patch_pod(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    c = plane.client("bench")
    loop.run_until_complete(c.create(PODS, pod("p"), "default"))
    n = _counter()

    def patch() -> None:
        loop.run_until_complete(
            c.patch(PODS, "p", {"metadata": {"labels": {"rev": str(next(n))}}}, "default")
        )

    benchmark(patch)


def test_share_stored_pod_read_only(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    """What an informer's first read of a revision costs: decode its bytes, share its managedFields trees."""
    from apiserver.storage.interface import Record

    c = plane.client("bench")
    loop.run_until_complete(c.create(PODS, pod("shared"), "default"))
    raw = orjson.dumps(loop.run_until_complete(c.get(PODS, "shared", "default")))

    benchmark(lambda: Record(None, raw, 1).shared())


def test_watch_dispatch_to_100_watchers(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    c = plane.client("bench")
    seen = [0]

    async def follow() -> None:
        async for _ in c.watch(CONFIGMAPS, "default"):
            seen[0] += 1

    tasks = [loop.create_task(follow()) for _ in range(100)]
    loop.run_until_complete(asyncio.sleep(0.01))
    n = _counter()

    async def write_and_deliver() -> None:
        target = seen[0] + 100
        await c.create(CONFIGMAPS, {"metadata": {"name": f"w-{next(n)}"}}, "default")
        while seen[0] < target:
            await asyncio.sleep(0)

    benchmark(lambda: loop.run_until_complete(write_and_deliver()))
    for t in tasks:
        t.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


def test_selector_match_1000_label_sets(benchmark: Any) -> None:
    sel = parse_label_selector("app=web,tier in (frontend,backend),!canary,zone notin (zone-9)")
    sets = [
        {"app": "web", "tier": "frontend" if i % 2 else "db", "zone": f"zone-{i % 10}"} for i in range(1000)
    ]
    benchmark(lambda: sum(1 for s in sets if sel.matches(s)))


def test_strategic_merge_pod_containers(benchmark: Any) -> None:
    from apiserver.openapi import schema

    node_schema = schema.for_gvk("", "v1", "Pod")
    original = pod("p")
    original["spec"]["containers"] += [{"name": f"side-{i}", "image": "x"} for i in range(5)]
    patch = {"spec": {"containers": [{"name": "side-3", "image": "y"}, {"name": "new", "image": "z"}]}}
    benchmark(lambda: strategic_merge(original, patch, node_schema))


def test_workloadbuilder_compile_gang_statefulset(benchmark: Any) -> None:
    from apiserver.workloadbuilder import new_builder
    from apiserver.workloadbuilder.statefulset import statefulset_build_options, statefulset_workload_item
    from featuregates import FeatureGate

    sts = statefulset("db", 5, True, "rack")
    sts["metadata"].update({"namespace": "default", "uid": "u-1"})
    gates = FeatureGate()

    def compile_workload() -> Any:
        item = statefulset_workload_item(sts, gates)
        return new_builder(item, statefulset_build_options(sts)).build_workload()

    benchmark(compile_workload)


def _scheduling_plane(loop: asyncio.AbstractEventLoop, nodes: int, racks: int = 0) -> Any:
    from bench.workloads.common import start_plane

    cp = loop.run_until_complete(start_plane([]))
    c = cp.client("bench")

    async def setup() -> None:
        for i in range(nodes):
            await c.create(NODES, node(i, racks=racks))
        await cp.start_component("scheduler")
        await cp.start_component("statefulset-controller")

    loop.run_until_complete(setup())
    return cp


async def _until_bound(c: Any, namespace: str, selector: str, n: int) -> None:
    lst = await c.list(PODS, namespace, label_selector=selector)
    bound = {p["metadata"]["name"] for p in lst["items"] if p["spec"].get("nodeName")}
    if len(bound) >= n:
        return
    async for ev in c.watch(
        PODS, namespace, label_selector=selector, resource_version=lst["metadata"]["resourceVersion"]
    ):
        if ev.type in ("ADDED", "MODIFIED") and ev.object["spec"].get("nodeName"):
            bound.add(ev.object["metadata"]["name"])
            if len(bound) >= n:
                return


def test_filter_and_score_one_pod_over_5000_nodes(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    cp = _scheduling_plane(loop, 5000)
    c = cp.client("bench")
    n = _counter()

    async def schedule_one() -> None:
        name = f"p-{next(n)}"
        await c.create(PODS, pod(name, labels={"p": name}), "default")
        await _until_bound(c, "default", f"p={name}", 1)

    benchmark.pedantic(lambda: loop.run_until_complete(schedule_one()), rounds=50, warmup_rounds=2)
    loop.run_until_complete(cp.stop())


def test_group_placement_gang_of_16_in_one_rack_of_500_nodes(
    benchmark: Any, loop: asyncio.AbstractEventLoop
) -> None:
    cp = _scheduling_plane(loop, 500, racks=10)
    c = cp.client("bench")
    n = _counter()

    async def place_gang() -> None:
        name = f"g-{next(n)}"
        await c.create(STATEFULSETS, statefulset(name, 16, True, "rack"), "default")
        await _until_bound(c, "default", f"app={name}", 16)

    benchmark.pedantic(lambda: loop.run_until_complete(place_gang()), rounds=10, warmup_rounds=1)
    loop.run_until_complete(cp.stop())


def _framework_over(nodes: int, racks: int = 0) -> tuple[Any, Any, Any]:
    """A scheduler cache with ``nodes`` fake nodes and the default profile's framework (no API)."""
    import random

    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i, racks=racks))
    handle = Handle(rng=random.Random(1))
    return cache, handle, Framework(default_profile(), handle, registry=default_registry())


def _cycle(cache: Any, handle: Any, fw: Any, snap: Any, p: dict[str, Any]) -> None:
    """One scheduling cycle as the scheduler runs it: refresh the snapshot, schedule, assume."""
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo

    cache.update_snapshot(snap)
    handle.snapshot = snap
    result = schedule_one.schedule_pod(fw, CycleState(), PodInfo(p), snap)
    cache.assume_pod(p, result.suggested_host)


def test_scheduling_cycle_framework_only_5000_nodes(benchmark: Any) -> None:
    """Filter + Score + assume of a plain pod over 5,000 nodes, without the API around it."""
    cache, handle, fw = _framework_over(5000)
    snap = cache.snapshot()
    n = _counter()

    def one() -> None:
        i = next(n)
        p = pod(f"p-{i}")
        p["metadata"]["uid"] = f"u-{i}"
        _cycle(cache, handle, fw, snap, p)

    for _ in range(100):  # a warm cluster: every node scored once
        one()
    benchmark.pedantic(one, rounds=300, warmup_rounds=5)


def test_scheduling_cycle_with_default_spreading_1000_nodes(benchmark: Any) -> None:
    """The same for StatefulSet pods: PodTopologySpread's default constraints count the set's pods."""
    from scheduler.nodeinfo import compile_selector

    cache, handle, fw = _framework_over(1000, racks=10)
    handle.default_spread_selector = lambda _pod: compile_selector({"matchLabels": {"app": "bench"}})
    snap = cache.snapshot()
    n = _counter()
    owner = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": "s-uid", "controller": True}
    ]

    def one() -> None:
        i = next(n)
        p = pod(f"p-{i}")
        p["metadata"].update(uid=f"u-{i}", ownerReferences=owner)
        _cycle(cache, handle, fw, snap, p)

    for _ in range(200):  # 200 of the set's pods already placed
        one()
    benchmark.pedantic(one, rounds=300, warmup_rounds=5)


def test_scheduling_cycle_node_selector_5000_nodes(benchmark: Any) -> None:
    """A pod whose nodeSelector matches 500 of 5,000 nodes: NodeAffinity's hint from the node
    table's label ids and the feasible window by mask (no walk over the nodes)."""
    cache, handle, fw = _framework_over(0)
    for i in range(5000):
        nd = node(i)
        nd["metadata"]["labels"]["pool"] = f"p{i % 10}"
        cache.add_node(nd)
    snap = cache.snapshot()
    n = _counter()

    def one() -> None:
        i = next(n)
        p = pod(f"p-{i}")
        p["metadata"]["uid"] = f"u-{i}"
        p["spec"]["nodeSelector"] = {"pool": "p3"}
        _cycle(cache, handle, fw, snap, p)

    for _ in range(50):
        one()
    benchmark.pedantic(one, rounds=200, warmup_rounds=5)


def _gang(app: str, size: int, topology: bool) -> Any:
    """A gang of ``size`` StatefulSet pods (default spreading applies) and its PodGroupInfo."""
    from scheduler.interfaces import PodGroupInfo
    from scheduler.nodeinfo import PodInfo
    from scheduler.podgroups import PodGroupState

    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": size}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    pods = []
    for i in range(size):
        p = pod(f"{app}-{i}", labels={"app": app, "apps.kubernetes.io/pod-index": str(i)})
        p["metadata"].update(uid=f"{app}-u{i}", ownerReferences=owner)
        p["spec"]["schedulingGroup"] = {"podGroupName": app}
        pods.append(PodInfo(p))
    pg = {"metadata": {"name": app, "namespace": "default"}, "spec": spec}
    return PodGroupInfo("default", app, pg, pods, PodGroupState(f"default/{app}"))


def _placement_setup(nodes: int, racks: int) -> tuple[Any, Any, Any, Any]:
    from scheduler.nodeinfo import compile_selector
    from scheduler.podgroup_algorithm import PodGroupAlgorithm

    cache, handle, fw = _framework_over(nodes, racks=racks)
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    snap = cache.snapshot()
    handle.snapshot = snap
    return cache, snap, fw, PodGroupAlgorithm(fw)


def test_group_placement_algorithm_200_pods_over_5_racks_of_100_nodes(benchmark: Any) -> None:
    """The PodGroup algorithm alone: a rack-constrained gang of 200 judged in 5 of 50 racks
    (5,000 nodes; KEP-5732's 10% of placements), then rolled back. The first rack is evaluated pod
    by pod; the others are evaluated or, when capacity settles them, decided without pod cycles
    (scheduler.placement_certain), as the shipped scheduler does."""
    from scheduler.interfaces import CycleState

    cache, snap, fw, algorithm = _placement_setup(5000, 50)
    n = _counter()

    def place() -> None:
        cache.update_snapshot(snap)
        result = algorithm.run(CycleState(), _gang(f"g{next(n)}", 200, True), snap)
        assert result.success and len(result.evaluated) + len(result.decided) == 5

    benchmark.pedantic(place, rounds=3, warmup_rounds=1)


def test_group_placement_algorithm_gang_of_3_over_5000_nodes(benchmark: Any) -> None:
    """The PodGroup algorithm alone for a gang of 3 on the whole cluster (the 1,000 x 3 case)."""
    from scheduler.interfaces import CycleState

    cache, snap, fw, algorithm = _placement_setup(5000, 50)
    n = _counter()

    def place() -> None:
        cache.update_snapshot(snap)
        result = algorithm.run(CycleState(), _gang(f"g{next(n)}", 3, False), snap)
        assert result.success

    benchmark.pedantic(place, rounds=50, warmup_rounds=2)


def test_validate_helm_release_secret_750kb(benchmark: Any) -> None:
    """A helm release Secret's validation: its base64 data is checked as Go decodes it."""
    import base64
    import os

    from apiserver.registry.strategies.core.secret import validate_secret

    secret = {
        "type": "helm.sh/release.v1",
        "data": {"release": base64.b64encode(os.urandom(750_000)).decode()},
    }
    assert benchmark(validate_secret, secret) == []


def test_create_configmap_with_10000_keys(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    """One large flat map: validation and the managedFields of 10,000 leaves."""
    c = plane.client("bench")
    n = _counter()
    data = {f"key-{i}": "v" for i in range(10_000)}

    def create() -> None:
        loop.run_until_complete(
            c.create(CONFIGMAPS, {"metadata": {"name": f"big-{next(n)}"}, "data": data}, "default")
        )

    benchmark.pedantic(create, rounds=5, iterations=1)
