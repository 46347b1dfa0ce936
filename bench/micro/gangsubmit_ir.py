"""A big gang's submit and binding cycles for callgrind (a script, not a test):

    cd /tmp && PYTHONHASHSEED=0 PYTHONPATH=TREE valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=_operator_call python TREE/bench/micro/gangsubmit_ir.py 500 [noapi]

The direct setup of :mod:`bench.micro.bigbind_cpu` (a Scheduler fed by hand, one gang of N on N
nodes), then ``assume_and_bind`` for every member and the binding tasks run to their end, inside
``operator.call`` so that callgrind collects that section only (instruction counts: noise-free on
a shared machine). ``noapi`` stubs the ``pods/binding`` call and the Event writes, leaving the
scheduler's side. Prints the GC-tracked objects left per member.
"""

import asyncio
import gc
import sys
import time

from bench.micro.bigbind_cpu import queued_gang


async def setup(members):
    cp, sched, _, queued = await queued_gang(members)
    return cp, sched, queued


async def section(sched, queued):
    from scheduler.framework import CycleState

    fw = sched.frameworks["default-scheduler"]
    start = time.perf_counter()
    for i, q in enumerate(queued):
        assert await sched.assume_and_bind(fw, CycleState(), q, f"node-{i:05d}", start)
    while sched._binding_tasks:
        await asyncio.sleep(0)


async def teardown(cp, sched):
    await sched.recorder.stop()
    await cp.stop()


def main():
    n = int(sys.argv[1])
    if "noapi" in sys.argv:
        import asyncio as _a

        from apiserver.server.localclient import LocalClient

        async def create_subresource(self, *a, **kw):
            await _a.sleep(0)
            return {}

        LocalClient.create_subresource = create_subresource
        from apiserver.client.events import EventRecorder

        async def _write(self, *a):
            return True

        EventRecorder._write = _write
    loop = asyncio.new_event_loop()
    cp, sched, queued = loop.run_until_complete(setup(n))
    gc.collect()
    gc.freeze()
    gc.disable()
    young = gc.get_count()[0]
    import operator

    operator.call(loop.run_until_complete, section(sched, queued))
    print("young/member", (gc.get_count()[0] - young) / n)
    assert not sched._binding_tasks
    gc.enable()
    loop.run_until_complete(teardown(cp, sched))
    loop.close()


if __name__ == "__main__":
    main()
