"""What a piece of the API server's write path costs the whole plane, by running without it (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/ablation_cpu.py [--sets 600] [--rounds 4] \
        [--off managed-fields managed-fields-update managed-fields+admission ...]

Runs gangs-SETSx3 on 5,000 nodes in-process (``set_cpu_drained.measure``: the bench's phase and
the same run drained of its Event backlog, in ms of process CPU per set), once with the whole
plane and once with each variant named by ``--off`` switched off (a piece, or pieces joined by
``+`` for what they cost together), in a fresh process per run,
the variants' order rotated every round. Prints every run, then per variant the medians and its
ratio to the whole plane, the median of the rounds' own ratios ("by rounds": a drift of the
machine between rounds cancels in it) and those ratios: what the plane would save if that piece
cost nothing.

Why: a piece costs two to three times in the plane what it costs in an isolated micro-benchmark
(its tables, the objects it allocates and the caches it evicts are paid by the work around it),
and a profiler's share of it is bent by the profiler's own cost per call. Running without it is
the one measure of its whole cost. Session 24 (4 rounds, 600 sets): without ``managedFields`` a set
took 0.82x the CPU (pairwise 0.73-0.93, every round below 1), against ~6 % that its create-path
cost in ``create_cpu.py`` suggests; field and metadata validation read 1.00x and 1.04x (noise).
Session 25 (8 rounds): ``managedFields`` 0.866x (0.875x by rounds), field validation, admission
and metadata validation 0.94-0.96x each.

A variant is an experiment, never a configuration: with a piece off the plane is not faithful
(objects stored without ``managedFields``, bodies not type-checked); compare only CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: the variant without any piece switched off
WHOLE = "whole"


def _no_op(*_args: Any, **_kwargs: Any) -> None:
    return None


class _WithoutOne:
    """A field tracker that forwards everything but one method, which does nothing."""

    def __init__(self, tracker: Any, method: str) -> None:
        self._tracker = tracker
        self._method = method

    def __getattr__(self, name: str) -> Any:
        return _no_op if name == self._method else getattr(self._tracker, name)


def _tracker_without(method: str) -> Callable[[Any], None]:
    def off(store: Any) -> None:
        if store.field_tracker is not None:
            store.field_tracker = _WithoutOne(store.field_tracker, method)

    return off


def _attribute_none(name: str) -> Callable[[Any], None]:
    def off(store: Any) -> None:
        setattr(store, name, None)

    return off


def _admission_off(store: Any) -> None:
    store._admit = _no_op
    store._validate_admission = _no_op


#: piece -> what switches it off on a new ``GenericStore`` (the API server's registry)
PIECES: dict[str, Callable[[Any], None]] = {
    "managed-fields": _attribute_none("field_tracker"),
    "managed-fields-update": _tracker_without("on_update"),
    "field-validation": _attribute_none("body_checker"),
    "metadata-validation": _attribute_none("meta_validator"),
    "admission": _admission_off,
}


@contextmanager
def switched_off(pieces: list[str]) -> Iterator[None]:
    """Every ``GenericStore`` made inside has ``pieces`` switched off."""
    from apiserver.registry.generic import GenericStore

    unknown = [p for p in pieces if p not in PIECES]
    if unknown:
        raise ValueError(f"unknown pieces {unknown}: known are {sorted(PIECES)}")
    made = GenericStore.__init__

    def init(self: GenericStore, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        for p in pieces:
            PIECES[p](self)

    GenericStore.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        GenericStore.__init__ = made  # type: ignore[method-assign]


async def measure(sets: int, pieces: list[str], nodes: int = 5000) -> dict[str, float]:
    """``set_cpu_drained.measure`` with ``pieces`` switched off."""
    from bench.micro.set_cpu_drained import measure as drained

    with switched_off(pieces):
        return await drained(sets, nodes)


def report(runs: dict[str, list[dict[str, float]]]) -> list[str]:
    """Per variant and figure: the median, its ratio to the whole plane's, the median of the
    rounds' own ratios, and those ratios."""
    from bench.micro.alternating import by_rounds, ratios

    lines = []
    by_figure = {figure: ratios(runs, WHOLE, figure) for figure in ("phase", "drained")}
    for v in runs:
        for figure, got in by_figure.items():
            med, ratio, pairwise = got[v]
            lines.append(
                f"{v:24s} {figure:8s} {med:7.3f} ms/set  x{ratio:.3f}  by rounds x{by_rounds(pairwise):.3f}"
                f"  pairwise {pairwise}"
            )
    return lines


def _variant(text: str) -> str:
    """A ``--off`` variant: one piece, or several joined by ``+`` (switched off in one run, for
    what they cost together: the most that making all of them free could save)."""
    unknown = [p for p in text.split("+") if p not in PIECES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown pieces {unknown}: known are {sorted(PIECES)}")
    return text


def off_args(variant: str) -> list[str]:
    """The child's arguments for ``variant`` (:data:`WHOLE`: none; ``a+b``: both pieces off)."""
    return [] if variant == WHOLE else ["--off", *variant.split("+")]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument(
        "--off",
        nargs="+",
        type=_variant,
        help="the variants, each a piece or pieces joined by '+' switched off together "
        f"(default: managed-fields; pieces: {', '.join(sorted(PIECES))})",
    )
    ap.add_argument(
        "--child", action="store_true", help="one run in this process (with --off: those pieces off)"
    )
    args = ap.parse_args()
    if args.child:
        pieces = [p for v in args.off or [] for p in v.split("+")]  # a child is given them apart
        try:
            from bench.workloads.common import server_gc
        except ImportError:  # a tree from before session 24, run by PYTHONPATH: only its runner has it
            from bench.runner import server_gc

        with server_gc():
            print(json.dumps(asyncio.run(measure(args.sets, pieces))))
        return
    from bench.micro.alternating import rotated_json_runs

    script = os.path.abspath(__file__)
    child = [sys.executable, script, "--sets", str(args.sets), "--child"]
    commands = {v: ([*child, *off_args(v)], os.environ) for v in [WHOLE, *(args.off or ["managed-fields"])]}
    print("\n".join(report(rotated_json_runs(commands, args.rounds))))


if __name__ == "__main__":
    main()
