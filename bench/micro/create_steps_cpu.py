"""A create's own steps, one at a time, for the plane's kinds (a script, not a pytest test):

    python bench/micro/create_steps_cpu.py [--n 3000] [--json]
    python bench/micro/create_steps_cpu.py --pairs BASE NEW [--rounds 3] [--n 3000]

``create_cpu`` times whole creates (managedFields and storage included); this times the steps
``GenericStore.create`` runs of the kind's strategy and ObjectMeta validation, each over ``n``
distinct bodies of ``create_cpu``'s kinds (the StatefulSet controller's gang pod, PodGroup,
Workload and ControllerRevision, the bench's StatefulSet, the scheduler's Event), after 200
warm-up bodies through all of them: ``default``, ``prepare_for_create``, ObjectMeta validation,
``validate``, ``warnings_on_create``, in that order on the same bodies, as a create runs them
(mutating admission between ``prepare`` and ``validate`` is left out). It prints µs of
``process_time`` per body and step; ``--pairs`` alternates two trees (each kind-step's best round
and the ratio, :func:`bench.micro.alternating.alternate`). Numbers go in the docs, never into
assertions. The bodies come from this file's tree's ``create_cpu`` on both sides.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("gangpod", "statefulset", "ganggroup", "gangworkload", "gangrevision", "event")
STEPS = ("default", "prepare", "meta", "validate", "warnings")


def _create_cpu() -> Any:
    path = Path(__file__).with_name("create_cpu.py")
    spec = importlib.util.spec_from_file_location("create_cpu_bodies", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(n: int) -> dict[str, float]:
    from apiserver.rest.strategy import StrategyContext

    cc = _create_cpu()
    api, rds = cc._api()
    ctx = StrategyContext(gates=api.gates, namespace="default", now="2026-12-06T00:00:00Z")
    out: dict[str, float] = {}

    def bodies(kind: str, first: int, count: int) -> list[dict[str, Any]]:
        made = [cc.BODIES[kind](i) for i in range(first, first + count)]
        for b in made:  # what the create sets before these steps
            b["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000"
            b["metadata"]["creationTimestamp"] = "2026-12-06T00:00:00Z"
        return made

    def timed(label: str, step: Callable[[Any], Any], objs: list[dict[str, Any]]) -> None:
        gc.collect()
        gc.disable()
        t = time.process_time()
        for o in objs:
            step(o)
        out[label] = (time.process_time() - t) / len(objs) * 1e6
        gc.enable()

    def steps_of(rd: Any) -> dict[str, Callable[[Any], Any]]:
        st = rd.strategy

        def prepare(b: Any) -> None:
            st.prepare_for_create(ctx, b)

        def meta(b: Any) -> Any:
            return api.meta_validator(b, rd)

        def validate(b: Any) -> Any:
            return st.validate(ctx, b)

        def warnings(b: Any) -> Any:
            return st.warnings_on_create(ctx, b)

        return {
            "default": st.default,
            "prepare": prepare,
            "meta": meta,
            "validate": validate,
            "warnings": warnings,
        }

    for kind in KINDS:
        steps = steps_of(rds[kind])
        for b in bodies(kind, 10**6, 200):
            for step in steps.values():
                step(b)
        objs = bodies(kind, 0, n)
        for name in STEPS:
            timed(f"{kind}.{name}", steps[name], objs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--writes", type=int, help="alias of --n (for the --pairs runner)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    ap.add_argument("--pairs", nargs=2, metavar="TREE", help="alternate runs over BASE and NEW")
    args = ap.parse_args()
    n = args.writes or args.n
    if args.pairs:
        from bench.micro.alternating import alternate

        labels = [f"{k}.{s}" for k in KINDS for s in STEPS]
        alternate(__file__, args.pairs[0], args.pairs[1], args.rounds, n, labels)
        return
    got = run(n)
    if args.json:
        print(json.dumps(got))
    else:
        for label, us in got.items():
            print(f"{label:<24}{us:>8.2f} us")


if __name__ == "__main__":
    main()
