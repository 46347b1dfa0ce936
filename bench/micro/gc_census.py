"""Which long-lived objects the cyclic collector tracks, per pod, after a workload (a script):

    python -m bench.micro.gc_census                                   # 2 gangs of 5,000, 5,000 nodes
    python -m bench.micro.gc_census gang-statefulsets sets=4 replicas=5000
    python -m bench.micro.gc_census scheduling-basic nodes=5000 pods=10000 --top 40

It runs one repetition of a workload (``bench.workloads.<module>.run``, under the harness's
collector settings) and takes a census of ``gc.get_objects()`` by kind at the start of its
measured phase and again at its end (each after a full collection, the plane still running):
the difference per pod is what every pod adds for the collector to traverse. A kind is the
type; for a dict its first keys, for a list or tuple its first item's type, so that a pod's
manifest subtrees, history entries and scheduler entries are told apart.

Why: with the plane's thresholds (``gangplane.controlplane.GC_THRESHOLD``) generation 0 and 1
passes traverse every long-lived container once each as it is promoted, and each full pass all
of them; the collector's CPU grows with the number of GC-tracked objects a pod leaves behind.
Atomic values, and tuples and dicts holding only them, are not traversed (CPython untracks
them); every instance of a class, set and list is. Session 12b (``gcfoot``) used it to find the
watch cache's (cache, event) pairs and the pod label index's one-node sets.
The end census includes what is in flight at that moment (watch buffers, queued Events): those
kinds vary from run to run.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import importlib
import sys
from dataclasses import dataclass, field
from typing import Any

from bench.runner import server_gc
from bench.scenario import WORKLOADS
from bench.workloads.common import Env


def kind_of(o: object) -> str:
    """A census key for ``o``: its type, told apart by first keys / first item for containers."""
    t = type(o)
    if t is dict:
        return "dict" + repr(list(o)[:4])[:70]  # type: ignore[call-overload]
    if t is list or t is tuple:
        seq: Any = o
        return f"{t.__name__}[{type(seq[0]).__name__ if seq else ''}]"
    if t is set:
        members: Any = o
        return f"set[{type(next(iter(members))).__name__ if members else ''}]"
    return f"{getattr(t, '__module__', '?')}.{getattr(t, '__qualname__', t.__name__)}"


def census() -> collections.Counter[str]:
    gc.collect()
    return collections.Counter(kind_of(o) for o in gc.get_objects())


@dataclass
class CensusEnv(Env):
    """The runner's :class:`Env`, taking a census as each measured phase starts and ends."""

    before: collections.Counter[str] = field(default_factory=collections.Counter)
    after: collections.Counter[str] = field(default_factory=collections.Counter)

    def start_cpu(self) -> None:
        self.before = census()
        super().start_cpu()

    def stop_cpu(self, pods: int = 0) -> None:
        super().stop_cpu(pods)
        self.after = census()


def run(kind: str, params: dict[str, Any]) -> CensusEnv:
    module = importlib.import_module(WORKLOADS[kind])
    env = CensusEnv()
    with server_gc():
        asyncio.run(module.run(params, env))
    return env


def main(argv: list[str]) -> None:
    top = 30
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    kind = argv[0] if argv and "=" not in argv[0] else "gang-statefulsets"
    params: dict[str, Any] = (
        {"nodes": 5000, "racks": 50, "sets": 2, "replicas": 5000, "gang": True}
        if kind == "gang-statefulsets"
        else {}
    )
    for a in argv:
        if "=" in a:
            k, v = a.split("=", 1)
            params[k] = int(v) if v.isdigit() else v
    env = run(kind, params)
    pods = max(1, env.pods)
    diff = env.after.copy()
    diff.subtract(env.before)
    print(f"{kind} {params}: {sum(diff.values()) / pods:.2f} GC-tracked objects per pod")
    for k, v in diff.most_common(top):
        print(f"{v / pods:8.2f}  {k}")


if __name__ == "__main__":
    main(sys.argv[1:])
