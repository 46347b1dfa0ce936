"""``bench/micro/alternating.py``'s rotated runs and their ratios (the micro scripts' ``--pairs``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bench.micro.alternating import by_rounds, ratios, rotated_json_runs


def test_each_command_goes_first_in_turn_and_rounds_line_up(tmp_path: Path) -> None:
    log = tmp_path / "order"
    script = tmp_path / "child.py"
    script.write_text(
        "import json, os, sys\n"
        "name = os.environ['WHO']\n"
        "n = sum(1 for line in open(sys.argv[1]) if line.strip() == name) if os.path.exists(sys.argv[1]) else 0\n"
        "open(sys.argv[1], 'a').write(name + '\\n')\n"
        "print('noise first')\n"
        "print(json.dumps({'cpu': {'a': 1.0, 'b': 0.9, 'c': 2.0}[name] * (n + 1)}))\n"
    )
    commands = {w: ([sys.executable, str(script), str(log)], {**os.environ, "WHO": w}) for w in "abc"}
    runs = rotated_json_runs(commands, rounds=3)
    assert log.read_text().split() == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    # each name's i-th result is its run of round i (here: the machine "slows" every round)
    assert [r["cpu"] for r in runs["b"]] == pytest.approx([0.9, 1.8, 2.7])
    got = ratios(runs, "a", "cpu")
    assert got["b"][0] == pytest.approx(1.8) and got["b"][1] == pytest.approx(0.9)
    assert got["b"][2] == [0.9, 0.9, 0.9] and got["a"][2] == [1.0, 1.0, 1.0]


def test_by_rounds_is_the_median_of_the_rounds_ratios_not_the_ratio_of_the_medians() -> None:
    # the machine drifts between rounds: B reads 0.9x of A in two rounds of three, but the
    # ratio of the medians sets B's 5.0 against A's 4.0
    runs = {"a": [{"cpu": 1.0}, {"cpu": 4.0}, {"cpu": 10.0}], "b": [{"cpu": 0.9}, {"cpu": 5.0}, {"cpu": 9.0}]}
    med, ratio, pairwise = ratios(runs, "a", "cpu")["b"]
    assert ratio == pytest.approx(1.25) and pairwise == [0.9, 1.25, 0.9]
    assert by_rounds(pairwise) == pytest.approx(0.9)
