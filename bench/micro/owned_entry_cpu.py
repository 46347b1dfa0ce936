"""CPU of a stored create's managedFields entry for owned objects: general path vs template
(a script, not a test):

    python -m bench.micro.owned_entry_cpu [--n 1500] [--rounds 6]

For each owned kind of a gang StatefulSet (``pod``: three per set, one reference; ``workload``:
one per set, its template named after the set; ``podgroup``: two references, both new), fresh
objects of new sets are given their entry by the general path (:func:`updated_managed_fields`
with the stored write's shared trees: what every owned create took before session 14) and by
:class:`apiserver.patch.createentry.CreatedEntryTemplates` (which answers them from
:mod:`apiserver.patch.ownedentry`), alternated round by round in one process, so both see the
same load. Each round uses objects of sets neither side has seen; every template answer is
checked against the general path's (as text) outside the timed part. Prints the minimum and
median µs of CPU (``time.process_time``) per create and their ratio. Numbers go in the docs,
never into assertions.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.createentry import CreatedEntryTemplates
from apiserver.patch.sharedtrees import shared_fields_v1
from bench.micro.create_cpu import pod, podgroup, workload

NOW = "2026-12-05T00:00:00Z"
KINDS: dict[str, tuple[Callable[[int], dict[str, Any]], tuple[str, str, str]]] = {
    "pod": (pod, ("", "v1", "Pod")),
    "workload": (workload, ("scheduling.k8s.io", "v1beta1", "Workload")),
    "podgroup": (podgroup, ("scheduling.k8s.io", "v1beta1", "PodGroup")),
}


def _general(obj: dict[str, Any], node: Any) -> Any:
    return updated_managed_fields(None, obj, "m", node, NOW, "v1", fields_v1=shared_fields_v1)


def _time_general(objs: list[dict[str, Any]], node: Any) -> float:
    gc.collect()
    t = time.process_time()
    for o in objs:
        _general(o, node)
    return (time.process_time() - t) / len(objs) * 1e6


def _time_templates(objs: list[dict[str, Any]], node: Any, templates: CreatedEntryTemplates) -> float:
    gc.collect()
    t = time.process_time()
    for o in objs:
        templates.entries(o, node, "m", "v1", NOW, lambda o=o, node=node: _general(o, node))
    return (time.process_time() - t) / len(objs) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    for kind, (make, gvk) in KINDS.items():
        node = schema.for_gvk(*gvk)
        templates = CreatedEntryTemplates()
        for i in range(10_000_000, 10_000_003):  # its shape met (and learnt) before the rounds
            o = make(i)
            templates.entries(o, node, "m", "v1", NOW, lambda o=o, node=node: _general(o, node))
        general: list[float] = []
        template: list[float] = []
        base = 0
        for _ in range(args.rounds):
            objs = [make(base + i) for i in range(args.n)]
            general.append(_time_general(objs, node))
            objs = [make(base + args.n + i) for i in range(args.n)]
            template.append(_time_templates(objs, node, templates))
            for o in objs[:50]:  # the template's answer is the general path's
                got = templates.entries(o, node, "m", "v1", NOW, lambda o=o, node=node: _general(o, node))
                assert orjson.dumps(got) == orjson.dumps(_general(o, node)), kind
            base += 2 * args.n
        g, tm = min(general), min(template)
        print(
            f"{kind}: general min {g:.1f} median {statistics.median(general):.1f} us, "
            f"template min {tm:.1f} median {statistics.median(template):.1f} us, ratio {tm / g:.2f}"
        )


if __name__ == "__main__":
    main()
