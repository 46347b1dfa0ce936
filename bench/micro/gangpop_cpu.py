"""The scheduler queue's pops of big gangs queued together (a script, not a test):

    python bench/micro/gangpop_cpu.py [GANGS] [SIZE] [ROUNDS]          # default 5 gangs of 5,000
    python bench/micro/gangpop_cpu.py 5 5000 --pairs BASE_TREE NEW_TREE --rounds 4

``GANGS`` PodGroups of ``SIZE`` StatefulSet pods are all in activeQ (added untimed, as when a
batch of ``gangs-10x5000``'s sets finished creating), then taken as the scheduler takes them,
gang after gang: ``pop_nowait`` (the gang's first member), ``pop_group_members`` (the rest), and
each member ``done`` (its binding over). Printed: the process CPU of those steps per member,
collector off, median of ``ROUNDS`` runs in one process, and a digest of the pop order (two
builds that pop alike print the same digest).

Why: the members a PodGroup cycle takes out at once stay in the heap as removed entries (lazy
deletion); they are the oldest, so the next gang's pop met 5,000 of them at the top and took
them out one ``heappop`` each (``queue.pop`` ~2 % of a big gang's serial chain in the plane).
``--pairs``: alternate two source trees (``bench.micro.alternating.run_pairs``); run it by path
from a neutral directory so each child imports its own tree.
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time


def run(gangs: int, size: int) -> tuple[float, str]:
    """CPU µs per member popped, and the digest of the pop order."""
    from bench.micro.cycle_cpu import _set_pods
    from bench.micro.gangqueue_cpu import _queue

    cache, q = _queue()
    for i in range(gangs):
        name = f"g{i}"
        cache.add_pod_group(
            {
                "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
            }
        )
        for p in _set_pods(name, size, group=True):
            cache.add_unscheduled_pod(p)
            q.add(p)
    digest = hashlib.sha256()
    gc.collect()
    gc.disable()
    t = time.process_time()
    popped = 0
    while True:
        first = q.pop_nowait()
        if first is None:
            break
        members = [first, *q.pop_group_members(q.group_of(first.uid), exclude=first.uid)]
        for m in members:
            q.done(m.uid)
        popped += len(members)
        digest.update(",".join(m.uid for m in members).encode())
    spent = time.process_time() - t
    gc.enable()
    assert popped == gangs * size, popped
    return spent / popped * 1e6, digest.hexdigest()[:12]


def main() -> None:
    if "--pairs" in sys.argv:
        from bench.micro.alternating import run_pairs

        run_pairs(__file__, sys.argv[1:])
        return
    from bench.micro.gangqueue_cpu import report

    report("gangpop", run, sys.argv[1:], 5, 5000)


if __name__ == "__main__":
    main()
