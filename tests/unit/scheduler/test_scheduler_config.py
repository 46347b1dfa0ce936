"""``KubeSchedulerConfiguration`` v1: kube's decoding, defaulting, validation and framework checks, message for message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.config import ConfigError, load_scheduler_config, scheduler_config_from
from scheduler.defaults import DEFAULT_PLUGINS, default_profile
from scheduler.framework import Framework
from scheduler.interfaces import Handle
from scheduler.plugins.requested_to_capacity_ratio import RequestedToCapacityRatioScorer, broken_linear
from scheduler.schedule_one import num_feasible_nodes_to_find

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**fields: Any) -> dict[str, Any]:
    return {**HEAD, **fields}


def error_of(doc: Any) -> str:
    with pytest.raises(ConfigError) as e:
        scheduler_config_from(doc)
    return str(e.value)


def framework(profile: Any) -> Framework:
    from scheduler.defaults import default_registry

    return Framework(profile, Handle(), registry=default_registry())


def names(plugins: list[Any]) -> list[str]:
    return [p.name for p in plugins]


def test_empty_configuration_is_kubes_default_profile() -> None:
    c = scheduler_config_from(cfg())
    (p,) = c.profiles
    d = default_profile()
    assert p.scheduler_name == "default-scheduler"
    assert [(s.name, s.weight or 1) for s in p.plugins] == [(s.name, s.weight or 1) for s in d.plugins]
    assert p.disabled == {} and p.percentage_of_nodes_to_score is None
    e = c.effective
    assert e["parallelism"] == 16 and e["percentageOfNodesToScore"] == 0
    assert (e["podInitialBackoffSeconds"], e["podMaxBackoffSeconds"]) == (1, 10)
    assert e["leaderElection"]["resourceName"] == "kube-scheduler"
    assert e["leaderElection"]["resourceNamespace"] == "kube-system"
    assert e["leaderElection"]["resourceLock"] == "leases"
    args = {pc["name"]: pc["args"] for pc in e["profiles"][0]["pluginConfig"]}
    assert args["DefaultPreemption"]["minCandidateNodesPercentage"] == 10
    assert args["DefaultPreemption"]["minCandidateNodesAbsolute"] == 100
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["PodTopologySpread"]["defaultingType"] == "System"
    assert args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert args["NodeResourcesBalancedAllocation"]["resources"] == [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
    ]
    assert args["NodeResourcesFit"]["kind"] == "NodeResourcesFitArgs"
    # every plugin with an args kind got its defaults, in name order
    assert list(args) == sorted(args)


def test_a_profile_without_name_among_several_is_required() -> None:
    err = error_of(cfg(profiles=[{"schedulerName": "a"}, {}]))
    assert "profiles[1].schedulerName: Required value" in err


def test_duplicate_scheduler_names() -> None:
    err = error_of(cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]))
    assert 'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"' in err


def test_disable_star_at_score_and_reenable_one_with_weight() -> None:
    c = scheduler_config_from(
        cfg(
            profiles=[
                {
                    "plugins": {
                        "score": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                        }
                    }
                }
            ]
        )
    )
    fw = framework(c.profiles[0])
    assert names(fw.score_plugins) == ["NodeResourcesFit"]
    assert fw.score_weights["NodeResourcesFit"] == 5
    # only Score was touched: the Filter plugins are the default ones
    assert "TaintToleration" in names(fw.filter_plugins)


def test_multipoint_weight_overrides_default_in_place() -> None:
    c = scheduler_config_from(
        cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 7}]}}}])
    )
    p = c.profiles[0]
    assert [s.name for s in p.plugins] == [s.name for s in DEFAULT_PLUGINS]  # position kept
    assert framework(p).score_weights["TaintToleration"] == 7


def test_disable_one_plugin_everywhere_and_at_one_point() -> None:
    c = scheduler_config_from(
        cfg(
            profiles=[
                {
                    "plugins": {
                        "multiPoint": {"disabled": [{"name": "PodTopologySpread"}]},
                        "filter": {"disabled": [{"name": "NodePorts"}]},
                    }
                }
            ]
        )
    )
    fw = framework(c.profiles[0])
    assert "PodTopologySpread" not in fw.plugins
    assert "NodePorts" not in names(fw.filter_plugins)
    assert "NodePorts" in names(fw.pre_filter_plugins)


def test_plugin_enabled_at_one_point_only_runs_there() -> None:
    c = scheduler_config_from(
        cfg(
            profiles=[
                {
                    "plugins": {
                        "multiPoint": {"disabled": [{"name": "NodeAffinity"}]},
                        "filter": {"enabled": [{"name": "NodeAffinity"}]},
                    }
                }
            ]
        )
    )
    fw = framework(c.profiles[0])
    assert "NodeAffinity" in names(fw.filter_plugins)
    assert "NodeAffinity" not in names(fw.score_plugins)
    assert "NodeAffinity" not in names(fw.pre_filter_plugins)


def test_unknown_plugin_in_multipoint_is_named_at_prefilter() -> None:
    err = error_of(cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}]))
    assert err.startswith(
        "couldn't create scheduler: initializing profiles: creating profile for scheduler name default-scheduler: "
        'PreFilterPlugin "Nope" does not exist (at profiles[0].plugins.multiPoint.enabled[0])'
    ), err


def test_kube_plugin_gangplane_lacks_is_explained() -> None:
    err = error_of(cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality"}]}}}]))
    assert 'ScorePlugin "ImageLocality" does not exist' in err
    assert "gangplane does not have" in err


def test_plugin_at_a_point_it_does_not_implement() -> None:
    err = error_of(cfg(profiles=[{"plugins": {"bind": {"enabled": [{"name": "NodePorts"}]}}}]))
    assert 'plugin "NodePorts" does not extend BindPlugin plugin' in err


def test_removed_v1_plugin() -> None:
    err = error_of(cfg(profiles=[{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]))
    assert (
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
    ) in err


def test_no_bind_or_no_queue_sort_plugin() -> None:
    err = error_of(cfg(profiles=[{"plugins": {"bind": {"disabled": [{"name": "*"}]}}}]))
    assert 'at least one bind plugin is needed for profile with scheduler name "default-scheduler"' in err
    err = error_of(cfg(profiles=[{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]))
    assert (
        'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0'
        in err
    )


def test_queue_sort_must_match_across_profiles() -> None:
    err = error_of(
        cfg(
            profiles=[
                {"schedulerName": "a"},
                {"schedulerName": "b", "plugins": {"queueSort": {"disabled": [{"name": "*"}]}}},
            ]
        )
    )
    assert (
        "profiles[1].plugins.queueSort: Invalid value:" in err and "must be the same for all profiles" in err
    )


@pytest.mark.parametrize(
    ("weight", "message"),
    [
        (
            "heavy",
            'profiles[0].plugins.score.enabled[0].weight: Invalid value: "heavy": must be an integer (int32)',
        ),
        (
            2**31,
            "profiles[0].plugins.score.enabled[0].weight: Invalid value: 2147483648: does not fit in an int32",
        ),
        (-1, "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: must not be negative"),
    ],
)
def test_bad_weights(weight: Any, message: str) -> None:
    err = error_of(
        cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": weight}]}}}])
    )
    assert message in err, err


def test_unknown_fields_are_strict_decoding_errors() -> None:
    err = error_of(cfg(profiles=[{"schedulerNme": "x"}], percentageOfNodeToScore=5))
    assert (
        err
        == 'strict decoding error: unknown field "profiles[0].schedulerNme", unknown field "percentageOfNodeToScore"'
    )
    err = error_of(
        cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategi": {}}}]}])
    )
    assert 'unknown field "profiles[0].pluginConfig[0].args.scoringStrategi"' in err


def test_wrong_kind_or_version() -> None:
    assert "no kind" in error_of(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"}
    )
    assert "missing" in error_of({"kind": "KubeSchedulerConfiguration"})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"percentageOfNodesToScore": 101},
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        ),
        (
            {"profiles": [{"percentageOfNodesToScore": -1}]},
            "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        ),
        (
            {"podInitialBackoffSeconds": 0},
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
            "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        ({"parallelism": 0}, "parallelism: Invalid value: 0: should be an integer value greater than zero"),
        (
            {"leaderElection": {"resourceLock": "endpoints"}},
            'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
        ),
    ],
)
def test_top_level_validation(fields: dict[str, Any], message: str) -> None:
    assert message in error_of(cfg(**fields))


def args_error(plugin: str, args: dict[str, Any]) -> str:
    return error_of(cfg(profiles=[{"pluginConfig": [{"name": plugin, "args": args}]}]))


def test_node_resources_fit_args() -> None:
    err = args_error("NodeResourcesFit", {"scoringStrategy": {"type": "Packed"}})
    assert (
        'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Packed": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    ) in err
    err = args_error(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
    )
    assert (
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: "
        "resource weight of cpu not in valid range (0, 100]"
    ) in err
    err = args_error(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 11}]
                },
            }
        },
    )
    assert (
        "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].utilization: Invalid value: 40: "
        "values must be sorted in increasing order"
    ) in err
    assert (
        "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]"
        in err
    )


def test_other_plugin_args() -> None:
    assert (
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesAbsolute"
    ) in args_error("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})
    assert (
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
    ) in args_error("InterPodAffinity", {"hardPodAffinityWeight": 101})
    err = args_error(
        "PodTopologySpread",
        {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
    )
    assert (
        'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'
        in err
    )
    assert 'Unsupported value: "Maybe"' in args_error(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}],
        },
    )
    assert "resources[0].weight: Invalid value: 2: must be 1" in args_error(
        "NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}
    )
    assert 'Duplicate value: "profiles[0].pluginConfig[1]"' not in error_of(
        cfg(
            profiles=[
                {"pluginConfig": [{"name": "NodeAffinity", "args": {}}, {"name": "NodeAffinity", "args": {}}]}
            ]
        )
    )
    assert 'profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"' in error_of(
        cfg(
            profiles=[
                {"pluginConfig": [{"name": "NodeAffinity", "args": {}}, {"name": "NodeAffinity", "args": {}}]}
            ]
        )
    )


def test_args_reach_the_plugins_and_percentage_and_backoff_apply() -> None:
    c = scheduler_config_from(
        cfg(
            percentageOfNodesToScore=30,
            podInitialBackoffSeconds=2,
            podMaxBackoffSeconds=20,
            profiles=[
                {
                    "schedulerName": "packer",
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                        {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": 7}},
                    ],
                },
                {"schedulerName": "other", "percentageOfNodesToScore": 70},
            ],
        )
    )
    packer, other = (framework(p) for p in c.profiles)
    assert packer.plugins["NodeResourcesFit"].strategy == "MostAllocated"
    assert packer.plugins["DefaultPreemption"].min_candidate_nodes_absolute == 7
    assert packer.plugins["DefaultPreemption"].min_candidate_nodes_percentage == 10
    assert other.plugins["NodeResourcesFit"].strategy == "LeastAllocated"
    assert num_feasible_nodes_to_find(packer, 1000) == 300
    assert num_feasible_nodes_to_find(other, 1000) == 700
    assert (c.pod_initial_backoff, c.pod_max_backoff) == (2.0, 20.0)


def test_load_from_file(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n"
    )
    assert load_scheduler_config(f).profiles[0].scheduler_name == "x"
    with pytest.raises(ConfigError, match="failed to read config file"):
        load_scheduler_config(tmp_path / "missing.yaml")
    f.write_text("profiles: [")
    with pytest.raises(ConfigError, match="couldn't decode"):
        load_scheduler_config(f)


def test_requested_to_capacity_ratio_arithmetic() -> None:
    shape = [(0, 0), (50, 20), (100, 100)]
    assert broken_linear(shape, 25) == 10
    assert broken_linear(shape, 75) == 60
    assert broken_linear(shape, 100) == 100
    s = RequestedToCapacityRatioScorer([{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}])
    # cpu 30% used -> 70, memory 60% -> 40; equal weights -> 55
    assert s([30, 60], [100, 100], [1, 1]) == 55
    # over capacity scores the shape at 100% (0 here), and zero scores do not count in the weights
    assert s([200, 60], [100, 100], [1, 1]) == 40
    c = scheduler_config_from(
        cfg(
            profiles=[
                {
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {
                                "scoringStrategy": {
                                    "type": "RequestedToCapacityRatio",
                                    "requestedToCapacityRatio": {
                                        "shape": [
                                            {"utilization": 0, "score": 0},
                                            {"utilization": 100, "score": 10},
                                        ]
                                    },
                                }
                            },
                        }
                    ]
                }
            ]
        )
    )
    assert framework(c.profiles[0]).plugins["NodeResourcesFit"].strategy == "RequestedToCapacityRatio"
