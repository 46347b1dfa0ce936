"""The API server's CPU for one gang set's creates, each answer shared as the in-process client
shares it (a script, not a test):

    python bench/micro/createset_cpu.py [--writes 1500] [--rounds 3] [--json]
    python bench/micro/createset_cpu.py --pairs BASE NEW [--writes 1500] [--rounds 4]

``gangs-1000x3`` makes ~12 creates per set of 3: the bench's StatefulSet, then the controller's
ControllerRevision, Workload, PodGroup and three pods, and ~5 Events (the bodies of
:mod:`bench.micro.create_cpu`). Each is created through ``build_api``'s ``GenericStore.create``
and its stored record is then shared (:meth:`Record.shared`, what ``LocalClient`` does with every
answer it hands back and what the informers receive): the create and the compaction of its
``managedFields`` trees, one after the other as in the plane, which ``create_cpu`` (the create
alone) and ``entry_cpu`` (the entry alone) do not show together. A watched store keeps each new
record's dict until it is shared; with no watcher here, ``Record.release_unshared`` is made to
keep it too, so the share compacts the stored dict rather than a decoding of its bytes.

Prints the CPU µs per set (``time.process_time`` over ``--writes`` sets after 200 warm-up sets,
under the plane's collector settings: the warm-up frozen and the plane's thresholds, as
``bench.runner.server_gc`` runs a scenario). ``--pairs``
alternates the two trees (:func:`bench.micro.alternating.alternate`; best round and the ratio).
Numbers go in the docs, never into assertions.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from typing import Any

#: a set's creates in the plane's order, ``(create_cpu kind, how many)``
PLAN = (
    ("statefulset", 1),
    ("gangrevision", 1),
    ("gangworkload", 1),
    ("ganggroup", 1),
    ("gangpod", 3),
    ("event", 5),
)
KINDS = ("set",)
_WARM = 200


def run(sets: int) -> dict[str, float]:
    from apiserver.registry.generic import WriteOptions
    from apiserver.storage.interface import Record
    from bench.micro import create_cpu
    from gangplane.controlplane import GC_THRESHOLD

    Record.release_unshared = lambda self: None  # type: ignore[method-assign]  # see the docstring
    api, rds = create_cpu._api()
    subtrees = api.shared_subtrees

    def one_set(s: int) -> None:
        for kind, count in PLAN:
            rd, make = rds[kind], create_cpu.BODIES[kind]
            for j in range(count):
                i = count * s + j
                body: Any = make(i)
                api.create(rd, "default", body, WriteOptions(field_manager="bench")).record.shared(subtrees)

    for s in range(10 * sets, 10 * sets + _WARM):
        one_set(s)
    gc.collect()
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        t = time.process_time()
        for s in range(sets):
            one_set(s)
        return {"set": (time.process_time() - t) / sets * 1e6}
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--writes", type=int, default=1500, help="gang sets timed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    ap.add_argument("--pairs", nargs=2, metavar="TREE", help="alternate runs over BASE and NEW")
    args = ap.parse_args()
    if args.pairs:
        from bench.micro.alternating import alternate

        alternate(__file__, args.pairs[0], args.pairs[1], args.rounds, args.writes, KINDS)
        return
    best: dict[str, float] = {}
    for _ in range(1 if args.json else args.rounds):
        for kind, us in run(args.writes).items():
            best[kind] = min(best.get(kind, us), us)
    if args.json:
        print(json.dumps(best))
    else:
        print(" ".join(f"{k}={v:.1f}us" for k, v in best.items()))


if __name__ == "__main__":
    sys.exit(main())
