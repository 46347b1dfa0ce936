"""The binding cycle's shortcut, against the general path it replaces.

``Scheduler._binding_cycle`` skips WaitOnPermit's coroutine for a pod Permit did not park:
  random pods parked or not by a Permit plugin, released or rejected at random before or after
  their binding task starts, bind, fail and requeue exactly as with the general path (every pod
  through ``Framework.wait_on_permit``): same bound nodes, Events, metrics, cache and queue.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from prometheus_client import CollectorRegistry


def _samples(registry: CollectorRegistry) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    out = []
    for fam in registry.collect():
        for s in fam.samples:
            if not s.name.endswith("_created"):
                out.append((s.name, tuple(sorted(s.labels.items())), repr(s.value)))
    return sorted(out)


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
