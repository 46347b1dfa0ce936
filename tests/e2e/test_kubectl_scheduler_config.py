"""``gangplane serve --scheduler-config FILE`` seen from kubectl: kube-scheduler's configuration file at work.

* a profile whose NodeResourcesFit scores ``MostAllocated`` packs three small pods onto one node
  of an empty fleet; the default configuration (``LeastAllocated``) spreads them;
* a second profile serves only the pods naming its ``schedulerName``; a pod naming no profile
  stays Pending;
* ``/configz`` serves the effective (defaulted) configuration;
* an unknown plugin, or a bad weight, stops the start with exit code 2 and a message naming it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e

FLEET = {
    "nodes": [{"name": "n-{index}", "count": 4, "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]
}

PACKING = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaseDuration": "1m"},  # shown, as kube shows it; serve's flags elect
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        },
        {"schedulerName": "spread-scheduler"},
    ],
}


def _pod(name: str, scheduler: str = "") -> dict:
    spec: dict = {
        "containers": [
            {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
        ]
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name[:-2]}},
        "spec": spec,
    }


def _serve(tmp: Path, config: dict | None) -> Server:
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(FLEET))
    extra = ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")]
    if config is not None:
        (tmp / "scheduler.yaml").write_text(yaml.safe_dump(config))
        extra += ["--scheduler-config", str(tmp / "scheduler.yaml")]
    return _start_server(tmp, extra)


@pytest.fixture(scope="module")
def packing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _serve(tmp_path_factory.mktemp("packing"), PACKING)
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _serve(tmp_path_factory.mktemp("default"), None)
    yield s
    _stop(s)


def _kubectl(server: Server, kubectl137: Path) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


def _apply_and_wait(k: Kubectl, pods: list[dict]) -> dict[str, str]:
    """Create the pods, wait until each is scheduled; pod name -> node."""
    k.run("apply", "-f", "-", input="\n---\n".join(json.dumps(p) for p in pods))
    names = [f"pod/{p['metadata']['name']}" for p in pods]
    k.run("wait", "--for=condition=PodScheduled", "--timeout=60s", *names)
    out = k.run("get", *names, "-o", "json").stdout
    items = json.loads(out).get("items") or [json.loads(out)]
    return {i["metadata"]["name"]: i["spec"]["nodeName"] for i in items}


def test_most_allocated_packs_three_small_pods_on_one_node(packing: Server, kubectl137: Path) -> None:
    k = _kubectl(packing, kubectl137)
    placed = _apply_and_wait(k, [_pod(f"pack-{i}") for i in range(3)])
    assert len(set(placed.values())) == 1, placed


def test_default_configuration_spreads_them(default: Server, kubectl137: Path) -> None:
    k = _kubectl(default, kubectl137)
    placed = _apply_and_wait(k, [_pod(f"spread-{i}") for i in range(3)])
    assert len(set(placed.values())) == 3, placed


def test_second_profile_schedules_only_pods_naming_it(packing: Server, kubectl137: Path) -> None:
    k = _kubectl(packing, kubectl137)
    placed = _apply_and_wait(k, [_pod(f"other-{i}", "spread-scheduler") for i in range(3)])
    # the spread profile keeps kube's LeastAllocated: three pods, three nodes
    assert len(set(placed.values())) == 3, placed
    events = json.loads(
        k.run(
            "get", "events", "--field-selector", "reason=Scheduled,involvedObject.name=other-0", "-o", "json"
        ).stdout
    )["items"]
    assert events and "Successfully assigned default/other-0" in events[0]["message"]
    # as kube-scheduler does, the profile's own recorder reports its pods' events
    assert events[0]["source"]["component"] == "spread-scheduler"
    assert events[0].get("reportingComponent") == "spread-scheduler"
    # a pod naming a profile nobody runs is left alone: Pending, unscheduled, no condition
    k.run("apply", "-f", "-", input=json.dumps(_pod("orphan-0", "no-such-scheduler")))
    _apply_and_wait(k, [_pod("alive-0")])  # a later pod of a profile that runs is scheduled meanwhile
    pod = json.loads(k.run("get", "pod/orphan-0", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Pending"
    assert not pod["spec"].get("nodeName")
    assert not pod["status"].get("conditions")


def test_configz_serves_the_effective_configuration(
    packing: Server, default: Server, kubectl137: Path
) -> None:
    k = _kubectl(packing, kubectl137)
    doc = json.loads(k.run("get", "--raw", "/configz").stdout)
    # component-base's configz: sections by registered name; kube-scheduler's is "componentconfig",
    # and the only other one is gangplane's own (the scheduling records' window, docs/scheduling-records.md)
    assert sorted(doc) == ["componentconfig", "gangplane.dev/schedulingRecords"]
    assert doc["gangplane.dev/schedulingRecords"]["maxSubjects"] > 0
    body = doc["componentconfig"]
    # kube >= 1.36 serves the external v1 object (kubernetes#136044): kind and apiVersion set
    assert body["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert body["kind"] == "KubeSchedulerConfiguration"
    assert body["leaderElection"]["leaseDuration"] == "1m0s"  # a Go metav1.Duration
    assert body["clientConnection"]["qps"] == 50 and body["parallelism"] == 16
    plugins = body["profiles"][0]["plugins"]
    # Go's encoding/json writes every extension point, {} when empty; every plugin has a weight
    assert plugins["filter"] == {} and plugins["score"] == {} and plugins["placementScore"] == {}
    assert all(isinstance(p["weight"], int) for p in plugins["multiPoint"]["enabled"])
    assert "percentageOfNodesToScore" not in body["profiles"][0]
    raw = httpx.get(packing.url + "/configz", timeout=30)
    assert raw.status_code == 200
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["x-content-type-options"] == "nosniff"
    assert [p["schedulerName"] for p in body["profiles"]] == ["default-scheduler", "spread-scheduler"]
    fit = {pc["name"]: pc["args"] for pc in body["profiles"][0]["pluginConfig"]}["NodeResourcesFit"]
    # the given strategy, with kube's default resources filled in
    assert fit["scoringStrategy"] == {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
    }
    assert body["podInitialBackoffSeconds"] == 1 and body["podMaxBackoffSeconds"] == 10
    assert body["percentageOfNodesToScore"] == 0
    spread = {pc["name"]: pc["args"] for pc in body["profiles"][1]["pluginConfig"]}["NodeResourcesFit"]
    assert spread["scoringStrategy"]["type"] == "LeastAllocated"
    # without a file, /configz shows kube's defaults
    plain = json.loads(_kubectl(default, kubectl137).run("get", "--raw", "/configz").stdout)[
        "componentconfig"
    ]
    assert [p["schedulerName"] for p in plain["profiles"]] == ["default-scheduler"]
    fit = {pc["name"]: pc["args"] for pc in plain["profiles"][0]["pluginConfig"]}["NodeResourcesFit"]
    assert fit["scoringStrategy"]["type"] == "LeastAllocated"


def _start_fails(tmp: Path, config: dict) -> str:
    (tmp / "scheduler.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "serve", "--port", "0", "--no-tls", "--anonymous",
         "--kubeconfig", str(tmp / "kc"), "--scheduler-config", str(tmp / "scheduler.yaml")],
        capture_output=True, text=True, timeout=60, cwd=tmp,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "serving on" not in proc.stdout
    return proc.stderr


def test_unknown_plugin_fails_at_start_naming_it(tmp_path: Path) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"plugins": {"score": {"enabled": [{"name": "NodeResourcesMostAllocatedTypo", "weight": 2}]}}}
        ],
    }
    err = _start_fails(tmp_path, config)
    assert 'ScorePlugin "NodeResourcesMostAllocatedTypo" does not exist' in err, err
    assert "(at profiles[0].plugins.score.enabled[0])" in err, err


def test_bad_weight_fails_at_start_naming_the_field(tmp_path: Path) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": "heavy"}]}}}
        ],
    }
    err = _start_fails(tmp_path, config)
    assert 'profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: "heavy"' in err, err
