"""The binding cycle's and the attempt metrics' shortcuts, against the general paths they replace.

* ``metrics.AttemptSeries`` / ``observe_histogram`` (a labelled child's cells updated directly,
  the bucket found by bisection) leave exactly the samples ``Counter.inc()`` and
  ``Histogram.observe()`` leave, for random and boundary values (bucket bounds, just either side
  of them, 0, negatives, infinities, NaN);
* ``Scheduler._binding_cycle`` skips WaitOnPermit's coroutine for a pod Permit did not park:
  random pods parked or not by a Permit plugin, released or rejected at random before or after
  their binding task starts, bind, fail and requeue exactly as with the general path (every pod
  through ``Framework.wait_on_permit``): same bound nodes, Events, metrics, cache and queue.
"""

from __future__ import annotations

import asyncio
import math
import random
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from scheduler import metrics as m
from scheduler.metrics import SchedulerMetrics

# --- the attempt series against prometheus_client's own updates ---------------------------------


def _samples(registry: CollectorRegistry) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    out = []
    for fam in registry.collect():
        for s in fam.samples:
            if not s.name.endswith("_created"):
                out.append((s.name, tuple(sorted(s.labels.items())), repr(s.value)))
    return sorted(out)


def _values(rng: random.Random, bounds: list[float]) -> list[float]:
    out: list[float] = []
    for _ in range(300):
        r = rng.random()
        if r < 0.3:
            b = rng.choice(bounds)
            out.append(rng.choice([b, math.nextafter(b, -math.inf), math.nextafter(b, math.inf)]))
        elif r < 0.4:
            out.append(rng.choice([0.0, -0.0, -1.0, -1e-9, math.inf, -math.inf, math.nan, 1e300]))
        else:
            out.append(rng.expovariate(1 / rng.choice([0.0005, 0.01, 0.5, 20.0])))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_attempt_series_leave_the_samples_inc_and_observe_leave(seed: int) -> None:
    rng = random.Random(seed)
    fast_reg, general_reg = CollectorRegistry(), CollectorRegistry()
    fast = SchedulerMetrics(fast_reg)
    general = SchedulerMetrics(general_reg)
    bounds = [*general.scheduling_attempt_duration._upper_bounds, 1.0, 3.0, 1e-6]
    calls = []
    for v in _values(rng, bounds):
        result = rng.choice([m.SCHEDULED, m.UNSCHEDULABLE, m.ERROR, m.WAITING_ON_PREEMPTION])
        calls.append((rng.randrange(3), result, rng.choice(["default-scheduler", "other"]), v))
    for which, result, profile, v in calls:
        if which == 0:
            fast.observe_attempt(result, profile, v)
            general.schedule_attempts.labels(result=result, profile=profile).inc()
            general.scheduling_attempt_duration.labels(result=result, profile=profile).observe(v)
        elif which == 1:
            fast.observe_pod_group_attempt(result, profile, v)
            general.podgroup_schedule_attempts.labels(result=result, profile=profile).inc()
            general.podgroup_scheduling_attempt_duration.labels(result=result, profile=profile).observe(v)
        else:
            fast.observe_pod_group_algorithm(profile, v)
            general.podgroup_scheduling_algorithm_duration.labels(profile=profile).observe(v)
    assert _samples(fast_reg) == _samples(general_reg)


def test_a_reset_counter_keeps_counting_from_zero() -> None:
    reg = CollectorRegistry()
    sm = SchedulerMetrics(reg)
    sm.observe_attempt(m.SCHEDULED, "p", 0.01)
    sm.schedule_attempts.labels(result=m.SCHEDULED, profile="p").reset()
    sm.observe_attempt(m.SCHEDULED, "p", 0.01)
    assert (
        reg.get_sample_value("scheduler_schedule_attempts_total", {"result": m.SCHEDULED, "profile": "p"})
        == 1
    )


def test_any_histogram_child_observes_as_observe_does() -> None:
    rng = random.Random(7)
    for n in range(1, 6):
        bounds = sorted({round(rng.uniform(-5, 5), 1) for _ in range(n)})
        a, b = CollectorRegistry(), CollectorRegistry()
        ha = Histogram("h", "h", ["x"], buckets=bounds, registry=a).labels(x="1")
        hb = Histogram("h", "h", ["x"], buckets=bounds, registry=b).labels(x="1")
        ca = Counter("c", "c", ["x"], registry=a).labels(x="1")
        cb = Counter("c", "c", ["x"], registry=b).labels(x="1")
        series = m.AttemptSeries(ca, ha)
        for v in _values(rng, bounds):
            series.observe(v)
            cb.inc()
            hb.observe(v)
        assert _samples(a) == _samples(b)


# --- WaitOnPermit skipped for a pod Permit did not park -------------------------------------------


class _AlwaysAsk(dict):  # type: ignore[type-arg]
    """``Framework.waiting_pods`` answering "maybe" to every membership test: the binding cycle
    then takes the general path (``wait_on_permit``) for every pod."""

    def __contains__(self, key: object) -> bool:
        return True


class _Parking:
    """A Permit plugin parking the pods drawn for it (WAIT), the others passing."""

    name = "Parking"

    def __init__(self, parked: set[str]) -> None:
        self.parked = parked

    def permit(self, state: Any, pod_info: Any, node_name: str) -> tuple[Any, float]:
        from scheduler.status import Code, Status

        if pod_info.name in self.parked:
            return Status(Code.WAIT, "parked"), 60.0
        return None, 0.0


async def _run(seed: int, general: bool) -> Any:
    from apiserver.client.interface import EVENTS, NODES, PODS
    from apiserver.meta import FakeClock
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions
    from scheduler.framework import CycleState
    from scheduler.scheduler import Scheduler
    from scheduler.testing import make_node, make_pod

    rng = random.Random(seed)
    plane = ControlPlane(ControlPlaneOptions(clock=FakeClock()))
    reg = CollectorRegistry()
    sched = Scheduler(plane.client("kube-scheduler"), seed=1, clock=FakeClock(), metrics_registry=reg)
    try:
        client = sched.client
        fw = sched.frameworks["default-scheduler"]
        if general:
            fw.waiting_pods = _AlwaysAsk()
        nodes = [await client.create(NODES, make_node(f"n{i}")) for i in range(3)]
        for n in nodes:
            sched.cache.add_node(n)
        count = rng.randint(1, 12)
        names = [f"p{i}" for i in range(count)]
        parked = {n for n in names if rng.random() < 0.5}
        fw.permit_plugins = [*fw.permit_plugins, _Parking(parked)]
        # a pod deleted before its binding: its write fails (404), the failure path runs
        gone = {n for n in names if rng.random() < 0.15}
        pods = [await client.create(PODS, make_pod(n), "default") for n in names]
        for p in pods:
            sched._on_pod_add(p)
        # a verdict per parked pod, given before its task's first step or after it started
        verdicts = {n: (rng.choice(["allow", "reject"]), rng.random() < 0.5) for n in sorted(parked)}
        for n in sorted(gone):
            await client.delete(PODS, n, "default")
        early, late = [], []
        for i in range(count):
            q = sched.queue.pop_nowait()
            assert q is not None
            host = f"n{i % 3}"
            assert await sched.assume_and_bind(fw, CycleState(), q, host, 0.0)
            if q.pod_info.name in verdicts:
                (early if verdicts[q.pod_info.name][1] else late).append(q.pod_info)

        def give(pis: list[Any]) -> None:
            for pi in pis:
                wp = fw.waiting_pods.get(pi.uid)
                if wp is None:
                    continue
                if verdicts[pi.name][0] == "allow":
                    wp.allow(_Parking.name)
                else:
                    wp.reject(_Parking.name, "rejected at random")

        give(early)
        for _ in range(3):
            await asyncio.sleep(0)
        give(late)
        await sched.wait_idle()
        await sched.recorder.flush()
        bound = sorted(
            (p["metadata"]["name"], p["spec"].get("nodeName", ""))
            for p in (await client.list(PODS, "default"))["items"]
        )
        events = sorted(
            (e["involvedObject"]["name"], e["reason"], e["message"])
            for e in (await client.list(EVENTS, "default"))["items"]
        )
        where = sorted((n, sched.queue.where(p["metadata"]["uid"])) for n, p in zip(names, pods, strict=True))
        return {
            "bound": bound,
            "events": events,
            "metrics": [s for s in _samples(reg) if "duration" not in s[0]],
            "assumed": sorted(sched.cache.assumed_pod_keys()),
            "cached": sorted(sched.cache._pods),
            "queue": where,
            "waiting": sorted(k for k in dict.keys(fw.waiting_pods)),
            "tasks": len(sched._binding_tasks),
        }
    finally:
        await sched.recorder.stop()
        await plane.stop()


@pytest.mark.parametrize("seed", range(40))
def test_skipping_wait_on_permit_binds_and_fails_as_the_general_path(seed: int) -> None:
    fast = asyncio.run(_run(seed, general=False))
    general = asyncio.run(_run(seed, general=True))
    assert fast == general
    assert fast["tasks"] == 0 and not fast["waiting"]
