"""The scheduler's per-member work of a big gang after its search (a script, not a test):

    python -m bench.micro.bigbind_cpu                         # a gang of 2,000 on 2,000 nodes
    python -m bench.micro.bigbind_cpu 5000                    # a gang of 5,000 on 5,000 nodes
    python -m bench.micro.bigbind_cpu 2000 --pairs OLD_TREE NEW_TREE --rounds 3

A control plane running the scheduler only; ``N`` nodes, one gang PodGroup of ``N`` StatefulSet
pods (minCount ``N``), created through the API. Once the PodGroup cycle's search has placed the
gang, the micro takes the process's CPU (``time.process_time``) of what the scheduler does per
member afterwards, in microseconds per member:

* ``submit``: ``PodGroupCycle._submit_success`` (assume, Reserve, Permit, the binding task's
  start, for every member; the PodGroup's condition write, once);
* ``bind``: every step of every member's ``Scheduler._binding_cycle`` (WaitOnPermit, PreBind,
  Bind, the ``Scheduled`` Event's enqueue, the metrics, ``finish_binding``), **less** the
  ``pods/binding`` request through the in-process client (the API server's write, bindapi's);
* ``confirm``: ``Scheduler._on_pod_update`` for the bound pods coming back (the informer's
  delivery before it is not counted);
* ``sched``: the sum, the scheduler's side; ``window``: the whole process from the submit's
  start to the last confirmation (the API writes, the Event creates, the watches included).

A step is timed from its resumption to its suspension (``_Steps``), so a task's own CPU is
counted, never another task's that ran while it waited. The pieces exist under these names in
every tree since session 14, so two builds are compared on the same cut. Also printed: a digest
of the members' hosts and the scheduler's metric samples (two builds that behave alike print
the same digest).

``direct`` (``python -m bench.micro.bigbind_cpu 5000 direct``): the same three parts without the
plane's scheduler loop or its search: a :class:`~scheduler.scheduler.Scheduler` whose handlers
are called by hand assumes the gang's members on nodes round-robin (``assume_and_bind``, as the
PodGroup cycle's submit does), waits for its binding tasks and is fed the bound pods, with the
cyclic collector off (what the code does, not where the collector's passes happen to land);
``young`` is the GC-tracked objects left per member.

``--pairs A B``: runs this script against source trees A and B alternately (``PYTHONPATH``),
``--rounds`` times each, and prints each run's line.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from gangplane.controlplane import GC_THRESHOLD  # the plane's own collector thresholds

NS = "default"


class _Acc:
    def __init__(self) -> None:
        self.cpu = 0.0
        self.calls = 0


class _Steps:
    """Awaits ``coro`` adding the CPU of each of its steps (resumption to suspension) to ``acc``."""

    def __init__(self, coro: Coroutine[Any, Any, Any], acc: _Acc) -> None:
        self.coro = coro
        self.acc = acc

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, acc = self.coro, self.acc
        acc.calls += 1
        value: Any = None
        exc: BaseException | None = None
        while True:
            t = time.process_time()
            try:
                out = coro.throw(exc) if exc is not None else coro.send(value)
            except StopIteration as e:
                acc.cpu += time.process_time() - t
                return e.value
            except BaseException:
                acc.cpu += time.process_time() - t
                raise
            acc.cpu += time.process_time() - t
            exc = None
            try:
                value = yield out
            except BaseException as e:  # thrown in by the task (cancellation): pass it on
                value, exc = None, e


def _stepped(fn: Callable[..., Coroutine[Any, Any, Any]], acc: _Acc) -> Callable[..., Any]:
    async def wrapper(*a: Any, **kw: Any) -> Any:
        return await _Steps(fn(*a, **kw), acc)

    return wrapper


def _timed(fn: Callable[..., Any], acc: _Acc, last: list[float] | None = None) -> Callable[..., Any]:
    def wrapper(*a: Any, **kw: Any) -> Any:
        t = time.process_time()
        try:
            return fn(*a, **kw)
        finally:
            now = time.process_time()
            acc.cpu += now - t
            acc.calls += 1
            if last is not None:
                last[0] = now

    return wrapper


def _pods(size: int) -> list[dict[str, Any]]:
    from bench.workloads.common import pod

    owner = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "g", "uid": "g-uid", "controller": True}
    ]
    out = []
    for i in range(size):
        p = pod(f"g-{i}", NS, labels={"app": "g", "apps.kubernetes.io/pod-index": str(i)})
        p["metadata"]["ownerReferences"] = owner
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        out.append(p)
    return out


def _seeded_scheduler(ctx: Any) -> Any:
    """The plane's scheduler with its tie-breaking fixed."""
    from scheduler.component import new_scheduler

    return new_scheduler(ctx, seed=1)


async def measure(members: int) -> str:
    from apiserver.client.interface import EVENTS, NODES, PODGROUPS, PODS
    from apiserver.server.localclient import LocalClient
    from bench.workloads.common import node, start_plane
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler

    submit, bind, api, confirm, window = _Acc(), _Acc(), _Acc(), _Acc(), _Acc()
    first: list[float] = []
    last = [0.0]
    orig_submit = PodGroupCycle._submit_success

    async def submit_success(self: PodGroupCycle, *a: Any, **kw: Any) -> None:
        first.append(time.process_time())
        await _Steps(orig_submit(self, *a, **kw), submit)

    PodGroupCycle._submit_success = submit_success  # type: ignore[method-assign]
    Scheduler._binding_cycle = _stepped(Scheduler._binding_cycle, bind)  # type: ignore[method-assign]
    Scheduler._on_pod_update = _timed(Scheduler._on_pod_update, confirm, last)  # type: ignore[method-assign]
    orig_sub = LocalClient.create_subresource

    def create_subresource(self: LocalClient, gvr: Any, name: str, sub: str, *a: Any, **kw: Any) -> Any:
        coro = orig_sub(self, gvr, name, sub, *a, **kw)
        return _Steps(coro, api) if sub == "binding" else coro

    LocalClient.create_subresource = create_subresource  # type: ignore[assignment,method-assign]

    cp = await start_plane([])
    cp.register("scheduler", _seeded_scheduler)
    client = cp.client("bench")
    for i in range(members):
        await client.create(NODES, node(i, racks=max(1, members // 100)))
    await cp.start_component("scheduler")
    sched = cp.components["scheduler"]
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": NS},
        "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
    }
    await client.create(PODGROUPS, pg, NS)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    pods = _pods(members)
    for p in pods[:-1]:
        await client.create(PODS, p, NS)
    confirm.cpu, confirm.calls = 0.0, 0  # the held members' own updates (none expected)
    await client.create(PODS, pods[-1], NS)
    while not first or sched.cache.assumed_pod_keys() or sched._binding_tasks:
        await asyncio.sleep(0.02)
    window.cpu = last[0] - first[0]
    hosts = [p["spec"].get("nodeName", "") for p in (await client.list(PODS, NS))["items"]]
    assert len(hosts) == members and all(hosts), "a member is not bound"
    await sched.recorder.flush()
    reasons = Counter(e.get("reason") for e in (await client.list(EVENTS, NS))["items"])
    # the hosts themselves vary from run to run (ties); how many members each node took does not
    shape = sorted(Counter(Counter(hosts).values()).items())
    hd = hashlib.sha256(repr((shape, sorted(reasons.items()))).encode()).hexdigest()[:8]
    h = hashlib.sha256()
    for fam in cp.metrics_registry.collect():
        if not fam.name.startswith("scheduler_") or "duration" in fam.name or "latency" in fam.name:
            continue
        for s in fam.samples:
            if not s.name.endswith(("_created", "_sum", "_bucket")):
                h.update(f"{s.name}{sorted(s.labels.items())}={s.value};".encode())
                if os.environ.get("BIGBIND_DEBUG"):
                    print(s.name, sorted(s.labels.items()), s.value)
    await cp.stop()
    us = 1e6 / members
    sched_cpu = submit.cpu + bind.cpu - api.cpu + confirm.cpu
    return (
        f"submit {submit.cpu * us:.1f} bind {(bind.cpu - api.cpu) * us:.1f} (api {api.cpu * us:.1f}) "
        f"confirm {confirm.cpu * us:.1f} sched {sched_cpu * us:.1f} window {window.cpu * us:.1f} "
        f"us/member  calls {bind.calls}/{api.calls}/{confirm.calls} hosts+events {hd} metrics {h.hexdigest()[:8]}"
    )


async def queued_gang(members: int) -> tuple[Any, Any, list[dict[str, Any]], list[Any]]:
    """A plane with a Scheduler fed by hand (not by informers): ``members`` nodes, one gang
    PodGroup of ``members`` and its pods created and queued, every member popped as the PodGroup
    cycle pops them. The plane, the scheduler, the created pods and the queued members."""
    from bench.workloads.common import start_plane
    from scheduler.scheduler import Scheduler

    cp = await start_plane([])
    sched = Scheduler(cp.client("kube-scheduler"), seed=1)
    pods, queued = await feed_gang(sched, members)
    return cp, sched, pods, queued


async def feed_gang(sched: Any, members: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """Feed ``sched`` by hand: ``members`` nodes into its cache, one gang PodGroup of ``members``
    and its pods created through its client and handed to its handlers, every member popped as
    the PodGroup cycle pops them. The created pods and the queued members."""
    from apiserver.client.interface import PODGROUPS, PODS
    from bench.workloads.common import node

    client = sched.client
    for i in range(members):
        sched.cache.add_node(node(i))
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": NS},
        "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
    }
    sched._on_pod_group_add(await client.create(PODGROUPS, pg, NS))
    pods = [await client.create(PODS, p, NS) for p in _pods(members)]
    for p in pods:
        sched._on_pod_add(p)
    first = sched.queue.pop_nowait()
    assert first is not None
    queued = [first, *sched.queue.pop_group_members(f"{NS}/g", exclude=first.uid)]
    assert len(queued) == members
    return pods, queued


async def direct(members: int) -> str:
    from apiserver.server.localclient import LocalClient
    from bench.workloads.common import bound_pod
    from scheduler.framework import CycleState
    from scheduler.scheduler import Scheduler

    bind, api = _Acc(), _Acc()
    Scheduler._binding_cycle = _stepped(Scheduler._binding_cycle, bind)  # type: ignore[method-assign]
    orig_sub = LocalClient.create_subresource

    def create_subresource(self: LocalClient, *a: Any, **kw: Any) -> Any:
        return _Steps(orig_sub(self, *a, **kw), api)

    LocalClient.create_subresource = create_subresource  # type: ignore[method-assign]
    cp, sched, pods, queued = await queued_gang(members)
    fw = sched.frameworks["default-scheduler"]
    gc.collect()
    gc.freeze()
    gc.disable()
    young = gc.get_count()[0]
    start = time.perf_counter()
    t = time.process_time()
    for i, q in enumerate(queued):
        assert await sched.assume_and_bind(fw, CycleState(), q, f"node-{i:05d}", start)
    submit = time.process_time() - t
    await sched.wait_idle()
    bound = [bound_pod(p, sched.cache.get_pod(p)["spec"]["nodeName"], 10**6 + i) for i, p in enumerate(pods)]
    t = time.process_time()
    for old, new in zip(pods, bound, strict=True):
        sched._on_pod_update(old, new)
    confirm = time.process_time() - t
    assert not sched.cache.assumed_pod_keys()
    left = (gc.get_count()[0] - young) / members
    gc.enable()
    await sched.recorder.stop()
    await cp.stop()
    us = 1e6 / members
    own = bind.cpu - api.cpu
    return (
        f"submit {submit * us:.2f} bind {own * us:.2f} (api {api.cpu * us:.2f}) confirm {confirm * us:.2f} "
        f"sched {(submit + own + confirm) * us:.2f} us/member  young {left:.1f}/member"
    )


def main(argv: list[str]) -> None:
    args: list[Any] = list(argv)
    if "--pairs" in args:
        from bench.micro.alternating import run_pairs  # the parent's only: see its docstring

        run_pairs(__file__, args)
        return
    members = int(args[0]) if args else 2000
    print(asyncio.run(direct(members) if "direct" in args else measure(members)))


if __name__ == "__main__":
    main(sys.argv[1:])
