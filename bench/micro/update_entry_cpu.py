"""CPU of encoding the node agent's new pod status entry: the general encoder vs its template.

    python -m bench.micro.update_entry_cpu [--sets 500] [--rounds 8]

Each set is what the node agent's first status write of a pod gives its manager (conditions,
IPs, a container status: ``bench/micro/update_path.py``'s running status), with IPs no earlier
set had, so the encoder's tables never know it: the case of every pod of a gang. Per round, the
same number of fresh sets is encoded by :func:`apiserver.patch.sharedtrees.shared_fields_v1`
(``general``: emission, serialization, shared tree) and by
:meth:`apiserver.patch.updateentry.UpdatedEntryTemplates.fields_v1` (``template``), alternated in
one process; printed are the min and median over rounds of ``time.process_time`` per set, in µs.
The two give the same bytes (checked on every set here as well). Numbers go in docs/bench.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from typing import Any

import orjson

from apiserver.openapi import schema
from apiserver.patch.fieldpath import FieldSet, fields_of
from apiserver.patch.sharedtrees import shared_fields_v1
from apiserver.patch.updateentry import UpdatedEntryTemplates
from bench.micro.update_path import NOW, running_status


def _status(i: int) -> dict[str, Any]:
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": NOW}
        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    ]
    return {"status": running_status(i, conditions)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    pod = schema.for_gvk("", "v1", "Pod")
    templates = UpdatedEntryTemplates()
    # the shape's template is learnt once, as the first pod of a gang does
    templates.fields_v1(fields_of(_status(0), pod))
    times: dict[str, list[float]] = {"general": [], "template": []}
    n = 1
    for r in range(args.rounds):
        for kind in ("general", "template") if r % 2 == 0 else ("template", "general"):
            paths = [fields_of(_status(n + i), pod).paths for i in range(args.sets)]
            n += args.sets
            sets = [FieldSet._wrap(p) for p in paths]
            encode = shared_fields_v1 if kind == "general" else templates.fields_v1
            gc.collect()
            t0 = time.process_time()
            trees = [encode(fs) for fs in sets]
            times[kind].append((time.process_time() - t0) / args.sets * 1e6)
            for fs, tree in zip(sets, trees, strict=True):
                assert orjson.dumps(tree) == orjson.dumps(fs.fresh_fields_v1())
    for kind, ts in times.items():
        print(f"{kind:<10} min {min(ts):7.1f} µs  median {statistics.median(ts):7.1f} µs")


if __name__ == "__main__":
    main()
