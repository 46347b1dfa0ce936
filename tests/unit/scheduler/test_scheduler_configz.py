"""``/configz``'s ``componentconfig``: the effective configuration as kube-scheduler (1.36+) serves it.

kube converts its internal configuration back to ``kubescheduler.config.k8s.io/v1`` and encodes
it with Go's ``encoding/json``: kind and apiVersion set, every extension point written (``{}``
when empty), every plugin with a ``weight``, args with their kind, durations as Go prints them.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config import scheduler_config_from
from scheduler.config.configz import PLUGIN_SETS, go_duration

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def served(**fields: Any) -> dict[str, Any]:
    return scheduler_config_from({**HEAD, **fields}).configz()


def args_of(profile: dict[str, Any]) -> dict[str, Any]:
    return {pc["name"]: pc["args"] for pc in profile["pluginConfig"]}


def test_the_default_configuration_has_kubes_v1_shape() -> None:
    body = served()
    assert list(body) == [
        "kind",
        "apiVersion",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
    ]
    assert body["kind"] == "KubeSchedulerConfiguration"
    assert body["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert body["leaderElection"] == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }
    assert body["clientConnection"] == {
        "kubeconfig": "",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50,
        "burst": 100,
    }
    (profile,) = body["profiles"]
    assert list(profile) == ["schedulerName", "plugins", "pluginConfig"]  # no per-profile percentage
    plugins = profile["plugins"]
    # encoding/json writes every PluginSet (omitempty does nothing on a struct)
    assert list(plugins) == list(PLUGIN_SETS)
    assert all(plugins[p] == {} for p in PLUGIN_SETS if p != "multiPoint")
    # the internal int32 weight comes back as a pointer: every plugin has one, 0 when none was given
    mp = {p["name"]: p["weight"] for p in plugins["multiPoint"]["enabled"]}
    assert mp["PrioritySort"] == 0 and mp["TaintToleration"] == 3 and mp["NodeResourcesFit"] == 1
    args = args_of(profile)
    assert args["InterPodAffinity"] == {
        "kind": "InterPodAffinityArgs",
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": False,  # no omitempty on the v1 field
    }
    assert args["PodTopologySpread"] == {
        "kind": "PodTopologySpreadArgs",
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "defaultingType": "System",
    }


def test_a_custom_profile_keeps_its_merge_and_drops_what_v1_omits() -> None:
    body = served(
        leaderElection={"leaseDuration": "1m", "renewDeadline": "1500ms"},
        profiles=[
            {
                "schedulerName": "packer",
                "percentageOfNodesToScore": 30,
                "plugins": {
                    "score": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                    }
                },
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"ignoredResources": [], "scoringStrategy": {"type": "MostAllocated"}},
                    }
                ],
            }
        ],
    )
    assert body["leaderElection"]["leaseDuration"] == "1m0s"  # metav1.Duration prints as Go does
    assert body["leaderElection"]["renewDeadline"] == "1.5s"
    (profile,) = body["profiles"]
    assert profile["schedulerName"] == "packer" and profile["percentageOfNodesToScore"] == 30
    # kube's defaulting merges per extension point and does not expand MultiPoint into them
    assert profile["plugins"]["score"] == {
        "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
        "disabled": [{"name": "*", "weight": 0}],
    }
    assert profile["plugins"]["filter"] == {}
    assert len(profile["plugins"]["multiPoint"]["enabled"]) > 10
    fit = args_of(profile)["NodeResourcesFit"]
    assert fit == {
        "kind": "NodeResourcesFitArgs",
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    }


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (15, "15s"),
        (60, "1m0s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (5400.5, "1h30m0.5s"),
        (1.5, "1.5s"),
        (0.25, "250ms"),
        (0.0000015, "1.5µs"),
        (0.000000007, "7ns"),
        (-2, "-2s"),
    ],
)
def test_durations_print_as_go_prints_them(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
