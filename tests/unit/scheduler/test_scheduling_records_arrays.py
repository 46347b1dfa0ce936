"""Scheduling records with the cycle's array path (``Framework.array_scores``) against the list path.

With records on, the Score columns, totals and host pick may run in numpy arrays; the records
must still be what the list path writes, byte for byte (the same JSON), and the hosts the same.
The array world's records are summarised only at the end, after every later cycle has changed the
node table's kept columns, so a column captured as a view (not copied) would show here.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from apiserver.meta import FakeClock
from scheduler import schedule_one, score_totals
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import FitError
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.records import Recorder
from scheduler.testing import gang_set_pods, make_node, make_pod

PROFILE = "default-scheduler"
ZONE = "topology.kubernetes.io/zone"


pytestmark = pytest.mark.usefixtures("arrays_on_small_clusters")


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    labels = {ZONE: f"z{rng.randrange(3)}"} if rng.random() < 0.9 else {}
    taints = [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}] if rng.random() < 0.1 else None
    return make_node(
        f"n{i:03d}",
        cpu=rng.choice(["1", "2", "4", "7500m"]),
        memory=rng.choice(["1Gi", "2Gi", "8Gi"]),
        pods=rng.choice(["3", "110"]),
        labels=labels,
        taints=taints,
    )


def _pod(rng: random.Random, i: int) -> dict[str, Any]:
    app = rng.choice(["web", "web", "db", "batch"])
    name = f"p{i:03d}"
    p = make_pod(
        name,
        uid=name,
        labels={"app": app},
        requests=rng.choice(
            [{}, {"cpu": "100m", "memory": "128Mi"}, {"cpu": "1"}, {"memory": "3Gi"}, {"cpu": "3"}]
        ),
    )
    if rng.random() < 0.25:  # PodTopologySpread normalizes: its column stays on the list path
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice([1, 2]),
                "topologyKey": rng.choice([ZONE, "kubernetes.io/hostname"]),
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if rng.random() < 0.1:
        p["spec"]["tolerations"] = [{"key": "soft", "operator": "Exists"}]
    return p


def _drain(seed: int, arrays: bool, weight: int) -> tuple[list[str], list[str]]:
    """Schedule random pods one by one on a random cluster with records on; return the hosts
    (or FitError texts) and every record as JSON, read after the last cycle (the list world
    reads each right after its own cycle: the oracle, independent of capture)."""
    rng = random.Random(seed)
    cache = Cache()
    for i in range(rng.randrange(20, 60)):
        cache.add_node(_node(rng, i))
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"].get("app", "")}}
    )
    rec = Recorder(None, FakeClock())  # type: ignore[arg-type]  # no event loop: records stay in memory
    handle.records = rec
    fw = Framework(default_profile(), handle, registry=default_registry())
    fw.array_scores = arrays
    if weight != 1:  # a weighted array column is the raw one times the weight: a new array
        fw.score_weights["NodeResourcesFit"] = weight
    hosts: list[str] = []
    records: list[str] = []
    names = []
    for i in range(80):
        pod = _pod(rng, i)
        pi = PodInfo(pod)
        cache.update_snapshot(snap)
        handle.snapshot = snap
        rec.begin_pod(PROFILE, pod, 1)
        try:
            host = schedule_one.schedule_pod(fw, CycleState(), pi, snap).suggested_host
        except FitError as e:
            rec.failed(pod, PROFILE, 1, "Unschedulable", e.message)
            hosts.append(e.message)
        else:
            rec.scheduled(pod, PROFILE, host, 1)
            cache.assume_pod(pod, host, pi)
            hosts.append(host)
        names.append(pod["metadata"]["name"])
        if not arrays:
            records.append(json.dumps(rec.record("default", "Pod", names[-1])))
    if arrays:
        records = [json.dumps(rec.record("default", "Pod", n)) for n in names]
    return hosts, records


@pytest.mark.parametrize("weight", [1, 3])
@pytest.mark.parametrize("seed", range(5))
def test_records_are_the_same_with_and_without_array_scores(
    seed: int, weight: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed_hosts, listed = _drain(seed, False, weight)
    calls = 0
    real = score_totals.add_columns

    def counted(columns: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(columns)

    monkeypatch.setattr(score_totals, "add_columns", counted)
    array_hosts, arrayed = _drain(seed, True, weight)
    assert calls > 0  # the array path did run with records on
    assert array_hosts == listed_hosts
    for a, b in zip(arrayed, listed, strict=True):
        assert a == b
    scored = [json.loads(r)["attempts"][0].get("score") for r in listed]
    # the records hold what the comparison is about: per-plugin raw and final scores of many nodes
    assert any(
        s and "raw" in s["top"][0]["plugins"].get("NodeResourcesFit", {}) and s.get("rest") for s in scored
    )


def _gangs(seed: int, arrays: bool) -> tuple[list[Any], list[str]]:
    """Gangs of 3 StatefulSet pods (default spreading) placed by the PodGroup algorithm with
    records on: inside a PodGroup cycle the per-pod scores are not kept, so every array plugin
    (PodTopologySpread too) may take the array path; the PodGroup records must not change."""
    from scheduler.interfaces import PodGroupInfo
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState

    rng = random.Random(seed)
    cache = Cache()
    for i in range(rng.randrange(20, 50)):
        n = _node(rng, i)
        n["metadata"]["labels"]["topology.kubernetes.io/rack"] = f"r{i % 4}"
        cache.add_node(n)
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"].get("app", "")}}
    )
    handle.snapshot = snap
    rec = Recorder(None, FakeClock())  # type: ignore[arg-type]  # no event loop: records stay in memory
    handle.records = rec
    fw = Framework(default_profile(), handle, registry=default_registry())
    fw.array_scores = arrays
    algorithm = PodGroupAlgorithm(fw)
    placed: list[Any] = []
    records: list[str] = []
    for g in range(12):
        app = f"g{g}"
        pods = [PodInfo(p) for p in gang_set_pods(app)]
        spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 3}}}
        if g % 3 == 0:
            spec["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
        pg = {"metadata": {"name": app, "namespace": "default", "uid": app}, "spec": spec}
        cache.update_snapshot(snap)
        rec.begin_pod_group(PROFILE, "default", app, 3)
        result = algorithm.run(CycleState(), PodGroupInfo("default", app, pg, pods, PodGroupState(app)), snap)
        rec.pod_group_result(pg, result, {}, False, 1)
        fitting = result.placement.fitting() if result.success and result.placement is not None else []
        placed.append([(a.pod_info.name, a.node_name) for a in fitting])
        for a in fitting:
            cache.assume_pod(a.pod_info.pod, a.node_name)
        records.append(json.dumps(rec.record("default", "PodGroup", app)))
    return placed, records


@pytest.mark.parametrize("seed", range(3))
def test_podgroup_records_are_the_same_with_and_without_array_scores(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _gangs(seed, False)
    calls = 0
    real = score_totals.add_columns

    def counted(columns: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(columns)

    monkeypatch.setattr(score_totals, "add_columns", counted)
    placed, records = _gangs(seed, True)
    assert calls > 0  # the array path did run inside the PodGroup cycles, records on
    assert (placed, records) == listed
    assert any(placed) and all(json.loads(r)["attempts"][0]["placements"] for r in records)


@pytest.mark.parametrize("seed", range(10))
def test_a_cycle_with_every_column_uniform_is_summarised_as_zero_totals(seed: int) -> None:
    """The array path builds no totals when every Score column is uniform (``None``); the
    summary reads that as the list path's ``[0] * n``."""
    from scheduler.nodeinfo import NodeInfo
    from scheduler.records.summary import RecordLimits, score_summary

    rng = random.Random(seed)
    n = rng.randrange(1, 12)
    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(n)]
    columns: dict[str, Any] = {"A": rng.randrange(101), "B": 3 * rng.randrange(101)}
    raw: dict[str, Any] = {"A": [columns["A"]] * n, "B": columns["B"] // 3}
    weights = {"B": 3}
    expected = score_summary(nodes, columns, raw, weights, [0] * n, RecordLimits())
    assert score_summary(nodes, columns, raw, weights, None, RecordLimits()) == expected
    assert [t["node"] for t in expected["top"]] == [f"n{i}" for i in range(min(n, 5))]
