"""A big gang's binding tasks, their ``pods/binding`` writes and the watches' delivery, for
callgrind (a script, not a test):

    cd /tmp && PYTHONHASHSEED=0 PYTHONPATH=TREE valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=_operator_call python TREE/bench/micro/bindtask_ir.py 500 [INFORMERS]

The direct setup of :mod:`bench.micro.bigbind_cpu` (a Scheduler fed by hand, one gang of N on N
nodes; the plane's and the scheduler's clocks fake) plus the gang benches' three read-only pod informers of :mod:`bench.micro.bindfan_cpu`
(the scheduler's ``status.phase`` selector, the controller-manager's, the tracker's namespaced
one; ``INFORMERS`` of them, 3 by default: with 0 the section is the binding tasks and their
writes alone). Every member is submitted (``assume_and_bind``) with the loop not running, so that no
binding task takes a step yet; then, inside ``operator.call`` (the only section callgrind
collects: instruction counts, noise-free on a shared machine), the loop runs every binding
cycle to its end (WaitOnPermit, PreBind, the ``pods/binding`` write with its watch-cache
event, the Scheduled Event's enqueue, the metrics) and until each informer holds the last
bound pod. The Event writes are stubbed (they are another area's, and their timing would
make the section's work depend on the recorder's batching). Prints the GC-tracked objects
left per member and a digest of what the informers' handlers got (masked as bindfan_cpu's).
"""

import asyncio
import gc
import hashlib
import operator
import sys
from typing import Any

import orjson

from bench.micro.bigbind_cpu import NS, feed_gang
from bench.micro.bindfan_cpu import NON_TERMINAL_PODS, _masked


async def informers(cp: Any, namespace: str, count: int = 3) -> tuple[list[Any], list[list[Any]]]:
    from apiserver.client.informer import Informer
    from apiserver.client.interface import PODS

    out, seen = [], []
    for ns, selector in (("", NON_TERMINAL_PODS), ("", ""), (namespace, ""))[:count]:
        inf = Informer(cp.client(), PODS, ns, field_selector=selector)
        log: list[Any] = []
        seen.append(log)
        inf.add_event_handler(lambda o: None, lambda old, new, log=log: log.append(new), lambda o: None)
        inf.start()
        out.append(inf)
    for inf in out:
        await inf.wait_for_sync()
    return out, seen


async def queued_gang(members: int, count: int = 3) -> tuple[Any, Any, list[Any], list[Any], Any]:
    """bigbind_cpu's ``queued_gang`` with the informers started before the pods are created."""
    from apiserver.meta import FakeClock
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
    from scheduler.scheduler import Scheduler

    # fake clocks: the section's work must not depend on how long it takes under valgrind
    # (a new second is a new PodScheduled condition list, a new Event timestamp...)
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock()))
    default_components(cp, Fleet.empty(), "*")
    watching = await informers(cp, NS, count)
    sched = Scheduler(cp.client("kube-scheduler"), seed=1, clock=FakeClock())
    pods, queued = await feed_gang(sched, members)
    return cp, sched, pods, queued, watching


def submit(loop: asyncio.AbstractEventLoop, sched: Any, queued: list[Any]) -> None:
    """``assume_and_bind`` for every member, driven by hand: it never suspends, and the binding
    tasks it creates wait in the loop's ready queue."""
    from scheduler.framework import CycleState

    fw = sched.frameworks["default-scheduler"]
    asyncio.events._set_running_loop(loop)
    try:
        for q in queued:  # each member on the node of its index (the queue's order varies)
            host = f"node-{int(q.pod_info.name.rsplit('-', 1)[1]):05d}"
            coro = sched.assume_and_bind(fw, CycleState(), q, host, 0.0)
            try:
                coro.send(None)
            except StopIteration as e:
                assert e.value
            else:
                raise AssertionError("assume_and_bind suspended")
    finally:
        asyncio.events._set_running_loop(None)


async def section(sched: Any, infs: list[Any], last: str, ns: str) -> None:
    while sched._binding_tasks:
        await asyncio.sleep(0)
    want = set(infs)
    while want:
        for inf in list(want):
            got = inf.get_by_name(ns, last)
            if got is not None and got["spec"].get("nodeName"):
                want.discard(inf)
        await asyncio.sleep(0)


def main() -> None:
    n = int(sys.argv[1])
    from apiserver.client.events import EventRecorder

    async def _write(self: Any, *a: Any) -> bool:
        return True

    EventRecorder._write = _write  # type: ignore[method-assign]
    loop = asyncio.new_event_loop()
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cp, sched, pods, queued, (infs, seen) = loop.run_until_complete(queued_gang(n, count))
    submit(loop, sched, queued)
    ns = pods[-1]["metadata"]["namespace"]
    gc.collect()
    gc.freeze()
    gc.disable()
    young = gc.get_count()[0]
    operator.call(loop.run_until_complete, section(sched, infs, pods[-1]["metadata"]["name"], ns))
    print("young/member", (gc.get_count()[0] - young) / n)
    gc.enable()
    h = hashlib.sha256()
    for log in seen:  # sorted: the binding order follows the queue's, which varies
        h.update(b"|".join(sorted(orjson.dumps(_masked(o), option=orjson.OPT_SORT_KEYS) for o in log)))
    print("digest", h.hexdigest()[:12], [len(s) for s in seen])

    async def teardown() -> None:
        for inf in infs:
            await inf.stop()
        await sched.recorder.stop()
        await cp.stop()

    loop.run_until_complete(teardown())
    loop.close()


if __name__ == "__main__":
    main()
