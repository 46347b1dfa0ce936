"""The workload-aware bench: upstream's case names, placement-quality figures, a thresholds file
that fails a run, and two scheduler configurations side by side.

Numbers are not asserted as speeds; what is asserted is what a user reads: the figures exist,
a missed threshold makes the exit code 1, and a packing configuration leaves fewer nodes partly
used than the default one on the same tiny case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import main as bench_main
from bench.results import read_results
from bench.scenario import shipped_scenarios
from bench.thresholds import ThresholdsError, load_thresholds

TINY = (
    "name: tiny-gangs\nkind: workload-scheduling\nrepeat: 1\n"
    "params: {case: gang, nodes: 4, groups: 4, pods_per_group: 2, gang_cpu: '1'}\n"
)
# BalancedAllocation is off: with it, a 1-cpu pod scores within a point on a half-full node and
# an empty one (it pulls against MostAllocated), and the random tie-break spread the gangs in
# about one run of six
PACKING = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""
DEFAULT = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_upstream_workload_aware_cases_are_shipped_under_their_names() -> None:
    names = {s.name for s in shipped_scenarios() if s.kind == "workload-scheduling"}
    for expected in (
        "GangScheduling-5000Nodes_1000Gangs_3000Pods",
        "GangScheduling-5000Nodes_3000Gangs_9000Pods",
        "GangScheduling-5000Nodes_9Gangs_9000Pods_1000PerGroup",
        "GangScheduling-5000Nodes_10Gangs_50000Pods_5000PerGroup",
        "TopologyAwareScheduling-5000Nodes_750Gangs_3000Pods",
        "TopologyAwareScheduling-5000Nodes_2250Gangs_9000Pods",
        "TopologyAwareScheduling-5000Nodes_3Gangs_3000Pods_1000PerGroup",
        "GangPreemptionBasic-100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods",
        "GangPreemptionPodGroups-100Nodes_10PreemptorGangs_10Pods_Evicting_50LowPriorityGangs",
        "GangPreemptionTopologySpreading-100Nodes_6PreemptorGangs_16Pods_Evicting_1000InitPods",
        "GangPreemptionAffinity-100Nodes_10PreemptorGangs_10Pods_Evicting_1000InitPods",
        "GangScheduling-5000Nodes_1000Gangs_3000Pods_CompositePodGroupEnabled",
        "GangPreemptionPodGroups-100Nodes_10PreemptorGangs_10Pods_Evicting_50LowPriorityGangs_CompositePodGroupEnabled",
    ):
        assert expected in names


def test_a_missed_threshold_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(TINY)
    ok = tmp_path / "ok.yaml"
    ok.write_text(
        "- {scenario: 'tiny-*', metric: gangs_waiting, max: 0}\n- {scenario: tiny-gangs, metric: gangs_placed, min: 4}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "a"), "--thresholds", str(ok)]) == 0
    assert "ok" in capsys.readouterr().out
    missed = tmp_path / "missed.yaml"
    missed.write_text(
        "thresholds:\n- {scenario: tiny-gangs, metric: gangs_placed, min: 5}\n- {scenario: other, metric: x, min: 1}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "b"), "--thresholds", str(missed)]) == 1
    out = capsys.readouterr().out
    assert "MISSED" in out and "not run" in out and "thresholds missed" in out
    typo = tmp_path / "typo.yaml"
    typo.write_text("- {scenario: tiny-gangs, metric: gang_placed, min: 1}\n")
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "c"), "--thresholds", str(typo)]) == 1
    assert "no such metric" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- {scenario: a, metric: b}\n", "give min, max or both"),
        ("- {scenario: a, metric: b, min: fast}\n", "[0].min: must be a number"),
        ("- {metric: b, min: 1}\n", "[0].scenario: required"),
        ("- {scenario: a, metric: b, min: 1, mni: 2}\n", "unknown field(s) mni"),
        ("scenario: a\n", "expected a list"),
    ],
)
def test_a_bad_thresholds_file_is_refused_naming_the_entry(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(text)
    with pytest.raises(ThresholdsError) as e:
        load_thresholds(f)
    assert message in str(e.value)


def test_two_configurations_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(TINY)
    (tmp_path / "default.yaml").write_text(DEFAULT)
    (tmp_path / "packing.yaml").write_text(PACKING)
    out = tmp_path / "out"
    code = bench_main(
        ["-f", str(f), "--out", str(out), "--scheduler-config", str(tmp_path / "default.yaml"),
         "--scheduler-config", str(tmp_path / "packing.yaml")]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "scheduler configurations side by side" in text and "packing/default" in text
    by_name = {s["name"]: s["summary"] for s in read_results(out / "results.json")["scenarios"]}
    default, packing = by_name["tiny-gangs@default"], by_name["tiny-gangs@packing"]
    assert default["gangs_placed"]["median"] == packing["gangs_placed"]["median"] == 4
    # 8 pods of 1 cpu on 4 nodes of 4: spread leaves every node partly used, packing fills two
    assert packing["nodes_partly_used_pct"]["median"] < default["nodes_partly_used_pct"]["median"]
    assert "pods_per_s" in default and "racks_per_gang_mean" in packing


def test_a_bad_configuration_or_an_unconfigurable_scenario_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(TINY)
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT + "profiles: [{plugins: {score: {enabled: [{name: Nope}]}}}]\n")
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "o"), "--scheduler-config", str(bad)]) == 2
    assert 'ScorePlugin "Nope" does not exist' in capsys.readouterr().out
    g = tmp_path / "g.yaml"
    g.write_text("name: basic\nkind: scheduling-basic\nparams: {nodes: 2, pods: 2}\n")
    (tmp_path / "d.yaml").write_text(DEFAULT)
    assert (
        bench_main(
            ["-f", str(g), "--out", str(tmp_path / "o"), "--scheduler-config", str(tmp_path / "d.yaml")]
        )
        == 2
    )
    assert "does not take a scheduler configuration" in capsys.readouterr().out
