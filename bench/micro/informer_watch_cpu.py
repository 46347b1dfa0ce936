"""What the informer's watch loop costs per event (a script, not a test):

    python -m bench.micro.informer_watch_cpu [--pods 3000] [--rounds 7]

A controller-manager-shaped pod informer (the namespace, owner and controller indices; two
handler triples doing nothing) reads a replayed watch stream: every pod added, then bound
(a modified revision), the gang benches' two pod events per pod. The stream is built up front
(no API server, no watch cache): only the informer's own per-event work is timed, the async
generator step, the resourceVersion, the key, the cache and the indices, the dispatch. Prints
the best and median µs of process CPU (``time.process_time``) per event over ``--rounds``
fresh informers; compare builds by alternating them
(``PYTHONPATH=<tree> python -m bench.micro.informer_watch_cpu``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

from apiserver.client.informer import (
    CONTROLLER_UID,
    OWNER_UID,
    Informer,
    controller_uid_index,
    owner_uid_index,
)
from apiserver.client.interface import PODS, WatchEvent


class _Replay:
    def __init__(self, events: list[WatchEvent]) -> None:
        self.events = events

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        for ev in self.events:
            yield ev


def _stream(pods: int) -> list[WatchEvent]:
    out: list[WatchEvent] = []
    rv = 0
    for i in range(pods):
        rv += 1
        md = {
            "name": f"set-{i // 3}-{i % 3}",
            "namespace": "gangs",
            "resourceVersion": str(rv),
            "labels": {"app": f"set-{i // 3}"},
            "ownerReferences": [{"uid": f"u-{i // 3}", "controller": True, "kind": "StatefulSet"}],
        }
        pod = {"metadata": md, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}}
        out.append(WatchEvent("ADDED", pod))
        rv += 1
        bound = {
            **pod,
            "metadata": {**md, "resourceVersion": str(rv)},
            "spec": {**pod["spec"], "nodeName": "n"},
        }
        out.append(WatchEvent("MODIFIED", bound))
    return out


def _round(events: list[WatchEvent]) -> float:
    inf = Informer(_Replay(events), PODS)  # type: ignore[arg-type]
    inf.add_indexer(OWNER_UID, owner_uid_index)
    inf.add_indexer(CONTROLLER_UID, controller_uid_index)
    for _ in range(2):
        inf.add_event_handler(lambda o: None, lambda a, b: None, lambda o: None)
    gc.collect()
    gc.disable()
    start = time.process_time()
    asyncio.run(inf._watch())
    cpu = time.process_time() - start
    gc.enable()
    assert len(inf) == len(events) // 2
    return cpu / len(events) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    events = _stream(args.pods)
    us = [_round(events) for _ in range(args.rounds)]
    print(f"informer watch loop: best {min(us):.3f} µs/event, median {statistics.median(us):.3f} µs/event")


if __name__ == "__main__":
    main()
