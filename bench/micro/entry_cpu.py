"""CPU of a stored create's ``managedFields`` entry (``FieldTracker.on_create``) per object kind
(a script, not a test):

    python bench/micro/entry_cpu.py [--writes 3000] [--rounds 3] [--json]
    python bench/micro/entry_cpu.py --pairs BASE NEW [--writes 3000] [--rounds 3]

The objects are the ones the tracker is handed in the plane: each kind's bodies (those of
:mod:`bench.micro.create_cpu`, plus ``plainpod``, SchedulingBasic's pod) are created through
``build_api``'s ``GenericStore.create`` once, and the object ``on_create`` receives (defaulted,
admitted, stamped) is captured. Then a fresh :class:`apiserver.patch.tracker.FieldTracker` is
warmed with 200 objects of the kind and timed over N fresh copies of the captured objects in a
row (``time.process_time``, gc collected before, copies made outside the timed part). The
owned kinds come in sets (a gang pod's owners change every third pod, each Workload is its
set's), so the rows are what a run of the plane gives the tracker, one kind at a time.

``--pairs BASE NEW`` alternates whole runs of this script with each tree on ``PYTHONPATH``
(:func:`bench.micro.alternating.alternate`: best round per kind, and the ratio). Numbers go in
the docs, never into assertions.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import sys
import time
from collections.abc import Callable
from typing import Any

KINDS = ("event", "plainpod", "gangpod", "gangworkload", "ganggroup", "gangrevision", "statefulset")
_WARM = 200


def _plainpod(i: int) -> dict[str, Any]:
    from bench.workloads.common import pod

    return pod(f"basic-{i}")


def _bodies() -> dict[str, tuple[tuple[str, str, str], Callable[[int], dict[str, Any]]]]:
    from bench.micro import create_cpu as c

    return {
        "event": (("", "v1", "events"), c.event),
        "plainpod": (("", "v1", "pods"), _plainpod),
        "gangpod": (("", "v1", "pods"), c.gangpod),
        "gangworkload": (("scheduling.k8s.io", "v1beta1", "workloads"), c.gangworkload),
        "ganggroup": (("scheduling.k8s.io", "v1beta1", "podgroups"), c.ganggroup),
        "gangrevision": (("apps", "v1", "controllerrevisions"), c.gangrevision),
        "statefulset": (("apps", "v1", "statefulsets"), c.statefulset),
    }


def capture(kind: str, n: int) -> list[tuple[Any, dict[str, Any], Any, str]]:
    """``(resource, object, options, now)`` as ``on_create`` is handed them for ``n`` creates of
    ``kind`` (the object copied as it arrives, before the tracker writes into it)."""
    from apiserver.registry.generic import WriteOptions
    from apiserver.server.instance import build_api

    api = build_api()
    gvr, make = _bodies()[kind]
    rd = api.registry.get(*gvr)
    got: list[tuple[Any, dict[str, Any], Any, str]] = []
    tracker = api.field_tracker

    def on_create(rd: Any, obj: Any, opts: Any, now: str) -> None:
        got.append((rd, copy.deepcopy(obj), opts, now))

    api.field_tracker = type("Capture", (), {"on_create": staticmethod(on_create)})()
    try:
        for i in range(n):
            api.create(rd, "default", make(i), WriteOptions(field_manager="bench"))
    finally:
        api.field_tracker = tracker
    return got


def run(writes: int) -> dict[str, float]:
    """µs of CPU per ``on_create`` of each kind."""
    from apiserver.patch.tracker import FieldTracker

    out: dict[str, float] = {}
    for kind in KINDS:
        rows = capture(kind, _WARM + writes)
        tracker = FieldTracker()
        for rd, obj, opts, now in rows[:_WARM]:
            tracker.on_create(rd, copy.deepcopy(obj), opts, now)
        timed = [(rd, copy.deepcopy(obj), opts, now) for rd, obj, opts, now in rows[_WARM:]]
        on_create = tracker.on_create
        gc.collect()
        t = time.process_time()
        for rd, obj, opts, now in timed:
            on_create(rd, obj, opts, now)
        out[kind] = (time.process_time() - t) / writes * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--writes", type=int, default=3000)
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
        print(" ".join(f"{k}={v:.2f}us" for k, v in best.items()))


if __name__ == "__main__":
    sys.exit(main())
