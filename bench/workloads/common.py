"""What the workloads share: fake fleets, control planes with chosen components, watch counters."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import NODES, PODS, Client


@contextmanager
def server_gc() -> Iterator[None]:
    """Run an in-process scenario under the cyclic-collector settings of ``gangplane serve``.

    The plane a scenario starts here shares this process, which otherwise keeps CPython's
    default thresholds (700, 10, 10): with the 5,000 nodes and thousands of pods and Events of
    a gang scenario alive, that meant a full collection every few thousand writes, each
    traversing every live object (2.3 s of the 13.8 s CPU of gangs-1000x3, 1.8 s of it in 12
    generation-2 passes), a cost the served plane does not pay. What is alive before the
    repetition is frozen out of the collector as ``serve`` freezes its start-up heap; both
    settings are undone afterwards, so the harness and the next scenario see the defaults.

    OpenBLAS is asked for no worker threads as the ``gangplane`` command asks
    (:mod:`gangplane.blas`), for a script that runs scenarios without it (``bench/micro``). That
    one is not undone: it is read once, when numpy is first imported.
    """
    from gangplane.blas import one_blas_thread
    from gangplane.controlplane import GC_THRESHOLD  # the plane's own; imported with the first plane

    one_blas_thread()
    was_enabled = gc.isenabled()
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    gc.enable()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
        if not was_enabled:
            gc.disable()


RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


@dataclass
class Env:
    """What the runner hands a workload: where to run and how to report progress.

    A workload marks its measured phase with :meth:`start_cpu` / :meth:`stop_cpu` (how many pods
    that phase placed or ran): the runner then reports ``cpu_s`` (this process's CPU seconds in
    those phases) and ``cpu_ms_per_pod``, which, unlike wall time, do not depend on how loaded
    the machine is. HTTP workloads report the server's CPU as ``server_cpu_s`` and the pods with
    :meth:`count_pods`.
    """

    #: a kubeconfig of another API server (a real cluster) for HTTP-level scenarios, else None
    kubeconfig: Path | None = None
    progress: Callable[[str], None] = lambda _msg: None
    series: dict[str, list[float]] = field(default_factory=dict)
    #: process CPU seconds of the measured phases (None: the workload marked none)
    cpu_s: float | None = None
    #: pods placed or run in the measured phases (0: the workload has no pods)
    pods: int = 0
    _cpu_start: float | None = None

    def start_cpu(self) -> None:
        self._cpu_start = time.process_time()

    def stop_cpu(self, pods: int = 0) -> None:
        if self._cpu_start is None:
            return
        self.cpu_s = (self.cpu_s or 0.0) + time.process_time() - self._cpu_start
        self._cpu_start = None
        self.pods += pods

    def count_pods(self, pods: int) -> None:
        self.pods += pods


def node(
    i: int, *, racks: int = 0, zones: int = 10, cpu: str = "32", memory: str = "128Gi", gpus: int = 0
) -> Obj:
    """A Ready fake Node (no node agent needed to schedule onto it)."""
    name = f"node-{i:05d}"
    labels = {
        "kubernetes.io/hostname": name,
        ZONE: f"zone-{i % zones}",
        "topology.kubernetes.io/region": "region-1",
    }
    if racks:
        labels[RACK] = f"rack-{i % racks}"
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(alloc),
            "allocatable": dict(alloc),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


async def create_nodes(client: Client, n: int, **kw: Any) -> None:
    for i in range(n):
        await client.create(NODES, node(i, **kw))


async def start_plane(components: list[str]) -> Any:
    """A control plane running only ``components`` (the node agent, if named, has an empty fleet).

    Every shipped component is registered, as ``gangplane serve`` does, so names are checked.
    """
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, default_components

    cp = ControlPlane()
    default_components(cp, Fleet.empty(), "*")
    for name in components:
        await cp.start_component(name)
    return cp


class PodCounter:
    """Watches pods of a namespace and fires when ``target`` satisfy ``pred`` (bound, Running…)."""

    def __init__(self, client: Client, namespace: str, target: int, pred: Callable[[Obj], bool]) -> None:
        self.client = client
        self.namespace = namespace
        self.target = target
        self.pred = pred
        self.hits: dict[str, float] = {}
        self.done = asyncio.Event()
        self.finished_at = 0.0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        lst = await self.client.list(PODS, self.namespace)
        for p in lst["items"]:
            self._see(p)
        self._task = asyncio.create_task(self._run(lst["metadata"]["resourceVersion"]))

    def retarget(self, target: int, pred: Callable[[Obj], bool] | None = None) -> None:
        self.target = target
        if pred is not None:
            self.pred = pred
            self.hits.clear()
        self.done = asyncio.Event()
        if len(self.hits) >= target:
            self.finished_at = time.perf_counter()
            self.done.set()

    def _see(self, p: Obj) -> None:
        name = p["metadata"]["name"]
        if self.pred(p):
            if name not in self.hits:
                self.hits[name] = time.perf_counter()
                if len(self.hits) >= self.target and not self.done.is_set():
                    self.finished_at = time.perf_counter()
                    self.done.set()
        else:
            self.hits.pop(name, None)

    async def _run(self, rv: str) -> None:
        while True:
            async for ev in self.client.watch(PODS, self.namespace, resource_version=rv, read_only=True):
                if ev.type == "ERROR":
                    break
                if ev.type == "DELETED":
                    self.hits.pop(ev.object["metadata"]["name"], None)
                elif ev.type in ("ADDED", "MODIFIED"):
                    self._see(ev.object)
                    rv = ev.object["metadata"]["resourceVersion"]
            lst = await self.client.list(PODS, self.namespace)
            self.hits.clear()
            for p in lst["items"]:
                self._see(p)
            rv = lst["metadata"]["resourceVersion"]

    async def wait(self, timeout: float) -> float:
        """Seconds from now until the target is reached (raises TimeoutError past ``timeout``)."""
        await asyncio.wait_for(self.done.wait(), timeout)
        return self.finished_at

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def is_bound(p: Obj) -> bool:
    return bool((p.get("spec") or {}).get("nodeName"))


def is_running(p: Obj) -> bool:
    status = p.get("status") or {}
    return status.get("phase") == "Running" and not (p.get("metadata") or {}).get("deletionTimestamp")


def pod(
    name: str, namespace: str = "default", cpu: str = "100m", memory: str = "128Mi", labels: Obj | None = None
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "bench"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ]
        },
    }


def bound_pod(p: Obj, host: str, rv: int) -> Obj:
    """Pod ``p`` as the API server sends it after binding it to ``host`` at resourceVersion ``rv``
    (the micro-benchmarks feed it to a scheduler's handlers as the bound pod's update)."""
    condition = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
    return {
        **p,
        "metadata": {**p["metadata"], "resourceVersion": str(rv)},
        "spec": {**p["spec"], "nodeName": host},
        "status": {"conditions": [condition]},
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


#: how many clients a driver creates its objects with (:func:`create_arriving`): the arrival
#: session 21's figures were measured with, two objects per loop pass
DEFAULT_CREATORS = 2


async def create_arriving(
    create: Callable[[Obj], Awaitable[Any]], bodies: Iterable[Obj], creators: int
) -> None:
    """``create`` each of ``bodies`` as ``creators`` clients outside the plane would, each sending
    its next create once the last is answered: every creator makes one create per loop turn, so
    that many objects reach the plane per loop pass.

    The arrival is the workload's, not the plane's: the plane handles objects arriving together
    in larger, cheaper batches (docs/bench.md, session 22 arrival: one per pass instead of two
    costs gangs-1000x3 ~8 % more CPU per set and SchedulingBasic ~13 % more per pod). A driver
    looping over in-process creates arrived as fast as the in-process client's loop share let
    one task go (one per pass until session 20, two since session 21), so a change of that share
    changed the workload too."""
    items = iter(bodies)

    async def creator() -> None:
        for body in items:  # shared: each creator takes the next object
            await asyncio.sleep(0)  # the answer's round trip: other tasks run first
            await create(body)

    await asyncio.gather(*(creator() for _ in range(max(1, creators))))
