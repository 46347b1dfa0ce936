"""The scheduler's handler for its own bound pods coming back (a script, not a test):

    python bench/micro/confirm_cpu.py                       # a gang of 5,000 on 5,000 nodes
    python bench/micro/confirm_cpu.py 5000 --held 4         # + 4 other gangs' members held
    python bench/micro/confirm_cpu.py 5000 --pairs OLD_TREE NEW_TREE --rounds 5

After a big gang's bindings the scheduler's pod informer delivers one update per member (the
bound revision, ``spec.nodeName`` set) and ``Scheduler._on_pod_update`` confirms each assumed
pod: ``Cache.add_pod``, the group bookkeeping, the queue's ``AssignedPod/Add`` move. In
``gangs-10x5000`` that is ~0.15-0.2 s per gang on the serial chain.

A plane with a :class:`~scheduler.scheduler.Scheduler` fed by hand (as ``bigbind_cpu.queued_gang``, but
with the informer's objects): ``N`` nodes, one gang of ``N`` members assumed round-robin and bound through the API, and
(``--held K``) ``K`` other gangs with ``N // 2`` members each held at PreEnqueue (minCount not
reached: what batch 2 of ``gangs-10x5000`` is while batch 1 is placed). The revisions fed to the
handler are the store's shared decoded ones (``read_only`` lists before and after the
bindings: what the informer delivers). Timed: the ``N`` handler calls, process CPU, the cyclic
collector off; ``blocks``: memory blocks left allocated per member. The digest covers the cache (per
node: its pods' keys and resourceVersions, the requested totals), the group states and the
queue's contents, so two trees that behave alike print the same one.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import sys
import time
from typing import Any

NS = "default"


def digest(sched: Any, bound: dict[str, Any]) -> str:
    """The scheduler's state after the handler calls; ``bound``: the bound revisions by pod key
    (resourceVersions differ from run to run: the Events' writes interleave)."""
    cache = sched.cache
    h = hashlib.sha256()
    for name in sorted(cache.nodes):
        ni = cache.nodes[name]
        pods = [(p.key, p.pod is bound.get(p.key), p.node_name) for p in ni.pods]
        h.update(
            repr((name, pods, sorted(ni.requested.items()), ni.non_zero_cpu, ni.non_zero_memory)).encode()
        )
        h.update(repr((len(ni.pods_with_affinity), len(ni.pods_with_required_anti_affinity))).encode())
    h.update(repr(sorted(cache.assumed_pod_keys())).encode())
    groups = cache.pod_groups._groups
    for key in sorted(groups):
        g = groups[key]
        h.update(
            repr((key, sorted(g.unscheduled), sorted(g.assumed.items()), sorted(g.assigned.items()))).encode()
        )
    h.update(repr(sorted(cache.pod_groups._where.items())).encode())
    q = sched.queue
    h.update(
        repr(
            (q.pending_pods(), sorted(x.key for x in q._unschedulable.values()), q.move_request_cycle)
        ).encode()
    )
    return h.hexdigest()[:10]


async def run(members: int, held: int) -> str:
    from apiserver.client.interface import PODGROUPS, PODS
    from bench.micro.bigbind_cpu import _pods
    from bench.workloads.common import node, start_plane
    from scheduler.framework import CycleState
    from scheduler.scheduler import Scheduler

    cp = await start_plane([])
    client = cp.client("kube-scheduler")
    sched = Scheduler(client, seed=1)
    for i in range(members):
        sched.cache.add_node(node(i))
    groups = [("g", members, members)] + [(f"h{k}", members, members // 2) for k in range(held)]
    for name, min_count, size in groups:
        pg = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
        }
        sched._on_pod_group_add(await client.create(PODGROUPS, pg, NS))
        for p in _pods(size):
            if name != "g":
                p["metadata"]["name"] = f"{name}-{p['metadata']['name']}"
                p["spec"]["schedulingGroup"] = {"podGroupName": name}
            await client.create(PODS, p, NS)
    # what the informer delivers: the store's shared decoded revisions
    before = {p["metadata"]["name"]: p for p in (await client.list(PODS, NS, read_only=True))["items"]}
    for p in before.values():
        sched._on_pod_add(p)
    first = sched.queue.pop_nowait()
    assert first is not None
    queued = [first, *sched.queue.pop_group_members(f"{NS}/g", exclude=first.uid)]
    assert len(queued) == members
    fw = sched.frameworks["default-scheduler"]
    start = time.perf_counter()
    # in name order: the pop order varies from run to run, and with it each member's node
    for i, q in enumerate(sorted(queued, key=lambda q: q.key)):
        assert await sched.assume_and_bind(fw, CycleState(), q, f"node-{i:05d}", start)
    await sched.wait_idle()
    after = (await client.list(PODS, NS, read_only=True))["items"]
    pairs = [(before[p["metadata"]["name"]], p) for p in after if (p.get("spec") or {}).get("nodeName")]
    assert len(pairs) == members
    gc.collect()
    gc.freeze()
    gc.disable()
    blocks = sys.getallocatedblocks()
    handler = sched._on_pod_update
    t = time.process_time()
    for old, new in pairs:
        handler(old, new)
    cpu = time.process_time() - t
    left = (sys.getallocatedblocks() - blocks) / members
    gc.enable()
    assert not sched.cache.assumed_pod_keys()
    d = digest(sched, {f"{NS}/{new['metadata']['name']}": new for _, new in pairs})
    await sched.recorder.stop()
    await cp.stop()
    return f"confirm {cpu * 1e6 / members:.2f} us/member  blocks {left:.1f}/member  digest {d}"


def main(argv: list[str]) -> None:
    args: list[Any] = list(argv)
    if "--pairs" in args:
        from bench.micro.alternating import run_pairs  # the parent's only: see its docstring

        run_pairs(__file__, args)
        return
    held = 0
    if "--held" in args:
        i = args.index("--held")
        held = int(args[i + 1])
        del args[i : i + 2]
    members = int(args[0]) if args else 5000
    print(asyncio.run(run(members, held)))


if __name__ == "__main__":
    main(sys.argv[1:])
