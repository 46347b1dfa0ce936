"""A plain pod's scheduler work around its scheduling cycle, end to end through the API (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/around_cpu.py [PODS] [--batch B]
    cd /tmp && python TREE/bench/micro/around_cpu.py PODS --pairs TREE_A TREE_B [--rounds 3]

A hand-fed :class:`~scheduler.scheduler.Scheduler` (5,000 nodes in its cache, no informers, fake
clocks) on an in-process plane; PODS plain pods created through the API before the clock starts.
Per batch of B pods, timed (``time.process_time``, the collector frozen and off): the created
pod's informer Add (``_on_pod_add``: queue add, PreEnqueue), the pop, ``assume_and_start``
(assume, Reserve, Permit, the binding task's creation; the node chosen round-robin: no search
runs), the binding tasks run to their end (WaitOnPermit, PreBind skip, the ``pods/binding``
write through the in-process client, ``finish_binding``, the Scheduled Event queued, the
attempt's metrics, PostBind) and the bound revision's informer Update (``_on_pod_update``: the
queue's delete, the cache's confirmation, ``AssignedPodAdd``). The bound revisions are the
store's shared ones (``list(read_only=True)``, as an informer gets them), read between the
binding section and the update section, untimed. Event writes are stubbed (another area's; their
batching would make the section's work depend on the recorder's timing).

Prints µs CPU per pod of each section and their sum (the smallest of the batches' means: on a
shared machine a preempted batch reads high) and a digest of the cache's pods per node, the
metric samples and the queued Events' reasons and notes: two builds that behave alike print the
same digest. ``--pairs`` runs two source trees alternately (:func:`bench.micro.alternating.run_pairs`).

Instruction counts (noise-free on a shared machine), the four sections only::

    cd /tmp && PYTHONHASHSEED=0 PYTHONPATH=TREE valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=_operator_call python TREE/bench/micro/around_cpu.py 600 --batch 200 --ir

(``--ir=bind`` or ``--ir=add,update``: those sections only.)
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import operator
import sys
import time
from typing import Any

NODES = 5000
NS = "default"
SECTIONS = ("add", "assume", "bind", "update")


def run(pods: int, batch: int, ir: frozenset[str] = frozenset()) -> tuple[dict[str, float], str]:
    """The sections' best µs per pod and the digest. ``ir``: these timed sections run inside
    ``operator.call``, the only calls a ``--toggle-collect=_operator_call`` callgrind counts."""
    from prometheus_client import CollectorRegistry

    from apiserver.client.events import EventRecorder
    from apiserver.client.interface import PODS
    from apiserver.meta import FakeClock
    from bench.workloads.common import node, pod
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
    from scheduler.framework import CycleState
    from scheduler.scheduler import Scheduler

    events: list[tuple[str, str]] = []

    async def _write(self: Any, ref: Any, etype: str, reason: str, message: str, *rest: Any) -> bool:
        events.append((reason, message))
        return True

    EventRecorder._write = _write  # type: ignore[method-assign]
    loop = asyncio.new_event_loop()
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock()))
    default_components(cp, Fleet.empty(), "*")
    client = cp.client("kube-scheduler")
    registry = CollectorRegistry()
    sched = Scheduler(client, metrics_registry=registry, seed=1, clock=FakeClock())
    fw = sched.frameworks["default-scheduler"]
    for i in range(NODES):
        sched.cache.add_node(node(i))

    async def create() -> list[Any]:
        return [await client.create(PODS, pod(f"p-{i:06d}"), NS) for i in range(pods)]

    async def drain() -> None:
        while sched._binding_tasks:
            await asyncio.sleep(0)

    async def listed() -> list[Any]:
        return (await client.list(PODS, NS, read_only=True))["items"]

    created = loop.run_until_complete(create())

    def plain(f: Any, *a: Any) -> Any:
        return f(*a)

    def call(section: str) -> Any:
        return operator.call if section in ir else plain

    def add(chunk: list[Any]) -> None:
        for p in chunk:
            sched._on_pod_add(p)

    def assume(b0: int, n: int) -> None:
        asyncio.events._set_running_loop(loop)  # assume_and_start runs inside the loop
        try:
            for i in range(n):
                qpi = sched.queue.pop_nowait()
                assert qpi is not None
                host = f"node-{(b0 + i) % NODES:05d}"
                assert sched.assume_and_start(fw, CycleState(), qpi, host, 0.0) is None
        finally:
            asyncio.events._set_running_loop(None)

    def update(chunk: list[Any], bound: dict[str, Any]) -> None:
        for p in chunk:
            sched._on_pod_update(p, bound[p["metadata"]["name"]])

    gc.collect()
    gc.freeze()
    gc.disable()
    best = {"add": float("inf"), "assume": float("inf"), "bind": float("inf"), "update": float("inf")}
    for b0 in range(0, pods, batch):
        chunk = created[b0 : b0 + batch]
        t0 = time.process_time()
        call("add")(add, chunk)
        t1 = time.process_time()
        call("assume")(assume, b0, len(chunk))
        t2 = time.process_time()
        call("bind")(loop.run_until_complete, drain())
        t3 = time.process_time()
        names = {p["metadata"]["name"] for p in chunk}
        bound = {
            o["metadata"]["name"]: o
            for o in loop.run_until_complete(listed())
            if o["metadata"]["name"] in names
        }
        t4 = time.process_time()
        call("update")(update, chunk, bound)
        t5 = time.process_time()
        n = len(chunk) / 1e6
        for k, v in (("add", t1 - t0), ("assume", t2 - t1), ("bind", t3 - t2), ("update", t5 - t4)):
            best[k] = min(best[k], v / n)
    assert not sched.cache.assumed_pod_keys()
    loop.run_until_complete(sched.recorder.flush())
    gc.enable()
    h = hashlib.sha256()
    for name in sorted(sched.cache.nodes):
        ni = sched.cache.nodes[name]
        h.update(f"{name}:{[(p.key, p.node_name) for p in ni.pods]};".encode())
    for fam in registry.collect():
        for s in fam.samples:
            if not s.name.endswith("_created") and "duration" not in s.name:
                h.update(f"{s.name}{sorted(s.labels.items())}={s.value};".encode())
    h.update(repr(sorted(events)).encode())

    async def teardown() -> None:
        await sched.recorder.stop()
        await cp.stop()

    loop.run_until_complete(teardown())
    loop.close()
    return best, h.hexdigest()[:12]


def main(argv: list[str]) -> None:
    if "--pairs" in argv:
        from bench.micro.alternating import run_pairs

        run_pairs(__file__, argv)
        return
    batch = 500
    if "--batch" in argv:
        i = argv.index("--batch")
        batch = int(argv[i + 1])
        del argv[i : i + 2]
    ir: frozenset[str] = frozenset()
    for a in [a for a in argv if a.startswith("--ir")]:
        argv.remove(a)
        ir = frozenset(a[5:].split(",")) if a.startswith("--ir=") else frozenset(SECTIONS)
    pods = int(argv[0]) if argv else 6000
    best, digest = run(pods, batch, ir)
    parts = "  ".join(f"{k} {v:.2f}" for k, v in best.items())
    print(f"µs CPU per pod: {parts}  sum {sum(best.values()):.2f}  digest {digest}")


if __name__ == "__main__":
    main(sys.argv[1:])
