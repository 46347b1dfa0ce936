"""The scheduler's CPU per created gang member, from the informer's Add to the queue's answer
(a script, not a pytest-benchmark test):

    python -m bench.micro.gangqueue_cpu [GANGS] [SIZE] [ROUNDS]

A pending gang member reaching the scheduler costs ``Scheduler._on_pod_add``'s unassigned branch:
``Cache.add_unscheduled_pod`` (counted in its PodGroup) and ``SchedulingQueue.add`` (PreEnqueue,
held in unschedulablePods until ``minCount`` members exist, then the held siblings re-checked and
activated, and the ``UnscheduledPod/Add`` event). This feeds ``GANGS`` PodGroups of ``SIZE``
StatefulSet pods (``minCount`` = ``SIZE``, the PodGroup known first, as in ``gangs-1000x3``) one
member at a time and prints the process CPU per member of those adds. Between gangs, untimed, the
completed gang is popped as the PodGroup cycle does and its members bound (done, forgotten), so
the queue stays the size it has in the plane. Also prints a digest of what the queue did (each
add's sub-queue, the held pods' PreEnqueue messages, the pop order): two builds that queue alike
print the same digest. Compare builds by alternating them with ``PYTHONPATH=<tree>``.
"""

from __future__ import annotations

import gc
import hashlib
import random
import statistics
import sys
import time
from typing import Any

from bench.micro.cycle_cpu import _set_pods, _tune_gc


def _queue() -> tuple[Any, Any]:
    from featuregates import FeatureGate
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle
    from scheduler.queue import SchedulingQueue
    from scheduler.testing import FakeClock

    cache = Cache()
    handle = Handle(
        rng=random.Random(1),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        gates=FeatureGate(),  # the plane's defaults: the plugin reads them per pod
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    q = SchedulingQueue(
        fw.queue_sort_less, FakeClock(), {"default-scheduler": fw}, sort_key=fw.queue_sort_key()
    )
    fw.handle.nominator = q
    return cache, q


def run(gangs: int, size: int) -> tuple[float, str]:
    """CPU µs per member added, and the digest of the queue's answers."""
    cache, q = _queue()
    digest = hashlib.sha256()
    sets = [_set_pods(f"g{i}", size, group=True) for i in range(gangs)]
    spent = 0.0
    _tune_gc()
    for i, pods in enumerate(sets):
        name = f"g{i}"
        cache.add_pod_group(
            {
                "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
            }
        )
        t = time.process_time()
        for p in pods:
            cache.add_unscheduled_pod(p)
            q.add(p)
        spent += time.process_time() - t
        held = q.get(pods[0]["metadata"]["uid"])
        digest.update(f"{q.where(pods[0])}|{q.pending_pods()}|{held and held.gating_status}".encode())
        first = q.pop_nowait()
        members = [first] + q.pop_group_members(q.group_of(first.uid), exclude=first.uid)
        digest.update(",".join(m.uid for m in members).encode())
        for m in members:
            q.done(m.uid)
            cache.remove_unscheduled_pod(m.pod)
            q.delete(m.pod)
    gc.collect()
    return spent / (gangs * size) * 1e6, digest.hexdigest()[:12]


def report(label: str, measure: Any, argv: list[str], gangs: int, size: int) -> None:
    """``measure(gangs, size)`` (µs per member, digest) run ROUNDS times, from ``argv`` = GANGS SIZE
    ROUNDS (each optional), printed as the median and every run (the gang queue micros share it)."""
    gangs = int(argv[0]) if len(argv) > 0 else gangs
    size = int(argv[1]) if len(argv) > 1 else size
    rounds = int(argv[2]) if len(argv) > 2 else 3
    runs = [measure(gangs, size) for _ in range(rounds)]
    per = [r[0] for r in runs]
    print(
        f"{label} {gangs}x{size}: median {statistics.median(per):.2f} µs/member "
        f"(runs {', '.join(f'{x:.2f}' for x in per)}) digest {runs[0][1]}"
    )


def main() -> None:
    report("gangqueue", run, sys.argv[1:], 2000, 3)


if __name__ == "__main__":
    main()
