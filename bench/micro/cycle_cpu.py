"""The scheduler's CPU per pod without the API around it, for the two per-pod-cycle shapes of the
SchedulingBasic and gangs-1000x3 scenarios (a script, not a pytest-benchmark test):

    python -m bench.micro.cycle_cpu plain    # plain pods over 5,000 nodes: update_snapshot,
                                             # schedule_pod, assume (the 500-node window)
    python -m bench.micro.cycle_cpu plain-records  # the same with scheduling records kept (in
                                             # memory: the capture on the loop; the kept records'
                                             # summaries are made after the clock stops and digested)
    python -m bench.micro.cycle_cpu plain-bound  # plain, and each pod as the API server sends it
                                             # once bound (nodeName, resourceVersion, the
                                             # PodScheduled condition) confirms its assumed self
                                             # in the cache one cycle later, as the informer
                                             # delivers it in the plane (Cache.add_pod)
    python -m bench.micro.cycle_cpu gangs    # gangs of 3 StatefulSet pods (default spreading)
                                             # on 5,000 nodes in 50 racks: update_snapshot, the
                                             # PodGroup algorithm's whole-cluster placement, assumes
    python -m bench.micro.cycle_cpu sets     # the same pods without a gang: each pod its own
                                             # cycle (update_snapshot, schedule_pod, assume), the
                                             # pod-by-pod cost a gang of 3 is compared with
    python -m bench.micro.cycle_cpu racks    # gangs of 1,000 with a rack constraint on 5,000
                                             # nodes in 50 racks (gangs-3x1000-rack's search): the
                                             # placements' runs, 5 of 50 racks evaluated per gang

Prints the CPU time per pod (``time.process_time``) over the measured pods, after a warm-up,
and a digest of every chosen node: two builds that schedule alike print the same digest (the
random tie-breaks are seeded). The cyclic collector runs as the control plane tunes it.
Compare builds by alternating them: ``PYTHONPATH=<tree> python bench/micro/cycle_cpu.py plain`` runs
this script against another source tree's scheduler (an older one without the script too).
"""

from __future__ import annotations

import gc
import hashlib
import random
import sys
import time
from typing import Any

from bench.workloads.common import bound_pod, node, pod

#: the control plane's collector thresholds (``gangplane.controlplane.GC_THRESHOLD``; the bench
#: layer cannot import the product face)
GC_THRESHOLD = (50_000, 20, 20)


def _tune_gc() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def _framework_over(nodes: int, racks: int = 0) -> tuple[Any, Any, Any]:
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i, racks=racks))
    handle = Handle(rng=random.Random(1))
    return cache, handle, Framework(default_profile(), handle, registry=default_registry())


def plain(
    pods: int = 3000, warm: int = 200, records: bool = False, bound: bool = False
) -> tuple[float, list[str]]:
    """CPU ms per plain pod over 5,000 nodes, and the hosts chosen; with ``records``, the
    scheduling records captured as the scheduler does (``begin_pod`` … ``scheduled``), and the
    JSON of every record still kept appended to the hosts after the clock stops (so the digest
    covers the records' content too); with ``bound``, each pod's bound self confirms it in the
    cache one cycle later."""
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo

    cache, handle, fw = _framework_over(5000)
    snap = cache.snapshot()
    hosts: list[str] = []
    rec: Any = None
    if records:
        from apiserver.meta import FakeClock
        from scheduler.records import Recorder

        rec = handle.records = Recorder(None, FakeClock())  # type: ignore[arg-type]  # no loop: in memory
    names: list[str] = []
    confirming: list[dict[str, Any]] = []

    def one(i: int) -> None:
        p = pod(f"p-{i}")
        p["metadata"]["uid"] = f"u-{i}"
        cache.update_snapshot(snap)
        handle.snapshot = snap
        pi = PodInfo(p)
        if rec is not None:
            rec.begin_pod("default-scheduler", p, 1)
        r = schedule_one.schedule_pod(fw, CycleState(), pi, snap)
        if rec is not None:
            rec.scheduled(p, "default-scheduler", r.suggested_host, 1)
            names.append(p["metadata"]["name"])
        cache.assume_pod(p, r.suggested_host, pi)
        hosts.append(r.suggested_host)
        if bound:
            confirming.append(bound_pod(p, r.suggested_host, i + 1))
            if len(confirming) > 1:
                b = confirming.pop(0)
                cache.finish_binding(b)
                cache.add_pod(b)

    for i in range(warm):
        one(i)
    _tune_gc()
    t = time.process_time()
    for i in range(warm, warm + pods):
        one(i)
    ms = (time.process_time() - t) / pods * 1000
    if rec is not None:
        import json

        kept = (rec.record("default", "Pod", n) for n in names)
        hosts.extend(json.dumps(r) for r in kept if r is not None)
    return ms, hosts


def _spreading_framework(nodes: int = 5000, racks: int = 50) -> tuple[Any, Any, Any, Any]:
    """``nodes`` nodes (5,000) in ``racks`` racks (50) with kube's default spreading of a
    StatefulSet's pods (by ``app``), and a snapshot: ``(cache, handle, framework, snapshot)``."""
    from scheduler.nodeinfo import compile_selector

    cache, handle, fw = _framework_over(nodes, racks=racks)
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    return cache, handle, fw, cache.snapshot()


def _gang_group(app: str, members: int) -> Any:
    """StatefulSet ``app``'s ``members`` pods as the PodGroup ``app`` of a gang of them all
    (a :class:`~scheduler.interfaces.PodGroupInfo` for the PodGroup algorithm)."""
    from scheduler.interfaces import PodGroupInfo
    from scheduler.nodeinfo import PodInfo
    from scheduler.podgroups import PodGroupState

    pods = [PodInfo(p) for p in _set_pods(app, members, group=True)]
    pg = {
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
    }
    return PodGroupInfo("default", app, pg, pods, PodGroupState(f"default/{app}"))


def _set_pods(app: str, size: int = 3, group: bool = False) -> list[Any]:
    """The ``size`` pods of StatefulSet ``app`` as its controller makes them (in PodGroup ``app``
    with ``group``)."""
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    out = []
    for i in range(size):
        p = pod(f"{app}-{i}", labels={"app": app, "apps.kubernetes.io/pod-index": str(i)})
        p["metadata"].update(uid=f"{app}-u{i}", ownerReferences=owner)
        if group:
            p["spec"]["schedulingGroup"] = {"podGroupName": app}
        out.append(p)
    return out


def _timed(place: Any, warm: int, count: int, pods_each: int) -> float:
    """CPU ms per pod of ``place(k)`` for ``count`` sets after ``warm`` unmeasured ones."""
    for k in range(warm):
        place(k)
    _tune_gc()
    t = time.process_time()
    for k in range(warm, warm + count):
        place(k)
    return (time.process_time() - t) / (pods_each * count) * 1000


def _place_groups(
    prefix: str, size: int, spec: dict[str, Any], count: int, warm: int
) -> tuple[float, list[str]]:
    """CPU ms per pod of PodGroups of ``size`` StatefulSet pods (PodGroup ``spec``) placed by the
    PodGroup algorithm, and the hosts chosen. As the scheduler's PodGroup cycle, a winner the
    algorithm keeps stays in the snapshot, adopted (a tree older than the kept winner rolls
    every placement back)."""
    from scheduler.interfaces import CycleState, PodGroupInfo
    from scheduler.nodeinfo import PodInfo
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState

    cache, handle, fw, snap = _spreading_framework()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    hosts: list[str] = []
    keep = hasattr(cache, "adopt_assumed")

    def place(k: int) -> None:
        app = f"{prefix}{k}"
        members = [PodInfo(p) for p in _set_pods(app, size, group=True)]
        pg = {"metadata": {"name": app, "namespace": "default"}, "spec": spec}
        group = PodGroupInfo("default", app, pg, members, PodGroupState(f"default/{app}"))
        cache.update_snapshot(snap)
        if keep:
            result = algorithm.run(CycleState(), group, snap, keep_winner=True)
        else:
            result = algorithm.run(CycleState(), group, snap)
        assert result.success and result.placement is not None
        fitting = result.placement.fitting()
        for a in fitting:
            cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
            hosts.append(a.node_name)
        if keep and result.kept:
            cache.adopt_assumed(snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting})

    return _timed(place, warm, count, size), hosts


def gangs(sets: int = 600, warm: int = 50) -> tuple[float, list[str]]:
    """CPU ms per pod of gangs of 3 placed on the whole cluster, and the hosts chosen."""
    return _place_groups("g", 3, {"schedulingPolicy": {"gang": {"minCount": 3}}}, sets, warm)


def sets(count: int = 600, warm: int = 50) -> tuple[float, list[str]]:
    """CPU ms per pod of ``gangs``' pods scheduled pod by pod (no PodGroup), and the hosts chosen:
    the default spreading of a StatefulSet's pods, each pod with its own snapshot update and cycle."""
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo

    cache, handle, fw, snap = _spreading_framework()
    hosts: list[str] = []

    def place(k: int) -> None:
        for p in _set_pods(f"g{k}"):
            cache.update_snapshot(snap)
            handle.snapshot = snap
            pi = PodInfo(p)
            r = schedule_one.schedule_pod(fw, CycleState(), pi, snap)
            cache.assume_pod(p, r.suggested_host, pi)
            hosts.append(r.suggested_host)

    return _timed(place, warm, count, 3), hosts


def racks(count: int = 4, warm: int = 1, size: int = 1000) -> tuple[float, list[str]]:
    """CPU ms per pod of gangs of ``size`` StatefulSet pods constrained to one rack, placed by the
    PodGroup algorithm on 5,000 nodes in 50 racks, and the hosts chosen."""
    from bench.workloads.common import RACK

    spec = {
        "schedulingPolicy": {"gang": {"minCount": size}},
        "schedulingConstraints": {"topology": [{"key": RACK}]},
    }
    return _place_groups("r", size, spec, count, warm)


def main(argv: list[str]) -> None:
    which = argv[0] if argv else "plain"
    if which == "gangs":
        ms, hosts = gangs()
    elif which == "sets":
        ms, hosts = sets()
    elif which == "racks":
        ms, hosts = racks()
    else:
        ms, hosts = plain(records=which == "plain-records", bound=which == "plain-bound")
    digest = hashlib.sha1(",".join(hosts).encode()).hexdigest()[:12]
    print(f"{which} {ms:.4f} ms CPU/pod hosts {digest}")


if __name__ == "__main__":
    main(sys.argv[1:])
