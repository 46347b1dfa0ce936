"""CPU per Event end to end, by how the plane records them (a script, not a pytest test)::

    python -m bench.micro.event_cpu [--n 3000] [--rounds 3] [--profile SCENARIO]
    python bench/micro/event_cpu.py --pairs BASE NEW [--n 3000] [--rounds 3]

Every scenario writes ``n`` Events (a kubelet's ``Pulled``, ``Created``, ``Started`` of a pod's
container, three per pod, as the node agent queues them) through ``EventRecorder`` into an
in-process API server, under the cyclic-collector settings the bench and ``gangplane serve`` use,
and prints ``time.process_time`` per Event from the first ``event_ref`` until every recorder has
flushed:

* ``stub``: one recorder whose client stores nothing (the recorder's own work: queue, task,
  correlator, body, name);
* ``stub-object``: ``stub`` recording about the pod *objects* (``recorder.event(pod, ...)``, as the
  controllers and the scheduler record: the recorder takes the object reference itself);
* ``backlog``: one recorder, all Events queued before its task runs (a backlog drained without
  waiting: what ``storepath.py``'s ``events`` measures);
* ``per-node``: one recorder per node, as the node agent keeps one per simulated kubelet
  (``NodeAgent._recorder``), each of which has recorded one Event about its node beforehand (not
  measured: its task exists and waits, as after a node's registration), one pod per node; the
  pods' Events are queued one pod per event-loop step (the agent's worker yields between
  syncs), so each recorder wakes for its three;
* ``per-node-watched``: ``per-node`` with a ``kubectl get events -w``-like watcher on core/v1
  Events (a watch of all namespaces through the in-process client) that reads each one.
* ``stub-gangset`` (session 18): the Events of gangs-1000x3, eight per gang set of three pods, as
  its components queue them: the controller manager's recorder ``recorder.event(sts, ...)``
  for ``WorkloadCreated``, ``PodGroupCreated`` and three ``SuccessfulCreate`` about the set, the
  scheduler's ``event_ref`` of each pod's reference for ``Scheduled``; a set's Events queued in
  one event-loop step; the client stores nothing (the recorders' own work);
* ``gangset``: ``stub-gangset`` into a bare in-process API server.

``--profile SCENARIO`` runs one scenario under cProfile and prints its top functions.

``--census`` counts the objects the cyclic collector tracks that ``per-node``'s Events leave
behind (``gc.get_objects`` after a full collection, before and after), per Event, by type.

``--plane NODES`` runs gang-1x1000-running's workload (a ``NODES``-replica gang StatefulSet on
``NODES`` node-agent nodes, create -> all Running) and reports, for its measured phase, the CPU
inside the API server's creates of core/v1 Events (a ``process_time`` accumulator around
``GenericStore.create``, about 1 µs of its own per call) and the collector passes that ran inside
them; compare with ``create_cpu``'s ``event`` taken in the same minutes.
``--gang-steps SETS`` (session 19) runs gangs-SETSx3's workload (5,000 nodes, in-process) and
reports, for its measured phase, the median per Event of: a recorder task's step (each resumption
of ``EventRecorder._run``: finishing the previous write and correlating, naming and building the
next, up to the client's turn), the ``GenericStore.create`` inside it, ``correlate``, the naming
inside ``correlate``, and the producers' ``event``/``event_ref`` calls; medians of
``time.perf_counter`` spans (a step does no I/O, so its wall span is its CPU unless the machine
preempted it: the medians drop those). Compare with ``stub-gangset``/``gangset`` and
``create_cpu``'s ``event``: the same code runs 2-6x slower in the plane, where each Event's step
finds its code and data cold (one Event per recorder per loop pass, thousands of other steps between).
``--pairs BASE NEW`` runs this file with each tree first on ``PYTHONPATH``, alternating, in fresh
processes, ``--rounds`` times, and prints the minimum and median per scenario and their ratio.
Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from typing import Any

SORT = os.environ.get("EVENT_CPU_SORT", "tottime")
SCENARIOS = ("stub", "stub-object", "backlog", "per-node", "per-node-watched", "stub-gangset", "gangset")
REASONS = (
    ("Pulled", 'Container image "registry.k8s.io/pause:3.9" already present on machine'),
    ("Created", "Created container: c"),
    ("Started", "Started container c"),
)


def _ref(i: int) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "namespace": "bench",
        "name": f"gang-0-{i}",
        "uid": f"00000000-0000-4000-8000-{i:012d}",
        "apiVersion": "v1",
        "resourceVersion": str(1000 + i),
        "fieldPath": "spec.containers{c}",
    }


def _pod(ref: dict[str, Any]) -> dict[str, Any]:
    """The pod ``ref`` names, as an informer holds it (what ``recorder.event`` is given)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": ref["name"],
            "namespace": ref["namespace"],
            "uid": ref["uid"],
            "resourceVersion": ref["resourceVersion"],
            "labels": {"app": "gang-0"},
        },
        "spec": {"nodeName": "node-0"},
    }


def _gang_set(i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Gang set ``i`` of gangs-1000x3 and its three pods' references, as its components hold them."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"gang-{i}",
            "namespace": "bench",
            "uid": f"10000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(5000 + i),
            "labels": {"app": f"gang-{i}"},
        },
        "spec": {"replicas": 3},
    }
    pods = [
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "name": f"gang-{i}-{j}",
            "uid": f"20000000-0000-4000-8000-{3 * i + j:012d}",
            "resourceVersion": str(9000 + 3 * i + j),
            "namespace": "bench",
        }
        for j in range(3)
    ]
    return sts, pods


def _queue_gang_set(ctrl: Any, sched: Any, sts: dict[str, Any], pods: list[dict[str, Any]]) -> None:
    """The eight Events of one gang set, queued as the StatefulSet controller and the scheduler do."""
    name = sts["metadata"]["name"]
    ctrl.event(sts, "Normal", "WorkloadCreated", f"Created Workload {name} for StatefulSet bench/{name}")
    ctrl.event(sts, "Normal", "PodGroupCreated", f"Created PodGroup {name} for StatefulSet bench/{name}")
    for pod in pods:
        ctrl.event(
            sts, "Normal", "SuccessfulCreate", f"create Pod {pod['name']} in StatefulSet {name} successful"
        )
    for j, pod in enumerate(pods):
        sched.event_ref(
            dict(pod), "Normal", "Scheduled", f"Successfully assigned bench/{pod['name']} to node-{j}"
        )


class _StubClient:
    """Takes every write and stores nothing."""

    async def create(self, *args: Any, **kw: Any) -> dict[str, Any]:
        return {}

    async def patch(self, *args: Any, **kw: Any) -> dict[str, Any]:
        return {}


async def _scenario(scenario: str, n: int, prof: cProfile.Profile | None = None) -> float:
    """CPU seconds of ``n`` Events of ``scenario`` in this process."""
    from apiserver.client.events import EventRecorder
    from apiserver.client.interface import EVENTS, NAMESPACES
    from gangplane.controlplane import GC_THRESHOLD, ControlPlane

    pods = n // 3 + (1 if n % 3 else 0)
    cp = None
    watch_task = None
    if scenario.startswith("stub"):
        client: Any = _StubClient()
    else:
        cp = ControlPlane()
        client = cp.client("bench")
        await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
    seen = 0
    done = asyncio.Event()
    if scenario == "per-node-watched":
        assert cp is not None

        async def watch() -> None:
            nonlocal seen
            async for ev in cp.client("watcher").watch(EVENTS, "", read_only=True):
                if ev.type == "ADDED":
                    seen += 1
                    if seen >= n:
                        done.set()

        watch_task = asyncio.create_task(watch())
        await asyncio.sleep(0.05)
    if scenario.endswith("gangset"):
        recorders = [
            EventRecorder(client, "statefulset-controller"),
            EventRecorder(client, "default-scheduler"),
        ]
    elif scenario in ("stub", "stub-object", "backlog"):
        recorders = [EventRecorder(client, "kubelet", host="node-0")]
    else:
        recorders = [EventRecorder(client, "kubelet", host=f"node-{i}") for i in range(pods)]
    if len(recorders) > 1:
        # as in the plane, every kubelet has recorded about its node before pods come (its
        # registration's Events): its task exists and waits, its caches hold an entry
        for i, rec in enumerate(recorders):
            node = {"kind": "Node", "name": f"node-{i}", "uid": f"node-{i}", "apiVersion": "v1"}
            rec.event_ref(node, "Normal", "Starting", "Starting kubelet.")
        for rec in recorders:
            await rec.flush()
    sets = [_gang_set(i) for i in range(n // 8 + (1 if n % 8 else 0))] if scenario.endswith("gangset") else []
    refs = [_ref(i) for i in range(pods)] if not sets else []
    objects = [_pod(r) for r in refs] if scenario == "stub-object" else []
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    if prof is not None:
        prof.enable()
    t = time.process_time()
    written = 0
    for sts, set_pods in sets:
        # n rounded up to whole sets (the µs per Event divide by n)
        _queue_gang_set(recorders[0], recorders[1], sts, set_pods)
        await asyncio.sleep(0)
    for i in range(pods if not sets else 0):
        rec = recorders[i % len(recorders)]
        for reason, message in REASONS[: min(3, n - written)]:
            if objects:
                rec.event(objects[i], "Normal", reason, message)
            else:
                rec.event_ref(dict(refs[i]), "Normal", reason, message)
            written += 1
        if scenario != "backlog":
            await asyncio.sleep(0)
    for rec in recorders:
        await rec.flush()
    if watch_task is not None:
        await done.wait()
    cpu = time.process_time() - t
    if prof is not None:
        prof.disable()
    gc.unfreeze()
    for rec in recorders:
        await rec.stop()
    if watch_task is not None:
        watch_task.cancel()
    if cp is not None:
        await cp.stop()
    return cpu


async def census(n: int) -> dict[str, float]:
    """GC-tracked objects left per Event by ``per-node``'s Events, by type (the largest)."""
    from collections import Counter

    from apiserver.client.events import EventRecorder
    from apiserver.client.interface import NAMESPACES
    from gangplane.controlplane import ControlPlane

    cp = ControlPlane()
    client = cp.client("bench")
    await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
    pods = n // 3
    recorders = [EventRecorder(client, "kubelet", host=f"node-{i}") for i in range(pods)]
    for i, rec in enumerate(recorders):
        rec.event_ref(
            {"kind": "Node", "name": f"node-{i}", "uid": f"node-{i}"},
            "Normal",
            "Starting",
            "Starting kubelet.",
        )
    for rec in recorders:
        await rec.flush()
    gc.collect()
    before = Counter(type(o).__name__ for o in gc.get_objects())
    for i in range(pods):
        for reason, message in REASONS:
            recorders[i].event_ref(_ref(i), "Normal", reason, message)
        await asyncio.sleep(0)
    for rec in recorders:
        await rec.flush()
    gc.collect()
    left = Counter(type(o).__name__ for o in gc.get_objects()) - before
    out = {"tracked_per_event": sum(left.values()) / (3 * pods)}
    for name, count in left.most_common(6):
        out[name] = count / (3 * pods)
    for rec in recorders:
        await rec.stop()
    await cp.stop()
    return out


async def plane(nodes: int) -> dict[str, float]:
    """CPU per core/v1 Event create inside gang-1x1000-running's measured phase (see the docstring)."""
    from apiserver.registry.generic import GenericStore
    from bench.runner import server_gc
    from bench.workloads import statefulsets
    from bench.workloads.common import Env

    acc = {"on": False, "in": False, "cpu": 0.0, "n": 0, "gc_in": 0, "gc": 0, "gc_start": 0.0, "gc_cpu": 0.0}
    general = GenericStore.create

    def create(self: Any, rd: Any, ns: str, body: Any, opts: Any = None) -> Any:
        if rd.plural != "events" or rd.group or not acc["on"]:
            return general(self, rd, ns, body, opts)
        acc["in"] = True
        t = time.process_time()
        try:
            return general(self, rd, ns, body, opts)
        finally:
            acc["in"] = False
            acc["cpu"] += time.process_time() - t
            acc["n"] += 1

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            acc["gc_start"] = time.process_time()
        elif acc["on"]:
            acc["gc"] += 1
            acc["gc_cpu"] += time.process_time() - acc["gc_start"]
            acc["gc_in"] += acc["in"]

    env = Env()
    start, stop = env.start_cpu, env.stop_cpu

    def start_cpu() -> None:
        acc["on"] = True
        start()

    def stop_cpu(pods: int = 0) -> None:
        acc["on"] = False
        stop(pods)

    env.start_cpu, env.stop_cpu = start_cpu, stop_cpu  # type: ignore[method-assign]
    GenericStore.create = create  # type: ignore[method-assign]
    gc.callbacks.append(collected)
    try:
        params = {"nodes": nodes, "racks": 10, "sets": 1, "replicas": nodes, "gang": True, "node_agent": True}
        with server_gc():
            await statefulsets.run(params, env)
    finally:
        GenericStore.create = general  # type: ignore[method-assign]
        gc.callbacks.remove(collected)
    n = max(1, int(acc["n"]))
    return {
        "event_creates": acc["n"],
        "us_per_event_create": acc["cpu"] / n * 1e6,
        "gc_passes_in_phase": acc["gc"],
        "gc_ms_in_phase": acc["gc_cpu"] * 1e3,
        "gc_passes_inside_event_creates": acc["gc_in"],
        "phase_cpu_s": env.cpu_s or 0.0,
    }


class _TimedSteps:
    """Wraps a coroutine: the ``perf_counter`` span of every step (``send``) while ``on[0]``."""

    def __init__(self, coro: Any, spans: list[float], on: list[bool]) -> None:
        self.coro, self.spans, self.on = coro, spans, on

    def __await__(self) -> Any:
        return self

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        t = time.perf_counter()
        try:
            return self.coro.send(value)
        finally:
            if self.on[0]:
                self.spans.append(time.perf_counter() - t)

    def throw(self, *args: Any) -> Any:
        return self.coro.throw(*args)

    def close(self) -> Any:
        return self.coro.close()


async def gang_steps(sets: int) -> dict[str, float]:
    """Median µs per Event of the recorder's steps and their parts in gangs-``sets``x3 (see the docstring)."""
    from apiserver.client.eventcorrelator import EventCorrelator
    from apiserver.client.events import EventRecorder
    from apiserver.registry.generic import GenericStore
    from bench.runner import server_gc
    from bench.workloads import statefulsets
    from bench.workloads.common import Env

    on = [False]
    spans: dict[str, list[float]] = {
        k: [] for k in ("step", "create", "correlate", "naming", "event", "event_ref")
    }
    saved = {
        (GenericStore, "create"): GenericStore.create,
        (EventCorrelator, "correlate"): EventCorrelator.correlate,
        (EventRecorder, "_run"): EventRecorder._run,
        (EventRecorder, "event"): EventRecorder.event,
        (EventRecorder, "event_ref"): EventRecorder.event_ref,
    }
    pc = time.perf_counter
    inner = [0]  # ``event`` calls ``event_ref``: only the outer call is timed

    def create(self: Any, rd: Any, *args: Any, **kw: Any) -> Any:
        if not on[0] or rd.plural != "events" or rd.group:
            return saved[(GenericStore, "create")](self, rd, *args, **kw)
        t = pc()
        try:
            return saved[(GenericStore, "create")](self, rd, *args, **kw)
        finally:
            spans["create"].append(pc() - t)

    def correlate(self: Any, ref: Any, etype: str, reason: str, msg: str, now: float, new_name: Any) -> Any:
        def naming() -> str:
            t = pc()
            try:
                return str(new_name())
            finally:
                if on[0]:
                    spans["naming"].append(pc() - t)

        t = pc()
        try:
            return saved[(EventCorrelator, "correlate")](self, ref, etype, reason, msg, now, naming)
        finally:
            if on[0]:
                spans["correlate"].append(pc() - t)

    async def run(self: Any) -> None:
        await _TimedSteps(saved[(EventRecorder, "_run")](self), spans["step"], on)

    def producer(name: str) -> Any:
        general = saved[(EventRecorder, name)]

        def call(self: Any, *args: Any, **kw: Any) -> Any:
            if not on[0] or inner[0]:
                return general(self, *args, **kw)
            inner[0] += 1
            t = pc()
            try:
                return general(self, *args, **kw)
            finally:
                spans[name].append(pc() - t)
                inner[0] -= 1

        return call

    env = Env()
    start, stop = env.start_cpu, env.stop_cpu

    def start_cpu() -> None:
        on[0] = True
        start()

    def stop_cpu(pods: int = 0) -> None:
        on[0] = False
        stop(pods)

    env.start_cpu, env.stop_cpu = start_cpu, stop_cpu  # type: ignore[method-assign]
    patched = {
        (GenericStore, "create"): create,
        (EventCorrelator, "correlate"): correlate,
        (EventRecorder, "_run"): run,
        (EventRecorder, "event"): producer("event"),
        (EventRecorder, "event_ref"): producer("event_ref"),
    }
    for (cls, attr), fn in patched.items():
        setattr(cls, attr, fn)
    try:
        params = {"nodes": 5000, "racks": 50, "sets": sets, "replicas": 3, "gang": True}
        with server_gc():
            await statefulsets.run(params, env)
    finally:
        for (cls, attr), fn in saved.items():
            setattr(cls, attr, fn)
    out: dict[str, float] = {"phase_cpu_ms_per_set": (env.cpu_s or 0.0) * 1e3 / sets}
    for k, v in spans.items():
        out[f"{k}_per_set"] = len(v) / sets
        out[f"{k}_median_us"] = statistics.median(v) * 1e6 if v else 0.0
    return out


def run(n: int, profile: str) -> dict[str, float]:
    """µs of CPU per Event, per scenario (one fresh event loop each)."""
    out: dict[str, float] = {}
    for scenario in SCENARIOS:
        if profile and scenario != profile:
            continue
        prof = cProfile.Profile() if profile else None
        cpu = asyncio.run(_scenario(scenario, n, prof))
        if prof is not None:
            pstats.Stats(prof).sort_stats(SORT).print_stats(45)
        out[scenario] = cpu / n * 1e6
    return out


def pairs(trees: list[str], n: int, rounds: int) -> None:
    """Alternate the trees in fresh processes; print min / median µs per Event and NEW/BASE."""
    results: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    for _ in range(rounds):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--n", str(n), "--json"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=900,
            )
            for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                results[tree].setdefault(k, []).append(v)
    base, new = trees
    print(f"µs CPU per Event, n={n}, {rounds} rounds (min / median)")
    for k in SCENARIOS:
        a, b = results[base].get(k, []), results[new].get(k, [])
        if a and b:
            print(
                f"{k:18} {min(a):7.1f} / {statistics.median(a):7.1f}   {min(b):7.1f} / "
                f"{statistics.median(b):7.1f}   {min(b) / min(a):.2f} ({statistics.median(b) / statistics.median(a):.2f})"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", default="", choices=("", *SCENARIOS))
    ap.add_argument("--pairs", nargs=2, metavar=("BASE", "NEW"))
    ap.add_argument("--json", action="store_true", help="one JSON line (for --pairs)")
    ap.add_argument("--census", action="store_true", help="GC-tracked objects left per Event")
    ap.add_argument("--plane", type=int, default=0, metavar="NODES", help="Event creates inside the plane")
    ap.add_argument(
        "--gang-steps", type=int, default=0, metavar="SETS", help="recorder steps in gangs-SETSx3"
    )
    args = ap.parse_args()
    if args.gang_steps:
        for _ in range(args.rounds):
            got = asyncio.run(gang_steps(args.gang_steps))
            print("  ".join(f"{k} {v:.2f}" for k, v in got.items()), flush=True)
        return
    if args.census or args.plane:
        out = asyncio.run(census(args.n) if args.census else plane(args.plane))
        print("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items()))
        return
    if args.pairs:
        pairs(args.pairs, args.n, args.rounds)
        return
    if args.json:
        print(json.dumps(run(args.n, "")))
        return
    best: dict[str, list[float]] = {}
    for _ in range(args.rounds if not args.profile else 1):
        for k, v in run(args.n, args.profile).items():
            best.setdefault(k, []).append(v)
    for k, runs in best.items():
        print(f"{k:18} min {min(runs):7.1f} µs/Event, median {statistics.median(runs):7.1f}")


if __name__ == "__main__":
    main()
