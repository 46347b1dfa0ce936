"""The node-agent gang scenario reports the API writes per pod of create -> all Running.

Numbers are not asserted beyond what every pod must cost: its create, its binding and the
kubelet's status write that makes it Running (kubelet's Events are written asynchronously and
may land after the last pod is Running).
"""

from __future__ import annotations

from pathlib import Path

from bench.cli import main as bench_main
from bench.results import read_results


def test_the_node_agent_gang_scenario_counts_writes_per_pod_up_to_running(tmp_path: Path) -> None:
    f = tmp_path / "gang-agent.yaml"
    f.write_text(
        "name: tiny-gang-agent\nkind: gang-statefulsets\nrepeat: 1\n"
        "params: {nodes: 4, racks: 2, sets: 1, replicas: 4, gang: true, node_agent: true}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    (sc,) = read_results(tmp_path / "out" / "results.json")["scenarios"]
    assert sc["units"]["api_writes_per_pod"] == {"unit": "writes", "higherIsBetter": False}
    run = sc["runs"][0]
    assert run["all_running_s"] > 0
    assert run["api_writes_per_pod"] >= 3  # create, binding, status to Running
