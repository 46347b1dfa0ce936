"""``gangplane bench --pairs`` against a build from before the product-face moves.

Issue #22's targets are factors over its own commit (``9be3a0d``), whose command is
``apiserver/cli.py`` and whose bench matches NAMES as parts of names. A stand-in build of that
layout (its own command, its own scenario files, no ``--exact``) logs what each of its runs ran,
so the test can see which scenarios each side ran, in what order, and that the result files and
the compare table hold exactly the chosen ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import main as bench_main
from bench.pairs import cli_module, exact_scenario_file
from bench.results import read_results

#: an old build's command: ``bench`` with names matched as parts of names, ``--file``, no ``--exact``
OLD_CLI = """
import argparse, json, os, sys
from pathlib import Path

import yaml


def main(argv):
    assert argv[0] == "bench"
    p = argparse.ArgumentParser(prog="gangplane bench")
    p.add_argument("names", nargs="*")
    p.add_argument("--file", "-f", action="append", default=[])
    p.add_argument("--out", default="bench/results")
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv[1:])
    if args.file:
        docs = [d for f in args.file for d in yaml.safe_load_all(Path(f).read_text())]
    else:
        docs = [d for f in sorted(Path("bench/scenarios").glob("*.yaml")) for d in yaml.safe_load_all(f.read_text())]
        docs = [d for d in docs if not args.names or any(n in d["name"] for n in args.names)]
    with open(os.environ["RUN_LOG"], "a") as log:  # which build ran which scenarios, in order
        log.write(Path.cwd().name + " " + ",".join(d["name"] for d in docs) + "\\n")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scenarios = [
        {
            "name": d["name"],
            "kind": d["kind"],
            "description": "",
            "params": d["params"],
            "runs": [{"pods_per_s": float(d["params"]["rate"])}],
            "units": {"pods_per_s": {"unit": "pods/s", "higherIsBetter": True}},
        }
        for d in docs
    ]
    # the machine as 9be3a0d's harness describes it (no processor, build or load yet)
    machine = {
        "commit": "",
        "cores": 2,
        "implementation": "CPython",
        "memoryBytes": 2**31,
        "platform": "Linux",
        "python": "3.11.2",
        "time": "2026-12-07T02:37:53Z",
    }
    doc = {"machine": machine, "target": "in-process", "scenarios": scenarios}
    (out / "results.json").write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


def _old_build(root: Path, rate: int) -> Path:
    tree = root / f"old-{rate}"
    (tree / "apiserver").mkdir(parents=True)
    (tree / "apiserver" / "__init__.py").write_text("")
    (tree / "apiserver" / "cli.py").write_text(OLD_CLI)
    (tree / "bench" / "scenarios").mkdir(parents=True)
    (tree / "bench" / "__init__.py").write_text("")
    (tree / "bench" / "scenarios" / "40-gangs.yaml").write_text(
        f"name: gangs-1000x3\nkind: gang-statefulsets\nparams: {{rate: {rate}}}\n---\n"
        f"name: gangs-1000x3-rack\nkind: gang-statefulsets\nparams: {{rate: {rate + 1}}}\n"
    )
    return tree


def test_the_command_module_of_each_layout(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    assert cli_module(repo) == "gangplane.cli"
    assert cli_module(_old_build(tmp_path, 1)) == "apiserver.cli"
    assert cli_module(tmp_path) is None


def test_an_old_build_gets_its_own_definitions_of_exactly_the_names(tmp_path: Path) -> None:
    tree = _old_build(tmp_path, 7)
    path = tmp_path / "chosen.yaml"
    assert exact_scenario_file(tree, ["gangs-1000x3", "gangs-10x5000"], path) == ["gangs-1000x3"]
    text = path.read_text()
    assert "name: gangs-1000x3\n" in text and "gangs-1000x3-rack" not in text and "rate: 7" in text
    assert exact_scenario_file(tree, ["gangs-10x5000"], tmp_path / "none.yaml") == []
    assert not (tmp_path / "none.yaml").exists()


def test_pairs_run_an_old_layout_build_on_exactly_the_chosen_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _old_build(tmp_path, 100), _old_build(tmp_path, 450)
    log = tmp_path / "runs.log"
    monkeypatch.setenv("RUN_LOG", str(log))
    monkeypatch.chdir(tmp_path)
    names = ["gangs-1000x3", "gangs-10x5000", "gangs-1000x3-rack"]
    assert bench_main(["--pairs", str(a), str(b), "--rounds", "2", "--out", "out", *names]) == 0
    # each run a fresh process on exactly one scenario, the two builds' runs of a scenario one
    # after the other (A first in even rounds, B first in odd ones); the scenario the builds
    # lack is run by neither
    assert log.read_text().splitlines() == [
        "old-100 gangs-1000x3",
        "old-450 gangs-1000x3",
        "old-100 gangs-1000x3-rack",
        "old-450 gangs-1000x3-rack",
        "old-450 gangs-1000x3",
        "old-100 gangs-1000x3",
        "old-450 gangs-1000x3-rack",
        "old-100 gangs-1000x3-rack",
    ]
    for side, rate in (("A", 100.0), ("B", 450.0)):
        doc = read_results(tmp_path / "out" / f"pairs-{side}.json")
        runs = {sc["name"]: [r["pods_per_s"] for r in sc["runs"]] for sc in doc["scenarios"]}
        assert runs == {"gangs-1000x3": [rate, rate], "gangs-1000x3-rack": [rate + 1, rate + 1]}
        assert all("load1m" not in sc for sc in doc["scenarios"])  # that build records no load
    out = capsys.readouterr()
    assert out.err.count("no scenario gangs-10x5000: left out of its side") == 2  # once per build
    assert "4.50x" in out.out and "4.47x" in out.out and "gangs-10x5000" not in out.out


def test_pairs_refuse_a_build_that_has_none_of_the_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _old_build(tmp_path, 1)
    monkeypatch.setenv("RUN_LOG", str(tmp_path / "runs.log"))
    assert bench_main(["--pairs", str(a), str(a), "--out", str(tmp_path / "out"), "no-such"]) == 2
    assert "has none of the scenarios no-such" in capsys.readouterr().out
