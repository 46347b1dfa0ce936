"""A big gang's ``PodGroupCycle._submit_success`` after its real search (a script, not a test):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/gangsubmit_cpu.py 5000 [--reps 3]
    cd /tmp && PYTHONHASHSEED=0 PYTHONPATH=TREE valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=_operator_call python TREE/bench/micro/gangsubmit_cpu.py 1000 --ir

The direct setup of :mod:`bench.micro.bigbind_cpu` (a Scheduler fed by hand, one gang of N on N
nodes, every member queued and popped), then the PodGroup cycle as the scheduler loop runs it
(``schedule_one_podgroup``: the snapshot update, the search with ``keep_winner``, the submit),
with ``_submit_success`` alone timed (``time.process_time`` of each of its steps; the binding
tasks it starts run afterwards and are not counted): what a 5,000-pod gang's submit costs the
serial chain of gangs-10x5000, per member, with the cyclic collector off (what the code does,
not where a collector pass lands). ``--reps R``: R fresh gangs in one process (each on a new
plane), one line each. ``--ir``: each submit step runs inside ``operator.call`` so that
callgrind collects only the submit (instruction counts, noise-free on a shared machine).

Also printed: a digest of every member's assumed host, the cache's node accounting, the
snapshot the next cycle gets, and the PodGroup's states (two builds that behave alike print
the same digest), and the GC-tracked objects left per member by the submit.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import operator
import sys
import time
from collections import Counter
from collections.abc import Generator
from typing import Any

from bench.micro.bigbind_cpu import NS, queued_gang


class _Timed:
    """Awaits ``coro`` adding the process CPU of each step (resumption to suspension) to ``acc[0]``."""

    def __init__(self, coro: Any, acc: list[float], ir: bool) -> None:
        self.coro, self.acc, self.ir = coro, acc, ir

    def __await__(self) -> Generator[Any, Any, Any]:
        value: Any = None
        send = self.coro.send
        while True:
            t = time.process_time()
            try:
                out = operator.call(send, value) if self.ir else send(value)
            except StopIteration as e:
                self.acc[0] += time.process_time() - t
                return e.value
            self.acc[0] += time.process_time() - t
            value = yield out


def _digest(sched: Any, pods: list[Any]) -> str:
    """The placement's shape (the hosts themselves vary with tie-breaking from run to run), and
    a check that the next cycle's snapshot holds exactly the cache's nodes."""
    cache = sched.cache
    hosts = Counter(cache.get_pod(p)["spec"]["nodeName"] for p in pods)
    snap = sched.snapshot
    cache.update_snapshot(snap)
    for name, ni in cache.nodes.items():
        mine = snap.node_info_map[name]
        assert [(p.key, p.node_name) for p in mine.pods] == [(p.key, p.node_name) for p in ni.pods], name
        assert (mine.requested, mine.non_zero_cpu, mine.non_zero_memory) == (
            ni.requested,
            ni.non_zero_cpu,
            ni.non_zero_memory,
        ), name
    total: Counter[str] = Counter()
    for ni in cache.nodes.values():
        total.update(ni.requested)
    st = cache.pod_group_state(NS, "g")
    facts = (
        sorted(Counter(hosts.values()).items()),
        sorted(total.items()),
        len(st.assumed),
        len(st.assigned),
        len(cache.assumed_pod_keys()),
    )
    return hashlib.sha256(repr(facts).encode()).hexdigest()[:10]


async def one(members: int, ir: bool) -> str:
    from scheduler.schedule_one_podgroup import PodGroupCycle

    cp, sched, pods, queued = await queued_gang(members)
    fw = sched.frameworks["default-scheduler"]
    pg = sched.cache.get_pod_group(NS, "g")
    for p in pods:  # the pod informer's store, which skip_pod_schedule reads (fed by hand here)
        sched.pods._items[f"{NS}/{p['metadata']['name']}"] = p
    # the queue hands the PodGroup cycle its first member; queued_gang popped the rest already
    first, rest = queued[0], queued[1:]
    sched.queue.pop_group_members = lambda key, exclude=None: rest  # type: ignore[method-assign]
    acc = [0.0]
    orig = PodGroupCycle._submit_success
    young: list[int] = []

    async def submit(self: PodGroupCycle, *a: Any, **kw: Any) -> None:
        young.append(gc.get_count()[0])
        await _Timed(orig(self, *a, **kw), acc, ir)
        young.append(gc.get_count()[0])

    PodGroupCycle._submit_success = submit  # type: ignore[method-assign]
    gc.collect()
    gc.disable()
    try:
        await sched.pod_group_cycle.schedule_one_podgroup(fw, first, pg)
    finally:
        PodGroupCycle._submit_success = orig  # type: ignore[method-assign]
    left = (young[1] - young[0]) / members
    gc.enable()
    await sched.wait_idle()
    dg = _digest(sched, pods)
    await sched.recorder.stop()
    await cp.stop()
    return f"submit {acc[0] * 1e6 / members:.2f} us/member  young {left:.1f}/member  digest {dg}"


def main(argv: list[str]) -> None:
    members = int(argv[0]) if argv and not argv[0].startswith("-") else 5000
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 1
    for _ in range(reps):
        print(asyncio.run(one(members, "--ir" in argv)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
