"""The benchmark harness: scenario files, result statistics, reports, plots and compare.

Numbers are never asserted (speed is measured, not tested); what is tested is that a run of a
tiny scenario produces the JSON, Markdown and PNG a user reads, and that bad files are refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from bench import compare
from bench.cli import main as bench_main
from bench.results import read_results, summarize
from bench.scenario import ScenarioError, load_scenarios, parse_scenario, select, shipped_scenarios


def test_shipped_scenarios_parse_and_cover_the_issue_list() -> None:
    kinds = {s.kind for s in shipped_scenarios()}
    assert {"cold-start", "api", "scheduling-basic", "gang-statefulsets", "preemption", "lifecycle"} <= kinds
    names = [s.name for s in shipped_scenarios()]
    assert {"gangs-3x1000-rack", "gangs-1000x3", "gang-1x1000-running", "scheduling-basic-5000"} <= set(names)
    assert "gangs-10x5000" in names


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "api"}, "name: required"),
        ({"name": "x", "kind": "nope"}, "kind: must be one of"),
        ({"name": "x", "kind": "api", "repeat": 0}, "repeat: must be a positive integer"),
        ({"name": "x", "kind": "api", "params": []}, "params: must be a mapping"),
        ({"name": "x", "kind": "api", "speed": 1}, "unknown field(s) speed"),
    ],
)
def test_bad_scenarios_are_refused_naming_the_field(doc: dict, message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_scenario(doc, "f.yaml")


def test_quick_overrides_and_selection() -> None:
    sc = parse_scenario(
        {"name": "s", "kind": "api", "repeat": 5, "params": {"objects": 100}, "quick": {"objects": 3}}
    )
    q = sc.with_params(quick=True)
    assert q.params["objects"] == 3 and q.repeat == 1
    assert q.name == "s@quick(objects=3)"  # a smoke run never reads as the full size
    assert sc.with_params().name == "s"
    assert select([sc], ["s"]) == [sc]
    with pytest.raises(ScenarioError, match="no scenario matches"):
        select([sc], ["zzz"])
    longer = parse_scenario({"name": "s-more", "kind": "api"})
    assert select([sc, longer], ["s"]) == [sc, longer]
    assert select([sc, longer], ["s"], exact=True) == [sc]


def test_summary_statistics() -> None:
    s = summarize([1.0, 2.0, 4.0])
    assert s["median"] == 2.0 and s["min"] == 1.0 and s["max"] == 4.0 and s["spread"] == 1.5 and s["n"] == 3


def test_a_run_writes_results_report_and_plots_and_compare_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text(
        "name: tiny-scheduling\nkind: scheduling-basic\nrepeat: 2\nparams: {nodes: 3, pods: 5, backlog: false}\n"
        "---\nname: tiny-gangs\nkind: gang-statefulsets\nrepeat: 1\n"
        "params: {nodes: 4, racks: 2, sets: 2, replicas: 2, gang: true, topology: rack}\n"
    )
    assert load_scenarios(f)[1].params["topology"] == "rack"
    out = tmp_path / "out"
    # the load as each repetition ends, and as the results file is written after each scenario
    # (a checkpoint) and at the end
    loads = [1.234, 2.5, 9.0, 0.75, 9.0, 3.0]
    monkeypatch.setattr(os, "getloadavg", lambda: (loads.pop(0) if loads else -1.0, 0.0, 0.0))
    assert bench_main(["-f", str(f), "--out", str(out)]) == 0
    doc = read_results(out / "results.json")
    assert {"cores", "python", "commit", "time"} <= set(doc["machine"])
    # the weather of the run: the processor, the interpreter's build, and the load as each
    # repetition ended and as the results were written
    assert isinstance(doc["machine"]["cpuModel"], str)
    assert doc["machine"]["pythonExecutable"] and doc["machine"]["pythonBuild"]
    assert doc["machine"]["load1m"] == 3.0
    by_name = {s["name"]: s for s in doc["scenarios"]}
    assert len(by_name["tiny-scheduling"]["runs"]) == 2
    assert by_name["tiny-scheduling"]["load1m"] == [1.23, 2.5]
    assert by_name["tiny-gangs"]["load1m"] == [0.75]
    assert by_name["tiny-scheduling"]["summary"]["pods_per_s"]["median"] > 0
    assert by_name["tiny-gangs"]["summary"]["set_placed_s_max"]["n"] == 1
    # a set's span split at its first pod bound (diagnostic medians, each within the worst span)
    gangs_run = by_name["tiny-gangs"]["runs"][0]
    assert 0 <= gangs_run["set_first_bound_s_median"] <= gangs_run["set_placed_s_max"]
    assert 0 <= gangs_run["set_binding_s_median"] <= gangs_run["set_placed_s_max"]
    # CPU seconds of the measured phase, per pod, beside the wall-clock metrics
    for name, pods in (("tiny-scheduling", 5), ("tiny-gangs", 4)):
        sc = by_name[name]
        assert sc["cpuScope"] == "measured phase"
        run = sc["runs"][0]
        assert run["cpu_s"] > 0
        assert run["cpu_ms_per_pod"] == pytest.approx(run["cpu_s"] * 1000 / pods)
        assert sc["units"]["cpu_ms_per_pod"] == {"unit": "ms CPU/pod", "higherIsBetter": False}
    gangs = by_name["tiny-gangs"]
    assert gangs["runs"][0]["api_writes_per_set"] > 2  # at least the set and its pods
    # which writes, per set: the breakdown adds up to the total and names kube's writes
    breakdown = {k: v for k, v in gangs["runs"][0].items() if k.startswith("api_writes_per_set.")}
    assert sum(breakdown.values()) == pytest.approx(gangs["runs"][0]["api_writes_per_set"])
    for what, per_set in (
        ("statefulsets.create", 1),
        ("controllerrevisions.create", 1),
        ("workloads.create", 1),
        ("podgroups.create", 1),
        ("pods.create", 2),
        ("pods.binding", 2),
    ):
        assert breakdown[f"api_writes_per_set.{what}"] == per_set, what
    assert gangs["units"]["api_writes_per_set.pods.create"] == {"unit": "writes", "higherIsBetter": False}
    report = (out / "report.md").read_text()
    assert "| tiny-scheduling | pods_per_s |" in report
    assert "load (1 min) after each run: 1.23, 2.50" in report
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "pods_per_s_vs_nodes.png" in pngs
    assert all((out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    # compare: a copy with doubled throughput reads as 2x better
    b = orjson.loads((out / "results.json").read_bytes())
    for s in b["scenarios"]:
        if "pods_per_s" in s["summary"]:
            s["summary"]["pods_per_s"]["median"] *= 2
    (tmp_path / "b.json").write_bytes(orjson.dumps(b))
    rows = compare.compare(doc, b)
    row = next(r for r in rows if r[0] == "tiny-scheduling" and r[1] == "pods_per_s")
    assert row[4] == pytest.approx(2.0) and row[5] is True
    capsys.readouterr()
    assert bench_main(["compare", str(out / "results.json"), str(tmp_path / "b.json")]) == 0
    printed = capsys.readouterr().out
    assert "2.00x" in printed
    assert "out/results.json" in printed and "b.json" in printed  # the runs are named
    assert "higher" in printed and "lower" in printed  # which way is better, per metric


def test_a_workload_that_cannot_be_imported_fails_its_scenario_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import scenario

    monkeypatch.setitem(scenario.WORKLOADS, "broken", "bench.workloads.no_such_workload")
    f = tmp_path / "mine.yaml"
    f.write_text(
        "name: tiny-broken\nkind: broken\nrepeat: 1\nparams: {}\n"
        "---\nname: tiny-scheduling\nkind: scheduling-basic\nrepeat: 1\nparams: {nodes: 3, pods: 5, backlog: false}\n"
    )
    out = tmp_path / "out"
    assert bench_main(["-f", str(f), "--out", str(out)]) == 1
    by_name = {s["name"]: s for s in read_results(out / "results.json")["scenarios"]}
    assert "ModuleNotFoundError" in by_name["tiny-broken"]["error"]
    assert by_name["tiny-scheduling"]["summary"]["pods_per_s"]["median"] > 0

    # the results are rewritten after each scenario, so a run stopped part way keeps them
    import io

    from rich.console import Console

    from bench.runner import run_scenarios

    seen: list[list[str]] = []
    run_scenarios(
        load_scenarios(f), Console(file=io.StringIO()), None, lambda r: seen.append([x.name for x in r])
    )
    assert seen == [["tiny-broken"], ["tiny-broken", "tiny-scheduling"]]


def test_compare_refuses_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    assert bench_main(["compare", str(tmp_path / "x.json"), str(tmp_path / "x.json")]) == 2


def test_cold_start_scenario_reaches_readyz_over_the_default_https(tmp_path: Path) -> None:
    f = tmp_path / "cold.yaml"
    f.write_text("name: tiny-cold-start\nkind: cold-start\nrepeat: 1\nparams: {cluster: empty}\n")
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    doc = read_results(tmp_path / "out" / "results.json")
    assert doc["scenarios"][0]["summary"]["seconds_to_readyz"]["median"] > 0


def test_gang_statefulset_over_http_runs_every_pod_to_running_on_a_served_fleet(tmp_path: Path) -> None:
    f = tmp_path / "gang-http.yaml"
    f.write_text(
        "name: tiny-gang-http\nkind: gang-statefulsets\nrepeat: 1\nhttp: true\n"
        "params: {nodes: 4, racks: 2, sets: 1, replicas: 4, gang: true, node_agent: true, mode: http}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    summary = read_results(tmp_path / "out" / "results.json")["scenarios"][0]["summary"]
    assert {"all_running_s", "nodes_schedulable_s", "pods_per_s", "server_cpu_s"} <= set(summary)
    assert summary["all_running_s"]["median"] > 0


def test_pairs_alternate_two_builds_and_merge_each_sides_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = str(Path(__file__).resolve().parents[3])
    # a relative --out names a folder of the caller's working folder, not of each build's tree
    monkeypatch.chdir(tmp_path)
    args = ["--pairs", tree, tree, "--rounds", "2", "--quick", "--out", "out", "scheduling-basic-500"]
    assert bench_main(args) == 0
    for side in ("A", "B"):
        doc = read_results(tmp_path / "out" / f"pairs-{side}.json")
        (sc,) = doc["scenarios"]
        assert sc["name"] == "scheduling-basic-500@quick(nodes=20,pods=50)"
        assert len(sc["runs"]) == 2 and sc["summary"]["cpu_ms_per_pod"]["n"] == 2
        assert len(sc["load1m"]) == 2  # each round's load, not the first round's only
        assert doc["pairs"]["side"] == side
    assert "B/A" in capsys.readouterr().out
    assert bench_main(["--pairs", "no-such-rev", tree, "--out", str(tmp_path), "x"]) == 2


def test_no_harness_thread_runs_beside_a_measured_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A measured phase's ``cpu_s`` is the process's CPU: a progress-bar thread redrawing beside
    the plane would be counted as the plane's (it was ~5 % of gangs-1000x3's). The bars still
    show each step reported and each repetition done."""
    import io
    import sys
    import threading
    import types

    from rich.console import Console

    from bench import scenario
    from bench.results import Metric
    from bench.runner import run_scenarios

    seen: list[list[str]] = []
    fake = types.ModuleType("bench_fake_threads_workload")
    fake.METRICS = {"threads": Metric("threads", False)}  # type: ignore[attr-defined]

    async def run(params: dict, env: object) -> dict[str, float]:
        env.progress("half way")  # type: ignore[attr-defined]
        seen.append([type(t).__name__ for t in threading.enumerate() if t is not threading.current_thread()])
        return {"threads": float(len(seen[-1]))}

    fake.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(scenario.WORKLOADS, "fake-threads", fake.__name__)
    f = tmp_path / "threads.yaml"
    f.write_text("name: tiny-threads\nkind: fake-threads\nrepeat: 2\nparams: {}\n")
    out = io.StringIO()
    (res,) = run_scenarios(load_scenarios(f), Console(file=out, width=120), None)
    assert not res.error and len(res.runs) == 2
    assert len(seen) == 2 and all("_RefreshThread" not in names for names in seen), seen
    shown = out.getvalue()
    assert "tiny-threads" in shown and "2/2" in shown and "done" in shown


def test_memory_scenario_measures_each_repetition_in_a_fresh_process(tmp_path: Path) -> None:
    """The bench's own process keeps the memory earlier repetitions and scenarios freed (CPython
    and the C allocator hold it for reuse): measured there, a second repetition's pods fitted
    into memory already held and read ~0 KB each (0.04 against 27.5 for the first). Each
    repetition now measures in a child process of its own."""
    f = tmp_path / "mem.yaml"
    f.write_text("name: tiny-memory\nkind: memory\nrepeat: 2\nparams: {nodes: 4, racks: 2, pods: 300}\n")
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    (sc,) = read_results(tmp_path / "out" / "results.json")["scenarios"]
    assert not sc["error"] and len(sc["runs"]) == 2
    first, second = (run["kb_per_pod"] for run in sc["runs"])
    assert first > 5 and second > first / 2, sc["runs"]
    assert all(run["cpu_s"] > 0 for run in sc["runs"]) and sc["cpuScope"] == "measured phase"


def test_the_two_sides_of_a_pairs_run_compare_round_by_round() -> None:
    """Each round's B over the same round's A: a drift between rounds cancels in it."""
    import io

    from rich.console import Console

    from bench import compare

    def side(name: str, cpu: list[float]) -> dict:
        runs = [{"cpu_ms_per_pod": v} for v in cpu]
        summary = {"cpu_ms_per_pod": {"median": sorted(cpu)[len(cpu) // 2], "spread": 0.5, "n": len(cpu)}}
        units = {"cpu_ms_per_pod": {"unit": "ms", "higherIsBetter": False}}
        return {
            "pairs": {"side": name},
            "scenarios": [{"name": "s", "runs": runs, "summary": summary, "units": units}],
        }

    # B is 0.9x of A, but the machine slowed to half speed in round 2 for both sides, and again
    # for B's run of round 3: the medians read B/A 1.8x, the rounds 0.9x twice and 1.8x once
    a, b = side("A", [1.0, 2.0, 1.0]), side("B", [0.9, 1.8, 1.8])
    assert compare.pairwise(a, b, "s", "cpu_ms_per_pod") == pytest.approx([0.9, 0.9, 1.8])
    out = io.StringIO()
    Console(file=out, width=200).print(compare.table(a, b, "a", "b"))
    shown = out.getvalue()
    assert "B/A by round" in shown and "0.90x (0.90-1.80)" in shown and "1.80x" in shown
    # files that are not the two sides of one pairs run: no column
    plain_a, plain_b = ({k: v for k, v in d.items() if k != "pairs"} for d in (a, b))
    assert compare.pairwise(plain_a, plain_b, "s", "cpu_ms_per_pod") is None
    out = io.StringIO()
    Console(file=out, width=200).print(compare.table(plain_a, plain_b, "a", "b"))
    assert "by round" not in out.getvalue()
    # a round missing on one side: the rounds no longer line up
    b["scenarios"][0]["runs"].pop()
    assert compare.pairwise(a, b, "s", "cpu_ms_per_pod") is None
