"""Two source trees' runs of one micro-benchmark script, alternated (``--pairs BASE NEW``).

The write-path scripts (``update_path``, ``patch_path``) measure CPU µs per write of a few kinds
in a fresh process. On a shared, noisy machine two builds are compared by alternating them,
round by round in swapped order, and taking each kind's best round. The child runs the calling
script from this tree with ``PYTHONPATH`` set to the tree under test, so its imports (and this
module is imported only here, in the parent) come from that tree.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

#: a named run: its command line and its environment
Command = tuple[Sequence[str], Mapping[str, str]]


def alternated_runs(
    script: str, base: str, new: str, rounds: int, writes: int
) -> dict[str, list[dict[str, float]]]:
    """Run ``script --writes N --json`` against ``base`` and ``new`` for ``rounds`` rounds, in
    swapped order each round, and return each tree's JSON results (progress to stderr)."""
    runs: dict[str, list[dict[str, float]]] = {base: [], new: []}
    for r in range(rounds):
        for tree in (base, new) if r % 2 == 0 else (new, base):
            env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
            res = subprocess.run(
                [sys.executable, script, "--writes", str(writes), "--json"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
                timeout=900,
            )
            runs[tree].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {tree}: {runs[tree][-1]}", file=sys.stderr)
    return runs


def alternate(script: str, base: str, new: str, rounds: int, writes: int, kinds: Sequence[str]) -> None:
    """:func:`alternated_runs`, then each kind's best µs per write for both trees and their ratio."""
    runs = alternated_runs(script, base, new, rounds, writes)
    print(f"{'write':<14}{'base µs':>10}{'new µs':>10}{'new/base':>10}")
    for kind in kinds:
        b = min(x[kind] for x in runs[base])
        n = min(x[kind] for x in runs[new])
        print(f"{kind:<14}{b:>10.1f}{n:>10.1f}{n / b:>10.2f}")


def run_pairs(script: str, args: Sequence[Any]) -> None:
    """``script --pairs A B [--rounds N] ARGS``: run ``script ARGS`` with ``PYTHONPATH`` set to
    tree A, then B, ``N`` times (3 by default), and print each run's output under its round and
    tree (for scripts that print their own result lines rather than :func:`alternate`'s JSON).
    The child imports everything from the tree under test, so the script must run there: a
    helper it imports must exist in both trees."""
    rest = list(args)
    i = rest.index("--pairs")
    trees = rest[i + 1 : i + 3]
    del rest[i : i + 3]
    rounds = 3
    if "--rounds" in rest:
        j = rest.index("--rounds")
        rounds = int(rest[j + 1])
        del rest[j : j + 2]
    for r in range(rounds):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run(
                [sys.executable, script, *map(str, rest)], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
            print(f"round {r} {tree}: {out}", flush=True)


def rotated_json_runs(commands: Mapping[str, Command], rounds: int) -> dict[str, list[dict[str, float]]]:
    """Run each named command once per round, each one first in turn (two of them: swapped
    order every round), print each run's output under its round and name, and return each
    name's JSON results (the last line a run prints) in round order, so that the ``i``-th
    results of two names come from the same round (see :func:`ratios`)."""
    names = list(commands)
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            argv, env = commands[name]
            out = subprocess.run(list(argv), env=dict(env), capture_output=True, text=True, check=True).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
            print(f"round {r} {name}: {out.strip()}", flush=True)
    return runs


def ratios(
    runs: Mapping[str, list[dict[str, float]]], base: str, figure: str
) -> dict[str, tuple[float, float, list[float]]]:
    """Per name: the median of ``figure``, its ratio to ``base``'s median, and the round-by-round
    ratios to ``base`` (a drift of the machine between rounds cancels in those)."""
    ref = runs[base]
    ref_median = statistics.median(x[figure] for x in ref)
    out = {}
    for name, got in runs.items():
        med = statistics.median(x[figure] for x in got)
        pairwise = [round(y[figure] / x[figure], 3) for x, y in zip(ref, got, strict=True)]
        out[name] = (med, med / ref_median, pairwise)
    return out


def by_rounds(pairwise: list[float]) -> float:
    """The median of the round-by-round ratios :func:`ratios` gives: on a machine whose speed
    drifts between rounds it can differ from the ratio of the medians, which sets one round's
    run against another's (session 25's ablation read ``managedFields`` at 0.866x by medians and
    0.875x by rounds)."""
    return statistics.median(pairwise)
